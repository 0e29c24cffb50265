"""Passes a deleted gate still reports: the gate was deleted (its key answers 401 everywhere else),
but cars may have gone through it offline before it heard. Its sync is accepted only to refuse each
pass with a gate case for an operator (``gate_deleted``), so that no car passes unaccounted for and
nothing is applied on the authority of a gate that no longer exists.

Each case's id is derived from the gate and the pass's event id: a repeated sync finds the cases it
opened and answers the same.
"""
from __future__ import annotations

from typing import Any

from holdfast.clock import iso
from holdfast.ports import Change, Clock, ItemExists, StaleBooking
from ..ports import RetiredGateCases
from holdfast.services.checkin_cases import conflict_of
from .gate_cases import case_id, new_case

REASON = "gate_deleted"


def refuse_passes(store: RetiredGateCases, clock: Clock, lot_id: str, gate_id: str,
                  passes: list[dict[str, Any]]) -> dict[str, Any]:
    """The sync answer for a deleted gate's batch: every pass failed, with the case it opened. The
    gate's sequence is answered as done (``expected_seq`` past the batch): it has nothing to resend."""
    results = []
    for item in sorted(passes, key=lambda event: int(event["seq"])):
        identity = case_id(lot_id, REASON, gate_id, item["event_id"])
        case = store.get_gate_case(identity)
        if case is None:
            known = {key: item.get(key) for key in ("plate", "ticket_id", "booking_id")}
            case = new_case(identity, item["kind"], lot_id, REASON, iso(clock()), "gate", gate_id=gate_id,
                            event_id=item["event_id"], passed_at=item.get("at"), **known)
            try:
                store.commit(Change(items=tuple(store.gate_case_items(case))))
            except (StaleBooking, ItemExists):
                case = store.get_gate_case(identity) or case   # a concurrent repeat opened it first
        results.append({"seq": int(item["seq"]), "event_id": item["event_id"], "status": "failed",
                        "result": {"error": {"code": REASON, "message": "This gate was deleted."}},
                        "conflict": conflict_of(case)})
    return {"expected_seq": max(int(event["seq"]) for event in passes) + 1, "results": results}
