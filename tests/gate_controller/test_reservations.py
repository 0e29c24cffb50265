"""Offline plate entry for reservation holders: the gate caches the confirmed reservations its
configuration lists (plate, window, space, booking id), admits such a plate offline inside its
window and once, lets it out inside its window, and tells the backend which reservation it was."""
from __future__ import annotations

from datetime import timedelta

from tests.gate_controller.conftest import config


def iso(moment) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def with_reservations(lot_key, clock, *reservations, hours_valid=2):
    body = config(lot_key, clock, offline_tickets=False)
    body["reservations"] = [{"booking_id": booking_id, "plate": plate, "space_id": "R1",
                             "from": iso(clock.now + timedelta(minutes=start)),
                             "to": iso(clock.now + timedelta(minutes=end))} for booking_id, plate, start, end in reservations]
    body["reservations_valid_until"] = iso(clock.now + timedelta(hours=hours_valid))
    return body


def test_gate_admits_a_cached_reservation_by_plate_offline_inside_its_window_once(gate, backend, lot_key, clock):
    backend.config = with_reservations(lot_key, clock, ("bk-now", "R100RR", 10, 120), ("bk-later", "R200RR", 60, 120))
    assert gate.refresh()["reservations"] == 2
    backend.stop()
    clock.advance(minutes=20)                  # the subscriptions' five minutes are long gone: not needed here
    admitted = gate.entry(plate="r 100 rr")
    assert (admitted["open"], admitted["basis"], admitted["booking_id"]) == (True, "reservation", "bk-now")
    assert gate.entry(plate="R100RR")["reason"] == "already_inside"
    assert gate.entry(plate="R200RR")["reason"] == "offline_unknown_vehicle"      # 40 minutes before its window
    left = gate.exit(plate="R100RR")                                              # inside its window: nothing to pay
    assert (left["open"], left["basis"]) == (True, "reservation")
    assert gate.entry(plate="R100RR")["reason"] == "offline_unknown_vehicle"      # one entry per reservation

    backend.start()
    assert gate.sync()["expected_seq"] == 3
    sent = [event for action, body in backend.requests if action == "sync" for event in body["events"]]
    assert [(e["kind"], e["plate"], e.get("booking_id")) for e in sent] == [("entry", "R100RR", "bk-now"),
                                                                             ("exit", "R100RR", None)]


def test_gate_stops_admitting_cached_reservations_when_the_list_expires(gate, backend, lot_key, clock):
    backend.config = with_reservations(lot_key, clock, ("bk-long", "R300RR", 0, 600), hours_valid=2)
    gate.refresh()
    backend.stop()
    clock.advance(hours=2)
    assert gate.entry(plate="R300RR")["reason"] == "offline_unknown_vehicle"


def test_a_car_this_gate_thinks_inside_comes_in_on_a_reservation_listed_since(gate, backend, lot_key, clock):
    backend.config = config(lot_key, clock, offline_tickets=False)
    gate.refresh()
    assert gate.entry(plate="M100MM")["open"] is True         # online: in as a drive-up; out at another gate
    clock.advance(minutes=5)
    backend.config = with_reservations(lot_key, clock, ("bk-m", "M100MM", 0, 120))
    gate.refresh()                                            # the backend lists its reservation since
    backend.stop()
    clock.advance(minutes=1)
    admitted = gate.entry(plate="M100MM")
    assert (admitted["open"], admitted["basis"], admitted["booking_id"]) == (True, "reservation", "bk-m")
    assert gate.entry(plate="M100MM")["reason"] == "already_inside"    # and now it is inside on it
