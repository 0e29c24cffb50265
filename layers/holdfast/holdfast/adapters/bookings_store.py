"""Bookings storage: the booking, its journal, its outbox, idempotency records and the
customer's markers, always written with the booking's claims in one labelled transaction.

  BOOKING#<booking_id>    META             the booking, its payment record, version
  BOOKING#<booking_id>    JOURNAL#<ver>    what happened at that version, written with the change
  BOOKING#<booking_id>    OUTBOX#<ver>     a change event for the relay (streamed, then expired)
  IDEM#<customer>#<key>   <scope>          idempotency record of a customer request
  CUSTOMER#<customer>     NOTE#<...>       a notification recorded for the customer

The booking's ``version`` grows by one with every write, and every write is conditioned on the
version it read: two writers racing on one booking (expiry and confirmation, say) cannot both win.
"""
from __future__ import annotations

import base64
import binascii
import json
import random
import time
from typing import Any

from botocore.exceptions import ClientError

from ..domain.booking import Booking, JournalEntry
from ..domain.claims import other_offerings
from ..domain.inventory import Move
from ..domain.statuses import BookingStatus
from ..observability import booking_written
from . import hold_limits
from .booking_items import DUE_BUCKETS, booking_from_item, booking_item, idempotency_pk
from ..ports import (HoldsFromAddressReached, Change, DuplicateRequest, HoldLimitReached, ItemExists, Labelled, PlacesTaken, SalesStopped,
                     StaleBooking, StoreError, TransientStoreError)
from ..clock import epoch_seconds
from .codec import Cancelled, Table, _attrs, _code, _plain
from .expiry_buckets import ShardWriter, bucket_of, check_buckets, check_items, index_items as expiry_index_items
from .sale_gate import GATE, GATE_SHARDS, gate_check, gate_key
from .cancellation_store import event_index_put
from .inventory_store import CLAIM, claim_items

IDEMPOTENCY_RETENTION_SECONDS = 24 * 3600
OUTBOX_RETENTION_SECONDS = 7 * 24 * 3600
#: The label prefix of the claims an exchange gives back (``swap``): one that fails means the
#: booking's places moved since it was read (StaleBooking), never that places are taken.
GIVE = "give:"


