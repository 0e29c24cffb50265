"""A container's availability snapshot (services/hold_reads.py) is at most a second old and may
be wrong by then: it may only make a transaction fail its conditions (the service then re-plans
from a fresh read), never let a hold succeed on places that are gone. Two containers, one with a
snapshot taken before the other sold every place; on both atomic backends."""
from __future__ import annotations

import random

import pytest

from holdfast.domain.errors import SoldOut
from holdfast.schemas import BookingIn
from holdfast.services.bookings import BookingService

from .helpers import ManualClock, check_invariants, event_request, snapshot
from .test_concurrency import Services

pytestmark = pytest.mark.timeout(120)


def test_a_stale_snapshot_makes_a_transaction_fail_never_a_wrong_success(store_backend):
    clock = ManualClock()
    services = Services(store_backend, clock)
    event_id = services.catalog.create_event(event_request(capacity=50, max_per_booking=10))["event_id"]
    stale = BookingService(services.store, clock, rng=random.Random(1), snapshot_seconds=3600)
    fresh = BookingService(services.store, clock, rng=random.Random(2))
    stale.create_booking(event_id, "warm", "k0", BookingIn(quantity=1))   # its snapshot: 49 left
    for n in range(5):
        fresh.create_booking(event_id, f"other-{n}", f"k{n}", BookingIn(quantity=10 if n < 4 else 9))
    writes = []
    real = services.store.create_hold
    services.store.create_hold = lambda *a, **k: writes.append(1) or real(*a, **k)
    with pytest.raises(SoldOut) as refused:
        stale.create_booking(event_id, "late", "k-late", BookingIn(quantity=2))
    assert refused.value.details == {"available": 0}   # from the fresh read after the failed try
    assert len(writes) == 1                           # one transaction tried on the snapshot, refused
    snap = snapshot(store_backend.client, store_backend.table)
    check_invariants(snap)
    assert snap.counts(event_id) == {"available": 0, "held": 50, "sold": 0}
    assert not [b for b in snap.of_event(event_id) if b.customer_id == "late"]
