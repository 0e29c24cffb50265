"""A gate's sync: the core's sequenced sync of a check-in device (services/checkin_sync.py), with
what a gate's answer means when the backend refuses a pass the gate already let through, and what
a deleted gate's sync gets (retired_gates.py)."""
from __future__ import annotations

from typing import Any

from holdfast.ports import Clock, SequenceLedger
from holdfast.services.checkin_sync import Applier, SequencedSync
from ..ports import RetiredGateCases


class GateSync(SequencedSync):
    def __init__(self, store: SequenceLedger, apply_pass: Applier, cases: RetiredGateCases | None = None,
                 clock: Clock | None = None) -> None:
        super().__init__(store, apply_pass, refused_after_pass)
        #: where a deleted gate's passes open their cases (``sync_gate``)
        self.cases = cases
        self.clock = clock

    def sync_gate(self, gate: dict[str, Any], lot_id: str, gate_id: str, passes: list[dict[str, Any]]
                  ) -> dict[str, Any]:
        """A gate's batch, the gate as its key named it: applied in order (``sync``); a deleted
        gate's passes are only refused, each with a case for an operator (retired_gates.py)."""
        if gate.get("deleted_at"):
            from .retired_gates import refuse_passes   # a deleted gate's last syncs: rare, loaded then

            assert self.cases is not None and self.clock is not None
            return refuse_passes(self.cases, self.clock, gate, lot_id, gate_id, passes)
        return self.sync(lot_id, gate_id, passes)


def refused_after_pass(event: dict[str, Any], result: dict[str, Any]) -> dict[str, Any] | None:
    """A synced pass already happened: the gate opened for it. If the backend now says it would
    not have (no space left for an offline drive-up, a token it no longer honours, an exit it
    would charge for), the car is where the backend thinks it is not: a conflict for someone to
    look at, even when the applier did not name one itself (the real one names it, with the gate
    case it opened)."""
    opened = result.get("gate_open") if event["kind"] == "entry" else result.get("exit_granted")
    if opened is False:
        return {"type": "refused_after_pass", "reason": result.get("reason"), "needs_review": True}
    return None
