"""Organizers' retries of POST /events racing each other (finding 1 of issue 11), on both atomic
backends: the same Idempotency-Key with two different seat maps, sent at once from many threads.
Exactly one body wins; every answer is that event or 422; the event has exactly the winner's seats
and not one item of the loser's, and a retry racing sales never resets a seat."""
from __future__ import annotations

from collections import Counter

import pytest

from holdfast.adapters.dynamo import BookingStore
from holdfast.adapters.inventory_store import inventory_entry
from holdfast.domain.errors import IdempotencyKeyReused, SeatsUnavailable, TooBusy
from holdfast.schemas import BookingIn
from holdfast.services.catalog import CatalogService

from .helpers import ManualClock, check_invariants, event_request, snapshot
from .test_concurrency import Services, run_pool

pytestmark = pytest.mark.timeout(240)

MAPS = {"A": {"rows": [{"name": "A", "seats": 60}, {"name": "C", "seats": 60}]},   # 120 seats: two transactions
        "B": {"rows": [{"name": "B", "seats": 60}, {"name": "D", "seats": 60}]}}


def units(backend, event_id):
    """Every seat of the event as stored, by seat id (wherever the store keeps them)."""
    store = BookingStore(backend.table, backend.client)
    return {entry[2]: item for item in store.inventory_items(event_id)
            if (entry := inventory_entry(item)) and entry[1] == "unit"}


def test_one_body_wins_and_the_other_writes_nothing(store_backend):
    clock = ManualClock()
    services = Services(store_backend, clock)

    def create(n):
        body = "A" if n % 2 else "B"
        try:
            event = CatalogService(services.store, clock, 600, id_salt="tests-deployment-salt").create_event(
                event_request(capacity=None, seat_map=MAPS[body]), "race-key")
            return ("created", body, event["event_id"])
        except IdempotencyKeyReused:
            return ("reused", body)
        except TooBusy:
            return ("too_busy", body)

    outcomes = run_pool(create, range(12), threads=12)
    created = [outcome for outcome in outcomes if outcome[0] == "created"]
    assert created and {outcome[0] for outcome in outcomes} <= {"created", "reused", "too_busy"}, outcomes
    winners = {outcome[1] for outcome in created}
    assert len(winners) == 1 and len({outcome[2] for outcome in created}) == 1, outcomes
    winner, event_id = created[0][1], created[0][2]
    assert all(outcome[1] != winner for outcome in outcomes if outcome[0] == "reused")
    seats = set(units(store_backend, event_id))
    rows = [row["name"] for row in MAPS[winner]["rows"]]
    assert seats == {f"{row}-{n}" for row in rows for n in range(1, 61)}

    # Retries of the winner racing bookings: no sold or held seat is ever made available again.
    def work(n):
        if n % 3 == 0:
            CatalogService(services.store, clock, 600, id_salt="tests-deployment-salt").create_event(
                event_request(capacity=None, seat_map=MAPS[winner]), "race-key")
            return ("replayed",)
        try:
            services.bookings().create_booking(event_id, f"c{n}", "k", BookingIn(seats=[f"{rows[0]}-{n}"]))
            return ("held",)
        except (SeatsUnavailable, TooBusy):
            return ("lost",)

    kinds = Counter(outcome[0] for outcome in run_pool(work, range(1, 31), threads=16))
    snap = snapshot(store_backend.client, store_backend.table)
    check_invariants(snap)
    states = Counter(item["state"] for item in units(store_backend, event_id).values())
    assert states["held"] == kinds["held"] == len(snap.of_event(event_id))
