"""DynamoDB storage: one table, conditional writes, and every multi-item change in one transaction.

Item layout (single table, see docs/data-model.md):

  pk                      sk               what
  EVENT#<event_id>        META             the event (price, kind, hold time, payment mode)
  EVENT#<event_id>        CREATION         which request body created the event (its fingerprint)
  EVENT#<event_id>        POOL#<nn>        a counted-inventory shard: capacity/available/held/sold
  EVENT#<event_id>        UNIT#<seat_id>   a named unit (seat): state, booking_id
  BOOKING#<booking_id>    META             the booking, its payment record, version
  BOOKING#<booking_id>    JOURNAL#<ver>    what happened at that version, written with the change
  BOOKING#<booking_id>    OUTBOX#<ver>     a change event for the relay (streamed, then expired)
  IDEM#<customer>#<key>   <scope>          idempotency record of a customer request
  CUSTOMER#<customer>     NOTE#<...>       a notification recorded for the customer

The booking's ``version`` grows by one with every write, and every write is conditioned on the
version it read: two writers racing on one booking (expiry and confirmation, say) cannot both win.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any, Iterable

import boto3
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from ..domain.booking import Booking, JournalEntry, Payment, PaymentMode
from ..domain.inventory import InventoryKind, Move, Places, Pool
from ..domain.money import Money
from ..domain.statuses import BookingStatus
from . import hold_limits

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

DUE_BUCKETS = 8
IDEMPOTENCY_RETENTION_SECONDS = 24 * 3600
OUTBOX_RETENTION_SECONDS = 7 * 24 * 3600
MAX_SORT_KEY_BYTES = 1024


def _ser(value: Any) -> dict:
    return _serializer.serialize(value)


def _attrs(values: dict[str, Any]) -> dict[str, dict]:
    return {key: _ser(value) for key, value in values.items()}


def _plain(item: dict[str, dict]) -> dict[str, Any]:
    return {key: _deserializer.deserialize(value) for key, value in item.items()}


def _int(value: Any) -> int:
    return int(value) if value is not None else 0


def due_bucket(booking_id: str) -> str:
    return f"DUE#{sum(booking_id.encode()) % DUE_BUCKETS}"


class StoreError(Exception):
    """Base of the storage outcomes callers branch on."""


class TransientStoreError(StoreError):
    """Throttling or a transaction conflict: nothing was written; retrying is safe."""


class StaleBooking(StoreError):
    """The booking changed since it was read; re-read and decide again."""


class PlacesTaken(StoreError):
    """A conditional write on the inventory failed: the places are not (or no longer) there."""

    def __init__(self, failed: list[str]) -> None:
        super().__init__(f"places not available: {failed}")
        self.failed = failed


class DuplicateRequest(StoreError):
    """The idempotency record exists: the request was already carried out."""


class ItemExists(StoreError):
    pass


class HoldLimitReached(StoreError):
    """The customer already has as many active holds for the event as it allows; nothing written."""


@dataclass(frozen=True)
class IdempotencyRecord:
    customer_id: str
    key: str
    scope: str
    fingerprint: str
    result_id: str
    #: Made by the system on the customer's behalf (a waitlist offer): kept apart from the keys
    #: customers send, so a customer can never pre-empt or replay a system request's key.
    system: bool = False

    @property
    def pk(self) -> str:
        return idempotency_pk(self.customer_id, self.key, self.system)


def idempotency_pk(customer_id: str, key: str, system: bool = False) -> str:
    # Customer ids and keys cannot contain "#", and no customer request writes the SYSIDEM prefix.
    return f"{'SYSIDEM' if system else 'IDEM'}#{customer_id}#{key}"


class BookingStore:
    def __init__(self, table_name: str, client: Any | None = None) -> None:
        self.table = table_name
        self.client = client or boto3.client("dynamodb")

    # ----------------------------------------------------------------------------------- events

    def put_event(self, event: dict[str, Any], pool_sizes: list[int] | None, unit_ids: list[str] | None,
                  fingerprint: str) -> None:
        """Create the event with its inventory; ItemExists if the id is taken (by this request's
        earlier attempt or another body). Never overwrites an existing item: see event_creation."""
        from .event_creation import create_event

        create_event(self, event, pool_sizes, unit_ids, fingerprint)

    def get_event(self, event_id: str) -> dict[str, Any] | None:
        answer = self.client.get_item(TableName=self.table, Key=_attrs({"pk": f"EVENT#{event_id}", "sk": "META"}))
        item = answer.get("Item")
        return _plain(item) if item else None

    def read_pools(self, event_id: str) -> list[Pool]:
        items = self._query_prefix(f"EVENT#{event_id}", "POOL#")
        return [
            Pool(item["sk"], _int(item["capacity"]), _int(item["available"]), _int(item["held"]), _int(item["sold"]))
            for item in items
        ]

    def read_units(self, event_id: str, unit_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        # A seat id too long for a sort key cannot exist; DynamoDB would refuse the whole read.
        keys = [{"pk": f"EVENT#{event_id}", "sk": f"UNIT#{unit}"} for unit in unit_ids
                if len(f"UNIT#{unit}".encode()) <= MAX_SORT_KEY_BYTES]
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(keys), 100):
            pending = {self.table: {"Keys": [_attrs(key) for key in keys[start:start + 100]], "ConsistentRead": True}}
            while pending:
                answer = self.client.batch_get_item(RequestItems=pending)
                for item in answer.get("Responses", {}).get(self.table, []):
                    plain = _plain(item)
                    found[plain["sk"].removeprefix("UNIT#")] = plain
                pending = answer.get("UnprocessedKeys") or {}
        return found

    def list_units(self, event_id: str) -> list[dict[str, Any]]:
        return self._query_prefix(f"EVENT#{event_id}", "UNIT#", projection="sk, #state", names={"#state": "state"})

    def _query_prefix(self, pk: str, prefix: str, projection: str | None = None, names: dict | None = None) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)" if prefix else "pk = :pk",
            "ExpressionAttributeValues": _attrs({":pk": pk, ":prefix": prefix} if prefix else {":pk": pk}),
            "ConsistentRead": True,
        }
        if projection:
            kwargs["ProjectionExpression"] = projection
        if names:
            kwargs["ExpressionAttributeNames"] = names
        return self._query_all(kwargs)

    def _query_all(self, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
        """Every page of a query, as plain items."""
        items: list[dict[str, Any]] = []
        while True:
            answer = self.client.query(**kwargs)
            items.extend(_plain(item) for item in answer.get("Items", []))
            if "LastEvaluatedKey" not in answer:
                return items
            kwargs = {**kwargs, "ExclusiveStartKey": answer["LastEvaluatedKey"]}

    # --------------------------------------------------------------------------------- bookings

    def create_hold(self, booking: Booking, journal: JournalEntry, outbox: dict[str, Any], idempotency: IdempotencyRecord,
                    hold_limit: int | None = None) -> None:
        """Take the places, write the booking, its first journal entry, its outbox event and the
        idempotency record, and count the hold against the customer's limit for the event (when
        the booking is ``counted_hold``; ``hold_limit`` None counts without a cap): all in one
        transaction, or nothing."""
        items = [
            {"Put": {"TableName": self.table, "Item": _attrs({
                "pk": idempotency.pk, "sk": idempotency.scope, "fingerprint": idempotency.fingerprint,
                "result_id": idempotency.result_id, "ttl": int(time.time()) + IDEMPOTENCY_RETENTION_SECONDS,
            }), "ConditionExpression": "attribute_not_exists(pk)"}},
            {"Put": {"TableName": self.table, "Item": _attrs(booking_item(booking)),
                     "ConditionExpression": "attribute_not_exists(pk)"}},
            self._journal_put(booking, journal),
            self._outbox_put(booking, outbox),
            *self._inventory_updates(booking.event_id, booking.booking_id, booking.places, Move.HOLD),
            # Last, so the inventory reasons keep their offsets: the customer-and-event lookup the
            # waitlist uses to skip a customer who already holds or owns places for the event.
            {"Put": {"TableName": self.table, "Item": _attrs({
                "pk": f"CUSTOMER#{booking.customer_id}", "sk": f"EVENT#{booking.event_id}#BOOKING#{booking.booking_id}",
                "booking_id": booking.booking_id, "created_at": booking.created_at,
            })}},
        ]
        if booking.counted_hold:
            items.append(hold_limits.take_slot(self.table, _attrs, booking.customer_id, booking.event_id, hold_limit))
        reasons = self._transact(items)
        if reasons is None:
            return
        if reasons[0] == "ConditionalCheckFailed":
            raise DuplicateRequest(idempotency.pk)
        if booking.counted_hold and hold_limit is not None and reasons[-1] == "ConditionalCheckFailed":
            raise HoldLimitReached(booking.customer_id)
        if "TransactionConflict" in reasons:
            raise TransientStoreError("transaction conflict")
        raise PlacesTaken(self._failed_places(booking.places, reasons[4:]))

    def customer_booking_ids(self, customer_id: str, event_id: str) -> list[str]:
        """Ids of the bookings a customer made for an event (markers written in the hold transaction)."""
        items = self._query_prefix(f"CUSTOMER#{customer_id}", f"EVENT#{event_id}#BOOKING#")
        return [item["booking_id"] for item in items]

    def get_idempotency(self, customer_id: str, key: str, scope: str, system: bool = False) -> dict[str, Any] | None:
        answer = self.client.get_item(
            TableName=self.table, Key=_attrs({"pk": idempotency_pk(customer_id, key, system), "sk": scope}),
            ConsistentRead=True,
        )
        item = answer.get("Item")
        return _plain(item) if item else None

    def get_booking(self, booking_id: str) -> Booking | None:
        answer = self.client.get_item(
            TableName=self.table, Key=_attrs({"pk": f"BOOKING#{booking_id}", "sk": "META"}), ConsistentRead=True
        )
        item = answer.get("Item")
        return booking_from_item(_plain(item)) if item else None

    def get_booking_with_journal(self, booking_id: str) -> tuple[Booking | None, list[JournalEntry]]:
        items = self._query_prefix(f"BOOKING#{booking_id}", "")
        booking = None
        journal: list[JournalEntry] = []
        for item in items:
            if item["sk"] == "META":
                booking = booking_from_item(item)
            elif item["sk"].startswith("JOURNAL#"):
                journal.append(JournalEntry(
                    at=item["at"], action=item["action"], actor=item["actor"], from_status=item.get("from_status"),
                    to_status=item["to_status"], decision=item["decision"], ids=dict(item.get("ids") or {}),
                ))
        return booking, journal

    def save(self, before: Booking, after: Booking, journal: JournalEntry, outbox: dict[str, Any] | None = None,
             move: Move | None = None, places: Places | None = None) -> None:
        """Write ``after`` over ``before`` (conditioned on ``before.version``), with its journal
        entry, its outbox event and the inventory move, in one transaction."""
        if after.version != before.version + 1:
            raise ValueError("a saved booking must be exactly one version ahead of the one read")
        items = [
            {"Put": {"TableName": self.table, "Item": _attrs(booking_item(after)),
                     "ConditionExpression": "#version = :expected",
                     "ExpressionAttributeNames": {"#version": "version"},
                     "ExpressionAttributeValues": _attrs({":expected": before.version})}},
            self._journal_put(after, journal),
        ]
        if outbox is not None:
            items.append(self._outbox_put(after, outbox))
        if move is not None:
            items.extend(self._inventory_updates(after.event_id, after.booking_id, places or after.places, move))
        if before.counted_hold and before.holds_places and not after.holds_places:
            # Leaving HELD/PAYMENT_PENDING frees the customer's slot in this same transaction.
            items.append(hold_limits.release_slot(self.table, _attrs, before.customer_id, before.event_id))
        reasons = self._transact(items)
        if reasons is None:
            return
        if reasons[0] == "ConditionalCheckFailed":
            raise StaleBooking(after.booking_id)
        if "TransactionConflict" in reasons:
            raise TransientStoreError("transaction conflict")
        offset = 3 if outbox is not None else 2
        raise PlacesTaken(self._failed_places(places or after.places, reasons[offset:]))

    def due_bookings(self, before: str, limit: int = 100) -> list[str]:
        """Booking ids whose due time is before ``before``, oldest first, across the index buckets."""
        found: list[tuple[str, str]] = []
        for bucket in range(DUE_BUCKETS):
            answer = self.client.query(
                TableName=self.table, IndexName="gsi1",
                KeyConditionExpression="gsi1pk = :bucket AND gsi1sk < :before",
                ExpressionAttributeValues=_attrs({":bucket": f"DUE#{bucket}", ":before": before}),
                Limit=limit,
            )
            for item in answer.get("Items", []):
                plain = _plain(item)
                found.append((plain["gsi1sk"], plain["pk"].removeprefix("BOOKING#")))
        return [booking_id for _, booking_id in sorted(found)[:limit]]

    def list_reviews(self) -> list[Booking]:
        """Bookings waiting for an operator: they sit under one key of the index while in review."""
        items = self._query_index("REVIEW", "gsi1", "gsi1pk")
        bookings = [self.get_booking(item["pk"].removeprefix("BOOKING#")) for item in items]
        return [booking for booking in bookings if booking is not None]

    def _query_index(self, key: str, index: str, attribute: str) -> list[dict[str, Any]]:
        return self._query_all({
            "TableName": self.table, "IndexName": index, "KeyConditionExpression": f"{attribute} = :key",
            "ExpressionAttributeValues": _attrs({":key": key}),
        })

    # ------------------------------------------------------------------------------ notifications

    def record_notification(self, customer_id: str, dedup_id: str, notification: dict[str, Any]) -> bool:
        """Record one customer notification; False if this dedup id was recorded before."""
        try:
            self.client.put_item(
                TableName=self.table,
                Item=_attrs({"pk": f"CUSTOMER#{customer_id}", "sk": f"NOTE#{dedup_id}", **notification}),
                ConditionExpression="attribute_not_exists(pk)",
            )
            return True
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise

    def forget_notification(self, customer_id: str, dedup_id: str) -> None:
        """Take a recorded notification back (its email could not be sent; the redelivery retries)."""
        self.client.delete_item(TableName=self.table,
                                Key=_attrs({"pk": f"CUSTOMER#{customer_id}", "sk": f"NOTE#{dedup_id}"}))

    def list_notifications(self, customer_id: str) -> list[dict[str, Any]]:
        return self._query_prefix(f"CUSTOMER#{customer_id}", "NOTE#")

    # ---------------------------------------------------------------------------------- waitlist
    # WAITLIST#<event> / Q#<joined_at>#<entry>   a customer waiting, in order of joining
    # WAITLIST#<event> / CUST#<customer>         the customer's entry and its state (one per customer)
    # WAITLIST#<event> / OFFER#<entry>           an entry taken off the queue: PENDING until its hold
    #                                            exists, then OFFERED with the booking id

    def waitlist_entry(self, event_id: str, customer_id: str) -> dict[str, Any] | None:
        answer = self.client.get_item(TableName=self.table, ConsistentRead=True,
                                      Key=_attrs({"pk": f"WAITLIST#{event_id}", "sk": f"CUST#{customer_id}"}))
        item = answer.get("Item")
        return _plain(item) if item else None

    def waitlist_join(self, event_id: str, entry: dict[str, Any], rejoin_states: tuple[str, ...]) -> bool:
        """Put the customer's entry and its queue item; False when the customer is already on the
        list (in a state other than ``rejoin_states``)."""
        pk = f"WAITLIST#{event_id}"
        names = {"#state": "state"}
        values = {f":s{i}": state for i, state in enumerate(rejoin_states)}
        allowed = " OR ".join(f"#state = :s{i}" for i in range(len(rejoin_states)))
        condition = "attribute_not_exists(pk)" + (f" OR {allowed}" if allowed else "")
        marker = {"Put": {"TableName": self.table, "ConditionExpression": condition,
                          "Item": _attrs({"pk": pk, "sk": f"CUST#{entry['customer_id']}", **entry})}}
        if values:
            marker["Put"]["ExpressionAttributeNames"] = names
            marker["Put"]["ExpressionAttributeValues"] = _attrs(values)
        queue = {"Put": {"TableName": self.table, "ConditionExpression": "attribute_not_exists(pk)",
                         "Item": _attrs({"pk": pk, "sk": entry["queue_sk"], "entry_id": entry["entry_id"],
                                         "customer_id": entry["customer_id"], "quantity": entry["quantity"],
                                         "joined_at": entry["joined_at"]})}}
        return self._transact_all([marker, queue])

    def waitlist_position(self, event_id: str, queue_sk: str) -> int:
        """1 + how many queue items sort before ``queue_sk`` (0 when it is not in the queue)."""
        kwargs: dict[str, Any] = {
            "TableName": self.table, "Select": "COUNT", "ConsistentRead": True,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :mine",
            "ExpressionAttributeValues": _attrs({":pk": f"WAITLIST#{event_id}", ":low": "Q#", ":mine": queue_sk}),
        }
        count = 0
        while True:
            answer = self.client.query(**kwargs)
            count += int(answer.get("Count", 0))
            if "LastEvaluatedKey" not in answer:
                break
            kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
        mine = self.client.get_item(TableName=self.table, ConsistentRead=True,
                                    Key=_attrs({"pk": f"WAITLIST#{event_id}", "sk": queue_sk}))
        return count if "Item" in mine else 0

    def waitlist_leave(self, event_id: str, customer_id: str, entry: dict[str, Any]) -> bool:
        """Remove a waiting entry and its queue item; False if it stopped waiting meanwhile."""
        pk = f"WAITLIST#{event_id}"
        return self._transact_all([
            {"Delete": {"TableName": self.table, "Key": _attrs({"pk": pk, "sk": f"CUST#{customer_id}"}),
                        "ConditionExpression": "#state = :waiting AND entry_id = :entry",
                        "ExpressionAttributeNames": {"#state": "state"},
                        "ExpressionAttributeValues": _attrs({":waiting": "WAITING", ":entry": entry["entry_id"]})}},
            {"Delete": {"TableName": self.table, "Key": _attrs({"pk": pk, "sk": entry["queue_sk"]}),
                        "ConditionExpression": "attribute_exists(pk)"}},
        ])

    def waitlist_head(self, event_id: str) -> dict[str, Any] | None:
        answer = self.client.query(
            TableName=self.table, ConsistentRead=True, Limit=1,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :q)",
            ExpressionAttributeValues=_attrs({":pk": f"WAITLIST#{event_id}", ":q": "Q#"}),
        )
        items = answer.get("Items") or []
        return _plain(items[0]) if items else None

    def waitlist_offers(self, event_id: str) -> list[dict[str, Any]]:
        return self._query_prefix(f"WAITLIST#{event_id}", "OFFER#")

    def waitlist_claim(self, event_id: str, head: dict[str, Any], at: str) -> bool:
        """Take the head off the queue as a PENDING offer, conditionally: of two relays racing for
        the same entry, exactly one succeeds."""
        pk = f"WAITLIST#{event_id}"
        return self._transact_all([
            {"Delete": {"TableName": self.table, "Key": _attrs({"pk": pk, "sk": head["sk"]}),
                        "ConditionExpression": "attribute_exists(pk)"}},
            {"Put": {"TableName": self.table, "ConditionExpression": "attribute_not_exists(pk)",
                     "Item": _attrs({"pk": pk, "sk": f"OFFER#{head['entry_id']}", "entry_id": head["entry_id"],
                                     "customer_id": head["customer_id"], "quantity": head["quantity"],
                                     "joined_at": head["joined_at"], "queue_sk": head["sk"], "state": "PENDING",
                                     "claimed_at": at})}},
            self._waitlist_marker_update(pk, head["customer_id"], head["entry_id"], {"state": "OFFERING"}),
        ])

    def waitlist_offered(self, event_id: str, offer: dict[str, Any], booking_id: str, hold_expires_at: str) -> bool:
        pk = f"WAITLIST#{event_id}"
        return self._transact_all([
            {"Update": {"TableName": self.table, "Key": _attrs({"pk": pk, "sk": offer["sk"]}),
                        "UpdateExpression": "SET #state = :offered, booking_id = :booking",
                        "ConditionExpression": "#state = :pending",
                        "ExpressionAttributeNames": {"#state": "state"},
                        "ExpressionAttributeValues": _attrs({":offered": "OFFERED", ":pending": "PENDING",
                                                             ":booking": booking_id})}},
            self._waitlist_marker_update(pk, offer["customer_id"], offer["entry_id"], {
                "state": "OFFERED", "booking_id": booking_id, "hold_expires_at": hold_expires_at}),
        ])

    def waitlist_unclaim(self, event_id: str, offer: dict[str, Any]) -> bool:
        """A PENDING offer whose places were not there: back into the queue at its old place."""
        pk = f"WAITLIST#{event_id}"
        return self._transact_all([
            {"Delete": {"TableName": self.table, "Key": _attrs({"pk": pk, "sk": offer["sk"]}),
                        "ConditionExpression": "#state = :pending", "ExpressionAttributeNames": {"#state": "state"},
                        "ExpressionAttributeValues": _attrs({":pending": "PENDING"})}},
            {"Put": {"TableName": self.table, "ConditionExpression": "attribute_not_exists(pk)",
                     "Item": _attrs({"pk": pk, "sk": offer["queue_sk"], "entry_id": offer["entry_id"],
                                     "customer_id": offer["customer_id"], "quantity": offer["quantity"],
                                     "joined_at": offer["joined_at"]})}},
            self._waitlist_marker_update(pk, offer["customer_id"], offer["entry_id"], {"state": "WAITING"}),
        ])

    def waitlist_close(self, event_id: str, offer: dict[str, Any], state: str) -> bool:
        """An OFFERED entry whose booking was paid (DONE) or lapsed (PASSED) leaves the offers."""
        pk = f"WAITLIST#{event_id}"
        return self._transact_all([
            {"Delete": {"TableName": self.table, "Key": _attrs({"pk": pk, "sk": offer["sk"]}),
                        "ConditionExpression": "#state = :offered", "ExpressionAttributeNames": {"#state": "state"},
                        "ExpressionAttributeValues": _attrs({":offered": "OFFERED"})}},
            self._waitlist_marker_update(pk, offer["customer_id"], offer["entry_id"], {"state": state}),
        ])

    def waitlist_skip(self, event_id: str, head: dict[str, Any], reason: str) -> bool:
        pk = f"WAITLIST#{event_id}"
        return self._transact_all([
            {"Delete": {"TableName": self.table, "Key": _attrs({"pk": pk, "sk": head["sk"]}),
                        "ConditionExpression": "attribute_exists(pk)"}},
            self._waitlist_marker_update(pk, head["customer_id"], head["entry_id"],
                                         {"state": "SKIPPED", "reason": reason}),
        ])

    def waitlist_offer_failed(self, event_id: str, offer: dict[str, Any], failures: int) -> bool:
        """Count a failed attempt at a PENDING offer's hold (it stays first in line for now)."""
        return self._transact_all([
            {"Update": {"TableName": self.table, "Key": _attrs({"pk": f"WAITLIST#{event_id}", "sk": offer["sk"]}),
                        "UpdateExpression": "SET failures = :failures", "ConditionExpression": "#state = :pending",
                        "ExpressionAttributeNames": {"#state": "state"},
                        "ExpressionAttributeValues": _attrs({":failures": failures, ":pending": "PENDING"})}},
        ])

    def waitlist_drop_offer(self, event_id: str, offer: dict[str, Any], reason: str) -> bool:
        """A PENDING offer that cannot be made: it leaves the line, its entry SKIPPED with the reason."""
        pk = f"WAITLIST#{event_id}"
        return self._transact_all([
            {"Delete": {"TableName": self.table, "Key": _attrs({"pk": pk, "sk": offer["sk"]}),
                        "ConditionExpression": "#state = :pending", "ExpressionAttributeNames": {"#state": "state"},
                        "ExpressionAttributeValues": _attrs({":pending": "PENDING"})}},
            self._waitlist_marker_update(pk, offer["customer_id"], offer["entry_id"],
                                         {"state": "SKIPPED", "reason": reason}),
        ])

    def _waitlist_marker_update(self, pk: str, customer_id: str, entry_id: str, changes: dict[str, Any]) -> dict:
        names = {f"#f{i}": key for i, key in enumerate(changes)}
        values = {f":v{i}": value for i, value in enumerate(changes.values())}
        return {"Update": {
            "TableName": self.table, "Key": _attrs({"pk": pk, "sk": f"CUST#{customer_id}"}),
            "UpdateExpression": "SET " + ", ".join(f"#f{i} = :v{i}" for i in range(len(changes))),
            "ConditionExpression": "entry_id = :entry",
            "ExpressionAttributeNames": names, "ExpressionAttributeValues": _attrs({**values, ":entry": entry_id}),
        }}

    def _transact_all(self, items: list[dict]) -> bool:
        """True when the transaction was written, False when a condition failed (nothing written)."""
        reasons = self._transact(items)
        if reasons is None:
            return True
        if "ConditionalCheckFailed" in reasons:
            return False
        raise TransientStoreError("transaction conflict")

    # ---------------------------------------------------------------------- catalog (listing)

    def update_event_listing(self, event_id: str, expected_version: int, changes: dict[str, Any],
                             drop_index: list[tuple[str, str]], put_index: list[dict[str, Any]]) -> None:
        """Change the event's descriptive fields and its index items in one transaction,
        conditioned on the event's ``catalog_version`` (absent counts as 0)."""
        names = {f"#f{i}": key for i, key in enumerate(changes)}
        values = {f":v{i}": value for i, value in enumerate(changes.values())}
        values[":expected"] = expected_version
        sets = ", ".join(f"#f{i} = :v{i}" for i in range(len(changes)))
        names["#cv"] = "catalog_version"
        items: list[dict] = [{"Update": {
            "TableName": self.table, "Key": _attrs({"pk": f"EVENT#{event_id}", "sk": "META"}),
            "UpdateExpression": f"SET {sets}" if sets else "SET #cv = #cv",
            "ConditionExpression": "attribute_exists(pk) AND (#cv = :expected OR "
                                   "(attribute_not_exists(#cv) AND :expected = :zero))",
            "ExpressionAttributeNames": names, "ExpressionAttributeValues": _attrs({**values, ":zero": 0}),
        }}]
        put_keys = {(item["pk"], item["sk"]) for item in put_index}
        items += [{"Delete": {"TableName": self.table, "Key": _attrs({"pk": pk, "sk": sk})}}
                  for pk, sk in drop_index if (pk, sk) not in put_keys]
        items += [{"Put": {"TableName": self.table, "Item": _attrs(item)}} for item in put_index]
        reasons = self._transact(items)
        if reasons is None:
            return
        if reasons[0] == "ConditionalCheckFailed":
            raise StaleBooking(event_id)
        raise TransientStoreError("transaction conflict")

    def query_listing(self, pk: str, lower: str, upper: str, limit: int, start: dict[str, str] | None,
                      filter_expression: str | None = None, filter_values: dict[str, Any] | None = None,
                      filter_names: dict[str, str] | None = None) -> tuple[list[dict[str, Any]], bool]:
        """Up to ``limit`` index items of one partition with ``lower <= sk < upper``, after the
        filter, starting after ``start``; and whether more may follow. Eventually consistent."""
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :lower AND :upper",
            "ExpressionAttributeValues": _attrs({":pk": pk, ":lower": lower, ":upper": upper, **(filter_values or {})}),
        }
        if filter_expression:
            kwargs["FilterExpression"] = filter_expression
        if filter_names:
            kwargs["ExpressionAttributeNames"] = filter_names
        if start:
            kwargs["ExclusiveStartKey"] = _attrs(start)
        found: list[dict[str, Any]] = []
        while True:
            kwargs["Limit"] = max(limit - len(found), 1) if not filter_expression else max(limit * 2, 10)
            answer = self.client.query(**kwargs)
            for item in answer.get("Items", []):
                found.append(_plain(item))
                if len(found) == limit:
                    return found, True
            if "LastEvaluatedKey" not in answer:
                return found, False
            kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]

    def seat_states(self, event_id: str) -> dict[str, str]:
        """Every seat of an event and its state, eventually consistent (the public seat map)."""
        kwargs: dict[str, Any] = {
            "TableName": self.table, "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": _attrs({":pk": f"EVENT#{event_id}", ":prefix": "UNIT#"}),
            "ProjectionExpression": "sk, #state", "ExpressionAttributeNames": {"#state": "state"},
        }
        states: dict[str, str] = {}
        while True:
            answer = self.client.query(**kwargs)
            for item in answer.get("Items", []):
                states[item["sk"]["S"].removeprefix("UNIT#")] = item["state"]["S"]
            if "LastEvaluatedKey" not in answer:
                return states
            kwargs = {**kwargs, "ExclusiveStartKey": answer["LastEvaluatedKey"]}

    # ---------------------------------------------------------------------------------- helpers

    def _journal_put(self, booking: Booking, entry: JournalEntry) -> dict:
        return {"Put": {"TableName": self.table, "Item": _attrs({
            "pk": f"BOOKING#{booking.booking_id}", "sk": f"JOURNAL#{booking.version:06d}", **entry.as_dict(),
        }), "ConditionExpression": "attribute_not_exists(pk)"}}

    def _outbox_put(self, booking: Booking, event: dict[str, Any]) -> dict:
        return {"Put": {"TableName": self.table, "Item": _attrs({
            "pk": f"BOOKING#{booking.booking_id}", "sk": f"OUTBOX#{booking.version:06d}",
            "booking_id": booking.booking_id, "event_id": booking.event_id, "customer_id": booking.customer_id,
            "status": booking.status.value, "version": booking.version,
            **({"contact_email": booking.contact_email} if booking.contact_email else {}),
            "ttl": int(time.time()) + OUTBOX_RETENTION_SECONDS, **event,
        })}}

    def _inventory_updates(self, event_id: str, booking_id: str, places: Places, move: Move) -> list[dict]:
        event_pk = f"EVENT#{event_id}"
        updates: list[dict] = []
        if places.kind is InventoryKind.COUNTED:
            for pool_id, count in places.pools:
                updates.append({"Update": {
                    "TableName": self.table,
                    "Key": _attrs({"pk": event_pk, "sk": pool_id}),
                    "UpdateExpression": "SET #src = #src - :n, #dst = #dst + :n",
                    "ConditionExpression": "#src >= :n",
                    "ExpressionAttributeNames": {"#src": move.source, "#dst": move.target},
                    "ExpressionAttributeValues": _attrs({":n": count}),
                }})
            return updates
        for unit in places.units:
            names = {"#state": "state"}
            values: dict[str, Any] = {":src": move.source, ":dst": move.target}
            if move.source == "available":
                condition = "#state = :src"
            else:
                condition = "#state = :src AND booking_id = :booking"
                values[":booking"] = booking_id
            if move.target == "available":
                expression = "SET #state = :dst REMOVE booking_id"
            else:
                expression = "SET #state = :dst, booking_id = :booking"
                values[":booking"] = booking_id
            updates.append({"Update": {
                "TableName": self.table,
                "Key": _attrs({"pk": event_pk, "sk": f"UNIT#{unit}"}),
                "UpdateExpression": expression,
                "ConditionExpression": f"attribute_exists(pk) AND {condition}",
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": _attrs(values),
            }})
        return updates

    @staticmethod
    def _failed_places(places: Places, reasons: list[str]) -> list[str]:
        labels = [pool for pool, _ in places.pools] if places.kind is InventoryKind.COUNTED else list(places.units)
        return [label for label, reason in zip(labels, reasons) if reason == "ConditionalCheckFailed"]

    def _transact(self, items: list[dict]) -> list[str] | None:
        """Run a transaction; None on success, else the per-item cancellation reason codes.

        A transaction cancelled by a conflict or throttling wrote nothing, and sending the same
        items again re-checks every condition: so it is repeated here, a few times with jittered
        pauses, before the caller hears of it (TransientStoreError, or reasons naming the conflict)."""
        for attempt in range(TRANSACT_ATTEMPTS):
            last = attempt == TRANSACT_ATTEMPTS - 1
            try:
                self.client.transact_write_items(TransactItems=items)
                return None
            except ClientError as exc:
                code = _code(exc)
                if code == "TransactionCanceledException":
                    reasons = [reason.get("Code", "None") for reason in exc.response.get("CancellationReasons", [])]
                    transient = not reasons or any(reason in _TRANSIENT_REASONS for reason in reasons)
                    if transient and not last:
                        _pause(attempt)
                        continue
                    if not reasons:
                        raise TransientStoreError("transaction cancelled without reasons") from None
                    if any(reason in ("ThrottlingError", "ProvisionedThroughputExceeded") for reason in reasons):
                        raise TransientStoreError("throttled") from None
                    return reasons
                if code in ("TransactionConflictException", "ThrottlingException",
                            "ProvisionedThroughputExceededException", "TransactionInProgressException"):
                    if not last:
                        _pause(attempt)
                        continue
                    raise TransientStoreError(code) from None
                raise
        raise AssertionError("unreachable")


