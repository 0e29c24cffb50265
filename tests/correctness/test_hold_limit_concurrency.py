"""One customer firing many holds at once never gets more active holds than the event allows
(finding 13 of issue 11), on both atomic backends (serialised moto server, DynamoDB Local).

The cap is a counter in the hold's own transaction; a check-then-write in the service would let
parallel requests all pass the check. After the race, releases (cancel, expiry) racing new holds
keep the counter equal to the customer's holding bookings."""
from __future__ import annotations

from collections import Counter

import pytest

from holdfast.domain.errors import Conflict
from holdfast.domain.statuses import HOLDING
from holdfast.schemas import BookingIn

from .helpers import ManualClock, check_invariants, event_request, snapshot
from .test_concurrency import Services, attempt, run_pool

pytestmark = pytest.mark.timeout(240)

CAP = 4   # the default (holdfast.domain.booking.DEFAULT_HOLDS_PER_CUSTOMER); the event does not set one


def counter(backend, customer, event_id):
    item = backend.client.get_item(TableName=backend.table, ConsistentRead=True, Key={
        "pk": {"S": f"CUSTOMER#{customer}"}, "sk": {"S": f"HOLDS#EVENT#{event_id}"}}).get("Item")
    return int(item["active"]["N"]) if item else 0


def limited(service, event_id, customer, key, body):
    try:
        return attempt(service, event_id, customer, key, body)
    except Conflict as exc:
        return (exc.code,)


def test_parallel_holds_by_one_customer_never_pass_the_cap(store_backend):
    clock = ManualClock()
    services = Services(store_backend, clock)
    event_id = services.catalog.create_event(event_request(capacity=200))["event_id"]

    outcomes = run_pool(lambda n: limited(services.bookings(), event_id, "greedy", f"k{n}", BookingIn(quantity=1)),
                        range(24), threads=24)
    kinds = Counter(outcome[0] for outcome in outcomes)
    assert set(kinds) <= {"held", "hold_limit_reached", "too_busy", "in_progress"}, kinds
    assert 1 <= kinds["held"] <= CAP, kinds
    snap = snapshot(store_backend.client, store_backend.table)
    check_invariants(snap)
    holding = [b for b in snap.of_event(event_id) if b.customer_id == "greedy" and b.status in HOLDING]
    assert len(holding) == kinds["held"] == counter(store_backend, "greedy", event_id)

    # Releases racing new holds: the counter follows the bookings exactly.
    service = services.bookings()
    while len(holding) < CAP:
        holding.append(service.create_booking(event_id, "greedy", f"fill-{len(holding)}", BookingIn(quantity=1)).booking)
    jobs = [("cancel", booking.booking_id) for booking in holding] + [("hold", f"late-{n}") for n in range(12)]

    def work(job):
        kind, value = job
        if kind == "cancel":
            services.bookings().cancel(value, "greedy")
            return ("cancelled",)
        return limited(services.bookings(), event_id, "greedy", value, BookingIn(quantity=1))

    results = Counter(outcome[0] for outcome in run_pool(work, jobs, threads=16))
    assert set(results) <= {"cancelled", "held", "hold_limit_reached", "too_busy", "in_progress"}, results
    snap = snapshot(store_backend.client, store_backend.table)
    check_invariants(snap)
    holding = [b for b in snap.of_event(event_id) if b.customer_id == "greedy" and b.status in HOLDING]
    assert len(holding) == results["held"] <= CAP
    assert counter(store_backend, "greedy", event_id) == len(holding)
