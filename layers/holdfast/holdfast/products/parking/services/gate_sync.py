"""A gate's sync: the core's sequenced sync of a check-in device (services/checkin_sync.py), with
what a gate's answer means when the backend refuses a pass the gate already let through."""
from __future__ import annotations

from typing import Any

from holdfast.ports import SequenceLedger
from holdfast.services.checkin_sync import Applier, SequencedSync


class GateSync(SequencedSync):
    def __init__(self, store: SequenceLedger, apply_pass: Applier) -> None:
        super().__init__(store, apply_pass, refused_after_pass)


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