#: Cancellation reasons after which the very same transaction may succeed.
_TRANSIENT_REASONS = ("TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded")
#: Tries of one transaction; the services' own loops (re-read, decide again) sit above this.
TRANSACT_ATTEMPTS = 3


def _pause(attempt: int) -> None:
    """Full jitter, so writers that collided once do not collide again in step."""
    time.sleep(random.uniform(0, 0.01 * 2 ** attempt))


def _code(exc: ClientError) -> str:
    return exc.response.get("Error", {}).get("Code", "")


# ------------------------------------------------------------------------------ item <-> booking

def booking_item(booking: Booking) -> dict[str, Any]:
    item: dict[str, Any] = {
        "pk": f"BOOKING#{booking.booking_id}", "sk": "META",
        "booking_id": booking.booking_id, "event_id": booking.event_id, "customer_id": booking.customer_id,
        "status": booking.status.value, "inventory_kind": booking.places.kind.value,
        "quantity": booking.places.quantity, "amount": booking.amount.text, "currency": booking.amount.currency,
        "payment_mode": booking.payment_mode.value, "hold_expires_at": booking.hold_expires_at,
        "created_at": booking.created_at, "updated_at": booking.updated_at, "version": booking.version,
        "places_secured": booking.places_secured,
    }
    if booking.places.pools:
        item["pools"] = {pool: count for pool, count in booking.places.pools}
    if booking.places.units:
        item["units"] = list(booking.places.units)
    if booking.payment is not None:
        item["payment"] = booking.payment.as_dict()
    if booking.review:
        item["review"] = dict(booking.review)
    if booking.contact_email:
        item["contact_email"] = booking.contact_email
    if booking.cancelled_by_customer:
        item["cancelled_by_customer"] = True
    if booking.counted_hold and booking.holds_places:
        item["counted_hold"] = True
    # Bookings sit in the due index while a hold runs or a payment is unsettled, so the sweeper
    # finds any whose timer or reconciliation execution never started or died.
    due_at = booking.due_at
    if booking.status is BookingStatus.MANUAL_REVIEW or booking.review:
        item["gsi1pk"] = "REVIEW"
        item["gsi1sk"] = f"{booking.updated_at}#{booking.booking_id}"
    elif due_at:
        item["gsi1pk"] = due_bucket(booking.booking_id)
        item["gsi1sk"] = f"{due_at}#{booking.booking_id}"
    return item


def booking_from_item(item: dict[str, Any]) -> Booking:
    kind = InventoryKind(item["inventory_kind"])
    pools = tuple(sorted((pool, _int(count)) for pool, count in (item.get("pools") or {}).items()))
    units = tuple(item.get("units") or ())
    payment = item.get("payment")
    return Booking(
        booking_id=item["booking_id"], event_id=item["event_id"], customer_id=item["customer_id"],
        status=BookingStatus(item["status"]),
        places=Places(kind=kind, quantity=_int(item["quantity"]), pools=pools, units=units),
        amount=Money.parse(item["amount"], item["currency"]), payment_mode=PaymentMode(item["payment_mode"]),
        hold_expires_at=item["hold_expires_at"], created_at=item["created_at"], updated_at=item["updated_at"],
        version=_int(item["version"]),
        payment=Payment(**{key: (_int(value) if key in ("checks", "restarts") else value) for key, value in payment.items()})
        if payment else None,
        places_secured=bool(item.get("places_secured")),
        review=dict(item["review"]) if item.get("review") else None,
        contact_email=item.get("contact_email"),
        counted_hold=bool(item.get("counted_hold")),
        cancelled_by_customer=bool(item.get("cancelled_by_customer")),
    )
