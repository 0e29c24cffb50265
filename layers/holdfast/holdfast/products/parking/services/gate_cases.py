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

import uuid
from typing import Any, Callable, Iterable

from holdfast.ports import Clock
from holdfast.services import checkin_cases
from holdfast.services.checkin_cases import CaseDesk, CaseKind
from ..ports import GateCaseStore

#: The id namespace of tickets and cases (gate_passes.py derives ticket ids in it too).
NAMESPACE = uuid.UUID("8d7a1f0c-52b3-4e9a-b6d1-0f4c3a2e9b57")

RESOLUTIONS = {
    "entry": ("vehicle_left", "charged_on_site", "dismissed"),
    "exit": ("paid_on_site", "waived", "dismissed"),
    "payment": ("refunded", "applied_to_debt", "dismissed"),
}


def case_id(lot_id: str, *parts: str) -> str:
    return checkin_cases.case_id(NAMESPACE, lot_id, *parts)


def new_case(identity: str, case_type: str, lot_id: str, reason: str, opened_at: str, actor: str,
             **known: Any) -> dict[str, Any]:
    return checkin_cases.new_case(identity, case_type, ("lot_id", lot_id), reason, opened_at, actor,
                                  "gate_case_opened", **known)


def shown(case: dict[str, Any]) -> dict[str, Any]:
    """The case as the API shows it. Cases opened before every amount was ``{value, currency}``
    keep ``unpaid`` as bare text in the currency of their ``amount``; they are shown in the one shape."""
    unpaid, amount = case.get("unpaid"), case.get("amount")
    if isinstance(unpaid, str) and isinstance(amount, dict):
        return {**case, "unpaid": {"value": unpaid, "currency": amount["currency"]}}
    return case


class GateCases(CaseDesk):
    def __init__(self, store: GateCaseStore, clock: Clock, organizers: Callable[[], Iterable[str]] = tuple) -> None:
        super().__init__(store, clock, organizers=organizers, kind=CaseKind(
            scope_field="lot_id", resolutions=RESOLUTIONS, not_found_code="gate_case_not_found",
            resolved_action="gate_case_resolved", noun="gate case", get=store.get_gate_case,
            resolve_item=store.gate_case_resolve, listed=store.list_gate_cases, shown=shown))
