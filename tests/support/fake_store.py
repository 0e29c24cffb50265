"""An in-memory booking store: the core's storage ports (holdfast/ports.py) over one ``MemoryTable``,
for service tests of holds, payments, reconciliation, refunds, reviews, resolutions, the
sweeper's decisions and event cancellations.

What is shared with the adapter and what is the fake's own: the *items* are the adapter's. Keys,
the booking item (with its gsi1 attributes for the due index and the review queue) and the
booking read back from it come from the adapters' pure codec functions, so a fake booking is
stored exactly as DynamoDB would hold it. The *semantics* are the fake's: each transaction item's
condition and effect (the booking's version, the claims of pools, units and time granules, the
sale gate, the hold slot, the idempotency record), all conditions checked before anything is
written, the outcome named from the failed labels in the adapter's order, and the queries
(prefixes, the gsi1 index, the expiry shards). tests/contract/storage/ runs the same cases against
this fake, the adapter on moto and the adapter on DynamoDB Local: that is what keeps them equal.

Labelled items (``ports.Labelled``) a service hands back in ``Change.items`` are opaque to it; the
adapter's are DynamoDB requests, which only a DynamoDB expression evaluator could apply. So the
fake builds its own (``sale_gate_check`` here, a product's items in its fake part, such as
tests/support/fake_parking.py): the label and a ``Write`` (key, condition, effect) it applies like
its own items, and it refuses a raw DynamoDB item with a TypeError rather than guess what the item
meant. tests/support/fake_table.py composes this store with the products' fake parts.

Not here either: ``query_listing`` (key ranges over DynamoDB's byte order of the sort keys); its
cases stay on the emulators. The waitlist, notification and resource ports are
tests/support/fakes.py's; they share this store's table (``FakeWaitlistStore`` and
``FakeNotificationStore`` below), as the adapters share theirs.

Test code only: the deployed package (layers/) never imports this module.
"""
from __future__ import annotations

import base64
import json

import random
import time
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from typing import Any, Iterable, Sequence

from botocore.exceptions import ClientError, ParamValidationError

from holdfast.adapters.booking_items import booking_from_item, booking_item, idempotency_pk
from holdfast.adapters.bookings_store import GIVE, IDEMPOTENCY_RETENTION_SECONDS, OUTBOX_RETENTION_SECONDS
from holdfast.adapters.cancellation_store import (CANCELLING, EVENT_INDEX_SHARDS, event_index_pk, sold_index_pk,
                                                  sold_keys, sold_position)
from holdfast.adapters.codec import MAX_SORT_KEY_BYTES
from holdfast.adapters.expiry_buckets import (BUCKET_SECONDS, EXPIRY_SHARDS, OFFERING_SHARDS, RETENTION_SECONDS,
                                              ShardWriter, bucket_of, check_buckets, check_marker_sk, checks_named,
                                              marker_sk, offering_shard_pk, retention, shard_pk, shards_named,
                                              shards_pk)
from holdfast.adapters.granule_claims import day_partition, granule_key, session_of
from holdfast.adapters.hold_limits import address_counter_key, counter_key
from holdfast.adapters.inventory_store import (CLAIM, UNIT_PARTITIONS, UNIT_PREFIX, inventory_items, layout_key,
                                               pool_id, pool_key, pools_of, split_item, unit_key, unit_partition_pk)
from holdfast.adapters.sale_gate import GATE, GATE_SHARDS, gate_key, gate_shard
from holdfast.clock import iso, parse_iso
from holdfast.domain.booking import Booking, JournalEntry
from holdfast.domain.claims import CounterClaim, GranuleClaim, UnitClaim, claims_of, other_offerings
from holdfast.domain.inventory import Granule, Move, Places, Pool
from holdfast.domain.statuses import BookingStatus
from holdfast.observability import booking_written
from holdfast.ports import (HoldsFromAddressReached, AlreadyCancelled, Change, DuplicateRequest, EventNotFound, HoldLimitReached, ItemExists,
                            KeyUsed, Labelled, PlacesTaken, SalesStopped, StaleBooking, StoreError,
                            TransientStoreError)
from tests.support.fakes import FakeNotificationLog, FakeWaitlist, Item, Key, Write, _Fake, _set, absent, always

#: DynamoDB's limit of items in one TransactWriteItems (and keys in one BatchGetItem request).
TRANSACTION_LIMIT = 100


def fake_item(write: Write) -> Labelled:
    """A labelled item the fake can apply: what its item builders return for a ``Change``."""
    return (write.label, {"Fake": write})


def validation_error(message: str, operation: str) -> ClientError:
    """What DynamoDB answers a request it refuses to run (the adapter lets it through)."""
    return ClientError({"Error": {"Code": "ValidationException", "Message": message}}, operation)


def _unchanged(item: Item | None) -> Item | None:
    """A ConditionCheck's effect: none."""
    return item


def _add(name: str, amount: int) -> Any:
    """``ADD name :amount`` (a missing item or attribute counts from 0)."""
    return lambda item: {**(item or {}), name: (item or {}).get(name, 0) + amount}


def _number_at_least(item: Item | None, name: str, amount: int) -> bool:
    """``#name >= :amount``: false on a missing item or attribute, or one that is not a number."""
    return item is not None and isinstance(item.get(name), (int, Decimal)) and item[name] >= amount


