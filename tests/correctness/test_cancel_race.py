"""A hold racing an event's cancellation either fails or is seen by the cancellation job (issue 15
review): the cancel flag is enforced inside the hold's own transaction (adapters/sale_gate.py), not
by a read before it. On both atomic backends (serialised moto server, DynamoDB Local)."""
from __future__ import annotations

import threading
from collections import Counter

import pytest

from holdfast.domain.errors import EventCancelled
from holdfast.domain.statuses import HOLDING
from holdfast.schemas import BookingIn
from holdfast.services.cancellation_job import CancellationJob
from holdfast.services.event_cancellation import EventCancellationService
from holdfast.services.payments import PaymentService
from tests.support.fake_provider import FakeProvider

from .helpers import LockedProvider, ManualClock, check_invariants, event_request, snapshot
from .test_concurrency import Services, attempt, run_pool

pytestmark = pytest.mark.timeout(240)


def _job(services: Services, clock: ManualClock) -> tuple[EventCancellationService, CancellationJob]:
    payments = PaymentService(services.store, LockedProvider(FakeProvider(clock)), clock, services.bookings(),
                              "http://127.0.0.1:3000/done")
    return EventCancellationService(services.store, clock, None), CancellationJob(services.store, payments, clock)


def _run_job(job: CancellationJob, event_id: str) -> dict:
    """The state machine's steps in order: pages of bookings, each settled, then finish (passes)."""
    for passes in range(1, 4):
        after, more = "", True
        while more:
            page = job.list_page(event_id, after)
            for booking_id in page["bookings"]:
                job.settle(event_id, booking_id, "storm")
            after, more = page["after"], page["more"]
        result = job.finish(event_id, passes)
        if result["done"]:
            return result
    raise AssertionError("the job never finished")


def test_a_hold_whose_reads_precede_the_cancellation_cannot_commit_after_the_job(store_backend):
    """The worst interleaving, made deterministic: the hold has read everything it reads (the
    event was not cancelled then), the organizer cancels and the whole job runs and finishes, and
    only then does the hold's transaction reach the table."""
    clock = ManualClock()
    services = Services(store_backend, clock)
    event_id = services.catalog.create_event(event_request(capacity=50))["event_id"]
    cancellation, job = _job(services, clock)
    store = services.store
    real_commit = store.commit
    ran = []

    def cancel_then_write(*args, **kwargs):
        if not ran:
            ran.append(True)
            cancellation.cancel(event_id, "organizer-key", "storm")
            _run_job(job, event_id)
        return real_commit(*args, **kwargs)

    store.commit = cancel_then_write
    with pytest.raises(EventCancelled):
        services.bookings().create_booking(event_id, "late", "k1", BookingIn(quantity=2))
    snap = snapshot(store_backend.client, store_backend.table)
    assert [b for b in snap.of_event(event_id) if b.status in HOLDING] == [], \
        "a hold committed after the cancellation's job had finished"
    check_invariants(snap)


def test_holds_racing_a_cancellation_are_all_settled_by_its_job(store_backend):
    clock = ManualClock()
    services = Services(store_backend, clock)
    event_id = services.catalog.create_event(event_request(capacity=200))["event_id"]
    cancellation, job = _job(services, clock)
    start = threading.Event()

    def work(n):
        if n == 0:
            start.wait(5)
            cancellation.cancel(event_id, "organizer-key", "storm")
            return ("cancelled",)
        if n == 6:
            start.set()
        try:
            return attempt(services.bookings(), event_id, f"c{n}", f"k{n}", BookingIn(quantity=1))
        except EventCancelled:
            return ("event_cancelled",)

    outcomes = run_pool(work, range(24), threads=24)
    kinds = Counter(outcome[0] for outcome in outcomes)
    assert set(kinds) <= {"held", "event_cancelled", "cancelled", "too_busy", "in_progress"}, kinds
    _run_job(job, event_id)
    snap = snapshot(store_backend.client, store_backend.table)
    check_invariants(snap)
    open_holds = [b.booking_id for b in snap.of_event(event_id) if b.status in HOLDING]
    assert open_holds == [], f"holds the cancellation job never saw: {open_holds}"
    # Nothing sells after the job: every later hold is refused.
    with pytest.raises(EventCancelled):
        services.bookings().create_booking(event_id, "after", "k-after", BookingIn(quantity=1))
