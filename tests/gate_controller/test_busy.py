"""A backend that answers busy (429, 5xx) is not a backend that cannot be reached: anyone can make
the web ACL or the gateway answer 429, so the device retries with backoff and, if the answers stay
busy, admits only what a fresh configuration vouches for. A lost connection keeps the offline rules.
Voided reservations (and an event's voided tickets) are refused offline whatever the list's age."""
from __future__ import annotations

from datetime import timedelta
from typing import Iterator

import json

import pytest

from gate_controller.backend import Backend, Busy, DoorBackend
from gate_controller.controller import Gate
from gate_controller.door import Door
from gate_controller.journal import Journal
from tests.gate_controller.conftest import GATE, KEY, LOT, TIMEOUT, config
from tests.gate_controller.test_partition import window_token
from tests.support.parking_tokens import LotKey, b64url


def iso(moment) -> str:
    return moment.isoformat().replace("+00:00", "Z")


class Waits(list):
    """The backend's sleep: records each wait instead of sleeping (a test never waits on time)."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def waits() -> Waits:
    return Waits()


@pytest.fixture
def busy_gate(backend, journal_path, clock, waits) -> Iterator[Gate]:
    journal = Journal(journal_path)
    try:
        yield Gate(journal, Backend(backend.url, LOT, GATE, KEY, timeout=TIMEOUT, sleep=waits, jitter=lambda: 1.0),
                   LOT, GATE, clock)
    finally:
        journal.close()


def lot_config(lot_key, clock, *, voided=(), voided_for=timedelta(seconds=60)) -> dict:
    body = config(lot_key, clock, offline_tickets=True)
    body["voided_reservations"] = list(voided)
    body["voided_valid_until"] = iso(clock.now + voided_for)
    return body


def test_backend_retries_a_busy_answer_with_growing_waits_then_takes_the_answer(busy_gate, backend, lot_key,
                                                                                 clock, waits):
    backend.config = lot_config(lot_key, clock)
    backend.busy = [429, 503, 429]
    assert busy_gate.refresh()["refreshed"] is True
    assert [action for action, _ in backend.requests] == ["config"] * 4
    assert waits == [0.25, 0.5, 1.0]


def test_backend_gives_up_after_its_retries_with_busy_not_unreachable(backend, waits):
    backend.always_busy = 429
    with pytest.raises(Busy) as raised:
        Backend(backend.url, LOT, GATE, KEY, timeout=TIMEOUT, sleep=waits, jitter=lambda: 0.0).config()
    assert raised.value.status == 429 and raised.value.maybe_heard is False
    assert len(waits) == 3 and waits == sorted(waits)


def test_a_busy_backend_gives_an_unknown_vehicle_no_local_ticket(busy_gate, backend, lot_key, clock):
    backend.config = lot_config(lot_key, clock)
    busy_gate.refresh()
    backend.always_busy = 429                             # the web ACL's per-address block, say
    refused = busy_gate.entry(plate="X555XX")
    assert (refused["open"], refused["reason"]) == (False, "backend_busy")
    assert busy_gate.status()["unsent"] == 0
    backend.always_busy = None
    backend.stop()                                        # a real partition: the lot's policy applies
    admitted = busy_gate.entry(plate="X556XX")
    assert (admitted["open"], admitted["basis"]) == (True, "local_ticket")


def test_a_busy_backend_admits_a_token_only_while_the_voided_list_is_fresh(busy_gate, backend, lot_key, clock):
    backend.config = lot_config(lot_key, clock)
    busy_gate.refresh()
    backend.always_busy = 503
    token = window_token(lot_key, clock, booking="bk-fresh")
    assert busy_gate.entry(token=token)["open"] is True    # vouched for by a list a few seconds old
    clock.advance(seconds=61)
    late = busy_gate.entry(token=window_token(lot_key, clock, booking="bk-late"))
    assert (late["open"], late["reason"]) == (False, "backend_busy")
    backend.always_busy = None
    backend.stop()
    assert busy_gate.entry(token=window_token(lot_key, clock, booking="bk-late"))["open"] is True   # unreachable


def test_a_voided_reservation_opens_no_barrier_offline_by_token_or_plate(busy_gate, backend, lot_key, clock):
    body = lot_config(lot_key, clock, voided=["bk-refunded"])
    body["reservations"] = [{"booking_id": "bk-refunded", "plate": "R100RR", "space_id": "R1",
                             "from": iso(clock.now - timedelta(minutes=5)), "to": iso(clock.now + timedelta(hours=1))}]
    body["reservations_valid_until"] = iso(clock.now + timedelta(hours=2))
    body["policy"] = {"allow_offline_temporary_tickets": False}
    backend.config = body
    assert busy_gate.refresh()["voided_reservations"] == 1
    backend.stop()
    clock.advance(minutes=30)                             # the list is stale now: still refused
    token = window_token(lot_key, clock, booking="bk-refunded", plate="R100RR")
    assert busy_gate.entry(token=token)["reason"] == "reservation_void"
    assert busy_gate.entry(plate="R100RR")["reason"] == "offline_unknown_vehicle"


@pytest.fixture
def door(backend, journal_path, clock, waits) -> Iterator[Door]:
    journal = Journal(journal_path)
    try:
        yield Door(journal, DoorBackend(backend.url, LOT, GATE, KEY, timeout=TIMEOUT, sleep=waits,
                                        jitter=lambda: 1.0), LOT, GATE, clock)
    finally:
        journal.close()


def test_a_busy_backend_keeps_a_door_shut_once_its_voided_list_is_stale(door, backend, clock):
    key = LotKey()
    payload = json.dumps({"v": 1, "kid": key.kid, "ev": LOT, "bk": "bk-1", "tk": "tk-1", "seat": None},
                         sort_keys=True, separators=(",", ":")).encode()
    token = b64url(payload) + "." + b64url(key.private.sign(payload))
    answer = {"event_id": LOT, "door_id": GATE, "public_key": key.public_b64, "kid": key.kid,
              "voided_tickets": ["tk-void"], "voided_valid_until": iso(clock.now + timedelta(seconds=60))}
    door.backend.config = lambda: answer          # the stub answers a lot's gate; a door's config is this
    door.refresh()
    clock.advance(seconds=61)
    backend.always_busy = 429
    shut = door.scan(token)
    assert (shut["open"], shut["reason"]) == (False, "backend_busy")
    backend.always_busy = None
    backend.stop()
    assert door.scan(token)["open"] is True                # a lost connection: the offline rules


def test_an_offline_door_refuses_a_ticket_past_its_expiry(door, backend, clock):
    """Issue 42, finding 12: a ticket carries ``exp`` (its event's start + 12 h); a door that cannot
    reach the backend refuses it after that, by the key list its configuration gave."""
    key = LotKey()
    ends = clock.now + timedelta(hours=1)
    payload = json.dumps({"v": 1, "kid": key.kid, "ev": LOT, "bk": "bk-1", "tk": "tk-1", "seat": None, "exp": iso(ends)},
                         sort_keys=True, separators=(",", ":")).encode()
    token = b64url(payload) + "." + b64url(key.private.sign(payload))
    answer = {"event_id": LOT, "door_id": GATE, "public_key": key.public_b64, "kid": key.kid,
              "keys": [{"kid": key.kid, "public_key": key.public_b64, "alg": "Ed25519"}],
              "voided_tickets": [], "voided_valid_until": iso(clock.now + timedelta(hours=3))}
    door.backend.config = lambda: answer
    door.refresh()
    backend.stop()
    clock.advance(seconds=3600)
    late = door.scan(token)
    assert (late["open"], late["reason"]) == (False, "ticket_expired")
