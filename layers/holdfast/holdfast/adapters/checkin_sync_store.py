"""Storage of a check-in device's sync sequence: one partition per device, on the shared table.
A product names its prefix (``PREFIX``) in a subclass: a lot's gates and an event's doors never
share a partition.

  <PREFIX>#<scope>#<device> / CURSOR            ``expected_seq``: the next sequence number to apply
  <PREFIX>#<scope>#<device> / HELD#<seq:012d>   an event that arrived ahead of a gap, kept until the
                                                gap is filled (the event as JSON and its event_id)
  <PREFIX>#<scope>#<device> / DONE#<seq:012d>   an applied event: its event_id and the answer (JSON),
                                                so a repeat gets the same answer (expires after 30 days)

The cursor only moves by one, from ``n`` to ``n + 1``, in the same transaction that records the
answer for ``n`` and removes a held copy of ``n``: whoever loses that race re-reads the cursor,
so the answer recorded for a sequence number is written once, and a sequence number is applied
only after the one before it was recorded. Answers and events are kept as JSON text so the
applier's shapes come back exactly as they went in (no Decimal round trip).
"""
from __future__ import annotations

import json
from typing import Any

from ..clock import epoch_seconds
from ..domain.signatures import pass_id_of
from .codec import Table, _attrs, _plain

DONE_RETENTION_SECONDS = 30 * 24 * 3600


def _seq_sk(prefix: str, seq: int) -> str:
    return f"{prefix}#{seq:012d}"


class SequenceStore(Table):
    #: the partition prefix of this product's devices (a subclass sets it)
    PREFIX = ""

    def _pk(self, scope_id: str, device_id: str) -> str:
        if not self.PREFIX:
            raise TypeError("a sequence ledger needs its product's PREFIX")
        return f"{self.PREFIX}#{scope_id}#{device_id}"

    def expected_seq(self, scope_id: str, device_id: str) -> int:
        item = self._get(self._pk(scope_id, device_id), "CURSOR")
        return int(item["expected_seq"]) if item and "expected_seq" in item else 1

    def done(self, scope_id: str, device_id: str, seq: int) -> dict[str, Any] | None:
        """``{"event_id", "result"}`` recorded for ``seq``, or None (not applied, or expired)."""
        item = self._get(self._pk(scope_id, device_id), _seq_sk("DONE", seq))
        if item is None:
            return None
        return {"event_id": item["event_id"], "result": json.loads(item["result"])}

    def held_from(self, scope_id: str, device_id: str, seq: int, limit: int) -> dict[int, dict[str, Any]]:
        """Held events with sequence numbers from ``seq`` on (at most ``limit``), by sequence number."""
        answer = self.client.query(
            TableName=self.table, ConsistentRead=True, Limit=limit,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues=_attrs({":pk": self._pk(scope_id, device_id), ":low": _seq_sk("HELD", seq),
                                              ":high": "HELD#~"}),
        )
        held = (_plain(item) for item in answer.get("Items", []))
        return {int(item["seq"]): json.loads(item["event"]) for item in held}

    def hold(self, scope_id: str, device_id: str, seen: dict[str, Any]) -> str:
        """Keep a pass that is ahead of the cursor. ``held`` (stored now or already, same pass
        id), ``taken`` (another pass id holds that number) or ``behind`` (the cursor has passed it
        meanwhile: it was applied, or its number was used by another pass). The pass id is kept
        under its devices' field name (``signatures.PASS_ID_FIELD``)."""
        pk, seq = self._pk(scope_id, device_id), int(seen["seq"])
        cursor = {"ConditionCheck": {
            "TableName": self.table, "Key": _attrs({"pk": pk, "sk": "CURSOR"}),
            "ConditionExpression": "attribute_not_exists(expected_seq) OR expected_seq <= :seq",
            "ExpressionAttributeValues": _attrs({":seq": seq}),
        }}
        put = {"Put": {
            "TableName": self.table, "ConditionExpression": "attribute_not_exists(pk)",
            "Item": _attrs({"pk": pk, "sk": _seq_sk("HELD", seq), "seq": seq, "event_id": pass_id_of(seen),
                            "event": json.dumps(seen, sort_keys=True)}),
        }}
        cancelled = self._transact([("cursor", cursor), ("held", put)])
        if cancelled is None:
            return "held"
        if cancelled.failed("cursor"):
            return "behind"
        if cancelled.failed("held"):
            existing = self._get(pk, _seq_sk("HELD", seq))
            if existing is None:      # applied and removed between the two reads
                return "behind"
            return "held" if pass_id_of(existing) == pass_id_of(seen) else "taken"
        raise AssertionError(f"unexpected cancellation {cancelled.reasons}")

    def advance(self, scope_id: str, device_id: str, seq: int, pass_id: str, result: dict[str, Any]) -> bool:
        """Record the answer for ``seq`` and move the cursor to ``seq + 1``, removing a held copy.
        False when the cursor is no longer at ``seq`` (another sync recorded it) or a different
        event is held under ``seq``: nothing written either way."""
        pk = self._pk(scope_id, device_id)
        at_seq = "expected_seq = :seq" if seq > 1 else "attribute_not_exists(expected_seq) OR expected_seq = :seq"
        return self._transact_all([
            ("cursor", {"Update": {
                "TableName": self.table, "Key": _attrs({"pk": pk, "sk": "CURSOR"}),
                "UpdateExpression": "SET expected_seq = :next", "ConditionExpression": at_seq,
                "ExpressionAttributeValues": _attrs({":seq": seq, ":next": seq + 1}),
            }}),
            ("done", {"Put": {
                "TableName": self.table, "ConditionExpression": "attribute_not_exists(pk)",
                "Item": _attrs({"pk": pk, "sk": _seq_sk("DONE", seq), "event_id": pass_id,
                                "result": json.dumps(result, sort_keys=True, default=str),
                                "ttl": int(epoch_seconds()) + DONE_RETENTION_SECONDS}),
            }}),
            ("held", {"Delete": {
                "TableName": self.table, "Key": _attrs({"pk": pk, "sk": _seq_sk("HELD", seq)}),
                "ConditionExpression": "attribute_not_exists(pk) OR event_id = :event_id",
                "ExpressionAttributeValues": _attrs({":event_id": pass_id}),
            }}),
        ])
