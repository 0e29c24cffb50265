"""A stand-in for ``holdfast.products.parking.wiring.apply_gate_pass`` with the same signature and the
contract the sync relies on (idempotent on event_id), that also watches how it is called:

- ``effects``: the event_ids in the order they first took effect (a repeat changes nothing);
- ``calls``: every call, repeats included;
- ``out_of_order``: calls for a pass whose predecessor (per gate, by seq) had not taken effect.

Plates listed in ``conflicting_plates`` get an answer with a ``conflict`` (the space the offline
gate let the car into was taken; the ticket moved), the way the real applier reports one.
Thread-safe: the correctness tests call it from several syncs at once.
"""
from __future__ import annotations

import threading
from datetime import datetime
from typing import Any


class FakeApplier:
    def __init__(self, conflicting_plates: tuple[str, ...] = ()) -> None:
        self.lock = threading.Lock()
        self.effects: list[str] = []
        self.answers: dict[str, dict[str, Any]] = {}
        self.calls: list[str] = []
        self.out_of_order: list[tuple[str, int]] = []
        self._seq_done: dict[tuple[str, str], set[int]] = {}
        self.conflicting_plates = set(conflicting_plates)

    def __call__(self, lot_id: str, gate_id: str, event: dict[str, Any], *, at: datetime,
                 offline: bool) -> dict[str, Any]:
        assert isinstance(at, datetime) and at.tzinfo is not None
        with self.lock:
            self.calls.append(event["event_id"])
            done = self._seq_done.setdefault((lot_id, gate_id), set())
            seq = int(event.get("seq", 0))
            if event["event_id"] in self.answers:
                return dict(self.answers[event["event_id"]])
            if seq > 1 and seq - 1 not in done:
                self.out_of_order.append((gate_id, seq))
            answer = self._decide(event, offline)
            self.answers[event["event_id"]] = answer
            self.effects.append(event["event_id"])
            done.add(seq)
            return dict(answer)

    def _decide(self, event: dict[str, Any], offline: bool) -> dict[str, Any]:
        n = len(self.effects) + 1
        if event["kind"] == "exit":
            return {"exit_granted": True, "amount_due": None, "confirmation_url": None}
        answer: dict[str, Any] = {"gate_open": True, "ticket_id": f"T{n}", "space_id": f"S{n}", "reason": None,
                                  "offline": offline}
        if event.get("plate") in self.conflicting_plates:
            answer["conflict"] = {"space_id": f"S{n}", "moved_to": f"S{n}b", "review": False}
        return answer
