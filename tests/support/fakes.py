"""In-memory implementations of narrow storage ports (holdfast/ports.py), for service tests.

Each fake keeps what its DynamoDB adapter stores under the same keys (``pk``/``sk``) in one
``MemoryTable``, and answers the way the adapter does: items as DynamoDB gives them back (numbers
as ``Decimal``, ``pk`` and ``sk`` included where the adapter returns the raw item), conditional
writes that change nothing when a condition fails, multi-item changes all or nothing, TTL
attributes set where the adapter sets them. tests/contract/storage/ runs one set of cases against
these fakes, moto and DynamoDB Local: a fake that answers differently from the two emulators is a
failing test there, so a service test run on a fake still tells the truth about the real store.

A fake can be told to fail an operation once with a storage outcome (``fail``), before it changes
anything, for the services' retry paths; the emulators cannot be made to.

Test code only: the deployed package (layers/) never imports this module.
"""
from __future__ import annotations

import copy
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from holdfast.ports import ItemExists

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

Key = tuple[str, str]
Item = dict[str, Any]
#: The most items DynamoDB takes in one TransactWriteItems.
TRANSACTION_ITEMS = 100


def stored(item: Item) -> Item:
    """What DynamoDB keeps of ``item``: its types mapped the way boto3 maps them (int -> Decimal;
    a float is refused, as the adapters' serialiser refuses it)."""
    return {name: _deserializer.deserialize(_serializer.serialize(value)) for name, value in item.items()}


@dataclass
class Write:
    """One item of an all-or-nothing change: the item's key, the condition it needs (given the
    current item or None) and the item after it (None deletes it)."""

    label: str
    key: Key
    condition: Callable[[Item | None], bool]
    change: Callable[[Item | None], Item | None]


def always(_: Item | None) -> bool:
    return True


def absent(item: Item | None) -> bool:
    return item is None


def present(item: Item | None) -> bool:
    return item is not None


class MemoryTable:
    """The single table, in memory: items by (pk, sk), queries in sort-key order (Python orders
    str by code point, which is the order of their UTF-8 bytes that DynamoDB sorts by)."""

    def __init__(self) -> None:
        self.items: dict[Key, Item] = {}
        self.lock = threading.RLock()
        self._faults: dict[str, list[Exception]] = {}

    def get(self, pk: str, sk: str) -> Item | None:
        with self.lock:
            item = self.items.get((pk, sk))
            return copy.deepcopy(item) if item is not None else None

    def query(self, pk: str, low: str = "", high: str | None = None, prefix: str = "",
              limit: int | None = None) -> list[Item]:
        """Items of the partition with ``low <= sk <= high`` and ``sk`` starting with ``prefix``."""
        with self.lock:
            found = sorted((sk, item) for (p, sk), item in self.items.items()
                           if p == pk and sk >= low and (high is None or sk <= high) and sk.startswith(prefix))
            return [copy.deepcopy(item) for _, item in found[:limit]]

    def transact(self, writes: list[Write]) -> list[str]:
        """Check every condition, then apply every change; the labels whose condition failed
        (nothing written when there are any). More than DynamoDB's 100 items in one transaction is
        refused as DynamoDB refuses it (a ValidationException there), before anything is checked."""
        if len(writes) > TRANSACTION_ITEMS:
            raise ValueError(f"a transaction of {len(writes)} items: DynamoDB takes at most {TRANSACTION_ITEMS}")
        with self.lock:
            failed = [w.label for w in writes if not w.condition(copy.deepcopy(self.items.get(w.key)))]
            if failed:
                return failed
            # Every new item is made (and its types checked) before the first is stored: a change
            # that raises (a float, a missing counter) leaves the table as it was, as DynamoDB does.
            results: list[tuple[Key, Item | None]] = []
            for write in writes:
                after = write.change(copy.deepcopy(self.items.get(write.key)))
                results.append((write.key, None if after is None
                                else stored({**after, "pk": write.key[0], "sk": write.key[1]})))
            for key, after in results:
                if after is None:
                    self.items.pop(key, None)
                else:
                    self.items[key] = after
            return []

    def write(self, key: Key, condition: Callable[[Item | None], bool], change: Callable[[Item | None], Item | None]
              ) -> bool:
        return not self.transact([Write("item", key, condition, change)])

    # ----------------------------------------------------------------------------- faults

    def fail(self, operation: str, *errors: Exception) -> None:
        """The next calls of ``operation`` (a port method's name) raise these, one each."""
        with self.lock:
            self._faults.setdefault(operation, []).extend(errors)

    def check_fault(self, operation: str) -> None:
        with self.lock:
            pending = self._faults.get(operation)
            if pending:
                raise pending.pop(0)


