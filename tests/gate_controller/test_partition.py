"""A partition from the gate's side: what it admits on its own, what it queues, and how the queue
reaches the backend afterwards (in order, with a duplicate, a gap filled late and a conflict)."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest

from gate_controller.backend import Unreachable
from gate_controller.controller import Gate
from gate_controller.journal import Journal
from tests.gate_controller.conftest import CONFLICT_PLATE, GATE, LOT, TIMEOUT, config


def iso(moment) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def window_token(lot_key, clock, booking="bk-1", plate="A001AA", lot=LOT, **shift) -> str:
    return lot_key.token(lot, booking, plate, iso(clock.now - timedelta(minutes=5)),
                         iso(clock.now + timedelta(hours=2)), **shift)


def sync_effects(applier, backend) -> list[str]:
    """The order in which passes that came through sync took effect (online passes left out)."""
    synced = {event["event_id"] for action, body in backend.requests if action == "sync" for event in body["events"]}
    return [event_id for event_id in applier.effects if event_id in synced]


def test_gate_online_entry_takes_the_backends_answer_and_queues_nothing(gate, backend, lot_key, clock):
    backend.config = config(lot_key, clock, offline_tickets=True)
    gate.refresh()
    outcome = gate.entry(plate="b 123 cd")
    assert outcome["open"] is True and outcome["mode"] == "online" and outcome["ticket_id"]
    assert gate.journal.get("last_seq", 0) == 0
    assert backend.requests[-1] == ("entry", {"event_id": outcome["event_id"], "plate": "B123CD"})


def test_gate_partition_admits_queues_and_syncs_in_order(gate, backend, applier, lot_key, clock):
    backend.config = config(lot_key, clock, offline_tickets=True, subscriptions=["S100SS"])
    gate.refresh()
    token = window_token(lot_key, clock)
    backend.stop()                                                        # the partition

    admitted = [gate.entry(token=token), gate.entry(plate="S100SS"), gate.entry(plate="X555XX"),
                gate.entry(plate=CONFLICT_PLATE), gate.exit(plate="S100SS")]
    assert [(o["open"], o["mode"], o["seq"]) for o in admitted] == [(True, "offline", seq) for seq in range(1, 6)]
    assert [o["basis"] for o in admitted] == ["token", "subscription", "local_ticket", "local_ticket", "subscription"]
    refused = [gate.entry(token=token),                                   # the same QR shown again
               gate.entry(token=window_token(lot_key, clock, booking="bk-2", lot="other-lot")),
               gate.entry(token=token[:-4] + "AAAA"),                     # a forged signature
               gate.exit(ticket=admitted[2]["local_ticket_id"])]          # may owe money: needs the backend
    assert [o["reason"] for o in refused] == ["token_already_used", "other_lot", "bad_signature",
                                              "offline_payment_needs_connection"]
    assert gate.status()["unsent"] == 5 and gate.status()["last_seq"] == 5

    backend.start()
    backend.drop = {3}                # the backend loses the batch's middle ...
    backend.lose_next_answer = True   # ... and its answer never comes back
    with pytest.raises(Unreachable):
        gate.sync()
    assert gate.journal.get("expected_seq", 1) == 1          # nothing counted as delivered
    assert sync_effects(applier, backend) == [admitted[0]["event_id"], admitted[1]["event_id"]]

    summary = gate.sync()                                    # 1, 2 again; 3 fills the gap; 4, 5 follow
    assert summary["expected_seq"] == 6 and summary["unsent"] == 0
    answer = backend.sync_answers[-1]
    assert [(item["seq"], item["status"]) for item in answer["results"]] == [
        (1, "duplicate"), (2, "duplicate"), (3, "applied"), (4, "applied"), (5, "applied")]
    assert sync_effects(applier, backend) == [o["event_id"] for o in admitted]   # once each, in the gate's order
    assert applier.out_of_order == []
    assert [c["seq"] for c in summary["conflicts"]] == [4]
    assert gate.status()["conflicts"][0]["moved_to"].endswith("b")

    sent = [event for action, body in backend.requests if action == "sync" for event in body["events"]]
    assert sent[0] == {"seq": 1, "event_id": admitted[0]["event_id"], "kind": "entry", "at": iso(clock.now).replace("Z", ".000Z"),
                       "token": token}
    assert sent[2]["local_ticket_id"] == admitted[2]["local_ticket_id"] and sent[2]["plate"] == "X555XX"

    # a second partition; this time the answer arrives and says where to resend from
    backend.stop()
    later = [gate.entry(plate=plate) for plate in ("M601MM", "M702MM", "M803MM")]
    backend.start()
    backend.drop = {7}
    assert gate.sync()["expected_seq"] == 9
    requests = [[e["seq"] for e in body["events"]] for action, body in backend.requests if action == "sync"]
    assert requests[-2:] == [[6, 7, 8], [7, 8]]
    assert backend.sync_answers[-2]["expected_seq"] == 7
    assert [item["status"] for item in backend.sync_answers[-2]["results"]] == ["applied", "held"]
    assert sync_effects(applier, backend) == [o["event_id"] for o in admitted + later]

    # the local ticket now has the backend's ticket: the online exit names it
    leaving = gate.exit(ticket=admitted[2]["local_ticket_id"])
    assert leaving["open"] is True and leaving["mode"] == "online"
    ticket_id = json.loads(gate.journal.pass_(admitted[2]["event_id"])["answer"])["ticket_id"]
    assert backend.requests[-1] == ("exit", {"event_id": leaving["event_id"], "ticket_id": ticket_id})


def test_gate_refuses_an_unknown_vehicle_offline_when_the_lot_issues_no_local_tickets(gate, backend, lot_key, clock):
    backend.config = config(lot_key, clock, offline_tickets=False)
    gate.refresh()
    backend.stop()
    outcome = gate.entry(plate="U000UU")
    assert outcome == {"event_id": outcome["event_id"], "open": False, "mode": "offline",
                       "reason": "offline_unknown_vehicle"}
    assert gate.journal.get("last_seq", 0) == 0 and gate.status()["unsent"] == 0


def test_gate_stops_trusting_cached_subscriptions_once_the_cache_is_stale(gate, backend, lot_key, clock):
    backend.config = config(lot_key, clock, offline_tickets=False, subscriptions=["S100SS"])
    gate.refresh()
    backend.stop()
    clock.advance(seconds=601)
    assert gate.entry(plate="S100SS")["reason"] == "offline_unknown_vehicle"
    assert gate.entry(token=window_token(lot_key, clock))["open"] is True   # the key does not expire


def test_gate_refuses_tokens_outside_their_window(gate, backend, lot_key, clock):
    backend.config = config(lot_key, clock, offline_tickets=False)
    gate.refresh()
    backend.stop()
    early = lot_key.token(LOT, "bk-e", "E1", iso(clock.now + timedelta(minutes=16)), iso(clock.now + timedelta(hours=1)))
    late = lot_key.token(LOT, "bk-l", "L1", iso(clock.now - timedelta(hours=2)), iso(clock.now))
    soon = lot_key.token(LOT, "bk-s", "S1", iso(clock.now + timedelta(minutes=14)), iso(clock.now + timedelta(hours=1)))
    assert [gate.entry(token=t).get("reason") for t in (early, late, soon)] == ["too_early", "token_expired", None]


def test_gate_sends_its_queue_before_the_next_online_pass(gate, backend, lot_key, clock):
    backend.config = config(lot_key, clock, offline_tickets=True)
    gate.refresh()
    backend.stop()
    queued = gate.entry(plate="Q111QQ")
    backend.start()
    gate.entry(plate="Q222QQ")
    assert [action for action, _ in backend.requests[-2:]] == ["sync", "entry"]
    assert backend.requests[-2][1]["events"][0]["event_id"] == queued["event_id"]


def test_gate_journal_survives_a_restart_between_writing_and_sending(backend, applier, journal_path, lot_key, clock):
    from gate_controller.backend import Backend
    backend.config = config(lot_key, clock, offline_tickets=True)
    first = Journal(journal_path)
    gate = Gate(first, Backend(backend.url, LOT, GATE, "gate-secret-key", timeout=TIMEOUT), LOT, GATE, clock)
    gate.refresh()
    backend.stop()
    queued = [gate.entry(plate="R111RR"), gate.entry(plate="R222RR")]
    first.close()                                  # the gate's process ends here, queue unsent

    backend.start()
    second = Journal(journal_path)
    again = Gate(second, Backend(backend.url, LOT, GATE, "gate-secret-key", timeout=TIMEOUT), LOT, GATE, clock)
    assert again.status()["unsent"] == 2
    backend.stop()
    assert again.entry(plate="R333RR")["seq"] == 3          # the counter went on from the journal
    backend.start()
    assert again.sync()["expected_seq"] == 4
    assert again.sync()["sent"] == 0                          # nothing left, nothing resent
    assert sync_effects(applier, backend) == [q["event_id"] for q in queued] + [second.passes()[-1]["event_id"]]
    second.close()


def test_gate_decides_offline_when_the_backend_hangs_and_counts_a_refusal_as_uncertain(backend, journal_path, lot_key,
                                                                                       clock):
    import socket

    from gate_controller.backend import Backend
    backend.config = config(lot_key, clock, offline_tickets=False)
    journal = Journal(journal_path)
    Gate(journal, Backend(backend.url, LOT, GATE, "gate-secret-key"), LOT, GATE, clock).refresh()
    with socket.socket() as hole:                 # accepts connections, never answers
        hole.bind(("127.0.0.1", 0))
        hole.listen(8)
        hung = Gate(journal, Backend(f"http://127.0.0.1:{hole.getsockname()[1]}", LOT, GATE, "k", timeout=0.3),
                    LOT, GATE, clock)
        admitted = hung.entry(token=window_token(lot_key, clock))
        refused = hung.entry(plate="H000HH")
    assert (admitted["open"], admitted["mode"], admitted["seq"]) == (True, "offline", 1)
    assert refused["open"] is False
    assert hung.status()["uncertain"] == 1     # the backend may have let H000HH in; the gate did not
    journal.close()


def test_gate_sync_batches_stay_under_the_apis_body_limit():
    from gate_controller.controller import MAX_SYNC_BODY_BYTES, fitting_batch

    events = [{"seq": n, "event_id": f"e{n}", "kind": "entry", "at": "2030-01-01T00:00:00Z", "token": "t" * 1990}
              for n in range(1, 51)]
    batch = fitting_batch(events)
    assert 1 < len(batch) < 50 and batch == events[:len(batch)]
    assert len(json.dumps({"events": batch}).encode()) <= MAX_SYNC_BODY_BYTES
    assert len(json.dumps({"events": events[:len(batch) + 1]}).encode()) > MAX_SYNC_BODY_BYTES
