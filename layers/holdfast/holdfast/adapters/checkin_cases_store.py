"""Check-in cases on the shared table, under the prefix their product names
(services/checkin_cases.py): ``<PREFIX>#<case_id> META``, and while OPEN under gsi1 key
``<PREFIX>#<organizer_id>`` (the organizer of the offering it is about), so an organizer's open
cases are its own index partition, read a page at a time. A case of an offering no organizer owns
(created before organizers existed) is under ``<PREFIX>`` alone, as every open case was before."""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from ..clock import epoch_seconds
from ..ports import Labelled
from .codec import Table, _attrs, _plain, put_new

_KEYS = ("pk", "sk", "gsi1pk", "gsi1sk")
#: The outbox event of a new case: a fact for the organizer's webhooks (``case.opened``), streamed
#: to the relay like a booking's change; no customer's data (a plate, an address) is in it.
CASE_OPENED = "case.opened"
OUTBOX_RETENTION_SECONDS = 7 * 24 * 3600
#: What of a case its ``case.opened`` fact carries: ids, the reason and the moment (and the ids
#: its product names, ``fields``).
_OPENED_FIELDS = ("case_id", "case_type", "reason", "opened_at", "booking_id")


def open_list_key(prefix: str, organizer_id: str | None) -> str:
    """The gsi1 key of an organizer's open cases (``prefix`` alone: those of no organizer)."""
    return f"{prefix}#{organizer_id}" if organizer_id else prefix


def offering_owner(db: Table, offering_id: str) -> str | None:
    """The organizer of the offering a case is about (None for one no organizer owns)."""
    offering = db._get(f"EVENT#{offering_id}", "META", consistent=False)
    return (offering or {}).get("organizer_id")


def case_put(db: Table, prefix: str, case: dict[str, Any], organizer_id: str | None) -> Labelled:
    """A new case, for a transaction (put once: its id is derived from what opened it), listed
    among ``organizer_id``'s open cases."""
    owner = {"organizer_id": organizer_id} if organizer_id else {}
    return ("case", put_new(db.table, {"pk": f"{prefix}#{case['case_id']}", "sk": "META", **case, **owner,
                                       "gsi1pk": open_list_key(prefix, organizer_id),
                                       "gsi1sk": f"{case['opened_at']}#{case['case_id']}"}))


def case_opened_put(db: Table, prefix: str, case: dict[str, Any], offering_field: str,
                    fields: tuple[str, ...] = ()) -> Labelled:
    """The new case's outbox item (``<PREFIX>#<case_id> OUTBOX#000001``), for the same transaction
    as the case: put once, as the case is, so a repeated sync neither loses nor doubles the fact.
    ``offering_field`` names the offering the case is about; ``fields``, the product's ids it carries."""
    fact = {field: case[field] for field in (*_OPENED_FIELDS, *fields) if case.get(field) not in (None, "")}
    return ("case_opened", put_new(db.table, {
        "pk": f"{prefix}#{case['case_id']}", "sk": "OUTBOX#000001", "type": CASE_OPENED,
        "event_id": case[offering_field], **fact, "ttl": int(epoch_seconds()) + OUTBOX_RETENTION_SECONDS}))


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


def open_cases(db: Table, prefix: str, organizer_id: str | None, limit: int, cursor: str | None
               ) -> tuple[list[dict[str, Any]], str | None]:
    """A page of ``organizer_id``'s open cases, oldest first, and the cursor of the next page
    (None at the end). ValueError for a cursor this did not make for that organizer."""
    listed = open_list_key(prefix, organizer_id)
    request: dict[str, Any] = {"TableName": db.table, "IndexName": "gsi1", "KeyConditionExpression": "gsi1pk = :key",
                               "ExpressionAttributeValues": _attrs({":key": listed}), "Limit": limit}
    if cursor:
        request["ExclusiveStartKey"] = _attrs(_cursor_key(cursor, prefix, listed))
    answer = db.client.query(**request)
    keys = [_plain(item) for item in answer.get("Items", [])]
    last = answer.get("LastEvaluatedKey")
    following = base64.urlsafe_b64encode(json.dumps(_plain(last), sort_keys=True).encode()).decode() if last else None
    # the index keeps keys only: the cases themselves in batches, not one read each
    found = db._batch_get([{"pk": key["pk"], "sk": "META"} for key in keys])
    cases = [found.get((key["pk"], "META")) for key in keys]
    return [{k: v for k, v in case.items() if k not in _KEYS} for case in cases
            if case and case.get("status") == "OPEN"], following


def _cursor_key(cursor: str, prefix: str, listed: str) -> dict[str, str]:
    try:
        key = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ValueError("not a case cursor") from None
    if not isinstance(key, dict) or set(key) != set(_KEYS) or key.get("gsi1pk") != listed \
            or not all(isinstance(value, str) and value for value in key.values()) \
            or not key["pk"].startswith(f"{prefix}#") or any(len(value.encode()) > 1024 for value in key.values()):
        raise ValueError("not a case cursor")
    return key


def rekey_open_cases(db: Table, prefix: str, scope_field: str) -> tuple[int, int]:
    """Move the open cases indexed under ``prefix`` alone (opened before the index was per
    organizer) to their offering's organizer's partition (``scope_field`` names the offering);
    a case of an offering no organizer owns stays. Each move is conditioned on the case being
    still where it was read, so a run beside live traffic or a second run moves nothing twice.
    Answers (moved, left)."""
    moved = left = 0
    for key in db._query_index(prefix, "gsi1", "gsi1pk"):
        case = db._get(key["pk"], "META")
        owner = offering_owner(db, str(case[scope_field])) if case and case.get(scope_field) else None
        if owner is None:
            left += 1
            continue
        try:
            db.client.update_item(
                TableName=db.table, Key=_attrs({"pk": key["pk"], "sk": "META"}),
                UpdateExpression="SET gsi1pk = :owned, organizer_id = :owner",
                ConditionExpression="gsi1pk = :old",
                ExpressionAttributeValues=_attrs({":owned": open_list_key(prefix, owner), ":owner": owner,
                                                  ":old": prefix}))
            moved += 1
        except db.client.exceptions.ConditionalCheckFailedException:
            pass   # resolved or moved meanwhile
    return moved, left
