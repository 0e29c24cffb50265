"""Adoption of the objects written before organizers existed (issue 30): events, services, lots,
resources, gates and subscriptions without an ``organizer_id`` answer 404 to every organizer
until an operator gives them one.

One resumable Scan of the table (adapters/table_scan.py: ``page_size`` items read per call), for
those items; each is given the organizer with a condition that it has none yet, so an object another organizer owns is
never taken, and an offering gets its entry in the organizer's index (``OWNER#<organizer>``) for
``GET /admin/sales``. Running it again writes nothing new; a run stopped halfway resumes from the
key it printed last (``start``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from botocore.exceptions import ClientError

from .adapters.codec import _attrs, _code
from .adapters.table_scan import ScanProgress, scan_pages

#: The items that carry an owner: offerings and resources (``META``), a lot's gates and subscriptions.
_OWNED = ("attribute_not_exists(organizer_id) AND ((sk = :meta AND (begins_with(pk, :event) OR "
          "begins_with(pk, :resource))) OR (begins_with(pk, :lot) AND (begins_with(sk, :gate) OR "
          "begins_with(sk, :sub))))")


@dataclass
class Progress(ScanProgress):
    adopted: int = 0        # items this run gave the organizer
    owned: int = 0          # items that had an owner by the time they were written (left alone)

    def line(self) -> str:
        return f"page {self.pages}: {self.adopted} adopted, {self.owned} already owned{self.resume()}"


def adopt(client: Any, table: str, organizer_id: str, page_size: int = 100, start: dict[str, Any] | None = None,
          report: Callable[[Progress], None] | None = None, max_pages: int | None = None) -> Progress:
    """Give every unowned object to ``organizer_id`` (which must exist); ``report`` after each page."""
    if "Item" not in client.get_item(TableName=table, Key=_attrs({"pk": "ORGANIZERS", "sk": f"ORG#{organizer_id}"}),
                                     ConsistentRead=True):
        raise ValueError(f"no organizer {organizer_id}: create it first (POST /admin/organizers)")
    progress = Progress(next_start=start)

    def take(item: dict[str, Any]) -> None:
        if _give(client, table, item, organizer_id):
            progress.adopted += 1
        else:
            progress.owned += 1

    return scan_pages(client, {
        "TableName": table, "Limit": page_size, "FilterExpression": _OWNED,
        "ExpressionAttributeValues": _attrs({":meta": "META", ":event": "EVENT#", ":resource": "RESOURCE#",
                                             ":lot": "LOT#", ":gate": "GATE#", ":sub": "SUB#"}),
        "ProjectionExpression": "pk, sk, event_id, created_at",
    }, progress, take, report, max_pages)


def _give(client: Any, table: str, item: dict[str, Any], organizer_id: str) -> bool:
    try:
        client.update_item(TableName=table, Key=_attrs({"pk": item["pk"], "sk": item["sk"]}),
                           UpdateExpression="SET organizer_id = :organizer",
                           ConditionExpression="attribute_exists(pk) AND attribute_not_exists(organizer_id)",
                           ExpressionAttributeValues=_attrs({":organizer": organizer_id}))
    except ClientError as exc:
        if _code(exc) == "ConditionalCheckFailedException":
            return False
        raise
    if item["pk"].startswith("EVENT#"):
        client.put_item(TableName=table, Item=_attrs({
            "pk": f"OWNER#{organizer_id}", "sk": f"OFFERING#{item['event_id']}", "event_id": item["event_id"],
            "created_at": item.get("created_at") or ""}))
    return True
