"""Scans of one ticket racing at eight doors on atomic stores (serialised moto, DynamoDB Local),
each door's service its own (separate Lambda containers): one scan admits, every other answers
``already_checked_in`` naming that scan's door; the guard is the check-in item's conditional put,
in the scan's one transaction with the booking's version. Scans of the booking's other tickets
racing with them all get in, each once. Half the doors scan through the route's path, whose first
decision is made on one read of everything (issue 49), the other half through the sync's applier."""
from __future__ import annotations

import random
import threading
from datetime import datetime, timezone
from typing import Any

import pytest

from holdfast.domain.errors import Busy
from holdfast.domain.inventory import Move
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.statuses import BookingStatus
from holdfast.products.events.services.doors import Doors
from holdfast.products.events.tickets import EventKeys, places
from holdfast.services import transitions
from holdfast.services.bookings import BookingService
from holdfast.services.catalog import CatalogService
from tests.correctness.helpers import ManualClock, event_request

pytestmark = pytest.mark.timeout(240)

KEYS = EventKeys(b"correctness-ticket-master-seed-0123456789")
DOORS = 8


def confirmed_tickets(store, clock) -> tuple[str, Any, list[dict[str, str]]]:
    event_id = CatalogService(store, clock, 600, id_salt="tests").create_event(event_request(capacity=10))["event_id"]
    held = BookingService(store, clock, rng=random.Random(1)).create_booking(event_id, "c1", "k1", HoldPlaces(quantity=3))
    booking = transitions.apply(store, held.booking, clock(), status=BookingStatus.CONFIRMED, actor="test",
                                action="paid", decision="paid", move=Move.SELL)
    return event_id, booking, [{"tk": tid, "token": KEYS.ticket_token(event_id, booking.booking_id, tid, seat,
                                                                      starts_at=booking.ends_at)}
                               for tid, seat in places(booking)]


def test_a_route_scan_that_collides_decides_again_on_a_fresh_read(store_backend):
    """The route's first decision is made on the one read it made before; when another door checked
    the ticket in between that read and the transaction, the scan reads again and answers
    ``already_checked_in`` naming that door (the read made first is never used twice)."""
    store = store_backend.store()
    clock = ManualClock(datetime(2030, 2, 1, 19, 0, tzinfo=timezone.utc))
    event_id, _, tickets = confirmed_tickets(store, clock)
    mine, rival = Doors(store_backend.store(), clock, lambda: KEYS), Doors(store_backend.store(), clock, lambda: KEYS)
    door = mine.create_door(event_id, "Main")
    real = mine.store.commit

    def a_rival_first(change):   # the other door's scan lands between our read and our write, once
        mine.store.commit = real
        admitted = rival.scan(event_id, "side", {"event_id": "r1", "token": tickets[0]["token"]}, at=clock(),
                              offline=False)
        assert admitted["admitted"] is True
        return real(change)

    mine.store.commit = a_rival_first
    answer = mine.scan_online(event_id, door["door_id"], door["door_key"],
                              lambda: {"event_id": "m1", "token": tickets[0]["token"]}, at=clock())
    assert (answer["admitted"], answer["reason"], answer["door_id"]) == (False, "already_checked_in", "side")
    assert [c["door_id"] for c in store.event_checkins(event_id)] == ["side"]


def test_one_ticket_scanned_at_eight_doors_at_once_is_admitted_once(store_backend):
    store = store_backend.store()
    clock = ManualClock(datetime(2030, 2, 1, 19, 0, tzinfo=timezone.utc))
    event_id, booking, tickets = confirmed_tickets(store, clock)
    # half the doors are real ones scanning through the route's path (the door, the pass, the booking
    # and the check-in read at once before the first decision), half through the sync's applier
    made = [Doors(store, clock, lambda: KEYS).create_door(event_id, f"Door {n}") for n in range(DOORS // 2)]
    keys = {door["door_id"]: door["door_key"] for door in made}
    doors = [*keys, *(f"door-{n}" for n in range(DOORS - len(made)))]
    # the contested ticket at every door, and the booking's two others once each, all at one moment
    jobs = [(door, tickets[0]) for door in doors] + [(doors[0], tickets[1]), (doors[1], tickets[2])]
    start = threading.Barrier(len(jobs))
    answers: list[tuple[str, dict[str, Any]]] = []
    lock = threading.Lock()

    def scan(n: int, door: str, ticket: dict[str, str]) -> None:
        service = Doors(store_backend.store(), clock, lambda: KEYS)
        start.wait()
        for _ in range(20):   # a door told 429 busy scans again under the same pass id
            try:
                body = {"event_id": f"p{n}", "token": ticket["token"]}
                if door in keys:
                    answer = service.scan_online(event_id, door, keys[door], lambda: body, at=clock())
                else:
                    answer = service.scan(event_id, door, body, at=clock(), offline=False)
                break
            except Busy:
                continue
        else:
            raise AssertionError("busy past every retry")
        with lock:
            answers.append((ticket["tk"], answer))

    threads = [threading.Thread(target=scan, args=(n, door, ticket)) for n, (door, ticket) in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    contested = [a for tk, a in answers if tk == tickets[0]["tk"]]
    admitted = [a for a in contested if a["admitted"]]
    assert len(contested) == DOORS and len(admitted) == 1
    assert {a["reason"] for a in contested if not a["admitted"]} == {"already_checked_in"}
    assert {a["door_id"] for a in contested} == {admitted[0]["door_id"]}
    assert all(a["admitted"] for tk, a in answers if tk != tickets[0]["tk"])
    checked = store.event_checkins(event_id)
    assert sorted(c["ticket_id"] for c in checked) == sorted(t["tk"] for t in tickets)
    assert sorted(store.get_booking(booking.booking_id).kind_details["checked_in"]) == sorted(t["tk"] for t in tickets)
