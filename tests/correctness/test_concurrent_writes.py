"""Concurrent writes to one booking or one busy partition end in an answer a client can act on
(the result, 409 or 429 with Retry-After), never in a storage exception that a handler would
turn into a 5xx. Both backends are atomic (serialised moto server, DynamoDB Local).
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from holdfast.domain.errors import BookingError
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services.payments import PaymentService
from holdfast.services.waitlist import WaitlistService
from tests.support.fake_provider import FakeProvider

from .helpers import LockedProvider, ManualClock, actions, check_invariants, event_request, snapshot
from .test_concurrency import Services, run_pool

pytestmark = pytest.mark.timeout(240)

CLICKS = 8


def outcome(call: Any) -> tuple[str, Any]:
    """A call reduced to what a handler answers: the value, or the client error's status and code.
    Anything else (a StoreError, a bug) propagates and fails the test."""
    try:
        return "ok", call()
    except BookingError as exc:
        assert exc.status < 500, (exc.status, exc.code)
        return "error", (exc.status, exc.code)


def test_parallel_cancels_of_a_confirmed_booking_refund_once_and_never_fail(store_backend):
    clock = ManualClock()
    services = Services(store_backend, clock)
    provider = LockedProvider(FakeProvider(clock))
    event_id = services.catalog.create_event(event_request(capacity=10, max_per_booking=4))["event_id"]
    setup = services.bookings()
    payments = PaymentService(services.store, provider, clock, setup, "http://127.0.0.1:3000/done")
    booking = setup.create_booking(event_id, "alice", "k", BookingIn(quantity=2)).booking
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed"

    def click(_: int) -> tuple[str, Any]:
        service = services.bookings()
        worker = PaymentService(services.store, provider, clock, service, "http://127.0.0.1:3000/done")
        return outcome(lambda: service.cancel(booking.booking_id, "alice", refund=worker.cancel_confirmed).status)

    results = run_pool(click, range(CLICKS), threads=CLICKS)

    kinds = Counter(results)
    # A double click answers the booking as it now is (an idempotent repeat), or 409/429.
    assert set(kinds) <= {("ok", BookingStatus.REFUND_PENDING), ("ok", BookingStatus.REFUNDED),
                          ("error", (409, "booking_changed")), ("error", (429, "busy"))}, kinds
    assert sum(n for (kind, _), n in kinds.items() if kind == "ok") >= 1
    snap = snapshot(store_backend.client, store_backend.table)
    check_invariants(snap)
    assert actions(snap, booking.booking_id).count("cancelled_after_payment") == 1
    assert len(provider.refunds_for(payment_id)) == 1
    assert snap.counts(event_id) == {"available": 10, "held": 0, "sold": 0}


def test_parallel_cancels_of_a_hold_release_once(store_backend):
    clock = ManualClock()
    services = Services(store_backend, clock)
    event_id = services.catalog.create_event(event_request(capacity=10, max_per_booking=4))["event_id"]
    booking = services.bookings().create_booking(event_id, "alice", "k", BookingIn(quantity=3)).booking

    results = run_pool(lambda _: outcome(lambda: services.bookings().cancel(booking.booking_id, "alice").status),
                       range(CLICKS), threads=CLICKS)

    assert set(results) <= {("ok", BookingStatus.CANCELLED), ("error", (429, "busy"))}, Counter(results)
    snap = snapshot(store_backend.client, store_backend.table)
    check_invariants(snap)
    assert actions(snap, booking.booking_id).count("cancelled_by_customer") == 1
    assert snap.counts(event_id) == {"available": 10, "held": 0, "sold": 0}


def test_parallel_payment_starts_create_one_payment(store_backend):
    clock = ManualClock()
    services = Services(store_backend, clock)
    provider = LockedProvider(FakeProvider(clock))
    event_id = services.catalog.create_event(event_request(capacity=10, max_per_booking=4))["event_id"]
    booking = services.bookings().create_booking(event_id, "alice", "k", BookingIn(quantity=1)).booking

    def start(n: int) -> tuple[str, Any]:
        worker = PaymentService(services.store, provider, clock, services.bookings(), "http://127.0.0.1:3000/done")
        return outcome(lambda: worker.start_payment(booking.booking_id, "alice", f"p-{n}").status)

    results = run_pool(start, range(CLICKS), threads=CLICKS)

    assert set(results) <= {("ok", BookingStatus.PAYMENT_PENDING), ("error", (409, "request_in_progress")),
                            ("error", (429, "busy"))}, Counter(results)
    assert ("ok", BookingStatus.PAYMENT_PENDING) in results
    assert len(provider.payments_for(booking.booking_id)) == 1


def test_many_customers_joining_one_waitlist_at_once_all_get_in_or_busy(store_backend):
    clock = ManualClock()
    services = Services(store_backend, clock)
    event_id = services.catalog.create_event(event_request(capacity=2, max_per_booking=2))["event_id"]
    services.bookings().create_booking(event_id, "first", "k", BookingIn(quantity=2))

    def join(n: int) -> tuple[str, Any]:
        waitlist = WaitlistService(services.store, services.bookings(), clock)
        return outcome(lambda: waitlist.join(event_id, f"waiter-{n % 6}", 1)[0]["state"])

    results = run_pool(join, range(24), threads=24)

    assert set(results) <= {("ok", "WAITING"), ("error", (429, "busy"))}, Counter(results)
    waiting = {n % 6 for n, result in enumerate(results) if result == ("ok", "WAITING")}
    assert len(waiting) == 6
    assert len(services.store.waitlist_offers(event_id)) == 0