def _set(changes: dict[str, Any]) -> Callable[[Item | None], Item]:
    """An UpdateItem's ``SET``: the item (or a new one) with these attributes replaced."""
    return lambda item: {**(item or {}), **changes}


def _has(name: str, value: Any) -> Callable[[Item | None], bool]:
    """``name = :value`` (false on a missing item or attribute, as in DynamoDB)."""
    wanted = stored({"v": value})["v"]
    return lambda item: item is not None and name in item and item[name] == wanted


class _Fake:
    def __init__(self, table: MemoryTable | None = None) -> None:
        self.table = table if table is not None else MemoryTable()

    def fail(self, operation: str, *errors: Exception) -> None:
        self.table.fail(operation, *errors)


# ===================================================================================== ports

class FakeGateSyncLedger(_Fake):
    """``SequenceLedger`` (adapters/checkin_sync_store.py), under a gate's prefix."""

    DONE_RETENTION_SECONDS = 30 * 24 * 3600

    @staticmethod
    def _pk(scope_id: str, device_id: str) -> str:
        return f"GATESYNC#{scope_id}#{device_id}"

    def expected_seq(self, scope_id: str, device_id: str) -> int:
        self.table.check_fault("expected_seq")
        item = self.table.get(self._pk(scope_id, device_id), "CURSOR")
        return int(item["expected_seq"]) if item and "expected_seq" in item else 1

    def done(self, scope_id: str, device_id: str, seq: int) -> dict[str, Any] | None:
        self.table.check_fault("done")
        item = self.table.get(self._pk(scope_id, device_id), f"DONE#{seq:012d}")
        return None if item is None else {"event_id": item["event_id"], "result": json.loads(item["result"])}

    def held_from(self, scope_id: str, device_id: str, seq: int, limit: int) -> dict[int, dict[str, Any]]:
        self.table.check_fault("held_from")
        items = self.table.query(self._pk(scope_id, device_id), low=f"HELD#{seq:012d}", high="HELD#~", limit=limit)
        return {int(item["seq"]): json.loads(item["event"]) for item in items}

    def hold(self, scope_id: str, device_id: str, seen: dict[str, Any]) -> str:
        self.table.check_fault("hold")
        pk, seq = self._pk(scope_id, device_id), int(seen["seq"])
        held = {"seq": seq, "event_id": seen["event_id"], "event": json.dumps(seen, sort_keys=True)}
        failed = self.table.transact([
            Write("cursor", (pk, "CURSOR"),
                  lambda item: item is None or "expected_seq" not in item or item["expected_seq"] <= seq,
                  lambda item: item),
            Write("held", (pk, f"HELD#{seq:012d}"), absent, lambda _: held),
        ])
        if not failed:
            return "held"
        if "cursor" in failed:
            return "behind"
        existing = self.table.get(pk, f"HELD#{seq:012d}")
        if existing is None:
            return "behind"
        return "held" if existing["event_id"] == seen["event_id"] else "taken"

    def advance(self, scope_id: str, device_id: str, seq: int, pass_id: str, result: dict[str, Any]) -> bool:
        self.table.check_fault("advance")
        pk = self._pk(scope_id, device_id)

        def at_seq(item: Item | None) -> bool:
            if seq == 1 and (item is None or "expected_seq" not in item):
                return True
            return item is not None and item.get("expected_seq") == seq

        done = {"event_id": pass_id, "result": json.dumps(result, sort_keys=True, default=str),
                "ttl": int(time.time()) + self.DONE_RETENTION_SECONDS}
        return not self.table.transact([
            Write("cursor", (pk, "CURSOR"), at_seq, _set({"expected_seq": seq + 1})),
            Write("done", (pk, f"DONE#{seq:012d}"), absent, lambda _: done),
            Write("held", (pk, f"HELD#{seq:012d}"), lambda item: item is None or item.get("event_id") == pass_id,
                  lambda _: None),
        ])


