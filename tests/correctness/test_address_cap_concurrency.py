"""Many accounts behind one network address firing holds at once get exactly the offering's cap on
that address's live holds (issue 42, finding 13), on both atomic backends (serialised moto server,
DynamoDB Local).

The cap is a counter item in the hold's own transaction (``live_holds < cap``), not a read before
the write: parallel requests that all read "below the cap" would all pass such a check. After the
race, cancels and lapses racing new holds keep the counter equal to the address's live bookings."""
from __future__ import annotations

import functools
from collections import Counter

import pytest

from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import TooManyHolds
from holdfast.domain.holder_address import holder_key
from holdfast.domain.statuses import HOLDING

from .helpers import ManualClock, check_invariants, event_request, snapshot
from .test_concurrency import Services, attempt, run_pool

pytestmark = pytest.mark.timeout(240)

CAP = 5
ADDRESS = "203.0.113.7"
KEYED = functools.partial(holder_key, "concurrency-holder-key-0123")
NETWORK = KEYED(ADDRESS)   # the counter item's key: the address is never stored
REQUESTS = 24


def live_holds(backend, event_id):
    item = backend.client.get_item(TableName=backend.table, ConsistentRead=True, Key={
        "pk": {"S": f"HOLDS#ADDR#{NETWORK}"}, "sk": {"S": f"EVENT#{event_id}"}}).get("Item")
    return int(item["live_holds"]["N"]) if item else 0


def from_network(service, event_id, customer, key):
    try:
        return attempt(service, event_id, customer, key, HoldPlaces(quantity=1, holder_address=ADDRESS))
    except TooManyHolds as exc:
        assert exc.details["limit"] == CAP
        return ("too_many_holds",)


def test_parallel_holds_from_one_address_get_exactly_the_cap(store_backend):
    clock = ManualClock()
    services = Services(store_backend, clock, address_key=KEYED)
    event_id = services.catalog.create_event(event_request(capacity=200, max_holds_per_address=CAP))["event_id"]

    # one account per request: every per-account cap is out of the way; only the address's binds
    outcomes = run_pool(lambda n: from_network(services.bookings(), event_id, f"throwaway-{n}", "k"),
                        range(REQUESTS), threads=REQUESTS)
    kinds = Counter(outcome[0] for outcome in outcomes)
    assert set(kinds) <= {"held", "too_many_holds", "too_busy", "in_progress"}, kinds
    assert 1 <= kinds["held"] <= CAP, kinds
    # what contention turned away (nothing written) is asked again, one by one: then exactly the cap holds
    for n, outcome in enumerate(outcomes):
        if outcome[0] in ("too_busy", "in_progress"):
            outcomes[n] = from_network(services.bookings(), event_id, f"throwaway-{n}", "k")
    kinds = Counter(outcome[0] for outcome in outcomes)
    assert kinds == {"held": CAP, "too_many_holds": REQUESTS - CAP}, kinds
    snap = snapshot(store_backend.client, store_backend.table)
    check_invariants(snap)   # AH1: the counter equals the address's live holds
    live = [b for b in snap.of_event(event_id) if b.counted_address == NETWORK and b.status in HOLDING]
    assert len(live) == CAP == live_holds(store_backend, event_id) and snap.counts(event_id)["held"] == CAP

    # cancels racing new holds from the same address: the counter follows the bookings exactly
    jobs = [("cancel", b.booking_id, b.customer_id) for b in live] + [("hold", f"late-{n}", "") for n in range(12)]

    def work(job):
        kind, value, customer = job
        if kind == "cancel":
            services.bookings().cancel(value, customer)
            return ("cancelled",)
        return from_network(services.bookings(), event_id, value, "k")

    results = Counter(outcome[0] for outcome in run_pool(work, jobs, threads=16))
    assert set(results) <= {"cancelled", "held", "too_many_holds", "too_busy", "in_progress"}, results
    snap = snapshot(store_backend.client, store_backend.table)
    check_invariants(snap)
    live = [b for b in snap.of_event(event_id) if b.counted_address == NETWORK and b.status in HOLDING]
    assert len(live) == results["held"] <= CAP
    assert live_holds(store_backend, event_id) == len(live)
