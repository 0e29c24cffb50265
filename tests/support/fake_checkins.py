"""What the fakes of the products' store parts share about check-ins (a lot's gates, an event's
doors), as the adapters share adapters/checkin_passes.py and adapters/checkin_cases_store.py: a
pass record and a check-in case under a product's prefix, on the fake's ``MemoryTable``.

Test code only: the deployed package (layers/) never imports this module.
"""
from __future__ import annotations

import copy
import json
from typing import Any

from holdfast.ports import Labelled
from tests.support.fake_store import fake_item
from tests.support.fakes import Item, MemoryTable, Write, _has, absent

#: The attributes of keys and of the gsi1 index, which the adapters drop from what they hand back.
KEYS = ("pk", "sk", "gsi1pk", "gsi1sk")


def without_keys(item: Item) -> Item:
    return {name: value for name, value in item.items() if name not in KEYS}


def put_new(label: str, item: Item) -> Labelled:
    """``put_new``: the whole item, on condition that nothing is stored under its key."""
    return fake_item(Write(label, (item["pk"], item["sk"]), absent, lambda _: dict(item)))


def pass_item(pk: str, sk: str, device_field: str, device_id: str, answer: dict[str, Any], at: str, *,
              offline: bool, body: dict[str, str] | None) -> Item:
    return {"pk": pk, "sk": sk, device_field: device_id, "at": at, "mode": "offline" if offline else "online",
            "answer": json.dumps(answer, sort_keys=True),
            **({"body": json.dumps(body, sort_keys=True)} if body is not None else {})}


def read_pass(table: MemoryTable, pk: str, sk: str) -> dict[str, Any] | None:
    item = table.get(pk, sk)
    if item is None:
        return None
    return {"answer": json.loads(item["answer"]), "mode": item.get("mode"),
            "body": json.loads(item["body"]) if item.get("body") else None}


def offering_owner(table: MemoryTable, offering_id: str) -> str | None:
    return (table.get(f"EVENT#{offering_id}", "META") or {}).get("organizer_id")


def case_put(prefix: str, case: dict[str, Any], organizer_id: str | None) -> Labelled:
    owner = {"organizer_id": organizer_id} if organizer_id else {}
    return put_new("case", {"pk": f"{prefix}#{case['case_id']}", "sk": "META", **case, **owner,
                            "gsi1pk": f"{prefix}#{organizer_id}" if organizer_id else prefix,
                            "gsi1sk": f"{case['opened_at']}#{case['case_id']}"})


def case_get(table: MemoryTable, prefix: str, case_id: str) -> dict[str, Any] | None:
    case = table.get(f"{prefix}#{case_id}", "META")
    return without_keys(case) if case else None


def case_resolve(table: MemoryTable, prefix: str, case_id: str, resolution: dict[str, Any],
                 entry: dict[str, Any]) -> bool:
    def resolve(item: Item | None) -> Item:
        assert item is not None
        resolved = {**item, "status": "RESOLVED", "resolution": resolution, "journal": [*item.get("journal", []), entry]}
        return {name: value for name, value in resolved.items() if name not in ("gsi1pk", "gsi1sk")}

    return table.write((f"{prefix}#{case_id}", "META"), _has("status", "OPEN"), resolve)


def open_cases(table: MemoryTable, prefix: str, organizer_id: str | None, limit: int, cursor: str | None
               ) -> tuple[list[dict[str, Any]], str | None]:
    """The adapter's page: ``limit`` index entries after ``cursor`` (the last entry's gsi1sk here)."""
    listed = f"{prefix}#{organizer_id}" if organizer_id else prefix
    if cursor is not None and not cursor.startswith(f"{listed}|"):
        raise ValueError("not a case cursor")
    with table.lock:
        indexed = [copy.deepcopy(item) for item in table.items.values()
                   if item.get("gsi1pk") == listed and isinstance(item.get("gsi1sk"), str)]
    indexed = sorted(indexed, key=lambda item: item["gsi1sk"])
    if cursor is not None:
        indexed = [item for item in indexed if item["gsi1sk"] > cursor.split("|", 1)[1]]
    page = indexed[:limit]
    following = f"{listed}|{page[-1]['gsi1sk']}" if len(page) == limit and page else None
    return [without_keys(case) for case in page if case.get("status") == "OPEN"], following
