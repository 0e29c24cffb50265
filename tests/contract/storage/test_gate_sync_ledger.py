"""SequenceLedger (a gate's): the cursor moves by one, answers are recorded once, held passes wait in order."""
from __future__ import annotations

import time

DAYS_30 = 30 * 24 * 3600


def event(seq: int, event_id: str | None = None, **more) -> dict:
    return {"seq": seq, "event_id": event_id or f"ev{seq}", "kind": "entry", "plate": "A123BC", **more}


def test_a_new_gate_expects_one_and_has_nothing_done_or_held(backend, ids):
    ledger = backend.gate_sync
    assert ledger.expected_seq(ids("lot"), ids("gate")) == 1
    assert ledger.done(ids("lot"), ids("gate"), 1) is None
    assert ledger.held_from(ids("lot"), ids("gate"), 1, 10) == {}


def test_advance_records_the_answer_exactly_as_given_and_moves_the_cursor_by_one(backend, ids):
    ledger, lot, gate = backend.gate_sync, ids("lot"), ids("gate")
    result = {"ticket_id": "T1", "amount": 1.5, "nested": {"list": [1, "two", None]}, "flag": True}
    assert ledger.advance(lot, gate, 1, "ev1", result) is True
    assert ledger.expected_seq(lot, gate) == 2
    assert ledger.done(lot, gate, 1) == {"event_id": "ev1", "result": result}
    assert ledger.advance(lot, gate, 2, "ev2", {}) is True
    assert ledger.expected_seq(lot, gate) == 3


def test_advance_is_refused_when_the_cursor_is_elsewhere_and_writes_nothing(backend, ids):
    ledger, lot, gate = backend.gate_sync, ids("lot"), ids("gate")
    assert ledger.advance(lot, gate, 2, "ev2", {"x": 1}) is False     # cursor at 1
    assert ledger.done(lot, gate, 2) is None and ledger.expected_seq(lot, gate) == 1
    assert ledger.advance(lot, gate, 1, "ev1", {"first": True}) is True
    assert ledger.advance(lot, gate, 1, "ev1-again", {"second": True}) is False   # a racing repeat
    assert ledger.done(lot, gate, 1) == {"event_id": "ev1", "result": {"first": True}}
    assert ledger.expected_seq(lot, gate) == 2


def test_the_recorded_answer_expires_after_thirty_days(backend, ids):
    lot, gate = ids("lot"), ids("gate")
    before = int(time.time())
    backend.gate_sync.advance(lot, gate, 1, "ev1", {})
    after = int(time.time())
    ttl = backend.raw(f"GATESYNC#{lot}#{gate}", "DONE#000000000001")["ttl"]
    assert before + DAYS_30 <= ttl <= after + DAYS_30


def test_hold_keeps_a_pass_ahead_of_the_cursor_once_and_says_who_holds_a_number(backend, ids):
    ledger, lot, gate = backend.gate_sync, ids("lot"), ids("gate")
    assert ledger.hold(lot, gate, event(3)) == "held"
    assert ledger.hold(lot, gate, event(3)) == "held"                 # the same event again
    assert ledger.hold(lot, gate, event(3, "other")) == "taken"
    assert ledger.held_from(lot, gate, 1, 10) == {3: event(3)}


def test_hold_of_a_number_the_cursor_passed_is_behind(backend, ids):
    ledger, lot, gate = backend.gate_sync, ids("lot"), ids("gate")
    ledger.advance(lot, gate, 1, "ev1", {})
    ledger.advance(lot, gate, 2, "ev2", {})
    assert ledger.hold(lot, gate, event(1)) == "behind"
    assert ledger.hold(lot, gate, event(3)) == "held"                 # the cursor's own number
    assert ledger.held_from(lot, gate, 1, 10) == {3: event(3)}


def test_advance_removes_the_held_copy_but_not_another_events(backend, ids):
    ledger, lot, gate = backend.gate_sync, ids("lot"), ids("gate")
    ledger.hold(lot, gate, event(1))
    ledger.hold(lot, gate, event(2))
    assert ledger.advance(lot, gate, 1, "ev1", {}) is True
    assert ledger.held_from(lot, gate, 1, 10) == {2: event(2)}
    assert ledger.advance(lot, gate, 2, "not-ev2", {}) is False      # ev2 holds number 2
    assert ledger.expected_seq(lot, gate) == 2 and ledger.done(lot, gate, 2) is None
    assert ledger.held_from(lot, gate, 1, 10) == {2: event(2)}


def test_held_from_pages_in_sequence_order_from_a_number_on(backend, ids):
    ledger, lot, gate = backend.gate_sync, ids("lot"), ids("gate")
    for seq in (12, 5, 100, 7, 9):                                    # 100 sorts after 12 as a number
        ledger.hold(lot, gate, event(seq, note="x" * seq))
    first = ledger.held_from(lot, gate, 1, 2)
    assert list(first) == [5, 7]
    assert list(ledger.held_from(lot, gate, 8, 2)) == [9, 12]
    assert list(ledger.held_from(lot, gate, 13, 10)) == [100]
    assert first[5] == event(5, note="xxxxx")


def test_gates_are_apart(backend, ids):
    ledger, lot = backend.gate_sync, ids("lot")
    ledger.advance(lot, ids("gate-a"), 1, "ev1", {"gate": "a"})
    ledger.hold(lot, ids("gate-a"), event(3))
    assert ledger.expected_seq(lot, ids("gate-b")) == 1
    assert ledger.held_from(lot, ids("gate-b"), 1, 10) == {}
    assert ledger.advance(lot, ids("gate-b"), 1, "ev1", {"gate": "b"}) is True
    assert ledger.done(lot, ids("gate-a"), 1)["result"] == {"gate": "a"}
