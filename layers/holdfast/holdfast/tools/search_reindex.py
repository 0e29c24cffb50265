"""Reindex of the catalog's search (issue 35, goal 4) for offerings published before it: their
text search items (``FIND#...``, domain/search.py) were never written, and their old ``WORD#<token>``
items (``<shelf>#WORD#<token>`` on a product's shelf) are read by nothing, so such an offering is
not found by ``?q=`` until it is edited.

One resumable Scan of the table (adapters/table_scan.py: ``page_size`` items read per call), for two
kinds of item:

- a published offering's ``META``: its index items are built by the function its publish writes
  them with (``ListingService.index_items`` for an event, the product's ``listing`` for a shelf's
  offering) and compared with what is stored; when they differ they are written by the publish's
  own transaction (``update_event_listing``), conditioned on the catalog version they were built
  from. An edit that wins the race has written its own items: the reindex reads the offering again
  and builds from that, so it never puts back a word the edit removed.
- an old word item (it has the old ``tokens`` attribute, which no index item has any more): deleted.
  No code writes one now, so no write can race the delete.

Running it again writes nothing (every offering's items are current, no old item is left); a run
stopped halfway resumes from the key it printed last (``start``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..adapters.codec import Table, _attrs
from ..adapters.offerings_store import OfferingStore
from ..adapters.table_scan import ScanProgress, scan_pages
from ..ports import StaleBooking, TransientStoreError
from ..services import transitions
from ..services.listing import UPDATE_ATTEMPTS, index_items_of

#: The partition prefix of the old word items, and what follows a shelf's name in theirs.
OLD_WORDS, OLD_SHELF_WORDS = "WORD#", "#WORD#"


@dataclass
class ReindexProgress(ScanProgress):
    offerings: int = 0      # published offerings seen
    written: int = 0        # offerings whose index items this run wrote
    current: int = 0        # offerings whose index items were already the ones publish writes
    deleted: int = 0        # old word items deleted

    def line(self) -> str:
        return (f"page {self.pages}: {self.offerings} published offerings seen, {self.written} reindexed, "
                f"{self.current} already current, {self.deleted} old word items deleted{self.resume()}")


class Contended(RuntimeError):
    """An offering changed under every attempt to reindex it."""


def reindex(client: Any, table: str, page_size: int = 100, start: dict[str, Any] | None = None,
            report: Callable[[ReindexProgress], None] | None = None, max_pages: int | None = None) -> ReindexProgress:
    """Write every published offering's search items as its publish would, and delete the old word
    items; ``report`` is called after every page."""
    db = Table(table, client)
    offerings = OfferingStore(db)
    progress = ReindexProgress(next_start=start)

    def take(item: dict[str, Any]) -> None:
        if item["sk"] != "META":
            client.delete_item(TableName=table, Key=_attrs({"pk": item["pk"], "sk": item["sk"]}))
            progress.deleted += 1
            return
        progress.offerings += 1
        outcome = transitions.decide_again(
            lambda: db._get(item["pk"], "META"), lambda offering: _reindex_one(db, offerings, offering),
            attempts=UPDATE_ATTEMPTS, first=item, gone=lambda: "gone",
            exhausted=Contended(f"{item['pk']} changed during every attempt: run again from the last key printed"),
            retry_on=(StaleBooking, TransientStoreError))
        if outcome == "written":
            progress.written += 1
        elif outcome == "current":
            progress.current += 1

    return scan_pages(client, {
        "TableName": table, "Limit": page_size,
        "FilterExpression": "(sk = :meta AND begins_with(pk, :event) AND published = :yes) OR "
                            "(attribute_exists(#tokens) AND (begins_with(pk, :words) OR contains(pk, :shelf_words)))",
        "ExpressionAttributeNames": {"#tokens": "tokens"},
        "ExpressionAttributeValues": _attrs({":meta": "META", ":event": "EVENT#", ":yes": True,
                                             ":words": OLD_WORDS, ":shelf_words": OLD_SHELF_WORDS}),
    }, progress, take, report, max_pages)


def _reindex_one(db: Table, offerings: OfferingStore, offering: dict[str, Any]) -> str:
    """"written" or "current"; StaleBooking when the offering changed since it was read. A
    cancelled offering is listed no more: its items are deleted (its cancel's own transaction
    did, unless they were past its 100 actions and the write after it failed)."""
    wanted = index_items_of(offering)
    stored = db._batch_get([{"pk": item["pk"], "sk": item["sk"]} for item in wanted])
    if offering.get("cancelled_at"):
        left = [(item["pk"], item["sk"]) for item in wanted if (item["pk"], item["sk"]) in stored]
        if not left:
            return "current"
        version = int(offering.get("catalog_version") or 0)
        offerings.update_event_listing(offering["event_id"], version, {"catalog_version": version}, left, [])
        return "written"
    if all(stored.get((item["pk"], item["sk"])) == item for item in wanted):
        return "current"
    version = int(offering.get("catalog_version") or 0)
    # the version as it is: a condition only, so an edit that read the offering before this still wins
    offerings.update_event_listing(offering["event_id"], version, {"catalog_version": version}, [], wanted)
    return "written"
