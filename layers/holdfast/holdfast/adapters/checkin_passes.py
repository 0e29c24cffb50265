"""The record of one pass a check-in device sent (a gate's entry or exit, a door's scan), written in
the transaction of what the pass changed, so that a repeat of its id gets the same answer back.
A product keys it (its prefix, scope, device and the device's pass id); the record keeps the
answer, whether the device was online, and a digest of how the pass named what it let through."""
from __future__ import annotations

import json
from typing import Any

from .codec import Table


def pass_item(pk: str, sk: str, device_field: str, device_id: str, answer: dict[str, Any], at: str, *,
              offline: bool, body: dict[str, str] | None) -> dict[str, Any]:
    return {"pk": pk, "sk": sk, device_field: device_id, "at": at, "mode": "offline" if offline else "online",
            "answer": json.dumps(answer, sort_keys=True),
            **({"body": json.dumps(body, sort_keys=True)} if body is not None else {})}


def read_pass(db: Table, pk: str, sk: str) -> dict[str, Any] | None:
    """``{"answer", "mode", "body"}`` of a recorded pass (mode and body are missing on records
    written before they were kept), or None."""
    return pass_of(db._get(pk, sk))


def pass_of(item: dict[str, Any] | None) -> dict[str, Any] | None:
    """A pass record as ``read_pass`` answers it, from its stored item (or None)."""
    if item is None:
        return None
    return {"answer": json.loads(item["answer"]), "mode": item.get("mode"),
            "body": json.loads(item["body"]) if item.get("body") else None}
