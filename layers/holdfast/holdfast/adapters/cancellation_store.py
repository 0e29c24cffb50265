"""An event's cancellation: the flag that stops its sales, the bulk job's record, and the index
of the event's bookings the job walks.

  EVENT#<event_id>              META        the event; once cancelled: cancelled_at, cancel_reason,
                                            cancel_attempt (the job's execution number), and
                                            cancel_summary when the job has finished
  EVENTBOOKINGS#<event>#<n>     <booking>   one item per booking, written in the hold's transaction,
                                            with ``placed_at`` (the booking's ``created_at``, which
                                            never changes); once the booking is confirmed (the write
                                            that confirms it puts it again) also under gsi1
                                            ``SOLD#<event>#<n>`` / ``<placed_at>#<booking>``: the
                                            operator's sales page reads it there, newest first, a
                                            page at a time
  SYSIDEM#organizer#<key>       event_cancel  the organizer's Idempotency-Key of the cancel request

The index is sharded (n = 0..15 by the booking id) so the holds of a busy sale do not all write one
partition. While its job has not finished, the event sits under ``CANCELLING`` in gsi1, where the
sweeper finds a job whose execution died.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from botocore.exceptions import ClientError

from .sale_gate import close_gates
from ..ports import (AlreadyCancelled, EventNotFound, KeyUsed, Labelled, StaleBooking, StoreError,
                     TransientStoreError)
from ..clock import epoch_seconds
from .codec import Table, _attrs, _code

#: 16 so that at 3,000 holds/s on one event a shard takes ~375 WCU/s (38 % of a partition's limit;
#: with 8 it was 75 %). Reads walk every shard, so entries written under 8 are still found.
EVENT_INDEX_SHARDS = 16
CANCELLING = "CANCELLING"
#: gsi1's partitions of an event's confirmed bookings (its sales), one per index shard.
SOLD = "SOLD#"
IDEMPOTENCY_RETENTION_SECONDS = 24 * 3600
MAX_TRANSACTION_ITEMS = 100


def event_index_pk(event_id: str, booking_id: str) -> str:
    return f"EVENTBOOKINGS#{event_id}#{sum(booking_id.encode()) % EVENT_INDEX_SHARDS}"


def sold_index_pk(event_id: str, shard: int) -> str:
    return f"{SOLD}{event_id}#{shard}"


def sold_keys(event_id: str, booking_id: str, placed_at: str) -> dict[str, str]:
    """The gsi1 keys of a confirmed booking's index entry: its shard's partition of the event's
    sales, sorted by when the booking was placed, then its id."""
    return {"gsi1pk": sold_index_pk(event_id, sum(booking_id.encode()) % EVENT_INDEX_SHARDS),
            "gsi1sk": f"{placed_at}#{booking_id}"}


def event_index_put(table: str, event_id: str, booking_id: str, placed_at: str, sold: bool = False) -> Labelled:
    """The booking's entry in the event's index; ``sold``: a confirmed booking's, listed among the
    event's sales too (gsi1, ``sold_keys``)."""
    item = {"pk": event_index_pk(event_id, booking_id), "sk": booking_id, "booking_id": booking_id,
            "placed_at": placed_at, **(sold_keys(event_id, booking_id, placed_at) if sold else {})}
    return ("event_index", {"Put": {"TableName": table, "Item": _attrs(item)}})


def sold_position(gsi1sk: str) -> tuple[str, str]:
    """``(placed_at, booking_id)`` from a sales entry's sort key."""
    placed_at, _, booking_id = gsi1sk.rpartition("#")
    return placed_at, booking_id