class BookingRecords:
    """The bookings and what is written with them, on the shared table handle."""

    def __init__(self, db: Table) -> None:
        self.db = db
        #: this store's shard of the expiry buckets and the buckets it has marked (expiry_buckets.py)
        self.expiry_writer = ShardWriter()

    def commit(self, change: Change) -> None:
        """Write ``change`` in one transaction, or nothing and raise the outcome its cancellation
        names (ports.Commits)."""
        if change.after is None:
            items = list(change.items)
        elif change.before is None:
            items = self._hold_items(change)
        else:
            items = self._change_items(change)
        cancelled = self.db._transact(items)
        if cancelled is None:
            if change.before is None and change.after is not None:   # a new hold: its bucket is marked
                self.expiry_writer.committed(bucket_of(change.after.hold_expires_at))
            for bucket in check_buckets(change.before, change.after):   # and a payment check's
                self.expiry_writer.committed_check(bucket)
            if change.after is not None:
                booking_written(change.before, change.after, change.journal)
            return
        raise self._outcome(change, cancelled)

    def _hold_items(self, change: Change) -> list[Labelled]:
        """Take the places, write the booking, its first journal entry, its outbox event and the
        idempotency record, and count the hold against the customer's limit for the event (when
        the booking is ``counted_hold``; ``hold_limit`` None counts without a cap)."""
        booking, idempotency = change.after, change.idempotency
        assert booking is not None and change.journal is not None
        if idempotency is None:
            raise ValueError("a new hold is written with its idempotency record")
        items: list[Labelled] = [
            ("idempotency", {"Put": {"TableName": self.db.table, "Item": _attrs({
                "pk": idempotency_pk(idempotency.customer_id, idempotency.key, idempotency.system),
                "sk": idempotency.scope, "fingerprint": idempotency.fingerprint,
                "result_id": idempotency.result_id, "ttl": int(epoch_seconds()) + IDEMPOTENCY_RETENTION_SECONDS,
            }), "ConditionExpression": "attribute_not_exists(pk)"}}),
            ("booking", {"Put": {"TableName": self.db.table, "Item": _attrs(booking_item(booking)),
                                 "ConditionExpression": "attribute_not_exists(pk)"}}),
            self._journal_put(booking, change.journal),
            self._outbox_put(booking, change.outbox or {}),
            *claim_items(self.db.table, booking.event_id, booking.booking_id, change.places or booking.places,
                         change.move or Move.HOLD),
            # The customer-and-event lookup the waitlist uses to skip a customer who already holds
            # or owns places for the event.
            ("customer_marker", {"Put": {"TableName": self.db.table, "Item": _attrs({
                "pk": f"CUSTOMER#{booking.customer_id}", "sk": f"EVENT#{booking.event_id}#BOOKING#{booking.booking_id}",
                "booking_id": booking.booking_id, "created_at": booking.created_at,
            })}}),
            # The event's own list of its bookings: what an event cancellation walks.
            event_index_put(self.db.table, booking.event_id, booking.booking_id, booking.created_at),
            # A cancellation closes every gate shard in its own transaction: this hold commits
            # before it (and is in the index above for the job) or not at all.
            gate_check(self.db.table, booking.event_id, booking.booking_id, change.offering_version),
            # The hold's place in its expiry bucket, which one execution per bucket walks.
            *expiry_index_items(self.db.table, self.expiry_writer, booking.event_id, booking.booking_id,
                                booking.hold_expires_at),
            *check_items(self.db.table, self.expiry_writer, check_buckets(None, booking)),
            *change.items,
        ]
        # Places of other offerings too (an order's lines): each offering's marker, index entry and
        # gate check, so each one's cancellation, waitlist and announcements find the booking.
        # (a line that names its offering in no pool or unit, a parking window's granules, is
        # known by the versions the hold decided on)
        others = other_offerings(booking.event_id, change.places or booking.places)
        others += [o for o, _ in change.other_versions if o != booking.event_id and o not in others]
        for offering in others:
            label, put = event_index_put(self.db.table, offering, booking.booking_id, booking.created_at)
            items += [
                (f"customer_marker@{offering}", {"Put": {"TableName": self.db.table, "Item": _attrs({
                    "pk": f"CUSTOMER#{booking.customer_id}", "sk": f"EVENT#{offering}#BOOKING#{booking.booking_id}",
                    "booking_id": booking.booking_id, "created_at": booking.created_at})}}),
                (f"{label}@{offering}", put),
                (f"{GATE}@{offering}", gate_check(self.db.table, offering, booking.booking_id,
                                                  dict(change.other_versions).get(offering))[1]),
            ]
        if booking.counted_hold:
            items.append(("hold_limit", hold_limits.take_slot(self.db.table, _attrs, booking.customer_id, booking.event_id,
                                                              change.hold_limit)))
            # an order counts once per line toward each further offering's own limit
            items += [(f"hold_limit@{offering}", hold_limits.take_slot(self.db.table, _attrs, booking.customer_id,
                                                                        offering, limit))
                      for offering, limit in change.other_hold_limits]
        if booking.counted_address:
            # the address's live holds of each offering, whatever account holds (finding 13 of issue 42)
            items.append(("address_limit", hold_limits.take_address_slot(
                self.db.table, _attrs, booking.counted_address, booking.event_id, change.address_limit)))
            items += [(f"address_limit@{offering}", hold_limits.take_address_slot(
                          self.db.table, _attrs, booking.counted_address, offering, cap))
                      for offering, cap in change.other_address_limits]
        return items

    def _change_items(self, change: Change) -> list[Labelled]:
        """``after`` over ``before`` (conditioned on ``before.version``), with its journal entry,
        its outbox event, the inventory move and the change's items (a parking ticket and its gate
        pass)."""
        before, after = change.before, change.after
        assert before is not None and after is not None and change.journal is not None
        if after.version != before.version + 1:
            raise ValueError("a saved booking must be exactly one version ahead of the one read")
        items: list[Labelled] = [
            ("booking", {"Put": {"TableName": self.db.table, "Item": _attrs(booking_item(after)),
                                 "ConditionExpression": "#version = :expected",
                                 "ExpressionAttributeNames": {"#version": "version"},
                                 "ExpressionAttributeValues": _attrs({":expected": before.version})}}),
            self._journal_put(after, change.journal),
        ]
        if change.outbox is not None:
            items.append(self._outbox_put(after, change.outbox))
        if change.move is not None:
            items.extend(claim_items(self.db.table, after.event_id, after.booking_id, change.places or after.places,
                                     change.move))
            if change.move.source == "available":
                # Places taken again after a release (a late payment, a conflict case's alternative,
                # an operator's confirm) pass the sale gate like a new hold: once the event is
                # cancelled nothing is taken for it, whoever read the flag before the cancellation.
                items.append(gate_check(self.db.table, after.event_id, after.booking_id))
        if change.swap is not None:
            items.extend(self._swap_items(change, after))
        if after.status is BookingStatus.CONFIRMED and before.status is not BookingStatus.CONFIRMED:
            # confirmed: its entry in each offering's index is listed among that offering's sales
            # too (gsi1, the operator's sales page, newest first: cancellation_store.py)
            items += [(f"event_index@{offering}", event_index_put(self.db.table, offering, after.booking_id,
                                                                  after.created_at, sold=True)[1])
                      for offering in after.offerings]
        # a payment check set by this write: its bucket's tick reads the due index (expiry_buckets.py)
        items.extend(check_items(self.db.table, self.expiry_writer, check_buckets(before, after)))
        items.extend(change.items)
        if before.customer_id != after.customer_id and after.erased_at is None:
            # a booking given to another customer (services/transfers.py): its markers, what the
            # customer's data export, erasure and the waitlist find it by, follow it in this write
            # (an erasure's pseudonym gets none: the erasure deleted them)
            for offering in (after.event_id, *other_offerings(after.event_id, after.places)):
                sk = f"EVENT#{offering}#BOOKING#{after.booking_id}"
                items += [(f"customer_marker_from@{offering}", {"Delete": {"TableName": self.db.table, "Key": _attrs(
                              {"pk": f"CUSTOMER#{before.customer_id}", "sk": sk})}}),
                          (f"customer_marker@{offering}", {"Put": {"TableName": self.db.table, "Item": _attrs({
                              "pk": f"CUSTOMER#{after.customer_id}", "sk": sk, "booking_id": after.booking_id,
                              "created_at": after.created_at})}})]
        if before.counted_hold and before.holds_places and not after.holds_places:
            # Leaving HELD/PAYMENT_PENDING frees the customer's slot in this same transaction.
            items.append(("hold_limit", hold_limits.release_slot(self.db.table, _attrs, before.customer_id,
                                                                 before.event_id)))
            items += [(f"hold_limit@{offering}", hold_limits.release_slot(self.db.table, _attrs, before.customer_id,
                                                                          offering))
                      for offering in before.counted_offerings[1:]]
        if before.counted_address and before.holds_places and not after.holds_places:
            # and the address's slot of each offering it counted toward
            items += [(f"address_limit@{offering}" if index else "address_limit",
                       hold_limits.release_address_slot(self.db.table, _attrs, before.counted_address, offering))
                      for index, offering in enumerate(before.counted_offerings or (before.event_id,))]
        return items

    def _swap_items(self, change: Change, after: Booking) -> list[Labelled]:
        """An exchange: the places given back (sold -> available, labelled ``give:``) and the ones
        taken (available -> sold, through the taken offering's sale gate; the given offering's gate
        checked too when it is another), and, when the booking
        moves to another offering, that offering's customer marker and index entry (what its
        cancellation, waitlist and doors walk, listed among its sales when confirmed), the customer
        marker of the offering it left deleted and its index entry there no longer among its
        sales."""
        swap = change.swap
        assert swap is not None
        items: list[Labelled] = [
            (GIVE + label.removeprefix(CLAIM), item)
            for label, item in claim_items(self.db.table, swap.given_from, after.booking_id, swap.given, swap.give_move)]
        items += claim_items(self.db.table, swap.taken_from, after.booking_id, swap.taken, swap.take_move)
        if swap.taken.quantity or swap.take_move is Move.RETAKE:
            items.append(gate_check(self.db.table, swap.taken_from, after.booking_id, change.offering_version))
        if swap.given_from != swap.taken_from and swap.give_move is Move.UNSELL:
            # a booking of a cancelled event is its cancellation's to settle: it does not leave it
            items.append((f"{GATE}@{swap.given_from}",
                          gate_check(self.db.table, swap.given_from, after.booking_id)[1]))
        if change.before is not None and swap.taken_from != change.before.event_id and swap.final:
            items += [
                ("customer_marker", {"Put": {"TableName": self.db.table, "Item": _attrs({
                    "pk": f"CUSTOMER#{after.customer_id}", "sk": f"EVENT#{swap.taken_from}#BOOKING#{after.booking_id}",
                    "booking_id": after.booking_id, "created_at": after.created_at})}}),
                event_index_put(self.db.table, swap.taken_from, after.booking_id, after.created_at,
                                sold=after.status is BookingStatus.CONFIRMED),
            ]
            if swap.given_from == change.before.event_id:
                # the offering it left names it no more as its customer's (the waitlist's skip, and a
                # later transfer, which moves the markers of the offering the booking is on)
                items.append(("customer_marker_given", {"Delete": {"TableName": self.db.table, "Key": _attrs(
                    {"pk": f"CUSTOMER#{change.before.customer_id}",
                     "sk": f"EVENT#{swap.given_from}#BOOKING#{after.booking_id}"})}}))
                # and lists it no more among its sales: its index entry is put again without the
                # sales keys (gsi1), so one sale is on one sales page; the entry itself stays, the
                # offering's doors void the tickets the booking had there by it (doors.py)
                items.append(("event_index_given", event_index_put(self.db.table, swap.given_from, after.booking_id,
                                                                   after.created_at)[1]))
        return items

    @staticmethod
    def _outcome(change: Change, cancelled: Cancelled) -> StoreError:
        """What a cancelled commit wrote nothing for, read from the labels whose condition failed."""
        booking = change.after
        if cancelled.failed("idempotency") and change.idempotency is not None:
            record = change.idempotency
            return DuplicateRequest(idempotency_pk(record.customer_id, record.key, record.system))
        if cancelled.failed("booking") and booking is not None:
            return ItemExists(booking.booking_id) if change.before is None else StaleBooking(booking.booking_id)
        failed = [label for label, _ in change.items if cancelled.failed(label)] + cancelled.failed_under(GIVE)
        if failed:
            # a ticket, a pass or an exit payment moved meanwhile: read again
            return StaleBooking(booking.booking_id if booking is not None else ", ".join(failed))
        if booking is None:
            return TransientStoreError("transaction conflict")
        if cancelled.failed(GATE):
            return SalesStopped(booking.event_id)
        stopped = cancelled.failed_under(f"{GATE}@")
        if stopped:
            return SalesStopped(stopped[0])
        if cancelled.failed("hold_limit"):
            return HoldLimitReached(booking.customer_id)
        limited = cancelled.failed_under("hold_limit@")
        if limited:
            return HoldLimitReached(booking.customer_id, limited[0])
        if cancelled.failed("address_limit"):
            return HoldsFromAddressReached(booking.counted_address or "")
        capped = cancelled.failed_under("address_limit@")
        if capped:
            return HoldsFromAddressReached(booking.counted_address or "", capped[0])
        if cancelled.conflict:
            return TransientStoreError("transaction conflict")
        return PlacesTaken(cancelled.failed_under(CLAIM))

    def customer_booking_ids(self, customer_id: str, event_id: str) -> list[str]:
        """Ids of the bookings a customer made for an event (markers written in the hold transaction)."""
        items = self.db._query_prefix(f"CUSTOMER#{customer_id}", f"EVENT#{event_id}#BOOKING#")
        return [item["booking_id"] for item in items]

    def get_idempotency(self, customer_id: str, key: str, scope: str, system: bool = False) -> dict[str, Any] | None:
        return self.db._get(**self.idempotency_key(customer_id, key, scope, system))

    @staticmethod
    def idempotency_key(customer_id: str, key: str, scope: str, system: bool = False) -> dict[str, str]:
        return {"pk": idempotency_pk(customer_id, key, system), "sk": scope}

    @staticmethod
    def sale_gate_key(event_id: str, rng: random.Random) -> dict[str, str]:
        return gate_key(event_id, rng.randrange(GATE_SHARDS))

    def get_booking(self, booking_id: str) -> Booking | None:
        item = self.db._get(f"BOOKING#{booking_id}", "META")
        return booking_from_item(item) if item else None

    def get_booking_with_journal(self, booking_id: str) -> tuple[Booking | None, list[JournalEntry]]:
        items = self.db._query_prefix(f"BOOKING#{booking_id}", "")
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

    def due_bookings(self, before: str, limit: int = 100) -> list[str]:
        """Booking ids whose due time is before ``before``, oldest first, across the index buckets."""
        found: list[tuple[str, str]] = []
        for bucket in range(DUE_BUCKETS):
            answer = self.db.client.query(
                TableName=self.db.table, IndexName="gsi1",
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
        items = self.db._query_index("REVIEW", "gsi1", "gsi1pk")
        return self._bookings_in_order([item["pk"].removeprefix("BOOKING#") for item in items])

    def review_page(self, limit: int, cursor: str | None) -> tuple[list[Booking], str | None]:
        request: dict[str, Any] = {
            "TableName": self.db.table, "IndexName": "gsi1", "KeyConditionExpression": "gsi1pk = :key",
            "ExpressionAttributeValues": _attrs({":key": "REVIEW"}), "Limit": limit}
        if cursor:
            request["ExclusiveStartKey"] = _attrs(_review_cursor_key(cursor))
        answer = self.db.client.query(**request)
        ids = [_plain(item)["pk"].removeprefix("BOOKING#") for item in answer.get("Items", [])]
        last = answer.get("LastEvaluatedKey")
        following = base64.urlsafe_b64encode(json.dumps(_plain(last), sort_keys=True).encode()).decode() if last else None
        return self._bookings_in_order(ids), following

    def get_bookings(self, booking_ids: list[str]) -> list[Booking]:
        """The bookings, read 100 at a time (BatchGetItem), strongly consistent."""
        found: list[Booking] = []
        for start in range(0, len(booking_ids), 100):
            keys = [_attrs({"pk": f"BOOKING#{booking_id}", "sk": "META"}) for booking_id in booking_ids[start:start + 100]]
            request = {self.db.table: {"Keys": keys, "ConsistentRead": True}}
            for attempt in range(8):
                answer = self.db.client.batch_get_item(RequestItems=request)
                found += [booking_from_item(_plain(item)) for item in answer.get("Responses", {}).get(self.db.table, [])]
                request = answer.get("UnprocessedKeys") or {}
                if not request:
                    break
                time.sleep(0.01 * 2 ** attempt)
            else:
                raise TransientStoreError("bookings left unread after retries")
        return found

    def _bookings_in_order(self, booking_ids: list[str]) -> list[Booking]:
        # one BatchGetItem per hundred, not a GetItem each; a booking gone meanwhile is left out
        found = {booking.booking_id: booking for booking in self.get_bookings(booking_ids)}
        return [found[booking_id] for booking_id in booking_ids if booking_id in found]

    # ------------------------------------------------------------------------------ notifications

    def record_notification(self, customer_id: str, dedup_id: str, notification: dict[str, Any]) -> bool:
        """Record one customer notification; False if this dedup id was recorded before."""
        try:
            self.db.client.put_item(
                TableName=self.db.table,
                Item=_attrs({"pk": f"CUSTOMER#{customer_id}", "sk": f"NOTE#{dedup_id}", **notification}),
                ConditionExpression="attribute_not_exists(pk)",
            )
            return True
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise

    def notification_recorded(self, customer_id: str, dedup_id: str) -> bool:
        return self.db._get(f"CUSTOMER#{customer_id}", f"NOTE#{dedup_id}") is not None

    def message_reads(self, booking_ids: list[str], event_ids: list[str], notes: list[tuple[str, str]]
                      ) -> tuple[dict[str, Booking], dict[str, dict[str, Any]], set[tuple[str, str]]]:
        """One BatchGetItem (100 keys a request) for a batch of messages: bookings, offerings
        (``META``, as ``get_event`` reads it) and notification records."""
        keys = [{"pk": f"BOOKING#{b}", "sk": "META"} for b in booking_ids] \
            + [{"pk": f"EVENT#{e}", "sk": "META"} for e in event_ids] \
            + [{"pk": f"CUSTOMER#{c}", "sk": f"NOTE#{d}"} for c, d in notes]
        found = self.db._batch_get(keys)
        bookings = {b: booking_from_item(found[(f"BOOKING#{b}", "META")]) for b in booking_ids
                    if (f"BOOKING#{b}", "META") in found}
        events = {e: found[(f"EVENT#{e}", "META")] for e in event_ids if (f"EVENT#{e}", "META") in found}
        return bookings, events, {(c, d) for c, d in notes if (f"CUSTOMER#{c}", f"NOTE#{d}") in found}

    def forget_notification(self, customer_id: str, dedup_id: str) -> None:
        """Take a recorded notification back (its email could not be sent; the redelivery retries)."""
        self.db.client.delete_item(TableName=self.db.table,
                                Key=_attrs({"pk": f"CUSTOMER#{customer_id}", "sk": f"NOTE#{dedup_id}"}))

    def list_notifications(self, customer_id: str) -> list[dict[str, Any]]:
        return self.db._query_prefix(f"CUSTOMER#{customer_id}", "NOTE#")

    def mark_notification(self, customer_id: str, dedup_id: str, was: str, now: str) -> bool:
        try:
            self.db.client.update_item(
                TableName=self.db.table, Key=_attrs({"pk": f"CUSTOMER#{customer_id}", "sk": f"NOTE#{dedup_id}"}),
                UpdateExpression="SET delivery = :now", ConditionExpression="delivery = :was",
                ExpressionAttributeValues=_attrs({":now": now, ":was": was}))
            return True
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise

    def booking_outbox(self, booking_id: str, version: int) -> dict[str, Any] | None:
        item = self.db._get(f"BOOKING#{booking_id}", f"OUTBOX#{version:06d}")
        return None if item is None else {k: v for k, v in item.items() if k not in ("pk", "sk", "ttl")}

    def _journal_put(self, booking: Booking, entry: JournalEntry) -> Labelled:
        return ("journal", {"Put": {"TableName": self.db.table, "Item": _attrs({
            "pk": f"BOOKING#{booking.booking_id}", "sk": f"JOURNAL#{booking.version:06d}", **entry.as_dict(),
        }), "ConditionExpression": "attribute_not_exists(pk)"}})

    def _outbox_put(self, booking: Booking, event: dict[str, Any]) -> Labelled:
        return ("outbox", {"Put": {"TableName": self.db.table, "Item": _attrs({
            "pk": f"BOOKING#{booking.booking_id}", "sk": f"OUTBOX#{booking.version:06d}",
            "booking_id": booking.booking_id, "event_id": booking.event_id, "customer_id": booking.customer_id,
            "status": booking.status.value, "version": booking.version,
            **({"contact_email": booking.contact_email} if booking.contact_email else {}),
            **({"contact_own": True} if booking.contact_own and booking.contact_email else {}),
            "ttl": int(epoch_seconds()) + OUTBOX_RETENTION_SECONDS, **event,
        })}})


def _review_cursor_key(cursor: str) -> dict[str, str]:
    """The index key a review page's cursor names; ValueError for anything review_page did not make."""
    try:
        key = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ValueError("not a review cursor") from None
    if not isinstance(key, dict) or set(key) != {"pk", "sk", "gsi1pk", "gsi1sk"} or key["gsi1pk"] != "REVIEW" \
            or not all(isinstance(value, str) and value for value in key.values()):
        raise ValueError("not a review cursor")
    # what DynamoDB would refuse as a start key (a 400 of ours, not its ValidationException)
    if not key["pk"].startswith("BOOKING#") or len(key["pk"].encode()) > 2048 \
            or any(len(key[name].encode()) > 1024 for name in ("sk", "gsi1sk")):
        raise ValueError("not a review cursor")
    return key
