"""Writing a new event so that no retry can ever reset it.

An event's id comes from the organizer's Idempotency-Key, so a retry (or the same key with
another body) addresses the same items as the live event. The order below makes that harmless:

1. ``META`` already there: stop, nothing is written (the caller compares and replays or refuses).
2. A ``CREATION`` item claims the id for this request's fingerprint (event fields, pool sizes,
   seat ids). Only a request with the same fingerprint may go on, so another body never writes a
   single pool or seat, even when it races the first request.
3. The inventory layout, pools and seats (their keys: inventory_store.py), each
   ``attribute_not_exists``, in transactions of at most 100 items (DynamoDB's limit; a seat map
   holds up to 5,000). An item that exists is never overwritten:
   a retry that resumes a creation stopped half-way adds only what is missing. Nothing can have
   touched those items yet: holds read ``META`` first, and it does not exist until step 4.
4. With an organizer, its index item ``OWNER#<organizer>`` / ``OFFERING#<event_id>`` (written
   again by a retry, harmlessly: a listing reads ``META`` and skips an event that has none yet).
5. ``META`` last, conditional: the event becomes visible only with all of its inventory.

Why not one transaction with ``META``: 100 items would cap a seat map at 99 seats. Why not
``META`` first: a creation that stops half-way would be a bookable event with part of its seats.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from ..ports import ItemExists, TransientStoreError
from .codec import _attrs, _code, put_new
from .inventory_store import inventory_items

if TYPE_CHECKING:  # pragma: no cover
    from .codec import Table

TRANSACTION_LIMIT = 100


def create_event(store: "Table", event: dict[str, Any], pool_sizes: list[int] | None,
                 unit_ids: list[str] | None, fingerprint: str) -> None:
    event_id = event["event_id"]
    event_pk = f"EVENT#{event_id}"
    # A consistent read: a replay that missed a just-written META would redo every step (harmlessly,
    # each write conditional, but thousands of them for a big seat map).
    meta = store.client.get_item(TableName=store.table, Key=_attrs({"pk": event_pk, "sk": "META"}),
                                 ConsistentRead=True, ProjectionExpression="pk")
    if "Item" in meta:
        raise ItemExists(event_id)
    try:
        store.client.put_item(
            TableName=store.table,
            Item=_attrs({"pk": event_pk, "sk": "CREATION", "fingerprint": fingerprint, "created_at": event["created_at"]}),
            ConditionExpression="attribute_not_exists(pk) OR fingerprint = :fingerprint",
            ExpressionAttributeValues=_attrs({":fingerprint": fingerprint}),
        )
    except ClientError as exc:
        if _code(exc) == "ConditionalCheckFailedException":
            raise ItemExists(event_id) from None
        raise
    items = inventory_items(event_id, pool_sizes, unit_ids)
    for start in range(0, len(items), TRANSACTION_LIMIT):
        chunk = items[start:start + TRANSACTION_LIMIT]
        cancelled = store._transact([(item["sk"], put_new(store.table, item)) for item in chunk])
        if cancelled is None:
            continue
        if not cancelled.any_failed:
            raise TransientStoreError("transaction conflict while creating an event")
        # Some items exist (an earlier attempt, or a concurrent one with the same body, wrote them):
        # write the others one by one, each still conditional.
        for item in chunk:
            if cancelled.failed(item["sk"]):
                continue
            try:
                store.client.put_item(**put_new(store.table, item)["Put"])
            except ClientError as exc:
                if _code(exc) != "ConditionalCheckFailedException":
                    raise
    if event.get("organizer_id"):
        store.client.put_item(TableName=store.table, Item=_attrs({
            "pk": f"OWNER#{event['organizer_id']}", "sk": f"OFFERING#{event_id}", "event_id": event_id,
            "created_at": event["created_at"]}))
    try:
        store.client.put_item(
            TableName=store.table,
            Item=_attrs({"pk": event_pk, "sk": "META", **event, "creation_fingerprint": fingerprint}),
            ConditionExpression="attribute_not_exists(pk)",
        )
    except ClientError as exc:
        if _code(exc) == "ConditionalCheckFailedException":
            raise ItemExists(event_id) from None
        raise

