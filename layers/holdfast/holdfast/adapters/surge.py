"""DynamoDB storage of surge control, on the bookings table (same single-table design):

  pk                                   sk       what
  QUEUE#<event_id>                     STATE    the waiting room: ``issued`` (last number given),
                                                ``admitted`` (numbers 1..admitted are let in),
                                                ``advanced_at`` (epoch ms of the horizon)
  QUEUE#<event_id>#CUST#<customer>     ENTRY    one customer's place: ``seq``, ``joined_at``,
                                                ``admitted_at`` (epoch ms, once let in), ``ttl``
  RATE#<scope>#<customer>              GCRA     the customer's rate-limit state: ``tat`` (epoch ms)

Every write is a single conditional ``UpdateItem``/``PutItem``: nothing is read and then written
unconditionally, so concurrent callers cannot lose each other's changes.
"""
from __future__ import annotations

from typing import Any

import boto3
from botocore.exceptions import ClientError

from ..observability import WAITING_ROOM_ADMISSIONS, count
from ..ports import TransientStoreError
from .codec import _attrs, _code, _plain

ENTRY_RETENTION_SECONDS = 2 * 24 * 3600
RATE_RETENTION_SECONDS = 3600


class SurgeStore:
    def __init__(self, table_name: str, client: Any | None = None) -> None:
        self.table = table_name
        self.client = client or boto3.client("dynamodb")

    # ------------------------------------------------------------------------------ the queue

    def queue_state(self, event_id: str) -> dict[str, int]:
        answer = self.client.get_item(TableName=self.table, ConsistentRead=True,
                                      Key=_attrs({"pk": f"QUEUE#{event_id}", "sk": "STATE"}))
        item = _plain(answer["Item"]) if "Item" in answer else {}
        return {"issued": int(item.get("issued", 0)), "admitted": int(item.get("admitted", 0)),
                "advanced_at": int(item.get("advanced_at", 0))}

    def take_number(self, event_id: str, now_ms: int) -> dict[str, int]:
        """The next queue number (1, 2, ...): one atomic ``ADD``; returns the room's state with it
        (``issued`` is the caller's number). The first number opens the room and starts the
        horizon's clock."""
        answer = self.client.update_item(
            TableName=self.table, Key=_attrs({"pk": f"QUEUE#{event_id}", "sk": "STATE"}),
            UpdateExpression="ADD issued :one SET admitted = if_not_exists(admitted, :zero), "
                             "advanced_at = if_not_exists(advanced_at, :now)",
            ExpressionAttributeValues=_attrs({":one": 1, ":zero": 0, ":now": now_ms}),
            ReturnValues="ALL_NEW",
        )
        item = _plain(answer["Attributes"])
        return {"issued": int(item["issued"]), "admitted": int(item["admitted"]), "advanced_at": int(item["advanced_at"])}

    def advance_horizon(self, event_id: str, expected_admitted: int, admitted: int, advanced_at_ms: int) -> bool:
        """Move the horizon, on condition nobody moved it since it was read. False: someone did."""
        try:
            self.client.update_item(
                TableName=self.table, Key=_attrs({"pk": f"QUEUE#{event_id}", "sk": "STATE"}),
                UpdateExpression="SET admitted = :new, advanced_at = :at",
                ConditionExpression="admitted = :old",
                ExpressionAttributeValues=_attrs({":new": admitted, ":at": advanced_at_ms, ":old": expected_admitted}),
            )
            return True
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise

    def get_entry(self, event_id: str, customer_id: str) -> dict[str, Any] | None:
        answer = self.client.get_item(TableName=self.table, ConsistentRead=True, Key=self._entry_key(event_id, customer_id))
        return _plain(answer["Item"]) if "Item" in answer else None

    def put_entry(self, event_id: str, customer_id: str, seq: int, now_ms: int, replaces_seq: int | None) -> bool:
        """Write the customer's place: only if they have none (``replaces_seq`` None) or still have
        the one being replaced. False: a concurrent join of the same customer won."""
        condition = "attribute_not_exists(pk)" if replaces_seq is None else "seq = :old"
        values: dict[str, Any] = {} if replaces_seq is None else {":old": replaces_seq}
        kwargs: dict[str, Any] = {}
        if values:
            kwargs["ExpressionAttributeValues"] = _attrs(values)
        try:
            self.client.put_item(
                TableName=self.table,
                Item=_attrs({"pk": f"QUEUE#{event_id}#CUST#{customer_id}", "sk": "ENTRY",
                             "event_id": event_id, "customer_id": customer_id, "seq": seq, "joined_at": now_ms,
                             "ttl": now_ms // 1000 + ENTRY_RETENTION_SECONDS}),
                ConditionExpression=condition, **kwargs)
            return True
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise

    def mark_admitted(self, event_id: str, customer_id: str, seq: int, now_ms: int) -> int:
        """Record when the customer was first let in (once); the time that counts either way."""
        try:
            self.client.update_item(
                TableName=self.table, Key=self._entry_key(event_id, customer_id),
                UpdateExpression="SET admitted_at = :now",
                ConditionExpression="seq = :seq AND attribute_not_exists(admitted_at)",
                ExpressionAttributeValues=_attrs({":now": now_ms, ":seq": seq}),
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
            count(WAITING_ROOM_ADMISSIONS)
            return now_ms
        except ClientError as exc:
            if _code(exc) != "ConditionalCheckFailedException":
                raise
            old = _plain(exc.response.get("Item") or {})
            return int(old.get("admitted_at", now_ms))

    @staticmethod
    def _entry_key(event_id: str, customer_id: str) -> dict[str, dict]:
        return _attrs({"pk": f"QUEUE#{event_id}#CUST#{customer_id}", "sk": "ENTRY"})

    # ------------------------------------------------------------------------------ the limit

    def rate_take(self, scope: str, customer_id: str, now_ms: int, interval_ms: int, ceiling_ms: int) -> int | None:
        """Take one request from the customer's allowance (GCRA). None when allowed; otherwise the
        stored arrival time, from which the caller computes Retry-After.

        Idle customer (arrival time in the past or none): one conditional write sets it to
        now + interval. Busy customer within the burst: a second conditional write adds the
        interval. Over the limit: the first write fails and returns the old item (no second call).
        Every write is conditioned on what it assumes, so concurrent requests of one customer each
        take their own interval; a lost race just tries again."""
        key = _attrs({"pk": f"RATE#{scope}#{customer_id}", "sk": "GCRA"})
        ttl = now_ms // 1000 + RATE_RETENTION_SECONDS
        for _ in range(4):
            for update, condition, values in (
                ("SET tat = :fresh, #ttl = :ttl", "attribute_not_exists(tat) OR tat < :now",
                 {":fresh": now_ms + interval_ms, ":now": now_ms, ":ttl": ttl}),
                ("SET tat = tat + :interval, #ttl = :ttl", "tat BETWEEN :now AND :ceiling",
                 {":interval": interval_ms, ":now": now_ms, ":ceiling": ceiling_ms, ":ttl": ttl}),
            ):
                tat = self._rate_write(key, update, condition, values, now_ms)
                if tat is None:
                    return None
                if tat > ceiling_ms:
                    return tat
        return ceiling_ms + interval_ms

    def _rate_write(self, key: dict[str, Any], update: str, condition: str, values: dict[str, Any],
                    now_ms: int) -> int | None:
        """One conditional write of the limiter's item: None when it took, else the stored ``tat``."""
        try:
            self.client.update_item(
                TableName=self.table, Key=key, UpdateExpression=update, ConditionExpression=condition,
                ExpressionAttributeNames={"#ttl": "ttl"}, ExpressionAttributeValues=_attrs(values),
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
            return None
        except ClientError as exc:
            if _code(exc) in ("ThrottlingException", "ProvisionedThroughputExceededException"):
                raise TransientStoreError(_code(exc)) from None
            if _code(exc) != "ConditionalCheckFailedException":
                raise
            return int(_plain(exc.response.get("Item") or {}).get("tat", now_ms))
