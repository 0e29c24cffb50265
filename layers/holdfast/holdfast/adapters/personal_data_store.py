"""The items that carry a booking's personal data besides the booking itself, and the index of
ended bookings the retention sweep reads.

  gsi1: ENDED#<0..7>        <ended_at>#<booking_id>             a settled booking out of every other index
  BOOKING#<booking_id>      JOURNAL#<ver> / OUTBOX#<ver>        rewritten without personal fields / deleted
  CUSTOMER#<customer>       EVENT#<event>#BOOKING#<booking_id>  the customer's marker: deleted
  CUSTOMER#<customer>       NOTE#<booking_id>#...               notifications recorded for it: deleted
  CUSTOMER#<customer>       HOLDS#EVENT#<event>                 the hold counter, once at zero: deleted
  IDEM#<customer>#<key>     booking                             the hold's idempotency record: deleted
  SYSIDEM#<customer>#<key>  booking                             the same for a waitlist offer's hold: deleted
  BOOKING#<booking_id>      LINK#<pk>|<sk>                      an item elsewhere that copied the booking's
                                                                personal fields (a parking ticket, a gate
                                                                case): rewritten without them (the link stays)
  WAITLIST#<event>          CUST#<customer> / OFFER#<entry>     the customer's finished turn in the event's
                                                                line and its offers: deleted (on request,
                                                                a waiting turn too: they leave the line)
  CUSTOMER#<customer>       WAITLIST#<event>                    the lines they joined: deleted with the turn
  QUEUE#<event>#CUST#<customer>  ENTRY                          their number in the event's waiting room: deleted

Other idempotency records (a payment's, a cancellation's) and rate-limit items name the customer
for a day at most: their TTL removes them.

The booking item itself is erased through ``commit`` like every other change (its version, its
journal entry); these side items are cleaned first, each write idempotent, so an erasure cut
short is finished by the next one (the booking stays in the index until its own write).
"""
from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from ..clock import parse_iso
from ..domain.booking import JournalEntry
from ..domain.personal_data import erased_copy, erased_entry
from ..ports import Labelled
from .booking_items import DUE_BUCKETS, idempotency_pk
from .codec import Table, _attrs, _code, _plain
from .hold_limits import counter_key


#: A booking's link to an item elsewhere that copied its personal fields.
LINK = "LINK#"
#: Waitlist states of a turn that is over (services/waitlist.py's REJOINABLE), and offers settled.
FINISHED_TURNS = ("PASSED", "DONE", "SKIPPED")
LIVE_OFFERS = ("PENDING", "OFFERED")


def link_put(table: str, booking_id: str, pk: str, sk: str) -> Labelled:
    """For the transaction that writes an item copying a booking's personal fields (a plate, the
    customer's id): the booking's link to it, so that the booking's erasure finds it without a
    scan. Put again by a repeat, it stays the same item."""
    return ("personal_link", {"Put": {"TableName": table, "Item": _attrs({
        "pk": f"BOOKING#{booking_id}", "sk": f"{LINK}{pk}|{sk}", "linked_pk": pk, "linked_sk": sk})}})


