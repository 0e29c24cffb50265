"""A check-in device's sync (a lot's gate, an event's door): apply the passes it queued while
offline, once each and strictly in its order. Products build theirs on this one.

The device numbers its passes 1, 2, 3, ... The backend keeps, per device of a scope (the lot, the
event), the next number it expects (``expected_seq``). A batch is applied from that number on; a
pass beyond a gap is held until the gap is filled (by this batch, a later one or a concurrent
one), then applied in order. The answer lists every pass of the batch and ``expected_seq``, from
which the device resends.

Each pass goes through the injected applier ``(scope_id, device_id, seen, *, at, offline)``,
which is idempotent on the pass's own id (``pass_id``: the devices send it as ``event_id``,
``signatures.pass_id_of``). Two syncs of one device running at once (one that timed out and
resent) may both call it for the same number; only one records the answer and moves the cursor,
the other reads the recorded answer. A number is applied only after the one before it was
recorded, so the order holds whoever wins.

Statuses per pass: ``applied`` (recorded by this request), ``duplicate`` (recorded before, the same
answer again), ``held`` (waiting for a gap, or the applier was busy: sent again later), ``failed`` (the applier refused it for good: recorded,
so the device is never blocked by it), ``rejected`` (``seq_taken``: another pass has that number).
An applier answer carrying ``conflict`` (what the device let through that the backend could not
place: the applier settled it, or opened a case for an operator) is repeated at the pass's top
level; so is what the product's ``refused_after_pass`` finds in an answer that names none (a pass
the device already let through that the backend now refuses), and a ``failed`` one's.
"""
from __future__ import annotations

from typing import Any, Callable

from ..clock import parse_iso
from ..domain.errors import BookingError
from ..domain.signatures import PASS_ID_FIELD, pass_id_of, revoked_last_seq
from ..ports import SequenceLedger

#: (scope_id, device_id, seen, *, at, offline) -> answer (a product's wiring, e.g. apply_gate_pass)
Applier = Callable[..., dict[str, Any]]
#: (seen, answer) -> the conflict of a pass the device let through that the answer refuses, or None
RefusedAfterPass = Callable[[dict[str, Any], dict[str, Any]], "dict[str, Any] | None"]

#: Passes applied per request at most, so one request stays well inside the function's timeout;
#: the device resends from ``expected_seq`` for the rest.
MAX_APPLIED_PER_SYNC = 200
HELD_PAGE = 100
#: Answers the applier gives without recording them (it gave up on a race it may win next
#: time): never recorded here either, the pass waits for the device's next sync.
RETRY_REASONS = frozenset({"busy"})


