"""A gate's sync: apply the passes it queued while offline, once each and strictly in its order.

The gate numbers its passes 1, 2, 3, ... The backend keeps, per gate, the next number it expects
(``expected_seq``). A batch is applied from that number on; a pass beyond a gap is held until the
gap is filled (by this batch, a later one or a concurrent one), then applied in order. The answer
lists every pass of the batch and ``expected_seq``, from which the gate resends.

Each pass goes through the injected applier (``holdfast.products.parking.wiring.apply_gate_pass``'s
signature), which is idempotent on event_id. Two syncs of one gate running at once (a gate that
timed out and resent) may both call it for the same number; only one records the answer and
moves the cursor, the other reads the recorded answer. A number is applied only after the one
before it was recorded, so the order holds whoever wins.

Statuses per pass: ``applied`` (recorded by this request), ``duplicate`` (recorded before, the same
answer again), ``held`` (waiting for a gap, or the applier was busy: sent again later), ``failed`` (the applier refused it for good: recorded,
so the gate is never blocked by it), ``rejected`` (``seq_taken``: another event has that number).
An applier answer carrying ``conflict`` (a space the offline gate admitted a car to was taken
meanwhile: the applier moved the ticket, or opened a gate case for an operator) is repeated at the pass's top level;
so is an answer that refuses a pass the gate already let through (``refused_after_pass``), and a
``failed`` one's (a pass dated ahead of the backend's clock: the applier records it, failed for good,
with a gate case, so the cursor moves on).
"""
from __future__ import annotations

from typing import Any, Callable

from holdfast.clock import parse_iso
from holdfast.domain.errors import BookingError
from ..ports import GateSyncLedger

#: products/parking/wiring.py apply_gate_pass(lot_id, gate_id, event, *, at, offline) -> answer
Applier = Callable[..., dict[str, Any]]

#: Passes applied per request at most, so one request stays well inside the function's timeout;
#: the gate resends from ``expected_seq`` for the rest.
MAX_APPLIED_PER_SYNC = 200
HELD_PAGE = 100
#: Answers the applier gives without recording them (it gave up on a race it may win next
#: time): never recorded here either, the pass waits for the gate's next sync.
RETRY_REASONS = frozenset({"busy"})


class GateSync:
    def __init__(self, store: GateSyncLedger, apply_pass: Applier) -> None:
        self.store = store
        self.apply_pass = apply_pass

    def sync(self, lot_id: str, gate_id: str, passes: list[dict[str, Any]]) -> dict[str, Any]:
        """``passes`` as the applier sees them (each with its ``seq``; ``at`` as ISO text)."""
        batch = {int(item["seq"]): item for item in passes}
        run = _Run(lot_id, gate_id, batch)
        cursor = self._drain(run)
        ahead = [seq for seq in sorted(batch) if seq >= cursor and seq not in run.rejected]
        for seq in ahead:
            if self.store.hold(lot_id, gate_id, batch[seq]) == "taken":
                run.rejected.add(seq)
        if ahead:
            # A concurrent sync may have filled the gap and stopped before our held passes were
            # written; looking again after writing them means one of the two applies them.
            cursor = self._drain(run)
        return {"expected_seq": cursor, "results": [self._answer(run, seq, cursor) for seq in sorted(batch)]}

    def _drain(self, run: "_Run") -> int:
        """Apply from the cursor on while the next number is in the batch or held; the new cursor."""
        seq = self.store.expected_seq(run.lot_id, run.gate_id)
        held = self.store.held_from(run.lot_id, run.gate_id, seq, HELD_PAGE)
        budget = MAX_APPLIED_PER_SYNC
        while budget > 0:
            event = self._next(run, seq, held)
            if event is None:
                if len(held) == HELD_PAGE and seq > max(held):
                    held = self.store.held_from(run.lot_id, run.gate_id, seq, HELD_PAGE)
                    continue
                return seq
            result = self._apply(run, event)
            budget -= 1
            if result.get("reason") in RETRY_REASONS:
                run.retry.add(seq)
                return seq
            if self.store.advance(run.lot_id, run.gate_id, seq, event["event_id"], result):
                run.applied[seq] = {"event_id": event["event_id"], "result": result}
                seq += 1
            else:
                seq = self.store.expected_seq(run.lot_id, run.gate_id)
                held = self.store.held_from(run.lot_id, run.gate_id, seq, HELD_PAGE)
        return seq

    @staticmethod
    def _next(run: "_Run", seq: int, held: dict[int, dict[str, Any]]) -> dict[str, Any] | None:
        """The pass numbered ``seq``: a held one comes first (it arrived first); the batch's own
        with another event_id is then rejected rather than applied."""
        mine = run.batch.get(seq) if seq not in run.rejected else None
        kept = held.get(seq)
        if kept is not None and mine is not None and kept["event_id"] != mine["event_id"]:
            run.rejected.add(seq)
        return kept or mine

    def _apply(self, run: "_Run", event: dict[str, Any]) -> dict[str, Any]:
        try:
            return dict(self.apply_pass(run.lot_id, run.gate_id, event, at=parse_iso(event["at"]), offline=True))
        except BookingError as exc:
            if exc.status >= 500 or exc.status == 429:
                raise    # busy, or the provider is away: nothing recorded, the gate sends it again
            return {"error": {"code": exc.code, "message": exc.message}}

    def _answer(self, run: "_Run", seq: int, cursor: int) -> dict[str, Any]:
        event_id = run.batch[seq]["event_id"]
        answer: dict[str, Any] = {"seq": seq, "event_id": event_id}
        if seq in run.rejected:
            return {**answer, "status": "rejected", "reason": "seq_taken"}
        if seq >= cursor:
            reason = "busy_retry_later" if seq in run.retry else "waiting_for_earlier_seq"
            return {**answer, "status": "held", "reason": reason}
        record, status = run.applied.get(seq), "applied"
        if record is None:
            record, status = self.store.done(run.lot_id, run.gate_id, seq), "duplicate"
        if record is None:
            return {**answer, "status": "duplicate", "reason": "answer_expired"}
        if record["event_id"] != event_id:
            return {**answer, "status": "rejected", "reason": "seq_taken"}
        result = record["result"]
        answer.update(status="failed" if "error" in result else status, result=result)
        conflict = result.get("conflict") or _refused_after_pass(run.batch[seq]["kind"], result)
        if conflict:
            answer["conflict"] = conflict
        return answer


def _refused_after_pass(direction: str, result: dict[str, Any]) -> dict[str, Any] | None:
    """A synced pass already happened: the gate opened for it. If the backend now says it would
    not have (no space left for an offline drive-up, a token it no longer honours, an exit it
    would charge for), the car is where the backend thinks it is not: a conflict for someone to
    look at, even when the applier did not name one itself (the real one names it, with the gate
    case it opened)."""
    if "error" in result:
        return None
    opened = result.get("gate_open") if direction == "entry" else result.get("exit_granted")
    if opened is False:
        return {"type": "refused_after_pass", "reason": result.get("reason"), "needs_review": True}
    return None


class _Run:
    """What one sync request has seen and done so far."""

    def __init__(self, lot_id: str, gate_id: str, batch: dict[int, dict[str, Any]]) -> None:
        self.lot_id, self.gate_id, self.batch = lot_id, gate_id, batch
        self.applied: dict[int, dict[str, Any]] = {}
        self.rejected: set[int] = set()
        self.retry: set[int] = set()