class PersonalDataRecords:
    """The ended bookings and the side items that carry personal data, on the shared table handle."""

    def __init__(self, db: Table) -> None:
        self.db = db

    def ended_bookings(self, before: str, limit: int = 100) -> list[str]:
        """Ids of bookings that ended before ``before``, oldest first, at most ``limit``."""
        found: list[tuple[str, str]] = []
        for bucket in range(DUE_BUCKETS):
            answer = self.db.client.query(
                TableName=self.db.table, IndexName="gsi1",
                KeyConditionExpression="gsi1pk = :bucket AND gsi1sk < :before",
                ExpressionAttributeValues=_attrs({":bucket": f"ENDED#{bucket}", ":before": before}), Limit=limit)
            found.extend((_plain(item)["gsi1sk"], _plain(item)["pk"].removeprefix("BOOKING#"))
                         for item in answer.get("Items", []))
        return [booking_id for _, booking_id in sorted(found)[:limit]]

    def customer_bookings(self, customer_id: str) -> list[str]:
        """Every booking the customer made that still names them (each hold writes the marker; an
        order writes one per offering of its lines, so a booking is listed once, not per marker)."""
        return list(dict.fromkeys(item["booking_id"]
                                  for item in self.db._query_prefix(f"CUSTOMER#{customer_id}", "EVENT#")))

    def erase_booking_records(self, booking_id: str, customer_id: str, event_id: str,
                              last_change: str | None = None) -> None:
        """The booking's journal without personal fields, its outbox events, the customer's marker
        and notifications for it gone; their number in the event's waiting room too, unless they
        took it after the booking's ``last_change`` (a later visit's: theirs now). Repeatable: a
        second run finds nothing left to change."""
        for item in self.db._query_prefix(f"BOOKING#{booking_id}", ""):
            if item["sk"].startswith("JOURNAL#"):
                hold_key = (item.get("ids") or {}).get("idempotency_key")
                if item["action"] == "hold_created" and hold_key:
                    # a customer's hold or one the system made for them (a waitlist offer)
                    self._delete(idempotency_pk(customer_id, hold_key), "booking")
                    self._delete(idempotency_pk(customer_id, hold_key, system=True), "booking")
                entry = JournalEntry(at=item["at"], action=item["action"], actor=item["actor"],
                                     from_status=item.get("from_status"), to_status=item["to_status"],
                                     decision=item["decision"], ids=dict(item.get("ids") or {}))
                scrubbed = erased_entry(entry)
                if scrubbed != entry:
                    self.db.client.put_item(TableName=self.db.table, Item=_attrs({
                        "pk": item["pk"], "sk": item["sk"], **scrubbed.as_dict()}))
            elif item["sk"].startswith("OUTBOX#"):
                self._delete(item["pk"], item["sk"])
            elif item["sk"].startswith(LINK):
                self._erase_copy(item["linked_pk"], item["linked_sk"])
        self._erase_turns(customer_id, event_id, leave_waiting=False)
        self._delete_queue_number(event_id, customer_id, last_change)
        # the customer's marker under each offering the booking holds places of (an order's lines)
        for marker in self.db._query_prefix(f"CUSTOMER#{customer_id}", "EVENT#", projection="pk, sk"):
            if marker["sk"].endswith(f"#BOOKING#{booking_id}"):
                self._delete(marker["pk"], marker["sk"])
        try:
            # a counter above zero belongs to a live hold of the same event: it stays until that one ends
            self.db.client.delete_item(TableName=self.db.table, Key=_attrs(counter_key(customer_id, event_id)),
                                    ConditionExpression="attribute_not_exists(active) OR active <= :zero",
                                    ExpressionAttributeValues=_attrs({":zero": 0}))
        except ClientError as exc:
            if _code(exc) != "ConditionalCheckFailedException":
                raise
        for note in self.db._query_prefix(f"CUSTOMER#{customer_id}", f"NOTE#{booking_id}#", projection="pk, sk"):
            self._delete(note["pk"], note["sk"])

    def erase_customer_notes(self, customer_id: str) -> None:
        """Every notification recorded for the customer (an event's change is recorded per customer)
        and the customer's standing with the addresses they gave and the day's count of new ones
        (services/mail_policy.py), and the announcements of addresses they confirmed (an address's
        digest, kept a week for the notifier)."""
        for prefix in ("NOTE#", "CONTACT#", "NEWADDR#", "OUTBOX#CONTACT#"):
            for note in self.db._query_prefix(f"CUSTOMER#{customer_id}", prefix, projection="pk, sk"):
                self._delete(note["pk"], note["sk"])

    def _erase_copy(self, pk: str, sk: str) -> None:
        """The linked item without the personal fields it copied, removed in place (a change made
        to the item meanwhile, an exit or a case resolved, is kept); gone meanwhile, nothing to do."""
        item = self.db._get(pk, sk)
        names = sorted(set(item or {}) - set(erased_copy(item or {})))
        if not names:
            return
        try:
            self.db.client.update_item(
                TableName=self.db.table, Key=_attrs({"pk": pk, "sk": sk}), ConditionExpression="attribute_exists(pk)",
                UpdateExpression="REMOVE " + ", ".join(f"#f{i}" for i in range(len(names))),
                ExpressionAttributeNames={f"#f{i}": name for i, name in enumerate(names)})
        except ClientError as exc:
            if _code(exc) != "ConditionalCheckFailedException":
                raise

    def erase_customer_lines(self, customer_id: str) -> list[str]:
        """Every line the customer joined (their ``WAITLIST#`` markers): a finished turn goes, a
        waiting one leaves the line; a turn with an offer in flight stays (its hold is live, or
        about to be made by the relay). Returns the events of the turns that stayed."""
        kept = []
        for joined in self.db._query_prefix(f"CUSTOMER#{customer_id}", "WAITLIST#"):
            if self._erase_turns(customer_id, joined["event_id"], leave_waiting=True):
                self._delete(joined["pk"], joined["sk"])
            else:
                kept.append(str(joined["event_id"]))
        return kept

    def _erase_turns(self, customer_id: str, event_id: str, *, leave_waiting: bool) -> bool:
        """The customer's finished turn in the event's line (its entry keys name them) and the
        offers made to them that are settled; with ``leave_waiting``, a waiting turn and its place
        in the queue too. A turn with an offer in flight stays: it is live like a hold. True when
        no turn of theirs is left."""
        pk = f"WAITLIST#{event_id}"
        entry = self.db._get(pk, f"CUST#{customer_id}")
        state = (entry or {}).get("state")
        if entry is not None and (state in FINISHED_TURNS or leave_waiting and state == "WAITING"):
            # as the entry was read: a relay that took the turn meanwhile (an offer) keeps it
            items: list[Labelled] = [("entry", {"Delete": {
                "TableName": self.db.table, "Key": _attrs({"pk": pk, "sk": f"CUST#{customer_id}"}),
                "ConditionExpression": "#state = :state AND entry_id = :entry",
                "ExpressionAttributeNames": {"#state": "state"},
                "ExpressionAttributeValues": _attrs({":state": state, ":entry": entry["entry_id"]})}})]
            if state == "WAITING":
                items.append(("queue", {"Delete": {"TableName": self.db.table,
                                                   "Key": _attrs({"pk": pk, "sk": entry["queue_sk"]})}}))
            if self.db._transact_all(items):
                entry = None
        for offer in self.db._query_prefix(pk, "OFFER#"):
            if offer.get("customer_id") == customer_id and offer.get("state") not in LIVE_OFFERS:
                self._delete(pk, offer["sk"])
        return entry is None

    def _delete_queue_number(self, event_id: str, customer_id: str, last_change: str | None) -> None:
        key = _attrs({"pk": f"QUEUE#{event_id}#CUST#{customer_id}", "sk": "ENTRY"})
        if last_change is None:
            self.db.client.delete_item(TableName=self.db.table, Key=key)
            return
        until = int(parse_iso(last_change).timestamp() * 1000)
        try:
            self.db.client.delete_item(TableName=self.db.table, Key=key,
                                       ConditionExpression="attribute_not_exists(joined_at) OR joined_at <= :until",
                                       ExpressionAttributeValues=_attrs({":until": until}))
        except ClientError as exc:
            if _code(exc) != "ConditionalCheckFailedException":
                raise

    def _delete(self, pk: str, sk: str) -> Any:
        return self.db.client.delete_item(TableName=self.db.table, Key=_attrs({"pk": pk, "sk": sk}))
