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
    real = services.store.commit
    services.store.commit = lambda *a, **k: writes.append(1) or real(*a, **k)
    with pytest.raises(SoldOut) as refused:
        stale.create_booking(event_id, "late", "k-late", BookingIn(quantity=2))
    assert refused.value.details == {"available": 0}   # from the fresh read after the failed try
    assert len(writes) == 1                           # one transaction tried on the snapshot, refused
    snap = snapshot(store_backend.client, store_backend.table)
    check_invariants(snap)
    assert snap.counts(event_id) == {"available": 0, "held": 50, "sold": 0}
    assert not [b for b in snap.of_event(event_id) if b.customer_id == "late"]


def test_an_older_snapshot_only_chooses_where_to_try_and_a_refusal_on_it_is_read_again(store_backend):
    """Past a second (and up to 5), a snapshot that shows room plans without a read; what it
    cannot place is not refused on its word: the service reads afresh (here: room for the 2)."""
    from holdfast.domain.inventory import Pool

    clock = ManualClock()
    services = Services(store_backend, clock)
    event_id = services.catalog.create_event(event_request(capacity=20, max_per_booking=10))["event_id"]
    seller = BookingService(services.store, clock, rng=random.Random(3))
    ticks = [0.0]
    seller._snapshots.now = lambda: ticks[0]
    reads, writes = [], []
    real_read, real_write = services.store.batch_get, services.store.commit
    services.store.batch_get = lambda *a, **k: reads.append(1) or real_read(*a, **k)
    services.store.commit = lambda *a, **k: writes.append(1) or real_write(*a, **k)
    seller.create_booking(event_id, "a", "k-a", BookingIn(quantity=1))
    assert (len(reads), len(writes)) == (1, 1)
    ticks[0] = 3.0                                   # older than a second, younger than five
    seller.create_booking(event_id, "b", "k-b", BookingIn(quantity=1))
    assert (len(reads), len(writes)) == (1, 2)       # planned on the older snapshot: the transaction only
    pools = seller._snapshots.items[("pools", event_id)][1]
    seller._snapshots.items[("pools", event_id)] = (0.0, [Pool(p.pool_id, p.capacity, min(p.available, 1), 0, 0)
                                                          for p in pools[:1]])   # a wrong old view: 1 place
    seller.create_booking(event_id, "c", "k-c", BookingIn(quantity=2))
    assert (len(reads), len(writes)) == (2, 3)       # its "sold out" was not answered: read, then held
    ticks[0] = 10.0                                  # too old even to choose: read first
    seller.create_booking(event_id, "d", "k-d", BookingIn(quantity=1))
    assert (len(reads), len(writes)) == (3, 4)
    snap = snapshot(store_backend.client, store_backend.table)
    check_invariants(snap)
    assert snap.counts(event_id) == {"available": 15, "held": 5, "sold": 0}
