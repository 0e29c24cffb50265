"""The audit log on the shared table (the ``AuditLog`` port): one partition per organizer,

  AUDIT#<organizer_id>  / <at>#<entry_id>   one entry (domain/audit.py)

written once each (a condition refuses a second write of the same entry) and never changed; read
newest first.
"""
from __future__ import annotations

from typing import Any

from .codec import Table, _attrs, _plain


def _partition(organizer_id: str) -> str:
    return f"AUDIT#{organizer_id}"


class AuditStore(Table):
    def append(self, organizer_id: str, entry: dict[str, Any]) -> None:
        item = {"pk": _partition(organizer_id), "sk": f"{entry['at']}#{entry['entry_id']}", **entry}
        self.client.put_item(TableName=self.table, Item=_attrs(item), ConditionExpression="attribute_not_exists(pk)")

    def page(self, organizer_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
        kwargs: dict[str, Any] = {
            "TableName": self.table, "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": _attrs({":pk": _partition(organizer_id)}),
            "ScanIndexForward": False, "Limit": limit, "ConsistentRead": True}
        if after:
            kwargs["ExclusiveStartKey"] = _attrs({"pk": _partition(organizer_id), "sk": after})
        answer = self.client.query(**kwargs)
        items = [_plain(item) for item in answer.get("Items", [])]
        following = answer.get("LastEvaluatedKey")
        # DynamoDB's numbers come back as Decimal: the status is a whole number
        return ([{**{k: v for k, v in item.items() if k not in ("pk", "sk")}, "status": int(item["status"])}
                 for item in items],
                _plain(following)["sk"] if following else None)