class FakeBookingStore(_Fake):
    """``HoldStore``, ``PaymentStore``'s booking part (``LifecycleStore``, ``InventoryReads``,
    ``ExpiryIndex``, ``ReviewQueue``), ``Cancellations``, ``put_event``, ``get_event`` and
    ``update_event_listing`` of ``Catalog``, and ``sale_gate_check`` to build an extra item (see the
    module's docstring)."""

    # ------------------------------------------------------------------------------ commit

    @property
    def expiry_writer(self) -> ShardWriter:
        """This store's shard of the expiry buckets and the buckets it marked (as the adapter's)."""
        if "_expiry_writer" not in vars(self):
            self._expiry_writer = ShardWriter()
        return self._expiry_writer

    @expiry_writer.setter
    def expiry_writer(self, writer: ShardWriter) -> None:
        self._expiry_writer = writer

    def commit(self, change: Change) -> None:
        self.table.check_fault("commit")
        if change.after is None:
            writes = self._opened(change.items)
        elif change.before is None:
            writes = self._hold_writes(change)
        else:
            writes = self._change_writes(change)
        failed = self._transact(writes)
        if not failed:
            if change.before is None and change.after is not None:
                self.expiry_writer.committed(bucket_of(change.after.hold_expires_at))
            for bucket in check_buckets(change.before, change.after):
                self.expiry_writer.committed_check(bucket)
            if change.after is not None:
                booking_written(change.before, change.after, change.journal)
            return
        raise self._outcome(change, failed)

    def _hold_writes(self, change: Change) -> list[Write]:
        booking, record = change.after, change.idempotency
        assert booking is not None and change.journal is not None
        if record is None:
            raise ValueError("a new hold is written with its idempotency record")
        key = (idempotency_pk(record.customer_id, record.key, record.system), record.scope)
        idempotency = {"fingerprint": record.fingerprint, "result_id": record.result_id,
                       "ttl": int(time.time()) + IDEMPOTENCY_RETENTION_SECONDS}
        bucket = bucket_of(booking.hold_expires_at)
        expiry = {"booking_id": booking.booking_id, "event_id": booking.event_id,
                  "ttl": int((parse_iso(bucket) + timedelta(seconds=RETENTION_SECONDS)).timestamp())}
        writes = [
            Write("idempotency", key, absent, lambda _: idempotency),
            Write("booking", _booking_key(booking.booking_id), absent, lambda _: booking_item(booking)),
            self._journal(booking, change.journal),
            self._outbox(booking, change.outbox or {}),
            *self._claims(booking.event_id, booking.booking_id, change.places or booking.places,
                          change.move or Move.HOLD),
            Write("customer_marker", (f"CUSTOMER#{booking.customer_id}",
                                      f"EVENT#{booking.event_id}#BOOKING#{booking.booking_id}"),
                  always, lambda _: {"booking_id": booking.booking_id, "created_at": booking.created_at}),
            Write("event_index", (event_index_pk(booking.event_id, booking.booking_id), booking.booking_id),
                  always, lambda _: {"booking_id": booking.booking_id, "placed_at": booking.created_at}),
            self._gate(booking.event_id, booking.booking_id, change.offering_version),
            Write("expiry_bucket", (shard_pk(bucket, self.expiry_writer.shard), booking.booking_id),
                  always, lambda _: expiry),
            *([Write("expiry_shard", (shards_pk(bucket), marker_sk(self.expiry_writer.shard, self.expiry_writer.name)),
                     always, lambda _: {"ttl": expiry["ttl"]})] if self.expiry_writer.needs_marker(bucket) else []),
            *self._check_markers(None, booking),
            *self._opened(change.items),
        ]
        others = other_offerings(booking.event_id, change.places or booking.places)
        others += [o for o, _ in change.other_versions if o != booking.event_id and o not in others]
        for offering in others:
            writes += [
                Write(f"customer_marker@{offering}", (f"CUSTOMER#{booking.customer_id}",
                                                      f"EVENT#{offering}#BOOKING#{booking.booking_id}"),
                      always, lambda _: {"booking_id": booking.booking_id, "created_at": booking.created_at}),
                Write(f"event_index@{offering}", (event_index_pk(offering, booking.booking_id), booking.booking_id),
                      always, lambda _: {"booking_id": booking.booking_id, "placed_at": booking.created_at}),
                replace(self._gate(offering, booking.booking_id, dict(change.other_versions).get(offering)),
                        label=f"{GATE}@{offering}"),
            ]
        if booking.counted_hold:
            limit = change.hold_limit
            writes.append(Write("hold_limit", _key(counter_key(booking.customer_id, booking.event_id)),
                                lambda item: limit is None or item is None or "active" not in item
                                or item["active"] < limit,
                                _add("active", 1)))
            for offering, cap in change.other_hold_limits:
                writes.append(Write(f"hold_limit@{offering}", _key(counter_key(booking.customer_id, offering)),
                                    lambda item, cap=cap: item is None or "active" not in item or item["active"] < cap,
                                    _add("active", 1)))
        if booking.counted_address:
            caps = ((booking.event_id, change.address_limit, "address_limit"),
                    *((o, c, f"address_limit@{o}") for o, c in change.other_address_limits))
            writes += [Write(label, _key(address_counter_key(booking.counted_address, offering)),
                             lambda item, cap=cap: cap is None or item is None or "live_holds" not in item
                             or item["live_holds"] < cap,
                             _add("live_holds", 1)) for offering, cap, label in caps]
        return writes

    def _change_writes(self, change: Change) -> list[Write]:
        before, after = change.before, change.after
        assert before is not None and after is not None and change.journal is not None
        if after.version != before.version + 1:
            raise ValueError("a saved booking must be exactly one version ahead of the one read")
        writes = [
            Write("booking", _booking_key(after.booking_id),
                  lambda item: item is not None and "version" in item and item["version"] == before.version,
                  lambda _: booking_item(after)),
            self._journal(after, change.journal),
        ]
        if change.outbox is not None:
            writes.append(self._outbox(after, change.outbox))
        if change.move is not None:
            writes += self._claims(after.event_id, after.booking_id, change.places or after.places, change.move)
            if change.move.source == "available":
                writes.append(self._gate(after.event_id, after.booking_id))
        if change.swap is not None:
            writes += self._swap_writes(change, after)
        if after.status is BookingStatus.CONFIRMED and before.status is not BookingStatus.CONFIRMED:
            # the adapter's: confirmed, its index entries are listed among each offering's sales
            writes += [Write(f"event_index@{offering}", (event_index_pk(offering, after.booking_id), after.booking_id),
                             always, lambda _, offering=offering: {
                                 "booking_id": after.booking_id, "placed_at": after.created_at,
                                 **sold_keys(offering, after.booking_id, after.created_at)})
                       for offering in after.offerings]
        writes += self._check_markers(before, after)
        writes += self._opened(change.items)
        if before.customer_id != after.customer_id and after.erased_at is None:   # a transferred booking's markers follow it
            for offering in (after.event_id, *other_offerings(after.event_id, after.places)):
                sk = f"EVENT#{offering}#BOOKING#{after.booking_id}"
                writes += [Write(f"customer_marker_from@{offering}", (f"CUSTOMER#{before.customer_id}", sk), always,
                                 lambda _: None),
                           Write(f"customer_marker@{offering}", (f"CUSTOMER#{after.customer_id}", sk), always,
                                 lambda _: {"booking_id": after.booking_id, "created_at": after.created_at})]
        if before.counted_hold and before.holds_places and not after.holds_places:
            writes.append(Write("hold_limit", _key(counter_key(before.customer_id, before.event_id)), always,
                                _add("active", -1)))
            writes += [Write(f"hold_limit@{offering}", _key(counter_key(before.customer_id, offering)), always,
                             _add("active", -1)) for offering in before.counted_offerings[1:]]
        if before.counted_address and before.holds_places and not after.holds_places:
            writes += [Write(f"address_limit@{offering}" if index else "address_limit",
                             _key(address_counter_key(before.counted_address, offering)), always,
                             _add("live_holds", -1))
                       for index, offering in enumerate(before.counted_offerings or (before.event_id,))]
        return writes

    def _check_markers(self, before: Booking | None, after: Booking) -> list[Write]:
        """The adapter's ``check_items``: a payment check's marker in its bucket, once per writer."""
        return [Write(f"check_marker@{bucket}", (shards_pk(bucket), check_marker_sk(self.expiry_writer.name)), always,
                      lambda _, ttl=retention(bucket): {"ttl": ttl})
                for bucket in check_buckets(before, after) if bucket not in self.expiry_writer.checks_marked]

    def _swap_writes(self, change: Change, after: Booking) -> list[Write]:
        """The adapter's ``_swap_items``: given back, taken through the gate, the new offering's
        marker and index entry."""
        swap = change.swap
        assert swap is not None and change.before is not None
        writes = [replace(write, label=GIVE + write.label.removeprefix(CLAIM))
                  for write in self._claims(swap.given_from, after.booking_id, swap.given, swap.give_move)]
        writes += self._claims(swap.taken_from, after.booking_id, swap.taken, swap.take_move)
        if swap.taken.quantity or swap.take_move is Move.RETAKE:
            writes.append(self._gate(swap.taken_from, after.booking_id, change.offering_version))
        if swap.given_from != swap.taken_from and swap.give_move is Move.UNSELL:
            writes.append(replace(self._gate(swap.given_from, after.booking_id), label=f"{GATE}@{swap.given_from}"))
        if swap.taken_from != change.before.event_id and swap.final:
            writes += [
                Write("customer_marker", (f"CUSTOMER#{after.customer_id}",
                                          f"EVENT#{swap.taken_from}#BOOKING#{after.booking_id}"),
                      always, lambda _: {"booking_id": after.booking_id, "created_at": after.created_at}),
                Write("event_index", (event_index_pk(swap.taken_from, after.booking_id), after.booking_id),
                      always, lambda _: {"booking_id": after.booking_id, "placed_at": after.created_at,
                                         **(sold_keys(swap.taken_from, after.booking_id, after.created_at)
                                            if after.status is BookingStatus.CONFIRMED else {})}),
            ]
            if swap.given_from == change.before.event_id:
                writes.append(Write("customer_marker_given", (f"CUSTOMER#{change.before.customer_id}",
                                                              f"EVENT#{swap.given_from}#BOOKING#{after.booking_id}"),
                                    always, lambda _: None))
                # its entry there stays (the doors void its old tickets by it), no longer a sale
                writes.append(Write("event_index_given", (event_index_pk(swap.given_from, after.booking_id),
                                                          after.booking_id),
                                    always, lambda _: {"booking_id": after.booking_id, "placed_at": after.created_at}))
        return writes

    @staticmethod
    def _outcome(change: Change, failed: list[str]) -> StoreError:
        """The adapter's order (adapters/bookings_store.py ``_outcome``); the fake never conflicts."""
        booking = change.after
        if "idempotency" in failed and change.idempotency is not None:
            record = change.idempotency
            return DuplicateRequest(idempotency_pk(record.customer_id, record.key, record.system))
        if "booking" in failed and booking is not None:
            return ItemExists(booking.booking_id) if change.before is None else StaleBooking(booking.booking_id)
        items = [label for label, _ in change.items if label in failed] + [label for label in failed if label.startswith(GIVE)]
        if items:
            return StaleBooking(booking.booking_id if booking is not None else ", ".join(items))
        if booking is None:
            return TransientStoreError("transaction conflict")
        if GATE in failed:
            return SalesStopped(booking.event_id)
        stopped = [label.removeprefix(f"{GATE}@") for label in failed if label.startswith(f"{GATE}@")]
        if stopped:
            return SalesStopped(stopped[0])
        if "hold_limit" in failed:
            return HoldLimitReached(booking.customer_id)
        limited = [label.removeprefix("hold_limit@") for label in failed if label.startswith("hold_limit@")]
        if limited:
            return HoldLimitReached(booking.customer_id, limited[0])
        if "address_limit" in failed:
            return HoldsFromAddressReached(booking.counted_address or "")
        capped = [label.removeprefix("address_limit@") for label in failed if label.startswith("address_limit@")]
        if capped:
            return HoldsFromAddressReached(booking.counted_address or "", capped[0])
        return PlacesTaken([label.removeprefix(CLAIM) for label in failed if label.startswith(CLAIM)])

    def _transact(self, writes: list[Write]) -> list[str]:
        labels = [write.label for write in writes]
        if len(set(labels)) != len(labels):
            raise ValueError(f"transaction labels must be unique: {labels}")
        if not writes:      # boto3 refuses it before sending
            raise ParamValidationError(report="Invalid length for parameter TransactItems, value: 0")
        if len(writes) > TRANSACTION_LIMIT:
            raise validation_error("Member must have length less than or equal to 100", "TransactWriteItems")
        if len({write.key for write in writes}) != len(writes):
            raise validation_error("Transaction request cannot include multiple operations on one item",
                                   "TransactWriteItems")
        return self.table.transact(writes)

    @staticmethod
    def _opened(items: Iterable[Labelled]) -> list[Write]:
        writes = []
        for label, item in items:
            write = item.get("Fake")
            if not isinstance(write, Write):
                raise TypeError(f"the fake store applies only items its own methods built; {label!r} is "
                                f"{sorted(item)} (a DynamoDB request it cannot evaluate)")
            writes.append(Write(label, write.key, write.condition, write.change))
        return writes

    @staticmethod
    def _journal(booking: Booking, entry: JournalEntry) -> Write:
        return Write("journal", (f"BOOKING#{booking.booking_id}", f"JOURNAL#{booking.version:06d}"), absent,
                     lambda _: entry.as_dict())

    @staticmethod
    def _outbox(booking: Booking, event: dict[str, Any]) -> Write:
        item = {"booking_id": booking.booking_id, "event_id": booking.event_id, "customer_id": booking.customer_id,
                "status": booking.status.value, "version": booking.version,
                **({"contact_email": booking.contact_email} if booking.contact_email else {}),
                "ttl": int(time.time()) + OUTBOX_RETENTION_SECONDS, **event}
        return Write("outbox", (f"BOOKING#{booking.booking_id}", f"OUTBOX#{booking.version:06d}"), always,
                     lambda _: item)

    @staticmethod
    def _gate(event_id: str, booking_id: str, offering_version: int | None = None) -> Write:
        def open_(item: Item | None) -> bool:
            if item is None:
                return True
            moved = offering_version is not None and int(item.get("terms_version", 0)) > offering_version
            return "cancelled_at" not in item and not moved
        return Write(GATE, _key(gate_key(event_id, gate_shard(booking_id))), open_, _unchanged)

    def _claims(self, event_id: str, booking_id: str, places: Places, move: Move) -> list[Write]:
        writes = []
        for claim in claims_of(places):
            if isinstance(claim, CounterClaim):
                write = _counter(_key(pool_key(*split_item(event_id, claim.item))), claim.count, move)
            elif isinstance(claim, UnitClaim):
                write = _unit(_key(unit_key(*split_item(event_id, claim.item))), booking_id, move)
            elif isinstance(claim, GranuleClaim):
                write = _granule(claim.granule, booking_id, move)
            else:
                raise TypeError(f"no storage for {type(claim).__name__}")
            writes.append(Write(CLAIM + claim.label, write.key, write.condition, write.change))
        return writes

    # ---------------------------------------------------------------- items for a Change

    def sale_gate_check(self, event_id: str, booking_id: str) -> Labelled:
        return fake_item(self._gate(event_id, booking_id))

    # ----------------------------------------------------------------------- booking reads

    def get_booking(self, booking_id: str) -> Booking | None:
        self.table.check_fault("get_booking")
        item = self.table.get(*_booking_key(booking_id))
        return booking_from_item(item) if item else None

    def get_booking_with_journal(self, booking_id: str) -> tuple[Booking | None, list[JournalEntry]]:
        self.table.check_fault("get_booking_with_journal")
        booking, journal = None, []
        for item in self.table.query(f"BOOKING#{booking_id}"):
            if item["sk"] == "META":
                booking = booking_from_item(item)
            elif item["sk"].startswith("JOURNAL#"):
                journal.append(JournalEntry(
                    at=item["at"], action=item["action"], actor=item["actor"], from_status=item.get("from_status"),
                    to_status=item["to_status"], decision=item["decision"], ids=dict(item.get("ids") or {})))
        return booking, journal

    def get_bookings(self, booking_ids: list[str]) -> list[Booking]:
        self.table.check_fault("get_bookings")
        keys = [{"pk": f"BOOKING#{booking_id}", "sk": "META"} for booking_id in booking_ids]
        return [booking_from_item(item) for item in self._batch(keys).values()]

    # ------------------------------------------------------------------- events and catalog

    def get_event(self, event_id: str, consistent: bool = False) -> dict[str, Any] | None:
        self.table.check_fault("get_event")
        return self.table.get(f"EVENT#{event_id}", "META")

    def message_reads(self, booking_ids: list[str], event_ids: list[str], notes: list[tuple[str, str]]
                      ) -> tuple[dict[str, Booking], dict[str, dict[str, Any]], set[tuple[str, str]]]:
        self.table.check_fault("message_reads")
        bookings = {b: found for b in booking_ids if (found := self.get_booking(b)) is not None}
        events = {e: found for e in event_ids if (found := self.get_event(e)) is not None}
        return bookings, events, {(c, d) for c, d in notes if self.table.get(f"CUSTOMER#{c}", f"NOTE#{d}") is not None}

    def event_cancelled(self, event_id: str) -> bool:
        self.table.check_fault("event_cancelled")
        return "cancelled_at" in (self.table.get(f"EVENT#{event_id}", "META") or {})

    def put_event(self, event: dict[str, Any], pool_sizes: list[int] | None, unit_ids: list[str] | None,
                  fingerprint: str) -> None:
        """adapters/event_creation.py's steps: META there stops it; the CREATION item claims the id
        for one fingerprint; every inventory item is written only where missing; META last."""
        self.table.check_fault("put_event")
        event_id = event["event_id"]
        event_pk = f"EVENT#{event_id}"
        if self.table.get(event_pk, "META") is not None:
            raise ItemExists(event_id)
        creation = {"fingerprint": fingerprint, "created_at": event["created_at"]}
        if not self.table.write((event_pk, "CREATION"),
                                lambda item: item is None or item.get("fingerprint") == fingerprint,
                                lambda _: creation):
            raise ItemExists(event_id)
        for item in inventory_items(event_id, pool_sizes, unit_ids):
            self.table.write((item["pk"], item["sk"]), absent, lambda _, item=item: item)
        if event.get("organizer_id"):
            owned = {"event_id": event_id, "created_at": event["created_at"]}
            self.table.write((f"OWNER#{event['organizer_id']}", f"OFFERING#{event_id}"), always, lambda _: owned)
        if not self.table.write((event_pk, "META"), absent,
                                lambda _: {**event, "creation_fingerprint": fingerprint}):
            raise ItemExists(event_id)

    def owned_offering_ids(self, organizer_id: str) -> list[str]:
        """adapters/offerings_store.py's: the index alone, in id order."""
        self.table.check_fault("owned_offering_ids")
        return sorted(item["event_id"] for item in self.table.query(f"OWNER#{organizer_id}", prefix="OFFERING#"))

    def owned_offerings(self, organizer_id: str) -> list[dict[str, Any]]:
        """adapters/offerings_store.py's: the organizer's index, newest first, each offering whole;
        one without ``META`` (still being created) left out."""
        self.table.check_fault("owned_offerings")
        index = self.table.query(f"OWNER#{organizer_id}", prefix="OFFERING#")
        index.sort(key=lambda item: (item["created_at"], item["event_id"]), reverse=True)
        events = (self.table.get(f"EVENT#{item['event_id']}", "META") for item in index)
        return [event for event in events if event is not None]

    def update_event_listing(self, event_id: str, expected_version: int, changes: dict[str, Any],
                             drop_index: list[tuple[str, str]], put_index: list[dict[str, Any]],
                             outbox: dict[str, Any] | None = None, terms_version: int | None = None) -> None:
        """adapters/offerings_store.py's: the event's fields, its index items and its announcement
        in one transaction, on the ``catalog_version`` read (a missing one counts as 0); with
        ``terms_version``, every sale gate shard's too."""
        self.table.check_fault("update_event_listing")
        event_pk = f"EVENT#{event_id}"

        def at_version(item: Item | None) -> bool:
            if item is None:
                return False
            return item["catalog_version"] == expected_version if "catalog_version" in item else expected_version == 0

        put_keys = {(item["pk"], item["sk"]) for item in put_index}
        writes = [Write("event", (event_pk, "META"), at_version, _set(changes))]
        writes += [Write(f"drop:{pk}/{sk}", (pk, sk), always, lambda _: None)
                   for pk, sk in drop_index if (pk, sk) not in put_keys]
        writes += [Write(f"put:{item['pk']}/{item['sk']}", (item["pk"], item["sk"]), always,
                         lambda _, item=item: dict(item)) for item in put_index]
        if terms_version is not None:
            writes += [Write(f"{GATE}:{shard:02d}", _key(gate_key(event_id, shard)), always,
                             _set({"terms_version": terms_version, "event_id": event_id})) for shard in range(GATE_SHARDS)]
        if outbox is not None:
            announcement = {"ttl": int(time.time()) + OUTBOX_RETENTION_SECONDS, **outbox}
            writes.append(Write("outbox", (event_pk, f"OUTBOX#{int(outbox['version']):06d}"), always,
                                lambda _: announcement))
        failed = self._transact(writes)
        if not failed:
            return
        if "event" in failed:
            raise StaleBooking(event_id)
        raise TransientStoreError("transaction conflict")

    # -------------------------------------------------------------------------- inventory

    def pool_keys(self, event_id: str) -> list[dict[str, str]]:
        self.table.check_fault("pool_keys")
        layout = self.table.get(*_key(layout_key(event_id)))
        count = int(layout.get("pools") or 0) if layout else 0
        return [pool_key(event_id, pool_id(index)) for index in range(count)]

    def read_pools(self, event_id: str) -> list[Pool]:
        self.table.check_fault("read_pools")
        return pools_of(self._batch(self.pool_keys(event_id)).values())

    @staticmethod
    def unit_keys(event_id: str, unit_ids: Iterable[str]) -> list[dict[str, str]]:
        return [unit_key(event_id, unit) for unit in unit_ids
                if len((UNIT_PREFIX + unit).encode()) <= MAX_SORT_KEY_BYTES]

    @staticmethod
    def pools_of(items: Iterable[dict[str, Any]]) -> list[Pool]:
        return pools_of(items)

    @staticmethod
    def units_of(found: dict[tuple[str, str], dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {sk.removeprefix(UNIT_PREFIX): item for (_, sk), item in found.items()}

    def batch_get(self, keys: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        self.table.check_fault("batch_get")
        return self._batch(keys)

    def read_units(self, event_id: str, unit_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        self.table.check_fault("read_units")
        return self.units_of(self._batch(self.unit_keys(event_id, unit_ids)))

    def list_units(self, event_id: str) -> list[dict[str, Any]]:
        self.table.check_fault("list_units")
        return self._units(event_id)

    def seat_states(self, event_id: str) -> dict[str, str]:
        self.table.check_fault("seat_states")
        return {unit["unit"]: unit["state"] for unit in self._units(event_id)}

    def read_granules(self, resource_id: str, utc_days: Iterable[str]) -> dict[str, dict[str, Any]]:
        self.table.check_fault("read_granules")
        found: dict[str, dict[str, Any]] = {}
        for day in utc_days:
            for item in self.table.query(day_partition(resource_id, day), prefix="G#"):
                found[f"{day}T{item['sk'].removeprefix('G#')}"] = item
        return found

    def inventory_items(self, event_id: str) -> list[dict[str, Any]]:
        """Not a port member; the adapter has it too (operators' and tests' view)."""
        keys = [pool_key(event_id, pool.pool_id) for pool in self.read_pools(event_id)]
        keys += [unit_key(event_id, unit["unit"]) for unit in self._units(event_id)]
        return list(self._batch(keys).values())

    def _units(self, event_id: str) -> list[dict[str, Any]]:
        found = [item for partition in range(UNIT_PARTITIONS)
                 for item in self.table.query(unit_partition_pk(event_id, partition), prefix=UNIT_PREFIX)]
        found.sort(key=lambda item: item["sk"])
        return [{"unit": item["sk"].removeprefix(UNIT_PREFIX), "sk": item["sk"], "state": item["state"]}
                for item in found]

    def _batch(self, keys: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        """BatchGetItem: the items that exist, by (pk, sk); DynamoDB refuses a request (of up to
        100 keys) naming one key twice."""
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for start in range(0, len(keys), TRANSACTION_LIMIT):
            chunk = [_key(key) for key in keys[start:start + TRANSACTION_LIMIT]]
            if len(set(chunk)) != len(chunk):
                raise validation_error("Provided list of item keys contains duplicates", "BatchGetItem")
            for key in chunk:
                item = self.table.get(*key)
                if item is not None:
                    found[key] = item
        return found

    # ------------------------------------------------------------------------ hold writes

    def get_idempotency(self, customer_id: str, key: str, scope: str, system: bool = False) -> dict[str, Any] | None:
        self.table.check_fault("get_idempotency")
        return self.table.get(*_key(self.idempotency_key(customer_id, key, scope, system)))

    @staticmethod
    def idempotency_key(customer_id: str, key: str, scope: str, system: bool = False) -> dict[str, str]:
        return {"pk": idempotency_pk(customer_id, key, system), "sk": scope}

    @staticmethod
    def sale_gate_key(event_id: str, rng: random.Random) -> dict[str, str]:
        return gate_key(event_id, rng.randrange(GATE_SHARDS))

    def customer_booking_ids(self, customer_id: str, event_id: str) -> list[str]:
        self.table.check_fault("customer_booking_ids")
        return [item["booking_id"] for item in
                self.table.query(f"CUSTOMER#{customer_id}", prefix=f"EVENT#{event_id}#BOOKING#")]

    # ----------------------------------------------------------- expiry index and reviews

    def bucket_booking_ids(self, bucket: str, event_id: str | None = None, indexed: bool = False) -> list[str]:
        self.table.check_fault("bucket_booking_ids")
        if event_id:
            keys = [offering_shard_pk(event_id, bucket, shard) for shard in range(OFFERING_SHARDS)]
        else:
            shards = (shards_named([item["sk"] for item in self.table.query(shards_pk(bucket))])
                      if indexed else range(EXPIRY_SHARDS))
            keys = [shard_pk(bucket, shard) for shard in shards]
        return sorted(item["sk"] for key in keys for item in self.table.query(key))

    def due_in_bucket(self, bucket: str, indexed: bool = False) -> list[str]:
        self.table.check_fault("due_in_bucket")
        if indexed and not checks_named([item["sk"] for item in self.table.query(shards_pk(bucket))]):
            return []
        start = iso(parse_iso(bucket) - timedelta(seconds=BUCKET_SECONDS)) + "#"
        end = bucket + "#~"
        return sorted({item["pk"].removeprefix("BOOKING#") for item in self._index_items()
                       if item["gsi1pk"].startswith("DUE#") and start <= item["gsi1sk"] <= end})

    def due_bookings(self, before: str, limit: int = 100) -> list[str]:
        self.table.check_fault("due_bookings")
        found = sorted((item["gsi1sk"], item["pk"].removeprefix("BOOKING#")) for item in self._index_items()
                       if item["gsi1pk"].startswith("DUE#") and item["gsi1sk"] < before)
        return [booking_id for _, booking_id in found[:limit]]

    def list_reviews(self) -> list[Booking]:
        self.table.check_fault("list_reviews")
        found = [self.get_booking(item["pk"].removeprefix("BOOKING#")) for item in self._index("REVIEW")]
        return [booking for booking in found if booking is not None]

    def review_page(self, limit: int, cursor: str | None) -> tuple[list[Booking], str | None]:
        """As the adapter's: a full page carries a cursor (DynamoDB returns LastEvaluatedKey when
        the limit is reached, so the next page may be empty); a cursor it did not make is ValueError."""
        self.table.check_fault("review_page")
        queue = self._index("REVIEW")
        start = 0
        if cursor:
            try:
                after = json.loads(base64.urlsafe_b64decode(cursor.encode()))
                start = 1 + next(i for i, item in enumerate(queue)
                                 if (item["gsi1sk"], item["pk"]) == (after["gsi1sk"], after["pk"]))
            except (ValueError, TypeError, KeyError, StopIteration):
                raise ValueError("not a review page cursor") from None
        page = queue[start:start + limit]
        following = None
        if len(page) == limit:
            last = page[-1]
            following = base64.urlsafe_b64encode(json.dumps({"gsi1sk": last["gsi1sk"], "pk": last["pk"]}).encode()).decode()
        found = [self.get_booking(item["pk"].removeprefix("BOOKING#")) for item in page]
        return [booking for booking in found if booking is not None], following

    def _index_items(self) -> list[Item]:
        """gsi1: the items that carry both of its keys (a sparse index)."""
        with self.table.lock:
            return [dict(item) for item in self.table.items.values()
                    if isinstance(item.get("gsi1pk"), str) and isinstance(item.get("gsi1sk"), str)]

    def _index(self, key: str) -> list[Item]:
        return sorted((item for item in self._index_items() if item["gsi1pk"] == key), key=lambda item: item["gsi1sk"])

    # ----------------------------------------------------------------------- cancellations

    def mark_event_cancelled(self, event_id: str, reason: str, key: str, fingerprint: str, at: str,
                             by: dict[str, str] | None = None, catalog_version: int | None = None,
                             drop_index: Sequence[tuple[str, str]] = ()) -> None:
        """adapters/cancellation_store.py's: with ``catalog_version``, on the event as read, its
        listing's index items (``drop_index``) deleted with it (past 100 actions, right after)."""
        self.table.check_fault("mark_event_cancelled")
        request = {"fingerprint": fingerprint, "result_id": event_id,
                   "ttl": int(time.time()) + IDEMPOTENCY_RETENTION_SECONDS}

        def cancellable(item: Item | None) -> bool:
            if item is None or "cancelled_at" in item:
                return False
            return catalog_version is None or int(item.get("catalog_version") or 0) == catalog_version

        marks = {"cancelled_at": at, "cancel_reason": reason, "cancel_attempt": 1,
                 "gsi1pk": CANCELLING, "gsi1sk": event_id, "cancelled_by": dict(by or {})}
        if catalog_version is not None:
            marks["catalog_version"] = catalog_version + 1
        writes = [
            Write("idempotency", (f"SYSIDEM#organizer#{key}", "event_cancel"), absent, lambda _: request),
            Write("event", (f"EVENT#{event_id}", "META"), cancellable, _set(marks)),
            *[Write(f"{GATE}:{shard:02d}", _key(gate_key(event_id, shard)), always,
                    _set({"cancelled_at": at, "event_id": event_id})) for shard in range(GATE_SHARDS)],
        ]
        drops = [Write(f"drop:{pk}/{sk}", (pk, sk), always, lambda _: None) for pk, sk in drop_index]
        room = TRANSACTION_LIMIT - len(writes)
        writes, later = writes + drops[:room], drops[room:]
        failed = self._transact(writes)
        if not failed:
            if later and self._transact(later):
                raise TransientStoreError("the listing's index items of a cancelled event")
            return
        if "idempotency" in failed:
            raise KeyUsed(key)
        if "event" in failed:
            event = self.table.get(f"EVENT#{event_id}", "META")
            if event is None:
                raise EventNotFound(event_id)
            if "cancelled_at" in event:
                raise AlreadyCancelled(event_id)
            raise StaleBooking(event_id)
        raise StoreError(f"event cancel transaction cancelled: {failed}")

    def cancel_request(self, key: str) -> dict[str, Any] | None:
        self.table.check_fault("cancel_request")
        return self.table.get(f"SYSIDEM#organizer#{key}", "event_cancel")

    def next_cancel_attempt(self, event_id: str, expected: int) -> bool:
        self.table.check_fault("next_cancel_attempt")
        return self.table.write(
            (f"EVENT#{event_id}", "META"),
            lambda item: item is not None and item.get("cancel_attempt") == expected and "cancel_summary" not in item,
            _set({"cancel_attempt": expected + 1}))

    def finish_cancellation(self, event_id: str, summary: dict[str, Any], at: str) -> bool:
        self.table.check_fault("finish_cancellation")

        def finish(item: Item | None) -> Item:
            done = {**(item or {}), "cancel_summary": summary, "cancel_finished_at": at}
            return {name: value for name, value in done.items() if name not in ("gsi1pk", "gsi1sk")}

        return self.table.write((f"EVENT#{event_id}", "META"),
                                lambda item: item is not None and "cancelled_at" in item
                                and "cancel_summary" not in item, finish)

    def cancelling_events(self) -> list[str]:
        self.table.check_fault("cancelling_events")
        return [item["gsi1sk"] for item in self._index(CANCELLING)]

    def event_booking_ids(self, event_id: str) -> list[str]:
        self.table.check_fault("event_booking_ids")
        return [item["sk"] for shard in range(EVENT_INDEX_SHARDS)
                for item in self.table.query(f"EVENTBOOKINGS#{event_id}#{shard}")]

    def event_booking_times(self, event_id: str) -> list[tuple[str, str]]:
        self.table.check_fault("event_booking_times")
        return [(item.get("placed_at", ""), item["sk"]) for shard in range(EVENT_INDEX_SHARDS)
                for item in self.table.query(f"EVENTBOOKINGS#{event_id}#{shard}")]

    def sold_positions(self, event_id: str, before: tuple[str, str] | None, limit: int) -> list[tuple[str, str]]:
        """adapters/cancellation_store.py's: the confirmed bookings' positions, newest first, older
        than ``before``."""
        self.table.check_fault("sold_positions")
        found = [sold_position(item["gsi1sk"]) for shard in range(EVENT_INDEX_SHARDS)
                 for item in self._index(sold_index_pk(event_id, shard))
                 if before is None or item["gsi1sk"] < "#".join(before)]
        return sorted(found, reverse=True)[:limit]

    def event_booking_page(self, event_id: str, after: str | None, limit: int) -> list[tuple[str, str]]:
        """adapters/cancellation_store.py's: the bookings after the position, by shard then id."""
        self.table.check_fault("event_booking_page")
        start_shard, _, after_id = (after or "00#").partition("#")
        found: list[tuple[str, str]] = []
        for shard in range(int(start_shard), EVENT_INDEX_SHARDS):
            items = self.table.query(f"EVENTBOOKINGS#{event_id}#{shard}")
            found += [(f"{shard:02d}#{item['sk']}", item["sk"]) for item in items
                      if shard != int(start_shard) or item["sk"] > after_id][:limit - len(found)]
            if len(found) >= limit:
                break
        return found


class FakeWaitlistStore(FakeBookingStore, FakeWaitlist):
    """The bookings and the waitlist over one table, as the adapter's ``BookingStore`` keeps them
    (``WaitlistStore``: the waitlist offers its places through the hold)."""


class FakeNotificationStore(FakeBookingStore, FakeNotificationLog):
    """The bookings and the notification log over one table, as the adapter's ``BookingStore``
    keeps them (``NotificationStore``: an event's announcement reaches its bookings' customers)."""


# ================================================================================ the claims

def _counter(key: Key, count: int, move: Move) -> Write:
    """``SET #src = #src - :n, #dst = #dst + :n`` if ``#src >= :n`` (inventory_store.counter_claim)."""
    source, target = move.source, move.target
    return Write("", key, lambda item: _number_at_least(item, source, count),
                 lambda item: {**item, source: item[source] - count, target: item.get(target, 0) + count})


def _unit(key: Key, booking_id: str, move: Move) -> Write:
    """The unit in ``source`` (and, unless it is free, this booking's) moves to ``target``
    (inventory_store.unit_claim)."""
    source, target = move.source, move.target

    def condition(item: Item | None) -> bool:
        if item is None or item.get("state") != source:
            return False
        return source == "available" or item.get("booking_id") == booking_id

    def change(item: Item | None) -> Item:
        moved = {**(item or {}), "state": target}
        if target == "available":
            moved.pop("booking_id", None)
        else:
            moved["booking_id"] = booking_id
        return moved

    return Write("", key, condition, change)


def _granule(granule: Granule, booking_id: str, move: Move) -> Write:
    """A time granule taken when free or this session's with room; given back only by its session
    (granule_claims.granule_claim)."""
    session, seats = session_of(granule, booking_id), granule.seats
    source, target = move.source, move.target
    key = _key(granule_key(granule.resource_id, granule.at))
    if source == "available":
        limit = granule.capacity - seats

        def free_or_ours(item: Item | None) -> bool:
            if item is None or "taken" not in item or item["taken"] == 0:
                return True
            return item.get("session") == session and item["taken"] <= limit

        def take(item: Item | None) -> Item:
            item = item or {}
            return {**item, "session": session, "taken": item.get("taken", 0) + seats,
                    target: item.get(target, 0) + seats}

        return Write("", key, free_or_ours, take)

    def ours(item: Item | None) -> bool:
        return item is not None and item.get("session") == session and _number_at_least(item, source, seats)

    def give(item: Item | None) -> Item:
        assert item is not None
        if target == "available":
            return {**item, source: item[source] - seats, "taken": item["taken"] - seats}
        return {**item, source: item[source] - seats, target: item.get(target, 0) + seats}

    return Write("", key, ours, give)


def _key(key: dict[str, str]) -> Key:
    return key["pk"], key["sk"]


def _booking_key(booking_id: str) -> Key:
    return f"BOOKING#{booking_id}", "META"

