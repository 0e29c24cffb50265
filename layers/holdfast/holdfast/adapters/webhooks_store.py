"""Webhook endpoints and their deliveries on the shared table (the ``WebhookStore`` port):

  ORGANIZER#<organizer_id> / WEBHOOK#<webhook_id>     an endpoint: url, events, description, the
                                                      salt its secret is derived from (never the secret)
  ORGANIZER#<organizer_id> / WEBHOOKS                 the count of its endpoints (at most ten)
  WEBHOOK#<webhook_id>     / DELIVERY#<delivery_id>   one fact to one endpoint: its body, status and
                                                      attempts; gsi1 WEBHOOK#<id>#DELIVERIES /
                                                      <created_at>#<delivery_id> lists them newest first

Deliveries expire (``ttl``) 30 days after they were made.
"""
from __future__ import annotations

from typing import Any

from ..clock import epoch_seconds
from botocore.exceptions import ClientError

from .codec import Table, _attrs, _code, _plain

DELIVERY_RETENTION_SECONDS = 30 * 24 * 3600
_KEYS = ("pk", "sk", "gsi1pk", "gsi1sk", "ttl")


def _clean(item: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in item.items() if key not in _KEYS}


def _int(value: Any) -> Any:
    return int(value) if value is not None and not isinstance(value, (dict, list, str, bool)) else value


class WebhookItems(Table):
    def add_webhook(self, organizer_id: str, webhook: dict[str, Any], most: int) -> bool:
        counter = {"Update": {"TableName": self.table, "Key": _attrs({"pk": f"ORGANIZER#{organizer_id}", "sk": "WEBHOOKS"}),
                              "UpdateExpression": "ADD webhook_count :one",
                              "ConditionExpression": "attribute_not_exists(webhook_count) OR webhook_count < :most",
                              "ExpressionAttributeValues": _attrs({":one": 1, ":most": most})}}
        put = {"Put": {"TableName": self.table, "Item": _attrs({
            "pk": f"ORGANIZER#{organizer_id}", "sk": f"WEBHOOK#{webhook['webhook_id']}", **webhook}),
            "ConditionExpression": "attribute_not_exists(pk)"}}
        try:
            self.client.transact_write_items(TransactItems=[counter, put])
        except ClientError as exc:
            reasons = [reason.get("Code") for reason in exc.response.get("CancellationReasons", [])]
            # the cap's condition said no; a conflict or throttle is the caller's error (a 429 busy)
            if _code(exc) != "TransactionCanceledException" or "ConditionalCheckFailed" not in reasons:
                raise
            return False
        return True

    def list_webhooks(self, organizer_id: str) -> list[dict[str, Any]]:
        found = [_clean(item) for item in self._query_prefix(f"ORGANIZER#{organizer_id}", "WEBHOOK#")]
        return sorted(found, key=lambda w: (w.get("created_at", ""), w["webhook_id"]))

    def get_webhook(self, organizer_id: str, webhook_id: str) -> dict[str, Any] | None:
        item = self._get(f"ORGANIZER#{organizer_id}", f"WEBHOOK#{webhook_id}")
        return _clean(item) if item else None

    def delete_webhook(self, organizer_id: str, webhook_id: str) -> bool:
        try:
            self.client.transact_write_items(TransactItems=[
                {"Delete": {"TableName": self.table,
                            "Key": _attrs({"pk": f"ORGANIZER#{organizer_id}", "sk": f"WEBHOOK#{webhook_id}"}),
                            "ConditionExpression": "attribute_exists(pk)"}},
                {"Update": {"TableName": self.table, "Key": _attrs({"pk": f"ORGANIZER#{organizer_id}", "sk": "WEBHOOKS"}),
                            "UpdateExpression": "ADD webhook_count :minus",
                            "ExpressionAttributeValues": _attrs({":minus": -1})}}])
        except ClientError as exc:
            if _code(exc) != "TransactionCanceledException":
                raise
            return False
        return True

    def add_delivery(self, delivery: dict[str, Any]) -> bool:
        item = {"pk": f"WEBHOOK#{delivery['webhook_id']}", "sk": f"DELIVERY#{delivery['delivery_id']}",
                "gsi1pk": f"WEBHOOK#{delivery['webhook_id']}#DELIVERIES",
                "gsi1sk": f"{delivery['created_at']}#{delivery['delivery_id']}",
                "ttl": int(epoch_seconds()) + DELIVERY_RETENTION_SECONDS, **delivery}
        return self._put_if_new(item)

    def get_delivery(self, webhook_id: str, delivery_id: str) -> dict[str, Any] | None:
        item = self._get(f"WEBHOOK#{webhook_id}", f"DELIVERY#{delivery_id}")
        return _numbers(_clean(item)) if item else None

    def update_delivery(self, webhook_id: str, delivery_id: str, generation: int, changes: dict[str, Any]) -> bool:
        names = {f"#f{i}": name for i, name in enumerate(changes)}
        values = {f":v{i}": value for i, value in enumerate(changes.values())}
        try:
            self.client.update_item(
                TableName=self.table, Key=_attrs({"pk": f"WEBHOOK#{webhook_id}", "sk": f"DELIVERY#{delivery_id}"}),
                UpdateExpression="SET " + ", ".join(f"#f{i} = :v{i}" for i in range(len(changes))),
                ConditionExpression="attribute_exists(pk) AND generation = :generation",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=_attrs({**values, ":generation": generation}))
        except ClientError as exc:
            if _code(exc) != "ConditionalCheckFailedException":
                raise
            return False
        return True

    def delivery_page(self, webhook_id: str, limit: int, after: str | None
                      ) -> tuple[list[dict[str, Any]], str | None]:
        partition = f"WEBHOOK#{webhook_id}#DELIVERIES"
        kwargs: dict[str, Any] = {
            "TableName": self.table, "IndexName": "gsi1", "KeyConditionExpression": "gsi1pk = :pk",
            "ExpressionAttributeValues": _attrs({":pk": partition}), "ScanIndexForward": False, "Limit": limit}
        if after:
            delivery = after.rsplit("#", 1)[-1]
            kwargs["ExclusiveStartKey"] = _attrs({"gsi1pk": partition, "gsi1sk": after, "pk": f"WEBHOOK#{webhook_id}",
                                                  "sk": f"DELIVERY#{delivery}"})
        answer = self.client.query(**kwargs)
        keys = [_plain(item) for item in answer.get("Items", [])]
        found = self._batch_get([{"pk": k["pk"], "sk": k["sk"]} for k in keys]) if keys else {}
        items = [_numbers(_clean(found[(k["pk"], k["sk"])])) for k in keys if (k["pk"], k["sk"]) in found]
        following = answer.get("LastEvaluatedKey")
        return items, (_plain(following)["gsi1sk"] if following else None)


def _numbers(item: dict[str, Any]) -> dict[str, Any]:
    for name in ("attempts", "window_attempts", "generation", "window_started_at", "last_status_code"):
        if name in item:
            item[name] = _int(item[name])
    last = item.get("last_attempt")
    if isinstance(last, dict) and last.get("status_code") is not None:
        last["status_code"] = int(last["status_code"])
    return item
