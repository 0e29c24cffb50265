"""Gate cases: what the backend could not settle by itself about a parking lot, left for an
operator (listed in ``GET /admin/reviews`` as ``gate_cases``, closed by
``POST /admin/gate-cases/{case_id}/resolve``).

A case is opened in the same transaction as what found it, with an id derived from that (the
pass's event id, the payment's id), so a repeat neither loses nor doubles it. Its type says which
resolutions fit:

- ``entry``: an offline gate let a car in that the backend refused (no space left, a token it no
  longer honours, a clock far ahead): the car is inside without a ticket;
- ``exit``: an offline gate let a car out that the backend would have kept (money owed, no ticket
  found): its ticket is closed with what it left unpaid, or there is no ticket;
- ``payment``: money for a ticket beyond what its exit counted (a second exit payment also paid,
  or one paid after the car left): the operator refunds it at the provider or counts it elsewhere.

A resolution is journalled on the case (who, when, which, why) and the case leaves the open list.
The same resolution again answers the case as it is; another one on a resolved case is 409.
"""
from __future__ import annotations

import re
import uuid
from typing import Any

from holdfast.clock import iso
from holdfast.domain.errors import Conflict, InvalidRequest, NotFound
from holdfast.domain.organizers import Caller, owned_by
from holdfast.ports import Clock
from ..ports import GateCaseStore

#: The id namespace of tickets and cases (gate_passes.py derives ticket ids in it too).
NAMESPACE = uuid.UUID("8d7a1f0c-52b3-4e9a-b6d1-0f4c3a2e9b57")

RESOLUTIONS = {
    "entry": ("vehicle_left", "charged_on_site", "dismissed"),
    "exit": ("paid_on_site", "waived", "dismissed"),
    "payment": ("refunded", "applied_to_debt", "dismissed"),
}
#: A case id is a uuid5; anything else names no case (and never reaches the table as a key).
CASE_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def case_id(lot_id: str, *parts: str) -> str:
    return str(uuid.uuid5(NAMESPACE, "/".join((lot_id, "case", *parts))))


def new_case(identity: str, case_type: str, lot_id: str, reason: str, opened_at: str, actor: str,
             **known: Any) -> dict[str, Any]:
    return {"case_id": identity, "case_type": case_type, "lot_id": lot_id, "reason": reason, "status": "OPEN",
            "opened_at": opened_at, **{k: v for k, v in known.items() if v is not None},
            "journal": [{"at": opened_at, "actor": actor, "action": "gate_case_opened", "decision": reason}]}


def shown(case: dict[str, Any]) -> dict[str, Any]:
    """The case as the API shows it. Cases opened before every amount was ``{value, currency}``
    keep ``unpaid`` as bare text in the currency of their ``amount``; they are shown in the one shape."""
    unpaid, amount = case.get("unpaid"), case.get("amount")
    if isinstance(unpaid, str) and isinstance(amount, dict):
        return {**case, "unpaid": {"value": unpaid, "currency": amount["currency"]}}
    return case


def conflict_of(case: dict[str, Any]) -> dict[str, Any]:
    """What a pass's answer (and the gate sync's) says about the case it opened."""
    return {"type": "refused_after_pass", "reason": case["reason"], "resolution": "review",
            "case_id": case["case_id"], "needs_review": True}


class GateCases:
    def __init__(self, store: GateCaseStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def _lot_owned(self, lot_id: str, caller: Caller | None, owners: dict[str, bool]) -> bool:
        if caller is None:
            return True
        if lot_id not in owners:
            owners[lot_id] = owned_by(self.store.get_event(lot_id), caller)
        return owners[lot_id]

    def open_cases(self, caller: Caller | None = None) -> list[dict[str, Any]]:
        """Open cases; an organizer sees only those of its own lots."""
        owners: dict[str, bool] = {}
        return [shown(case) for case in self.store.list_gate_cases()
                if self._lot_owned(case["lot_id"], caller, owners)]

    def resolve(self, identity: str, resolution: str, operator: str, note: str,
                caller: Caller | None = None) -> dict[str, Any]:
        for _ in range(2):
            case = self.store.get_gate_case(identity) if CASE_ID.fullmatch(identity) else None
            if case is None or not self._lot_owned(case["lot_id"], caller, {}):
                # another organizer's case is answered like one that does not exist
                raise NotFound(f"No gate case {identity}.", code="gate_case_not_found")
            if case["status"] != "OPEN":
                decided = (case.get("resolution") or {}).get("resolution")
                if decided == resolution:
                    return shown(case)   # a repeat: the case as it is
                raise Conflict(f"This case was already resolved as {decided}.", code="case_already_resolved",
                               resolution=decided)
            allowed = RESOLUTIONS[case.get("case_type", "entry")]
            if resolution not in allowed:
                raise InvalidRequest(f"A {case.get('case_type', 'entry')} case is resolved as one of "
                                     f"{', '.join(allowed)}.", code="resolution_not_allowed", allowed=list(allowed))
            now = iso(self.clock())
            decision = {"resolution": resolution, "operator": operator, "note": note, "resolved_at": now}
            entry = {"at": now, "actor": "operator", "action": "gate_case_resolved",
                     "decision": f"{operator}: {resolution}: {note}"[:500],
                     **({"ids": caller.journal_ids()} if caller else {})}
            if self.store.gate_case_resolve(identity, decision, entry):
                return shown(self.store.get_gate_case(identity) or case)
            # resolved meanwhile by someone else: answered as a repeat or a conflict
        raise Conflict("The case changed meanwhile; look again.", code="case_changed")