class DynamoCancellationStore:
    """Event cancellations and the index of an event's bookings, on the shared table handle."""

    def __init__(self, db: Table) -> None:
        self.db = db

    def event_cancelled(self, event_id: str) -> bool:
        """A strongly consistent look at the flag alone (never the cached event)."""
        answer = self.db.client.get_item(TableName=self.db.table, Key=_attrs({"pk": f"EVENT#{event_id}", "sk": "META"}),
                                      ConsistentRead=True, ProjectionExpression="cancelled_at")
        return "cancelled_at" in (answer.get("Item") or {})

    def mark_event_cancelled(self, event_id: str, reason: str, key: str, fingerprint: str, at: str,
                             by: dict[str, str] | None = None, catalog_version: int | None = None,
                             drop_index: Sequence[tuple[str, str]] = ()) -> None:
        """Cancel the event and store the request's key, in one transaction; ``by`` (who cancelled:
        organizer and key ids) is kept on the event for the job's journal entries. Raises KeyUsed
        (the key was used before), AlreadyCancelled or EventNotFound; nothing is written then.

        With ``catalog_version`` (the event as the caller read it) the cancel is conditioned on it
        and moves it on, and the listing's index items of that reading (``drop_index``) go in the
        same transaction, so a cancelled event is neither listed nor found by search, and a publish
        or edit read before the cancel cannot put them back (its own condition fails). Raises
        StaleBooking when the event changed since. Index items past DynamoDB's 100 actions follow
        in a second transaction (the listing is read eventually consistent; should that write fail,
        ``holdfast.tools.search_reindex`` drops them)."""
        items: list[Labelled] = [
            ("idempotency", {"Put": {"TableName": self.db.table, "Item": _attrs({
                "pk": f"SYSIDEM#organizer#{key}", "sk": "event_cancel", "fingerprint": fingerprint,
                "result_id": event_id, "ttl": int(epoch_seconds()) + IDEMPOTENCY_RETENTION_SECONDS,
            }), "ConditionExpression": "attribute_not_exists(pk)"}}),
            ("event", {"Update": {
                "TableName": self.db.table, "Key": _attrs({"pk": f"EVENT#{event_id}", "sk": "META"}),
                "UpdateExpression": "SET cancelled_at = :at, cancel_reason = :reason, cancel_attempt = :one, "
                                    "gsi1pk = :cancelling, gsi1sk = :event, cancelled_by = :by"
                                    + (", catalog_version = :next" if catalog_version is not None else ""),
                "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(cancelled_at)"
                                       + (" AND (catalog_version = :read OR (attribute_not_exists(catalog_version)"
                                          " AND :read = :zero))" if catalog_version is not None else ""),
                "ExpressionAttributeValues": _attrs({":at": at, ":reason": reason, ":one": 1,
                                                     ":cancelling": CANCELLING, ":event": event_id,
                                                     ":by": dict(by or {}),
                                                     **({":read": catalog_version, ":next": catalog_version + 1,
                                                         ":zero": 0} if catalog_version is not None else {})}),
            }}),
            # The copies every hold transaction checks (sale_gate.py), closed in the same write.
            *close_gates(self.db.table, event_id, at),
        ]
        drops: list[Labelled] = [(f"drop:{pk}/{sk}", {"Delete": {"TableName": self.db.table,
                                                                  "Key": _attrs({"pk": pk, "sk": sk})}})
                                 for pk, sk in drop_index]
        room = MAX_TRANSACTION_ITEMS - len(items)
        items, later = items + drops[:room], drops[room:]
        cancelled = self.db._transact(items)
        if cancelled is None:
            if later and self.db._transact(later) is not None:
                raise TransientStoreError("the listing's index items of a cancelled event")
            return
        if cancelled.failed("idempotency"):
            raise KeyUsed(key)
        if cancelled.failed("event"):
            event = self.db._get(f"EVENT#{event_id}", "META")
            if event is None:
                raise EventNotFound(event_id)
            if "cancelled_at" in event:
                raise AlreadyCancelled(event_id)
            raise StaleBooking(event_id)
        raise StoreError(f"event cancel transaction cancelled: {cancelled.reasons}")

    def cancel_request(self, key: str) -> dict[str, Any] | None:
        return self.db._get(f"SYSIDEM#organizer#{key}", "event_cancel")

    def next_cancel_attempt(self, event_id: str, expected: int) -> bool:
        """Move the job to its next execution number; False if someone else already did."""
        return self._update_event(event_id, "SET cancel_attempt = :next",
                                  "cancel_attempt = :expected AND attribute_not_exists(cancel_summary)",
                                  {":next": expected + 1, ":expected": expected})

    def finish_cancellation(self, event_id: str, summary: dict[str, Any], at: str) -> bool:
        """Store the job's summary (once) and take the event out of the sweeper's list."""
        return self._update_event(event_id, "SET cancel_summary = :summary, cancel_finished_at = :at "
                                            "REMOVE gsi1pk, gsi1sk",
                                  "attribute_exists(cancelled_at) AND attribute_not_exists(cancel_summary)",
                                  {":summary": summary, ":at": at})

    def cancelling_events(self) -> list[str]:
        return [item["gsi1sk"] for item in self.db._query_index(CANCELLING, "gsi1", "gsi1pk")]

    def event_booking_ids(self, event_id: str) -> list[str]:
        """Every booking of the event, in a stable order (shard, then id)."""
        ids: list[str] = []
        for shard in range(EVENT_INDEX_SHARDS):
            ids += [item["sk"] for item in self.db._query_prefix(f"EVENTBOOKINGS#{event_id}#{shard}", "",
                                                              projection="sk")]
        return ids

    def event_booking_times(self, event_id: str) -> list[tuple[str, str]]:
        """Every booking of the event as ``(placed_at, booking_id)``, from its index alone (keys and
        the placing time, no booking read), in no particular order; an entry written before the
        index carried ``placed_at`` answers "" there."""
        found: list[tuple[str, str]] = []
        for shard in range(EVENT_INDEX_SHARDS):
            found += [(item.get("placed_at", ""), item["sk"])
                      for item in self.db._query_prefix(f"EVENTBOOKINGS#{event_id}#{shard}", "",
                                                        projection="sk, placed_at")]
        return found

    def sold_positions(self, event_id: str, before: tuple[str, str] | None, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` of the event's confirmed bookings (each entry the write that confirmed
        it marked) as ``(placed_at, booking_id)``, newest first, strictly older than the position
        ``before`` (None: from the newest). The sixteen shards of gsi1 are merged lazily: each is
        asked for its share of the page and one more, then only the shard that holds the rest back
        (the one whose last entry read is the newest among those with more to give) is asked again,
        (its share again) until every entry newer than what is still unread fills the page. What a
        page reads depends on ``limit``, not on the number of bookings the event ever had (a page
        of 50 of 1,000 sales: 92 keys in 19 queries). Eventually consistent: a sale confirmed a
        moment ago may show on the next read."""
        share = -(-limit // EVENT_INDEX_SHARDS) + 1
        read: dict[int, list[tuple[str, str]]] = {}
        onward: dict[int, dict[str, Any] | None] = {}   # a shard's ExclusiveStartKey, None when it is done

        def ask(shard: int, count: int) -> None:
            condition, values = "gsi1pk = :pk", {":pk": sold_index_pk(event_id, shard)}
            if before is not None:
                condition, values = condition + " AND gsi1sk < :before", {**values, ":before": "#".join(before)}
            request: dict[str, Any] = {"TableName": self.db.table, "IndexName": "gsi1",
                                       "KeyConditionExpression": condition, "ExpressionAttributeValues": _attrs(values),
                                       "ScanIndexForward": False, "Limit": count}
            if onward.get(shard):
                request["ExclusiveStartKey"] = onward[shard]
            answer = self.db.client.query(**request)
            read.setdefault(shard, []).extend(sold_position(item["gsi1sk"]["S"]) for item in answer.get("Items", []))
            onward[shard] = answer.get("LastEvaluatedKey")

        for shard in range(EVENT_INDEX_SHARDS):
            ask(shard, share)
        while True:
            # every entry newer than the newest last-read of a shard with more is read already
            open_ends = [(read[shard][-1], shard) for shard in read if onward.get(shard) and read[shard]]
            found = sorted((position for positions in read.values() for position in positions), reverse=True)
            if not open_ends:
                return found[:limit]
            frontier, holding = max(open_ends)
            complete = [position for position in found if position >= frontier]
            if len(complete) >= limit:
                return complete[:limit]
            ask(holding, min(share, limit - len(complete) + 1))

    def event_booking_page(self, event_id: str, after: str | None, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` of the event's bookings in ``event_booking_ids``' order after the position
        ``after`` (None: from the start): ``(position, booking_id)`` pairs, a position being
        ``<shard, two digits>#<booking id>``. Fewer than ``limit`` only at the end. One query per
        shard it reaches, each asking only for what is still wanted."""
        start_shard, _, after_id = (after or "00#").partition("#")
        found: list[tuple[str, str]] = []
        for shard in range(int(start_shard), EVENT_INDEX_SHARDS):
            condition, values = "pk = :pk", {":pk": f"EVENTBOOKINGS#{event_id}#{shard}"}
            if shard == int(start_shard) and after_id:
                condition, values = condition + " AND sk > :after", {**values, ":after": after_id}
            request: dict[str, Any] = {"TableName": self.db.table, "KeyConditionExpression": condition,
                                       "ExpressionAttributeValues": _attrs(values), "ProjectionExpression": "sk",
                                       "ConsistentRead": True}
            while len(found) < limit:
                answer = self.db.client.query(**request, Limit=limit - len(found))
                found += [(f"{shard:02d}#{item['sk']['S']}", item["sk"]["S"]) for item in answer.get("Items", [])]
                if "LastEvaluatedKey" not in answer:
                    break
                request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
            if len(found) >= limit:
                break
        return found

    def _update_event(self, event_id: str, update: str, condition: str, values: dict[str, Any]) -> bool:
        try:
            self.db.client.update_item(TableName=self.db.table, Key=_attrs({"pk": f"EVENT#{event_id}", "sk": "META"}),
                                    UpdateExpression=update, ConditionExpression=condition,
                                    ExpressionAttributeValues=_attrs(values))
            return True
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise

