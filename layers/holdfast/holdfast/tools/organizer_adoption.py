"""Adoption of the objects written before organizers existed (issue 30): events, services, lots,
resources, gates and subscriptions without an ``organizer_id`` answer 404 to every organizer
until an operator gives them one.

One resumable Scan of the table (adapters/table_scan.py: ``page_size`` items read per call), for
those items: the core's offerings and what each product declares it owns (``Product.owned_items``).
Each is given the organizer with a condition that it has none yet, so an object another organizer
owns is never taken, and an offering gets its entry in the organizer's index (``OWNER#<organizer>``)
for ``GET /admin/sales``, and an item a product lists from such an index its entry too
(``Product.owner_entry``: a resource for ``GET /resources``). Running it again writes nothing new; a
run stopped halfway resumes from the key it printed last (``start``).

``backfill_owner_index`` (``backfill-owner-index``) writes those product index entries for items
that already have an owner but no entry: resources made before ``GET /resources`` existed, or
adopted before adoption wrote them. Each is a put that never overwrites; a second run writes none.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from botocore.exceptions import ClientError

from ..adapters.codec import _attrs, _code
from ..adapters.table_scan import ScanProgress, scan_pages
from ..kinds import products


def _declared() -> list[tuple[str, str]]:
    """The (pk prefix, sk prefix) pairs of the items each product declares it owns."""
    return [pair for product in products.registered() if product.owned_items
            for pair in products.resolve(product.owned_items)]


def _owner_entries(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The index entries the products give an owned item (``Product.owner_entry``)."""
    made = (products.resolve(product.owner_entry)(item) for product in products.registered() if product.owner_entry)
    return [entry for entry in made if entry is not None]


def _unowned() -> tuple[str, dict[str, str]]:
    """The scan's filter, and its values, for the items that carry an owner and have none yet: the
    core's offerings (``META``) and the items each product declares (kinds/products.py, ``owned_items``)."""
    declared = _declared()
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
    }, progress, take, report, max_pages)


@dataclass
class OwnerIndexProgress(ScanProgress):
    written: int = 0        # entries this run wrote
    present: int = 0        # entries that were there already

    def line(self) -> str:
        return f"page {self.pages}: {self.written} index entries written, {self.present} present{self.resume()}"


def backfill_owner_index(client: Any, table: str, page_size: int = 100, start: dict[str, Any] | None = None,
                         report: Callable[[OwnerIndexProgress], None] | None = None,
                         max_pages: int | None = None) -> OwnerIndexProgress:
    """Write the organizer index entry of every owned product item that lacks one; ``report``
    after each page."""
    progress = OwnerIndexProgress(next_start=start)
    clauses, values = [], {}
    for n, (pk_prefix, sk_prefix) in enumerate(_declared()):
        clauses.append(f"(begins_with(pk, :pk{n}) AND begins_with(sk, :sk{n}))")
        values |= {f":pk{n}": pk_prefix, f":sk{n}": sk_prefix}

    def take(item: dict[str, Any]) -> None:
        for entry in _owner_entries(item):
            if _put_entry(client, table, entry):
                progress.written += 1
            else:
                progress.present += 1

    if not clauses:
        return progress
    return scan_pages(client, {
        "TableName": table, "Limit": page_size,
        "FilterExpression": f"attribute_exists(organizer_id) AND ({' OR '.join(clauses)})",
        "ExpressionAttributeValues": _attrs(values),
    }, progress, take, report, max_pages)


def _put_entry(client: Any, table: str, entry: dict[str, Any]) -> bool:
    """Write an index entry unless it is there (False then)."""
    try:
        client.put_item(TableName=table, Item=_attrs(entry), ConditionExpression="attribute_not_exists(pk)")
    except ClientError as exc:
        if _code(exc) == "ConditionalCheckFailedException":
            return False
        raise
    return True


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
    for entry in _owner_entries({**item, "organizer_id": organizer_id}):
        _put_entry(client, table, entry)
    return True