def past_revocation(device: dict[str, Any], passes: list[dict[str, Any]]
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A revoked device's batch, split: the passes it may still report (numbers up to
    ``signatures.revoked_last_seq``), and the answers to the rest: ``failed`` with
    ``device_revoked``, applied to nothing and opening no case, so whoever holds a revoked key
    cannot open cases without end."""
    last = revoked_last_seq(device)
    kept = [seen for seen in passes if int(seen["seq"]) <= last]
    refused = [{"seq": int(seen["seq"]), PASS_ID_FIELD: pass_id_of(seen), "status": "failed",
                "result": {"error": {"code": "device_revoked",
                                     "message": "This device was revoked; passes past its last number are refused."}}}
               for seen in passes if int(seen["seq"]) > last]
    return kept, refused


class SequencedSync:
    def __init__(self, store: SequenceLedger, apply_pass: Applier,
                 refused_after_pass: RefusedAfterPass | None = None) -> None:
        self.store = store
        self.apply_pass = apply_pass
        self.refused_after_pass = refused_after_pass or (lambda seen, result: None)

    def sync(self, scope_id: str, device_id: str, passes: list[dict[str, Any]]) -> dict[str, Any]:
        """``passes`` as the applier sees them (each with its ``seq``; ``at`` as ISO text)."""
        batch = {int(item["seq"]): item for item in passes}
        run = _Run(scope_id, device_id, batch)
        cursor = self._drain(run)
        ahead = [seq for seq in sorted(batch) if seq >= cursor and seq not in run.rejected]
        for seq in ahead:
            if self.store.hold(scope_id, device_id, batch[seq]) == "taken":
                run.rejected.add(seq)
        if ahead:
            # A concurrent sync may have filled the gap and stopped before our held passes were
            # written; looking again after writing them means one of the two applies them.
            cursor = self._drain(run)
        return {"expected_seq": cursor, "results": [self._answer(run, seq, cursor) for seq in sorted(batch)]}

    def _drain(self, run: "_Run") -> int:
        """Apply from the cursor on while the next number is in the batch or held; the new cursor."""
        seq = self.store.expected_seq(run.scope_id, run.device_id)
        held = self.store.held_from(run.scope_id, run.device_id, seq, HELD_PAGE)
        budget = MAX_APPLIED_PER_SYNC
        while budget > 0:
            seen = self._next(run, seq, held)
            if seen is None:
                if len(held) == HELD_PAGE and seq > max(held):
                    held = self.store.held_from(run.scope_id, run.device_id, seq, HELD_PAGE)
                    continue
                return seq
            result = self._apply(run, seen)
            budget -= 1
            if result.get("reason") in RETRY_REASONS:
                run.retry.add(seq)
                return seq
            if self.store.advance(run.scope_id, run.device_id, seq, pass_id_of(seen), result):
                run.applied[seq] = {PASS_ID_FIELD: pass_id_of(seen), "result": result}
                seq += 1
            else:
                seq = self.store.expected_seq(run.scope_id, run.device_id)
                held = self.store.held_from(run.scope_id, run.device_id, seq, HELD_PAGE)
        return seq

    @staticmethod
    def _next(run: "_Run", seq: int, held: dict[int, dict[str, Any]]) -> dict[str, Any] | None:
        """The pass numbered ``seq``: a held one comes first (it arrived first); the batch's own
        with another pass id is then rejected rather than applied."""
        mine = run.batch.get(seq) if seq not in run.rejected else None
        kept = held.get(seq)
        if kept is not None and mine is not None and pass_id_of(kept) != pass_id_of(mine):
            run.rejected.add(seq)
        return kept or mine

    def _apply(self, run: "_Run", seen: dict[str, Any]) -> dict[str, Any]:
        try:
            return dict(self.apply_pass(run.scope_id, run.device_id, seen, at=parse_iso(seen["at"]), offline=True))
        except BookingError as exc:
            if exc.status >= 500 or exc.status == 429:
                raise    # busy, or the provider is away: nothing recorded, the device sends it again
            return {"error": {"code": exc.code, "message": exc.message}}

    def _answer(self, run: "_Run", seq: int, cursor: int) -> dict[str, Any]:
        pass_id = pass_id_of(run.batch[seq])
        answer: dict[str, Any] = {"seq": seq, PASS_ID_FIELD: pass_id}
        if seq in run.rejected:
            return {**answer, "status": "rejected", "reason": "seq_taken"}
        if seq >= cursor:
            reason = "busy_retry_later" if seq in run.retry else "waiting_for_earlier_seq"
            return {**answer, "status": "held", "reason": reason}
        record, status = run.applied.get(seq), "applied"
        if record is None:
            record, status = self.store.done(run.scope_id, run.device_id, seq), "duplicate"
        if record is None:
            return {**answer, "status": "duplicate", "reason": "answer_expired"}
        if pass_id_of(record) != pass_id:
            return {**answer, "status": "rejected", "reason": "seq_taken"}
        result = record["result"]
        answer.update(status="failed" if "error" in result else status, result=result)
        conflict = result.get("conflict") or ("error" not in result and self.refused_after_pass(run.batch[seq], result))
        if conflict:
            answer["conflict"] = conflict
        return answer


class _Run:
    """What one sync request has seen and done so far."""

    def __init__(self, scope_id: str, device_id: str, batch: dict[int, dict[str, Any]]) -> None:
        self.scope_id, self.device_id, self.batch = scope_id, device_id, batch
        self.applied: dict[int, dict[str, Any]] = {}
        self.rejected: set[int] = set()
        self.retry: set[int] = set()
