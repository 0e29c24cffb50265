"""The storage codec every aggregate's store shares: attribute (de)serialisation, the storage
errors mapped to the outcomes of holdfast/ports.py, and a transaction whose items carry labels.

A cancelled transaction is reported label by label (``Cancelled``), so a caller asks "did the
claim on pool 003 fail?" instead of counting item positions: adding an item to a transaction can
never shift the meaning of another item's failure.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import boto3
from boto3.dynamodb.types import DYNAMODB_CONTEXT, TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from ..observability import TRANSACTION_CONFLICTS, TRANSACTION_RETRIES, count
from ..ports import Labelled, TransientStoreError

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

MAX_SORT_KEY_BYTES = 1024
#: Cancellation reasons after which the very same transaction may succeed.
_TRANSIENT_REASONS = ("TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded")
#: Tries of one transaction; the services' own loops (re-read, decide again) sit above this.
TRANSACT_ATTEMPTS = 3
CONDITION_FAILED = "ConditionalCheckFailed"


# boto3's TypeSerializer and TypeDeserializer, answered by the value's exact type for what the
# items hold (strings, numbers, booleans, None, maps, lists), and by boto3's own for anything else
# (sets, binary, subclasses such as a str enum), which then decides or refuses (a float) as it
# always did. The same output to the byte (tests/unit/test_codec_types.py); boto3's classes ask
# each value five isinstance questions by way of getattr, which was ~1 ms of a 4-line order's own
# CPU of its ~200 values (issue 49, docs/performance.md).
_number = _serializer._serialize_n   # Decimal context, precision and the refusal of NaN/Infinity: boto3's


def _ser(value: Any) -> dict:
    of = type(value)
    if of is str:
        return {"S": value}
    if of is dict:
        return {"M": {key: _ser(inner) for key, inner in value.items()}}
    if of is bool:
        return {"BOOL": value}
    if of is int or of is Decimal:
        return {"N": _number(value)}
    if of is list or of is tuple:
        return {"L": [_ser(inner) for inner in value]}
    if value is None:
        return {"NULL": True}
    return _serializer.serialize(value)


def _attrs(values: dict[str, Any]) -> dict[str, dict]:
    return {key: _ser(value) for key, value in values.items()}


_decimal = DYNAMODB_CONTEXT.create_decimal


def _des(value: dict) -> Any:
    for tag, inner in value.items():   # the first key, as boto3 reads it
        if tag == "S":
            return inner
        if tag == "N":
            return _decimal(inner)
        if tag == "M":
            return {key: _des(each) for key, each in inner.items()}
        if tag == "L":
            return [_des(each) for each in inner]
        if tag == "BOOL":
            return inner
        if tag == "NULL":
            return None
        break
    return _deserializer.deserialize(value)


def _plain(item: dict[str, dict]) -> dict[str, Any]:
    return {key: _des(value) for key, value in item.items()}


def _int(value: Any) -> int:
    return int(value) if value is not None else 0


def _code(exc: ClientError) -> str:
    return exc.response.get("Error", {}).get("Code", "")


@dataclass(frozen=True)
class Cancelled:
    """Why a transaction was cancelled, by item label."""

    reasons: dict[str, str]

    def failed(self, label: str) -> bool:
        return self.reasons.get(label) == CONDITION_FAILED

    def failed_under(self, prefix: str) -> list[str]:
        """Labels starting with ``prefix`` whose condition failed, the prefix removed, in order."""
        return [label.removeprefix(prefix) for label, reason in self.reasons.items()
                if label.startswith(prefix) and reason == CONDITION_FAILED]

    @property
    def any_failed(self) -> bool:
        return CONDITION_FAILED in self.reasons.values()

    @property
    def conflict(self) -> bool:
        return "TransactionConflict" in self.reasons.values()


def put_new(table: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"Put": {"TableName": table, "Item": _attrs(item), "ConditionExpression": "attribute_not_exists(pk)"}}


class Table:
    """One DynamoDB table (its name and client) and the few read and write shapes every aggregate
    uses: the handle each of BookingStore's parts is built on, shared so that they read and write
    through one client. A store of its own (organizers, the waiting room, a product's part) extends it."""

    def __init__(self, table_name: str, client: Any | None = None) -> None:
        self.table = table_name
        self.client = client or boto3.client("dynamodb")

    def _get(self, pk: str, sk: str, consistent: bool = True) -> dict[str, Any] | None:
        answer = self.client.get_item(TableName=self.table, Key=_attrs({"pk": pk, "sk": sk}), ConsistentRead=consistent)
        item = answer.get("Item")
        return _plain(item) if item else None

    def _put_if_new(self, item: dict[str, Any]) -> bool:
        """Write an item whose key must not exist yet; False when one does (a repeated request)."""
        try:
            self.client.put_item(**put_new(self.table, item)["Put"])
        except ClientError as exc:
            if _code(exc) != "ConditionalCheckFailedException":
                raise
            return False
        return True

    def _batch_get(self, keys: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        """The items of ``keys`` that exist, by (pk, sk), strongly consistent, 100 keys a request."""
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for start in range(0, len(keys), 100):
            pending = {self.table: {"Keys": [_attrs(key) for key in keys[start:start + 100]], "ConsistentRead": True}}
            while pending:
                answer = self.client.batch_get_item(RequestItems=pending)
                for item in answer.get("Responses", {}).get(self.table, []):
                    plain = _plain(item)
                    found[(plain["pk"], plain["sk"])] = plain
                pending = answer.get("UnprocessedKeys") or {}
        return found

    def _query_prefix(self, pk: str, prefix: str, projection: str | None = None, names: dict | None = None) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)" if prefix else "pk = :pk",
            "ExpressionAttributeValues": _attrs({":pk": pk, ":prefix": prefix} if prefix else {":pk": pk}),
            "ConsistentRead": True,
        }
        if projection:
            kwargs["ProjectionExpression"] = projection
        if names:
            kwargs["ExpressionAttributeNames"] = names
        return self._query_all(kwargs)

    def _query_all(self, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
        """Every page of a query, as plain items."""
        items: list[dict[str, Any]] = []
        while True:
            answer = self.client.query(**kwargs)
            items.extend(_plain(item) for item in answer.get("Items", []))
            if "LastEvaluatedKey" not in answer:
                return items
            kwargs = {**kwargs, "ExclusiveStartKey": answer["LastEvaluatedKey"]}

    def _query_index(self, key: str, index: str, attribute: str) -> list[dict[str, Any]]:
        return self._query_all({
            "TableName": self.table, "IndexName": index, "KeyConditionExpression": f"{attribute} = :key",
            "ExpressionAttributeValues": _attrs({":key": key}),
        })

    def _transact_all(self, items: list[Labelled]) -> bool:
        """True when the transaction was written, False when a condition failed (nothing written)."""
        cancelled = self._transact(items)
        if cancelled is None:
            return True
        if cancelled.any_failed:
            return False
        raise TransientStoreError("transaction conflict")

    def _transact(self, items: list[Labelled]) -> Cancelled | None:
        """Run a labelled transaction; None on success, else the cancellation reasons by label.

        A transaction cancelled by a conflict or throttling wrote nothing, and sending the same
        items again re-checks every condition: so it is repeated here, a few times with jittered
        pauses, before the caller hears of it (TransientStoreError, or reasons naming the conflict)."""
        labels = [label for label, _ in items]
        if len(set(labels)) != len(labels):
            raise ValueError(f"transaction labels must be unique: {labels}")
        request = [item for _, item in items]
        for attempt in range(TRANSACT_ATTEMPTS):
            last = attempt == TRANSACT_ATTEMPTS - 1
            try:
                self.client.transact_write_items(TransactItems=request)
                return None
            except ClientError as exc:
                code = _code(exc)
                if code == "TransactionCanceledException":
                    reasons = [reason.get("Code", "None") for reason in exc.response.get("CancellationReasons", [])]
                    transient = not reasons or any(reason in _TRANSIENT_REASONS for reason in reasons)
                    if transient:
                        count(TRANSACTION_CONFLICTS)
                    if transient and not last:
                        count(TRANSACTION_RETRIES)
                        _pause(attempt)
                        continue
                    if not reasons:
                        raise TransientStoreError("transaction cancelled without reasons") from None
                    if any(reason in ("ThrottlingError", "ProvisionedThroughputExceeded") for reason in reasons):
                        raise TransientStoreError("throttled") from None
                    return Cancelled(dict(zip(labels, reasons)))
                if code in ("TransactionConflictException", "ThrottlingException",
                            "ProvisionedThroughputExceededException", "TransactionInProgressException"):
                    count(TRANSACTION_CONFLICTS)
                    if not last:
                        count(TRANSACTION_RETRIES)
                        _pause(attempt)
                        continue
                    raise TransientStoreError(code) from None
                raise
        raise AssertionError("unreachable")


def _pause(attempt: int) -> None:
    """Full jitter, so writers that collided once do not collide again in step."""
    time.sleep(random.uniform(0, 0.01 * 2 ** attempt))
