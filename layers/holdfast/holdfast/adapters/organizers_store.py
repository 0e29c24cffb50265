"""Organizers and their API keys on the shared table (the ``OrganizerDirectory`` port).

  ORGANIZERS          / ORG#<organizer_id>  the organizer: name, status, created_at, key_count
  ORGANIZER#<id>      / KEY#<key_id>        one live key: created_at and its keyed hash
  APIKEY#<key_hash>   / KEY                 the lookup by a presented key: organizer_id, key_id,
                                            last_used_at
  ORGANIZER#<id>      / FISCAL              its fiscal settings (receipts on; domain/fiscal.py)

A key's two items and the organizer's ``key_count`` change in one transaction, so the count is
always the number of live keys and the condition ``key_count > 1`` is what keeps the last key.
The organizers share one partition: they are few, and listing them is one query.
"""
from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from ..domain.fiscal import FiscalSettings
from ..ports import ItemExists, TransientStoreError
from .codec import Table, _attrs, _code, put_new

DIRECTORY = "ORGANIZERS"


def _org_key(organizer_id: str) -> dict[str, str]:
    return {"pk": DIRECTORY, "sk": f"ORG#{organizer_id}"}


def _key_key(organizer_id: str, key_id: str) -> dict[str, str]:
    return {"pk": f"ORGANIZER#{organizer_id}", "sk": f"KEY#{key_id}"}


def _lookup_key(key_hash: str) -> dict[str, str]:
    return {"pk": f"APIKEY#{key_hash}", "sk": "KEY"}


class OrganizerStore(Table):
    def _key_items(self, organizer_id: str, key: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        return [
            ("key", put_new(self.table, {**_key_key(organizer_id, key["key_id"]), "key_id": key["key_id"],
                                         "created_at": key["created_at"], "key_hash": key["key_hash"]})),
            ("lookup", put_new(self.table, {**_lookup_key(key["key_hash"]), "organizer_id": organizer_id,
                                            "key_id": key["key_id"], "key_hash": key["key_hash"]})),
        ]

    def put_organizer(self, organizer: dict[str, Any], key: dict[str, Any]) -> None:
        organizer_id = organizer["organizer_id"]
        items = [("organizer", put_new(self.table, {**_org_key(organizer_id), **organizer, "key_count": 1}))]
        if not self._transact_all(items + self._key_items(organizer_id, key)):
            raise ItemExists(organizer_id)

    def get_organizer(self, organizer_id: str) -> dict[str, Any] | None:
        item = self._get(DIRECTORY, f"ORG#{organizer_id}")
        return _strip(item) if item else None

    def list_organizers(self) -> list[dict[str, Any]]:
        return [_strip(item) for item in self._query_prefix(DIRECTORY, "ORG#")]

    def set_organizer_status(self, organizer_id: str, status: str, at: str) -> bool:
        try:
            self.client.update_item(
                TableName=self.table, Key=_attrs(_org_key(organizer_id)),
                UpdateExpression="SET #status = :status, status_changed_at = :at",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues=_attrs({":status": status, ":at": at}))
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def key_owner(self, key_hash: str) -> dict[str, Any] | None:
        item = self._get(f"APIKEY#{key_hash}", "KEY")
        return _strip(item) if item else None

    def organizer_keys(self, organizer_id: str) -> list[dict[str, Any]]:
        keys = []
        for item in self._query_prefix(f"ORGANIZER#{organizer_id}", "KEY#"):
            lookup = self._get(f"APIKEY#{item['key_hash']}", "KEY", consistent=False) or {}
            keys.append({"key_id": item["key_id"], "created_at": item["created_at"],
                         "last_used_at": lookup.get("last_used_at")})
        return sorted(keys, key=lambda key: (key["created_at"], key["key_id"]))

    def add_key(self, organizer_id: str, key: dict[str, Any], max_keys: int) -> bool:
        count = ("organizer", {"Update": {
            "TableName": self.table, "Key": _attrs(_org_key(organizer_id)),
            "UpdateExpression": "SET key_count = key_count + :one",
            "ConditionExpression": "attribute_exists(pk) AND key_count < :max",
            "ExpressionAttributeValues": _attrs({":one": 1, ":max": max_keys}),
        }})
        cancelled = self._transact([count] + self._key_items(organizer_id, key))
        if cancelled is None:
            return True
        if cancelled.failed("key") or cancelled.failed("lookup"):
            raise ItemExists(key["key_id"])
        if cancelled.failed("organizer"):
            return False
        raise TransientStoreError("transaction conflict")

    def delete_key(self, organizer_id: str, key_id: str) -> str:
        item = self._get(f"ORGANIZER#{organizer_id}", f"KEY#{key_id}")
        if item is None:
            return "missing"
        cancelled = self._transact([
            ("organizer", {"Update": {
                "TableName": self.table, "Key": _attrs(_org_key(organizer_id)),
                "UpdateExpression": "SET key_count = key_count - :one",
                "ConditionExpression": "attribute_exists(pk) AND key_count > :one",
                "ExpressionAttributeValues": _attrs({":one": 1}),
            }}),
            ("key", {"Delete": {"TableName": self.table, "Key": _attrs(_key_key(organizer_id, key_id)),
                                "ConditionExpression": "attribute_exists(pk)"}}),
            ("lookup", {"Delete": {"TableName": self.table, "Key": _attrs(_lookup_key(item["key_hash"]))}}),
        ])
        if cancelled is None:
            return "deleted"
        if cancelled.failed("key"):
            return "missing"      # a concurrent delete of the same key won
        if cancelled.failed("organizer"):
            return "last"
        raise TransientStoreError("transaction conflict")

    def touch_key(self, key_hash: str, at: str, unless_since: str) -> None:
        try:
            self.client.update_item(
                TableName=self.table, Key=_attrs(_lookup_key(key_hash)),
                UpdateExpression="SET last_used_at = :at",
                ConditionExpression="attribute_exists(pk) AND (attribute_not_exists(last_used_at) "
                                    "OR last_used_at < :since)",
                ExpressionAttributeValues=_attrs({":at": at, ":since": unless_since}))
        except ClientError as exc:
            # Another request touched it first, the key went meanwhile, or the table is busy:
            # none of these may fail the request the key authenticated.
            if _code(exc) not in ("ConditionalCheckFailedException", "ProvisionedThroughputExceededException",
                                  "ThrottlingException", "TransactionConflictException"):
                raise


    # ------------------------------------------------------------------- fiscal settings
    def get_fiscal(self, organizer_id: str) -> FiscalSettings | None:
        item = self._get(f"ORGANIZER#{organizer_id}", "FISCAL")
        return FiscalSettings.from_item(item) if item else None

    def put_fiscal(self, organizer_id: str, settings: FiscalSettings, at: str) -> None:
        self.client.put_item(TableName=self.table, Item=_attrs({
            "pk": f"ORGANIZER#{organizer_id}", "sk": "FISCAL", **settings.as_item(), "updated_at": at}))

    def delete_fiscal(self, organizer_id: str) -> bool:
        answer = self.client.delete_item(TableName=self.table,
                                         Key=_attrs({"pk": f"ORGANIZER#{organizer_id}", "sk": "FISCAL"}),
                                         ReturnValues="ALL_OLD")
        return bool(answer.get("Attributes"))


def _strip(item: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in item.items() if key not in ("pk", "sk")}
