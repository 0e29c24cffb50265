"""Offerings (events) and their catalog listing.

  EVENT#<event_id>  META       the event (price, kind, hold time, payment mode)
  EVENT#<event_id>  CREATION   which request body created the event (its fingerprint)
  EVENT#<event_id>  OUTBOX#<v>  a change of start time or venue to announce (streamed, then expired)
  OWNER#<organizer> OFFERING#<event_id>  the organizer's offerings, for its own listing

The listing's index items are written with the event's descriptive fields, in one transaction
conditioned on the event's ``catalog_version`` (services/listing.py).
"""
from __future__ import annotations

from typing import Any

from ..ports import StaleBooking, TransientStoreError
from ..clock import epoch_seconds
from .codec import Table, _attrs, _plain
from .sale_gate import move_terms

#: DynamoDB's TransactWriteItems limit.
MAX_TRANSACTION_ITEMS = 100

OUTBOX_RETENTION_SECONDS = 7 * 24 * 3600


class OfferingStore:
    """Offerings and their catalog listing, on the shared table handle."""

    def __init__(self, db: Table) -> None:
        self.db = db

    def put_event(self, event: dict[str, Any], pool_sizes: list[int] | None, unit_ids: list[str] | None,
                  fingerprint: str) -> None:
        """Create the event with its inventory; ItemExists if the id is taken (by this request's
        earlier attempt or another body). Never overwrites an existing item: see event_creation."""
        from .event_creation import create_event

        create_event(self.db, event, pool_sizes, unit_ids, fingerprint)

    def get_event(self, event_id: str, consistent: bool = False) -> dict[str, Any] | None:
        return self.db._get(f"EVENT#{event_id}", "META", consistent=consistent)

    def owned_offerings(self, organizer_id: str) -> list[dict[str, Any]]:
        """Every offering (event, service, lot) the organizer created, whole (``META``), newest
        first; one still being created (no ``META`` yet) is left out."""
        index = self.db._query_prefix(f"OWNER#{organizer_id}", "OFFERING#")
        index.sort(key=lambda item: (item["created_at"], item["event_id"]), reverse=True)
        events = (self.get_event(item["event_id"]) for item in index)
        return [event for event in events if event is not None]

    def owned_offering_ids(self, organizer_id: str) -> list[str]:
        """The ids of every offering the organizer created (its index alone: no offering is read),
        in id order; one still being created may be among them (its ``META`` is then absent)."""
        return sorted(item["event_id"] for item in self.db._query_prefix(f"OWNER#{organizer_id}", "OFFERING#",
                                                                           projection="event_id"))

    def update_event_listing(self, event_id: str, expected_version: int, changes: dict[str, Any],
                             drop_index: list[tuple[str, str]], put_index: list[dict[str, Any]],
                             outbox: dict[str, Any] | None = None, terms_version: int | None = None) -> None:
        """Change the event's descriptive fields and its index items in one transaction,
        conditioned on the event's ``catalog_version`` (absent counts as 0); with ``outbox``, the
        change's announcement (``EVENT#<id>``/``OUTBOX#<version>``, streamed to the relay) too; with
        ``terms_version`` (what a hold decides on changed), every sale gate shard's, so no hold on
        an older copy of the offering commits after this one (adapters/sale_gate.py).

        The shards, the event and its announcement always share one transaction. The index items
        join them while all fit in DynamoDB's 100 actions; a change of start of a published event
        with many search words moves up to 88 index items, and those then follow in a second
        transaction of their own: the listing is read eventually consistent, and should that second
        write fail (TransientStoreError after its retries) the listing shows the old start until
        ``holdfast.tools.search_reindex`` rebuilds the event's items; what is sold is never wrong."""
        names = {f"#f{i}": key for i, key in enumerate(changes)}
        values = {f":v{i}": value for i, value in enumerate(changes.values())}
        values[":expected"] = expected_version
        sets = ", ".join(f"#f{i} = :v{i}" for i in range(len(changes)))
        names["#cv"] = "catalog_version"
        items: list = [("event", {"Update": {
            "TableName": self.db.table, "Key": _attrs({"pk": f"EVENT#{event_id}", "sk": "META"}),
            "UpdateExpression": f"SET {sets}" if sets else "SET #cv = #cv",
            "ConditionExpression": "attribute_exists(pk) AND (#cv = :expected OR "
                                   "(attribute_not_exists(#cv) AND :expected = :zero))",
            "ExpressionAttributeNames": names, "ExpressionAttributeValues": _attrs({**values, ":zero": 0}),
        }})]
        put_keys = {(item["pk"], item["sk"]) for item in put_index}
        items += [(f"drop:{pk}/{sk}", {"Delete": {"TableName": self.db.table, "Key": _attrs({"pk": pk, "sk": sk})}})
                  for pk, sk in drop_index if (pk, sk) not in put_keys]
        items += [(f"put:{item['pk']}/{item['sk']}", {"Put": {"TableName": self.db.table, "Item": _attrs(item)}})
                  for item in put_index]
        if outbox is not None:
            items.append(("outbox", {"Put": {"TableName": self.db.table, "Item": _attrs({
                "pk": f"EVENT#{event_id}", "sk": f"OUTBOX#{int(outbox['version']):06d}",
                "ttl": int(epoch_seconds()) + OUTBOX_RETENTION_SECONDS, **outbox})}}))
        later: list = []
        if terms_version is not None:
            shards = move_terms(self.db.table, event_id, terms_version)
            if len(items) + len(shards) > MAX_TRANSACTION_ITEMS:
                later = [item for item in items if item[0].startswith(("drop:", "put:"))]
                items = [item for item in items if not item[0].startswith(("drop:", "put:"))]
            items += shards
        cancelled = self.db._transact(items)
        if cancelled is not None:
            if cancelled.failed("event"):
                raise StaleBooking(event_id)
            raise TransientStoreError("transaction conflict")
        if later and self.db._transact(later) is not None:
            raise TransientStoreError("the listing's index items of a changed start")

    def query_listing(self, pk: str, lower: str, upper: str, limit: int, start: dict[str, str] | None,
                      one_request: bool = False) -> tuple[list[dict[str, Any]], bool]:
        """Up to ``limit`` index items of one partition with ``lower <= sk <= upper``, starting
        after ``start``; and whether more may follow. Eventually consistent. ``one_request``: what
        one Query answers (at most 1 MB), never a second."""
        kwargs: dict[str, Any] = {
            "TableName": self.db.table,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :lower AND :upper",
            "ExpressionAttributeValues": _attrs({":pk": pk, ":lower": lower, ":upper": upper}),
        }
        if start:
            kwargs["ExclusiveStartKey"] = _attrs(start)
        found: list[dict[str, Any]] = []
        while True:
            kwargs["Limit"] = limit - len(found)
            answer = self.db.client.query(**kwargs)
            found.extend(_plain(item) for item in answer.get("Items", []))
            if len(found) >= limit:
                return found[:limit], True
            if "LastEvaluatedKey" not in answer:
                return found, False
            if one_request:
                return found, True
            kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]

