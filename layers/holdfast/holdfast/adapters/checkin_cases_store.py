"""Check-in cases on the shared table, under the prefix their product names
(services/checkin_cases.py): ``<PREFIX>#<case_id> META``, and under gsi1 key ``<PREFIX>`` while OPEN
(as bookings in review are), so the open ones are one index query."""
from __future__ import annotations

from typing import Any

from ..ports import Labelled
from .codec import Table, _attrs, put_new

_KEYS = ("pk", "sk", "gsi1pk", "gsi1sk")


def case_put(db: Table, prefix: str, case: dict[str, Any]) -> Labelled:
    """A new case, for a transaction (put once: its id is derived from what opened it)."""
    return ("case", put_new(db.table, {"pk": f"{prefix}#{case['case_id']}", "sk": "META", **case,
                                       "gsi1pk": prefix, "gsi1sk": f"{case['opened_at']}#{case['case_id']}"}))


def case_get(db: Table, prefix: str, case_id: str) -> dict[str, Any] | None:
    case = db._get(f"{prefix}#{case_id}", "META")
    return {k: v for k, v in case.items() if k not in _KEYS} if case else None


def case_resolve(db: Table, prefix: str, case_id: str, resolution: dict[str, Any], entry: dict[str, Any]) -> bool:
    """Close an OPEN case with ``resolution`` and a journal entry; it leaves the open list. False
    when it is no longer open (nothing written)."""
    try:
        db.client.update_item(
            TableName=db.table, Key=_attrs({"pk": f"{prefix}#{case_id}", "sk": "META"}),
            UpdateExpression="SET #status = :resolved, resolution = :resolution, "
                             "journal = list_append(if_not_exists(journal, :empty), :entry) REMOVE gsi1pk, gsi1sk",
            ConditionExpression="#status = :open", ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues=_attrs({":resolved": "RESOLVED", ":open": "OPEN", ":resolution": resolution,
                                              ":entry": [entry], ":empty": []}))
    except db.client.exceptions.ConditionalCheckFailedException:
        return False
    return True


def open_cases(db: Table, prefix: str) -> list[dict[str, Any]]:
    keys = sorted(db._query_index(prefix, "gsi1", "gsi1pk"), key=lambda item: item["gsi1sk"])
    # the index keeps keys only: the cases themselves in batches, not one read each
    found = db._batch_get([{"pk": key["pk"], "sk": "META"} for key in keys])
    cases = [found.get((key["pk"], "META")) for key in keys]
    return [{k: v for k, v in case.items() if k not in _KEYS} for case in cases
            if case and case.get("status") == "OPEN"]
