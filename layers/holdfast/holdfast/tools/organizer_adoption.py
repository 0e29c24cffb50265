"""Adoption of the objects written before organizers existed (issue 30): events, services, lots,
resources, gates and subscriptions without an ``organizer_id`` answer 404 to every organizer
until an operator gives them one.

One resumable Scan of the table (adapters/table_scan.py: ``page_size`` items read per call), for
those items: the core's offerings and what each product declares it owns (``Product.owned_items``).
Each is given the organizer with a condition that it has none yet, so an object another organizer
owns is never taken, and an offering gets its entry in the organizer's index (``OWNER#<organizer>``)
for ``GET /admin/sales``. Running it again writes nothing new; a run stopped halfway resumes from
the key it printed last (``start``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from botocore.exceptions import ClientError

from ..adapters.codec import _attrs, _code
from ..adapters.table_scan import ScanProgress, scan_pages
from ..kinds import products


def _unowned() -> tuple[str, dict[str, str]]:
    """The scan's filter, and its values, for the items that carry an owner and have none yet: the
    core's offerings (``META``) and the items each product declares (kinds/products.py, ``owned_items``)."""
    declared = [pair for product in products.registered() if product.owned_items
                for pair in products.resolve(product.owned_items)]
    clauses, values = ["(sk = :meta AND begins_with(pk, :event))"], {":meta": "META", ":event": "EVENT#"}
    for n, (pk_prefix, sk_prefix) in enumerate(declared):
        clauses.append(f"(begins_with(pk, :pk{n}) AND begins_with(sk, :sk{n}))")
        values |= {f":pk{n}": pk_prefix, f":sk{n}": sk_prefix}
    return f"attribute_not_exists(organizer_id) AND ({' OR '.join(clauses)})", values


@dataclass
class AdoptionProgress(ScanProgress):
    adopted: int = 0        # items this run gave the organizer
    owned: int = 0          # items that had an owner by the time they were written (left alone)

    def line(self) -> str:
        return f"page {self.pages}: {self.adopted} adopted, {self.owned} already owned{self.resume()}"


def adopt(client: Any, table: str, organizer_id: str, page_size: int = 100, start: dict[str, Any] | None = None,
          report: Callable[[AdoptionProgress], None] | None = None, max_pages: int | None = None) -> AdoptionProgress:
    """Give every unowned object to ``organizer_id`` (which must exist); ``report`` after each page."""
    if "Item" not in client.get_item(TableName=table, Key=_attrs({"pk": "ORGANIZERS", "sk": f"ORG#{organizer_id}"}),
                                     ConsistentRead=True):
        raise ValueError(f"no organizer {organizer_id}: create it first (POST /admin/organizers)")
    progress = AdoptionProgress(next_start=start)
    condition, values = _unowned()

    def take(item: dict[str, Any]) -> None:
        if _give(client, table, item, organizer_id):
            progress.adopted += 1
        else:
            progress.owned += 1

    return scan_pages(client, {
        "TableName": table, "Limit": page_size, "FilterExpression": condition,
        "ExpressionAttributeValues": _attrs(values),
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
