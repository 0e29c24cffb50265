"""The items that carry a booking's personal data besides the booking itself, and the index of
ended bookings the retention sweep reads.

  gsi1: ENDED#<0..7>        <ended_at>#<booking_id>             a settled booking out of every other index
  BOOKING#<booking_id>      JOURNAL#<ver> / OUTBOX#<ver>        rewritten without personal fields / deleted
  CUSTOMER#<customer>       EVENT#<event>#BOOKING#<booking_id>  the customer's marker: deleted
  CUSTOMER#<customer>       NOTE#<booking_id>#...               notifications recorded for it: deleted
  CUSTOMER#<customer>       HOLDS#EVENT#<event>                 the hold counter, once at zero: deleted
  IDEM#<customer>#<key>     booking                             the hold's idempotency record: deleted

Other idempotency records (a payment's, a cancellation's) and rate-limit items name the customer
for a day at most: their TTL removes them.

The booking item itself is erased through ``commit`` like every other change (its version, its
journal entry); these side items are cleaned first, each write idempotent, so an erasure cut
short is finished by the next one (the booking stays in the index until its own write).
"""
from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from ..domain.booking import JournalEntry
from ..domain.personal_data import erased_entry
from .booking_items import DUE_BUCKETS, idempotency_pk
from .codec import Table, _attrs, _code, _plain
from .hold_limits import counter_key


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
        """Every booking the customer made that still names them (each hold writes the marker)."""
        return [item["booking_id"] for item in self.db._query_prefix(f"CUSTOMER#{customer_id}", "EVENT#")]

    def erase_booking_records(self, booking_id: str, customer_id: str, event_id: str) -> None:
        """The booking's journal without personal fields, its outbox events, the customer's marker
        and notifications for it gone. Repeatable: a second run finds nothing left to change."""
        for item in self.db._query_prefix(f"BOOKING#{booking_id}", ""):
            if item["sk"].startswith("JOURNAL#"):
                hold_key = (item.get("ids") or {}).get("idempotency_key")
                if item["action"] == "hold_created" and hold_key:
                    self._delete(idempotency_pk(customer_id, hold_key), "booking")
                entry = JournalEntry(at=item["at"], action=item["action"], actor=item["actor"],
                                     from_status=item.get("from_status"), to_status=item["to_status"],
                                     decision=item["decision"], ids=dict(item.get("ids") or {}))
                scrubbed = erased_entry(entry)
                if scrubbed != entry:
                    self.db.client.put_item(TableName=self.db.table, Item=_attrs({
                        "pk": item["pk"], "sk": item["sk"], **scrubbed.as_dict()}))
            elif item["sk"].startswith("OUTBOX#"):
                self._delete(item["pk"], item["sk"])
        self._delete(f"CUSTOMER#{customer_id}", f"EVENT#{event_id}#BOOKING#{booking_id}")
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
        and the customer's standing with the addresses they gave (services/mail_policy.py)."""
        for prefix in ("NOTE#", "CONTACT#"):
            for note in self.db._query_prefix(f"CUSTOMER#{customer_id}", prefix, projection="pk, sk"):
                self._delete(note["pk"], note["sk"])

    def _delete(self, pk: str, sk: str) -> Any:
        return self.db.client.delete_item(TableName=self.db.table, Key=_attrs({"pk": pk, "sk": sk}))