class FakeRateLimits(_Fake):
    """``RateLimits`` (adapters/surge.py's GCRA): one arrival time per scope and customer."""

    RETENTION_SECONDS = 3600

    def rate_take(self, scope: str, customer_id: str, now_ms: int, interval_ms: int, ceiling_ms: int) -> int | None:
        self.table.check_fault("rate_take")
        key = (f"RATE#{scope}#{customer_id}", "GCRA")
        ttl = now_ms // 1000 + self.RETENTION_SECONDS
        with self.table.lock:
            item = self.table.get(*key)
            tat = None if item is None else item.get("tat")
            if tat is None or tat < now_ms:
                self.table.write(key, always, _set({"tat": now_ms + interval_ms, "ttl": ttl}))
                return None
            if tat <= ceiling_ms:
                self.table.write(key, always, _set({"tat": tat + interval_ms, "ttl": ttl}))
                return None
            return int(tat)


class FakeSurgeQueue(_Fake):
    """``SurgeQueue`` (adapters/surge.py): the waiting room's numbers and each customer's place."""

    ENTRY_RETENTION_SECONDS = 2 * 24 * 3600

    def queue_state(self, event_id: str) -> dict[str, int]:
        self.table.check_fault("queue_state")
        item = self.table.get(f"QUEUE#{event_id}", "STATE") or {}
        return {"issued": int(item.get("issued", 0)), "admitted": int(item.get("admitted", 0)),
                "advanced_at": int(item.get("advanced_at", 0))}

    def take_number(self, event_id: str, now_ms: int) -> dict[str, int]:
        self.table.check_fault("take_number")
        key = (f"QUEUE#{event_id}", "STATE")
        with self.table.lock:
            self.table.write(key, always, lambda item: {
                **(item or {}), "issued": (item or {}).get("issued", 0) + 1,
                "admitted": (item or {}).get("admitted", 0), "advanced_at": (item or {}).get("advanced_at", now_ms)})
            item = self.table.get(*key) or {}
        return {"issued": int(item["issued"]), "admitted": int(item["admitted"]), "advanced_at": int(item["advanced_at"])}

    def advance_horizon(self, event_id: str, expected_admitted: int, admitted: int, advanced_at_ms: int) -> bool:
        self.table.check_fault("advance_horizon")
        return self.table.write((f"QUEUE#{event_id}", "STATE"), _has("admitted", expected_admitted),
                                _set({"admitted": admitted, "advanced_at": advanced_at_ms}))

    def get_entry(self, event_id: str, customer_id: str) -> dict[str, Any] | None:
        self.table.check_fault("get_entry")
        return self.table.get(f"QUEUE#{event_id}#CUST#{customer_id}", "ENTRY")

    def put_entry(self, event_id: str, customer_id: str, seq: int, now_ms: int, replaces_seq: int | None) -> bool:
        self.table.check_fault("put_entry")
        entry = {"event_id": event_id, "customer_id": customer_id, "seq": seq, "joined_at": now_ms,
                 "ttl": now_ms // 1000 + self.ENTRY_RETENTION_SECONDS}
        condition = absent if replaces_seq is None else _has("seq", replaces_seq)
        return self.table.write((f"QUEUE#{event_id}#CUST#{customer_id}", "ENTRY"), condition, lambda _: entry)

    def mark_admitted(self, event_id: str, customer_id: str, seq: int, now_ms: int) -> int:
        self.table.check_fault("mark_admitted")
        key = (f"QUEUE#{event_id}#CUST#{customer_id}", "ENTRY")
        with self.table.lock:
            old = self.table.get(*key)
            if self.table.write(key, lambda item: _has("seq", seq)(item) and "admitted_at" not in item,
                                _set({"admitted_at": now_ms})):
                return now_ms
            return int((old or {}).get("admitted_at", now_ms))


class FakeNotificationLog(_Fake):
    """``NotificationLog`` (adapters/bookings_store.py): one record per customer and dedup id."""

    def record_notification(self, customer_id: str, dedup_id: str, notification: dict[str, Any]) -> bool:
        self.table.check_fault("record_notification")
        return self.table.write((f"CUSTOMER#{customer_id}", f"NOTE#{dedup_id}"), absent, lambda _: dict(notification))

    def notification_recorded(self, customer_id: str, dedup_id: str) -> bool:
        self.table.check_fault("notification_recorded")
        return self.table.get(f"CUSTOMER#{customer_id}", f"NOTE#{dedup_id}") is not None

    def forget_notification(self, customer_id: str, dedup_id: str) -> None:
        self.table.check_fault("forget_notification")
        self.table.write((f"CUSTOMER#{customer_id}", f"NOTE#{dedup_id}"), always, lambda _: None)

    def list_notifications(self, customer_id: str) -> list[dict[str, Any]]:
        return self.table.query(f"CUSTOMER#{customer_id}", prefix="NOTE#")

    def mark_notification(self, customer_id: str, dedup_id: str, was: str, now: str) -> bool:
        self.table.check_fault("mark_notification")
        return self.table.write((f"CUSTOMER#{customer_id}", f"NOTE#{dedup_id}"),
                                lambda old: old is not None and old.get("delivery") == was,
                                lambda old: {**old, "delivery": now})

    def booking_outbox(self, booking_id: str, version: int) -> dict[str, Any] | None:
        item = self.table.get(f"BOOKING#{booking_id}", f"OUTBOX#{version:06d}")
        return None if item is None else {k: v for k, v in item.items() if k not in ("pk", "sk", "ttl")}


class FakeResources(_Fake):
    """``Resources`` (products/appointments/adapters.py): a resource is written once."""

    def put_resource(self, resource: dict[str, Any]) -> None:
        self.table.check_fault("put_resource")
        if resource.get("organizer_id"):
            owned = {"resource_id": resource["resource_id"], "created_at": resource["created_at"]}
            self.table.write((f"OWNER#{resource['organizer_id']}", f"RESOURCE#{resource['resource_id']}"), always,
                             lambda _: owned)
        if not self.table.write((f"RESOURCE#{resource['resource_id']}", "META"), absent, lambda _: dict(resource)):
            raise ItemExists(resource["resource_id"])

    def get_resource(self, resource_id: str) -> dict[str, Any] | None:
        self.table.check_fault("get_resource")
        item = self.table.get(f"RESOURCE#{resource_id}", "META")
        return None if item is None else {name: value for name, value in item.items() if name not in ("pk", "sk")}

    def owned_resources(self, organizer_id: str) -> list[dict[str, Any]]:
        self.table.check_fault("owned_resources")
        index = self.table.query(f"OWNER#{organizer_id}", prefix="RESOURCE#")
        index.sort(key=lambda item: (item["created_at"], item["resource_id"]))
        items = (self.table.get(f"RESOURCE#{item['resource_id']}", "META") for item in index)
        return [{name: value for name, value in item.items() if name not in ("pk", "sk")}
                for item in items if item is not None]


class FakeWaitlist(_Fake):
    """``Waitlist`` (adapters/waitlist_store.py): per event, the queue (``Q#``), each customer's
    entry (``CUST#``) and the offers taken off the queue (``OFFER#``)."""

    @staticmethod
    def _pk(event_id: str) -> str:
        return f"WAITLIST#{event_id}"

    def waitlist_entry(self, event_id: str, customer_id: str) -> dict[str, Any] | None:
        self.table.check_fault("waitlist_entry")
        return self.table.get(self._pk(event_id), f"CUST#{customer_id}")

    @staticmethod
    def waitlist_queue_key(joined_at: str, entry_id: str) -> str:
        return f"Q#{joined_at}#{entry_id}"

    def waitlist_join(self, event_id: str, entry: dict[str, Any], rejoin_states: tuple[str, ...]) -> bool:
        self.table.check_fault("waitlist_join")
        pk = self._pk(event_id)
        queued = {name: entry[name] for name in ("entry_id", "customer_id", "quantity", "joined_at")} \
            | {key: entry[key] for key in ("zone", "price_category") if entry.get(key)}
        return not self.table.transact([
            Write("entry", (pk, f"CUST#{entry['customer_id']}"),
                  lambda item: item is None or item.get("state") in rejoin_states, lambda _: dict(entry)),
            Write("queue", (pk, entry["queue_sk"]), absent, lambda _: queued),
            Write("joined", (f"CUSTOMER#{entry['customer_id']}", f"WAITLIST#{event_id}"), always,
                  lambda _: {"event_id": event_id}),
        ])

    def waitlist_position(self, event_id: str, queue_sk: str) -> int:
        self.table.check_fault("waitlist_position")
        pk = self._pk(event_id)
        if self.table.get(pk, queue_sk) is None:
            return 0
        return len(self.table.query(pk, low="Q#", high=queue_sk))

    def waitlist_leave(self, event_id: str, customer_id: str, entry: dict[str, Any]) -> bool:
        self.table.check_fault("waitlist_leave")
        pk = self._pk(event_id)
        return not self.table.transact([
            Write("entry", (pk, f"CUST#{customer_id}"),
                  lambda item: _has("state", "WAITING")(item) and _has("entry_id", entry["entry_id"])(item),
                  lambda _: None),
            Write("queue", (pk, entry["queue_sk"]), present, lambda _: None),
        ])

    def waitlist_head(self, event_id: str) -> dict[str, Any] | None:
        self.table.check_fault("waitlist_head")
        items = self.table.query(self._pk(event_id), prefix="Q#", limit=1)
        return items[0] if items else None

    def waitlist_line(self, event_id: str, limit: int) -> list[dict[str, Any]]:
        self.table.check_fault("waitlist_line")
        return self.table.query(self._pk(event_id), prefix="Q#", limit=limit)

    def waitlist_offers(self, event_id: str) -> list[dict[str, Any]]:
        self.table.check_fault("waitlist_offers")
        return self.table.query(self._pk(event_id), prefix="OFFER#")

    def waitlist_claim(self, event_id: str, head: dict[str, Any], at: str) -> bool:
        self.table.check_fault("waitlist_claim")
        pk = self._pk(event_id)
        offer = {"entry_id": head["entry_id"], "customer_id": head["customer_id"], "quantity": head["quantity"],
                 "joined_at": head["joined_at"], "queue_sk": head["sk"], "state": "PENDING", "claimed_at": at} \
            | {key: head[key] for key in ("zone", "price_category") if head.get(key)}
        return not self.table.transact([
            Write("queue", (pk, head["sk"]), present, lambda _: None),
            Write("offer", (pk, f"OFFER#{head['entry_id']}"), absent, lambda _: offer),
            self._marker(pk, head["customer_id"], head["entry_id"], {"state": "OFFERING"}),
        ])

    def waitlist_offered(self, event_id: str, offer: dict[str, Any], booking_id: str, hold_expires_at: str) -> bool:
        self.table.check_fault("waitlist_offered")
        pk = self._pk(event_id)
        return not self.table.transact([
            Write("offer", (pk, offer["sk"]), _has("state", "PENDING"),
                  _set({"state": "OFFERED", "booking_id": booking_id})),
            self._marker(pk, offer["customer_id"], offer["entry_id"],
                         {"state": "OFFERED", "booking_id": booking_id, "hold_expires_at": hold_expires_at}),
        ])

    def waitlist_unclaim(self, event_id: str, offer: dict[str, Any]) -> bool:
        self.table.check_fault("waitlist_unclaim")
        pk = self._pk(event_id)
        queued = {name: offer[name] for name in ("entry_id", "customer_id", "quantity", "joined_at")}
        return not self.table.transact([
            Write("offer", (pk, offer["sk"]), _has("state", "PENDING"), lambda _: None),
            Write("queue", (pk, offer["queue_sk"]), absent, lambda _: queued),
            self._marker(pk, offer["customer_id"], offer["entry_id"], {"state": "WAITING"}),
        ])

    def waitlist_close(self, event_id: str, offer: dict[str, Any], state: str) -> bool:
        self.table.check_fault("waitlist_close")
        pk = self._pk(event_id)
        return not self.table.transact([
            Write("offer", (pk, offer["sk"]), _has("state", "OFFERED"), lambda _: None),
            self._marker(pk, offer["customer_id"], offer["entry_id"], {"state": state}),
        ])

    def waitlist_skip(self, event_id: str, head: dict[str, Any], reason: str) -> bool:
        self.table.check_fault("waitlist_skip")
        pk = self._pk(event_id)
        return not self.table.transact([
            Write("queue", (pk, head["sk"]), present, lambda _: None),
            self._marker(pk, head["customer_id"], head["entry_id"], {"state": "SKIPPED", "reason": reason}),
        ])

    def waitlist_offer_failed(self, event_id: str, offer: dict[str, Any], failures: int) -> bool:
        self.table.check_fault("waitlist_offer_failed")
        return not self.table.transact([
            Write("offer", (self._pk(event_id), offer["sk"]), _has("state", "PENDING"), _set({"failures": failures})),
        ])

    def waitlist_drop_offer(self, event_id: str, offer: dict[str, Any], reason: str) -> bool:
        self.table.check_fault("waitlist_drop_offer")
        pk = self._pk(event_id)
        return not self.table.transact([
            Write("offer", (pk, offer["sk"]), _has("state", "PENDING"), lambda _: None),
            self._marker(pk, offer["customer_id"], offer["entry_id"], {"state": "SKIPPED", "reason": reason}),
        ])

    @staticmethod
    def _marker(pk: str, customer_id: str, entry_id: str, changes: dict[str, Any]) -> Write:
        """The customer's entry updated, on condition it is still the same entry."""
        return Write("entry", (pk, f"CUST#{customer_id}"), _has("entry_id", entry_id), _set(changes))

