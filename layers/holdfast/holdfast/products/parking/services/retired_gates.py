"""Passes a deleted gate still reports: the gate was deleted (its key answers 401 everywhere else),
but cars may have gone through it offline before it heard. Its sync is accepted only to refuse each
pass with a gate case for an operator (``gate_deleted``), so that no car passes unaccounted for and
nothing is applied on the authority of a gate that no longer exists.

Only the passes numbered up to the gate's last number (``signatures.revoked_last_seq``: the last one
recorded when it was deleted, and an allowance after it) are heard, and only within the grace after
its deletion (then its key answers 401 here too); the rest are refused without a case. Each case's
id is derived from the gate and the pass's number, so each number opens at most one case: a
repeated sync finds the cases it opened and answers the same, and whoever holds a deleted gate's
key can open no more cases than the allowance.
"""
from __future__ import annotations

from typing import Any

from holdfast.clock import iso
from holdfast.domain.signatures import PASS_ID_FIELD, pass_id_of
from holdfast.ports import Change, Clock, ItemExists, StaleBooking
from ..ports import RetiredGateCases
from holdfast.services.checkin_cases import conflict_of
from holdfast.services.checkin_sync import past_revocation
from .gate_cases import case_id, new_case

REASON = "gate_deleted"


def refuse_passes(store: RetiredGateCases, clock: Clock, gate: dict[str, Any], lot_id: str, gate_id: str,
                  passes: list[dict[str, Any]]) -> dict[str, Any]:
    """The sync answer for a deleted gate's batch: every pass failed, with the case it opened (past
    the gate's last number: ``device_revoked``, no case). The gate's sequence is answered as done
    (``expected_seq`` past the batch): it has nothing to resend."""
    heard, past = past_revocation(gate, passes)
    results = []
    for item in sorted(heard, key=lambda event: int(event["seq"])):
        identity = case_id(lot_id, REASON, gate_id, f"seq-{int(item['seq'])}")
        case = store.get_gate_case(identity)
        if case is None:
            known = {key: item.get(key) for key in ("plate", "ticket_id", "booking_id")}
            case = new_case(identity, item["kind"], lot_id, REASON, iso(clock()), "gate", gate_id=gate_id,
                            event_id=pass_id_of(item), passed_at=item.get("at"), **known)
            try:
                store.commit(Change(items=tuple(store.gate_case_items(case))))
            except (StaleBooking, ItemExists):
                case = store.get_gate_case(identity) or case   # a concurrent repeat opened it first
        results.append({"seq": int(item["seq"]), PASS_ID_FIELD: pass_id_of(item), "status": "failed",
                        "result": {"error": {"code": REASON, "message": "This gate was deleted."}},
                        "conflict": conflict_of(case)})
    results = sorted(results + past, key=lambda result: result["seq"])
    return {"expected_seq": max(int(event["seq"]) for event in passes) + 1, "results": results}
