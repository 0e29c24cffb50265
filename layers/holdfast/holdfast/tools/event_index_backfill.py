"""Backfill of the event's booking index (EVENTBOOKINGS#..., issue 18) for bookings written before
the hold's transaction wrote it: an event cancellation walks that index, so a booking missing from
it would be neither released nor refunded. An entry already there without its ``placed_at`` (the
booking's ``created_at``, which the operator's sales page orders by, newest first) is given it;
until then that booking sorts as the oldest. The entries of a CONFIRMED booking (its own offering's
and, for an order, each further line's) are listed among the offering's sales (gsi1,
``sold_keys``), as the write confirming a booking now lists them: until then the operator's sales
page does not show that sale.

One resumable Scan of the table (adapters/table_scan.py: ``page_size`` items read per call, so the
read rate stays bounded), for the bookings' META items; each one's index entry is written with a
condition that it does not exist yet. Running it again writes nothing new (idempotent), and a run
stopped halfway resumes from the key it printed last (``start``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from botocore.exceptions import ClientError

from ..adapters.cancellation_store import event_index_pk, sold_keys
from ..adapters.codec import _attrs, _code
from ..domain.booking import COUNTED_HOLDS
from ..adapters.table_scan import ScanProgress, scan_pages


@dataclass
class BackfillProgress(ScanProgress):
    bookings: int = 0       # booking META items seen
    written: int = 0        # index entries this run wrote
    present: int = 0        # entries that were already there
    timed: int = 0          # of those, entries this run gave their ``placed_at``
    sold: int = 0           # entries of confirmed bookings this run listed among the sales

    def line(self) -> str:
        return (f"page {self.pages}: {self.bookings} bookings seen, {self.written} index entries written, "
                f"{self.present} already present, {self.timed} given their placing time, {self.sold} listed as "
                f"sold{self.resume()}")


def backfill(client: Any, table: str, page_size: int = 100, start: dict[str, Any] | None = None,
             report: Callable[[BackfillProgress], None] | None = None, max_pages: int | None = None) -> BackfillProgress:
    """Write the missing index entries; ``report`` is called after every page."""
    progress = BackfillProgress(next_start=start)

    def take(item: dict[str, Any]) -> None:
        progress.bookings += 1
        if _put_entry(client, table, item["event_id"], item["booking_id"], item["created_at"]):
            progress.written += 1
        else:
            progress.present += 1
            progress.timed += _give_time(client, table, item["event_id"], item["booking_id"], item["created_at"])
        if item.get("status") == "CONFIRMED":
            further = [str(o) for o in (item.get("kind_details") or {}).get(COUNTED_HOLDS) or ()]
            for offering in dict.fromkeys((item["event_id"], *further)):
                progress.sold += _list_sold(client, table, offering, item["booking_id"], item["created_at"])

    return scan_pages(client, {
        "TableName": table, "Limit": page_size,
        "FilterExpression": "begins_with(pk, :booking) AND sk = :meta",
        "ExpressionAttributeValues": _attrs({":booking": "BOOKING#", ":meta": "META"}),
        "ProjectionExpression": "booking_id, event_id, created_at, #status, kind_details",
        "ExpressionAttributeNames": {"#status": "status"},
    }, progress, take, report, max_pages)


def _list_sold(client: Any, table: str, offering: str, booking_id: str, placed_at: str) -> int:
    """1 if the confirmed booking's entry in ``offering``'s index is now listed among its sales
    (with its placing time), 0 if it was already or there is no entry."""
    keys = sold_keys(offering, booking_id, placed_at)
    try:
        client.update_item(TableName=table, Key=_attrs({"pk": event_index_pk(offering, booking_id), "sk": booking_id}),
                           UpdateExpression="SET gsi1pk = :pk, gsi1sk = :sk, placed_at = if_not_exists(placed_at, :at)",
                           ConditionExpression="attribute_exists(pk) AND attribute_not_exists(gsi1pk)",
                           ExpressionAttributeValues=_attrs({":pk": keys["gsi1pk"], ":sk": keys["gsi1sk"],
                                                             ":at": placed_at}))
        return 1
    except ClientError as exc:
        if _code(exc) == "ConditionalCheckFailedException":
            return 0
        raise


def _put_entry(client: Any, table: str, event_id: str, booking_id: str, placed_at: str) -> bool:
    """The entry as the hold's transaction writes it (event_index_put); False if it was there."""
    try:
        client.put_item(TableName=table, Item=_attrs({"pk": event_index_pk(event_id, booking_id), "sk": booking_id,
                                                      "booking_id": booking_id, "placed_at": placed_at}),
                        ConditionExpression="attribute_not_exists(pk)")
        return True
    except ClientError as exc:
        if _code(exc) == "ConditionalCheckFailedException":
            return False
        raise


def _give_time(client: Any, table: str, event_id: str, booking_id: str, placed_at: str) -> int:
    """1 if the existing entry lacked ``placed_at`` and now has it, else 0."""
    try:
        client.update_item(TableName=table, Key=_attrs({"pk": event_index_pk(event_id, booking_id), "sk": booking_id}),
                           UpdateExpression="SET placed_at = :at",
                           ConditionExpression="attribute_exists(pk) AND attribute_not_exists(placed_at)",
                           ExpressionAttributeValues=_attrs({":at": placed_at}))
        return 1
    except ClientError as exc:
        if _code(exc) == "ConditionalCheckFailedException":
            return 0
        raise
