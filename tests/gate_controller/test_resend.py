"""A pass whose answer never reached the gate is asked again under its own id when the same vehicle
tries again at that gate: the backend answers what it decided then (issue 28: a granted exit whose
answer was lost closed the ticket, and a new pass on it would be refused ``ticket_closed``)."""
from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from gate_controller.backend import Unreachable
from gate_controller.controller import RESEND_SECONDS, Gate
from gate_controller.journal import Journal
from tests.gate_controller.conftest import GATE, LOT


class Backend:
    """The backend's pass records, each answered once per event_id; ``lose`` loses the next answer."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers, self.stored, self.asked, self.lose = list(answers), {}, [], False
        self.synced: list[dict[str, Any]] = []

    def config(self) -> dict[str, Any]:
        return {}

    def sync(self, events: list[dict[str, Any]]) -> dict[str, Any]:
        self.synced.extend(events)
        return {"expected_seq": events[-1]["seq"] + 1, "results": [
            {"seq": e["seq"], "event_id": e["event_id"], "status": "applied", "result": None} for e in events]}

    def entry(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._pass(body)

    def exit(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._pass(body)

    def _pass(self, body: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(body["event_id"])
        if body["event_id"] not in self.stored:
            self.stored[body["event_id"]] = self.answers.pop(0)
        if self.lose:
            self.lose = False
            raise Unreachable("the answer was lost")
        return self.stored[body["event_id"]]


GRANTED = {"exit_granted": True, "amount_due": None, "confirmation_url": None, "reason": None}
CLOSED = {"exit_granted": False, "amount_due": None, "confirmation_url": None, "reason": "ticket_closed"}


def gate_with(backend: Backend, journal_path: str, clock: Any) -> Gate:
    return Gate(Journal(journal_path), backend, LOT, GATE, clock)


def test_an_exit_granted_while_its_answer_was_lost_opens_when_the_driver_tries_again(journal_path, clock):
    backend = Backend([GRANTED, CLOSED])
    gate = gate_with(backend, journal_path, clock)
    backend.lose = True
    first = gate.exit(ticket="T-1")                  # the backend closed the ticket; the gate never heard
    assert (first["open"], first["mode"], first["reason"]) == (False, "offline", "offline_unknown_vehicle")
    clock.advance(seconds=40)
    again = gate.exit(ticket="T-1")
    assert (again["open"], again["mode"], again["event_id"]) == (True, "online", first["event_id"])
    assert backend.asked == [first["event_id"]] * 2 and len(backend.answers) == 1   # no new pass was judged
    assert gate.journal.pass_(first["event_id"])["opened"] == 1
    assert gate.status()["uncertain"] == 0
    gate.journal.close()


def test_a_resent_pass_that_stays_shut_is_judged_again_as_a_new_pass(journal_path, clock):
    full = {"gate_open": False, "ticket_id": None, "space_id": None, "reason": "lot_full"}
    opened = {"gate_open": True, "ticket_id": "t-9", "space_id": "R1", "reason": None}
    backend = Backend([full, opened])
    gate = gate_with(backend, journal_path, clock)
    backend.lose = True
    first = gate.entry(plate="B1")                   # lot_full, lost: refused offline, uncertain
    clock.advance(seconds=60)                        # a space came free meanwhile
    again = gate.entry(plate="B1")
    assert again["open"] is True and again["event_id"] != first["event_id"]
    assert backend.asked == [first["event_id"], first["event_id"], again["event_id"]]
    gate.journal.close()


def test_a_later_visit_or_a_pass_between_makes_a_new_pass(journal_path, clock):
    backend = Backend([GRANTED, CLOSED])
    gate = gate_with(backend, journal_path, clock)
    backend.lose = True
    first = gate.exit(ticket="T-1")
    clock.advance(seconds=RESEND_SECONDS + 1)
    later = gate.exit(ticket="T-1")
    assert later["event_id"] != first["event_id"] and later["reason"] == "ticket_closed"
    backend.answers = [GRANTED, {**GRANTED, "ticket_id": "t-2"}, CLOSED]
    backend.lose = True
    lost = gate.exit(ticket="T-2")
    gate.entry(plate="N1")                           # another car passed since: T-2's car left the lane
    assert gate.exit(ticket="T-2")["event_id"] not in (lost["event_id"],)
    gate.journal.close()


def test_a_pass_kept_shut_unanswered_is_reported_at_sync_once_no_longer_resent(journal_path, clock):
    opened = {"gate_open": True, "ticket_id": "t-9", "space_id": "R1", "reason": None}
    backend = Backend([opened])
    gate = gate_with(backend, journal_path, clock)
    backend.lose = True
    lost = gate.entry(plate="G1")                    # the backend opened a ticket; the gate kept shut
    assert lost["open"] is False
    assert gate.sync()["sent"] == 0                  # the driver may still press again: not yet
    clock.advance(seconds=RESEND_SECONDS + 1)        # the driver has gone
    assert gate.sync()["sent"] == 1
    assert [(e["event_id"], e["plate"], e["gate_opened"]) for e in backend.synced] == [(lost["event_id"], "G1", False)]
    gate.journal.close()


def test_after_the_lane_cleared_another_car_on_the_same_ticket_is_a_new_pass(journal_path, clock):
    backend = Backend([GRANTED, CLOSED])
    gate = gate_with(backend, journal_path, clock)
    backend.lose = True
    lost = gate.exit(ticket="T-1")                   # car A: the backend closed T-1; the gate never heard
    assert lost["open"] is False
    gate.lane_cleared()                              # A backs away: the loop reports the lane empty
    clock.advance(seconds=30)
    other = gate.exit(ticket="T-1")                  # car B shows A's ticket, well within RESEND_SECONDS
    assert (other["open"], other["reason"]) == (False, "ticket_closed")
    assert other["event_id"] != lost["event_id"] and backend.asked == [lost["event_id"], other["event_id"]]
    # the backend hears at once that the barrier stayed shut on the lost pass, before B's pass
    assert [(e["event_id"], e["gate_opened"]) for e in backend.synced] == [(lost["event_id"], False)]
    gate.journal.close()


def test_the_lane_cleared_command_queues_the_unanswered_pass(journal_path, clock, tmp_path, capsys):
    from gate_controller.cli import main

    backend = Backend([GRANTED])
    gate = gate_with(backend, journal_path, clock)
    backend.lose = True
    lost = gate.exit(ticket="T-1")
    gate.journal.close()
    key_file = tmp_path / "gate.key"
    key_file.write_text("unused: the command asks the backend nothing")
    common = ["--api", "http://127.0.0.1:9", "--lot", LOT, "--gate", GATE, "--key-file", str(key_file),
              "--db", journal_path]
    assert main(common + ["lane-cleared"]) == 0
    assert json.loads(capsys.readouterr().out) == {"lane_cleared": True, "unsent": 1}
    journal = Journal(journal_path)
    assert journal.pass_(lost["event_id"])["seq"] == 1
    journal.close()
