"""Issue 28, where two features meet: an event cancellation and a late payment's conflict case or
review (finding 1), a late payment and the clock (finding 2), a late authorisation voided (finding 7).
The in-memory store (the slot and parking cases on moto: their products' storage), the in-memory
provider, the services as the handlers build them."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from holdfast.domain.errors import EventCancelled
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services.cancellation_job import CancellationJob
from holdfast.services.event_cancellation import EventCancellationService
from holdfast.services.resolutions import ResolutionService
from tests.support.fake_table import FakeTableStore
from tests.unit.conftest import event_request
from tests.unit.test_appointments import DAY, MSK, appointments, book, room, service  # noqa: F401 - fixtures
from tests.unit.test_event_cancellation import FakeJobs, run_job
from tests.unit.test_parking import make_lot, parking, reserve, view_bookings  # noqa: F401 - fixtures
from tests.unit.test_resolutions import check, counts, late_story, windowed

S = BookingStatus

@pytest.fixture
def store():
    # the table's whole store: the core's fake and each product's fake part (slots, parking windows)
    return FakeTableStore()


@pytest.fixture
def cancellation(store, clock):
    return EventCancellationService(store, clock, FakeJobs())


@pytest.fixture
def job(store, payments, clock):
    return CancellationJob(store, payments, clock, page_size=3)


@pytest.fixture
def resolutions(store, payments, clock):
    return ResolutionService(store, payments, clock)


def conflict_case(bookings, payments, provider, clock, catalog, mode):
    event = windowed(catalog, payment_mode=mode)
    ann, bob, payment_id = late_story(bookings, payments, provider, clock, event)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "conflict_case_opened"
    return event, ann, payment_id


def money_back_once(provider, payment_id, mode):
    if mode == "one_stage":
        refunds = provider.refunds_for(payment_id)
        assert len(refunds) == 1 and refunds[0]["status"] == "succeeded"
    else:
        assert provider.payments[payment_id]["status"] == "canceled" and not provider.refunds_for(payment_id)
    assert len({key for op, key in provider.calls if op in ("create_refund", "cancel_payment")}) <= 1


def stale_read(store, monkeypatch):
    """The first look at the cancellation flag answers as it stood before the cancellation."""
    answers, real = [False], store.event_cancelled
    monkeypatch.setattr(store, "event_cancelled", lambda event_id: answers.pop() if answers else real(event_id))


# ------------------------------------------------------------------------- 1. cancelled offering

@pytest.mark.parametrize("mode", ["one_stage", "two_stage"])
def test_the_cancellation_job_closes_an_open_conflict_case_and_a_late_choice_is_refused(
        bookings, payments, provider, catalog, clock, store, resolutions, cancellation, job, mode):
    event, ann, payment_id = conflict_case(bookings, payments, provider, clock, catalog, mode)
    cancellation.cancel(event["event_id"], "c1", "storm")
    summary = run_job(job, event["event_id"])
    after = store.get_booking(ann.booking_id)
    assert after.status is (S.REFUNDED if mode == "one_stage" else S.PAYMENT_FAILED)
    assert after.resolution["decision"]["by"] == "organizer" and not after.resolution_open
    assert summary["open"] == 0 and ann.booking_id not in [b.booking_id for b in store.list_reviews()]
    with pytest.raises(EventCancelled) as refused:
        resolutions.choose(ann.booking_id, "ann", "r1", "alternative", {"window": "13:00"})
    assert refused.value.code == "event_cancelled" and refused.value.status == 409
    assert store.get_booking(ann.booking_id).status is after.status
    assert counts(store, event["event_id"])["POOL#002"] == (2, 0, 0)           # nothing taken for Ann
    money_back_once(provider, payment_id, mode)
    check(provider, settled=True, store=store)


@pytest.mark.parametrize("mode", ["one_stage", "two_stage"])
def test_a_choice_before_the_job_gets_there_gives_the_money_back_and_the_job_does_not_again(
        bookings, payments, provider, catalog, clock, store, resolutions, cancellation, job, mode):
    event, ann, payment_id = conflict_case(bookings, payments, provider, clock, catalog, mode)
    cancellation.cancel(event["event_id"], "c1", "storm")
    for key in ("r1", "r1", "r2"):      # a repeat and another key: the same answer, no second refund
        with pytest.raises(EventCancelled):
            resolutions.choose(ann.booking_id, "ann", key, "alternative", {"window": "13:00"})
    run_job(job, event["event_id"])
    assert store.get_booking(ann.booking_id).status is (S.REFUNDED if mode == "one_stage" else S.PAYMENT_FAILED)
    money_back_once(provider, payment_id, mode)
    check(provider, settled=True, store=store)


def test_a_choice_racing_the_cancellation_meets_the_sale_gate(
        bookings, payments, provider, catalog, clock, store, resolutions, cancellation, job, monkeypatch):
    """The choice read the flag before the cancellation committed: the store's gate refuses the
    places (one check in the transaction, like a new hold's), and the money goes back."""
    event, ann, payment_id = conflict_case(bookings, payments, provider, clock, catalog, "one_stage")
    cancellation.cancel(event["event_id"], "c1", "storm")
    stale_read(store, monkeypatch)
    with pytest.raises(EventCancelled):
        resolutions.choose(ann.booking_id, "ann", "r1", "alternative", {"window": "13:00"})
    assert store.get_booking(ann.booking_id).status is S.REFUNDED
    assert counts(store, event["event_id"])["POOL#002"] == (2, 0, 0)
    run_job(job, event["event_id"])
    money_back_once(provider, payment_id, "one_stage")


def test_a_late_payment_racing_the_cancellation_is_given_back_not_retaken(
        bookings, payments, provider, ga_event, clock, store, cancellation, job, monkeypatch):
    """Judged before the cancellation committed, retaken after: the gate refuses the RETAKE and
    the payment, judged again, is refunded (the job had nothing to do with an EXPIRED booking)."""
    late = bookings.create_booking(ga_event["event_id"], "ann", "a1", BookingIn(quantity=1)).booking
    payment_id = payments.start_payment(late.booking_id, "ann", "p").payment.payment_id
    clock.advance(601)
    assert bookings.expire(late.booking_id)["outcome"] == "expired"
    cancellation.cancel(ga_event["event_id"], "c1", "storm")
    run_job(job, ga_event["event_id"])
    provider.pay(payment_id)
    stale_read(store, monkeypatch)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "refunded"
    assert store.get_booking(late.booking_id).status is S.REFUNDED
    assert len(provider.refunds_for(payment_id)) == 1


def test_places_pinned_before_the_cancellation_are_not_captured(
        bookings, payments, provider, catalog, clock, store, cancellation, monkeypatch):
    """Two-stage: the authorisation was judged before the cancellation and its places pinned; the
    capture that follows is not made: the authorisation is voided and the places released."""
    event = catalog.create_event(event_request(capacity=2, payment_mode="two_stage"))
    ann = bookings.create_booking(event["event_id"], "ann", "a1", BookingIn(quantity=1)).booking
    payment_id = payments.start_payment(ann.booking_id, "ann", "p").payment.payment_id
    provider.pay(payment_id)
    cancellation.cancel(event["event_id"], "c1", "storm")
    stale_read(store, monkeypatch)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "authorisation_cancelled"
    assert [op for op, _ in provider.calls if op == "capture_payment"] == []
    assert provider.payments[payment_id]["status"] == "canceled" and not provider.refunds_for(payment_id)
    after = store.get_booking(ann.booking_id)
    assert after.status is S.CANCELLED and not after.holds_places and after.event_cancelled


def test_an_operator_cannot_confirm_a_review_of_a_cancelled_event_and_it_stays_visible(
        bookings, payments, provider, ga_event, clock, store, reviews, cancellation, job):
    """A plain review (paid in time, places resold) is not settled by the job on its own: it stays
    on the operators' list, marked, and only a refund or a close is accepted for it."""
    ann = bookings.create_booking(ga_event["event_id"], "ann", "a1", BookingIn(quantity=10)).booking
    payment_id = payments.start_payment(ann.booking_id, "ann", "p").payment.payment_id
    provider.pay(payment_id)                                  # paid in time, the answer arrives late
    clock.advance(601)
    assert bookings.expire(ann.booking_id)["outcome"] == "expired"
    bookings.create_booking(ga_event["event_id"], "bob", "b1", BookingIn(quantity=10))
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "manual_review"
    cancellation.cancel(ga_event["event_id"], "c1", "storm")
    run_job(job, ga_event["event_id"])
    kept = store.get_booking(ann.booking_id)
    assert kept.status is S.MANUAL_REVIEW and kept.event_cancelled
    assert ann.booking_id in [b.booking_id for b in store.list_reviews()]
    with pytest.raises(EventCancelled):
        reviews.resolve(ann.booking_id, "confirm", "op", "looks fine")
    assert store.get_booking(ann.booking_id).status is S.MANUAL_REVIEW
    assert reviews.resolve(ann.booking_id, "refund", "op", "event cancelled")["status"] in ("REFUND_PENDING", "REFUNDED")
    assert len(provider.refunds_for(payment_id)) == 1


def test_an_operator_confirm_of_a_case_is_refused_once_the_event_is_cancelled(
        bookings, payments, provider, catalog, clock, store, reviews, cancellation):
    event, ann, payment_id = conflict_case(bookings, payments, provider, clock, catalog, "two_stage")
    cancellation.cancel(event["event_id"], "c1", "storm")
    with pytest.raises(EventCancelled):
        reviews.resolve(ann.booking_id, "alternative", "op", "move", {"window": "13:00"})
    assert store.get_booking(ann.booking_id).status is S.PAYMENT_FAILED
    assert provider.payments[payment_id]["status"] == "canceled"
    # An operator's refund of that case is what the cancellation already did: answered, not repeated.
    assert reviews.resolve(ann.booking_id, "refund", "op", "money back")["status"] == "PAYMENT_FAILED"


# --------------------------------------------------------------------- 2. late payments and time

def _at(day_time: str) -> datetime:
    return datetime.fromisoformat(day_time).astimezone(timezone.utc)


@pytest.mark.parametrize("mode", ["one_stage", "two_stage"])
def test_a_late_payment_never_retakes_a_slot_that_has_begun(
        appointments, room, bookings, payments, provider, clock, store, mode):
    hire = service(appointments, room, name="Hall hire", mode="private", capacity=None, payment_mode=mode)
    late = book(appointments, hire, room, "alice", "10:00")
    payment_id = payments.start_payment(late.booking_id, "alice", "p").payment.payment_id
    clock.advance(601)
    assert bookings.expire(late.booking_id)["outcome"] == "expired"
    provider.pay(payment_id)
    clock.now = _at(f"{DAY}T10:05:00{MSK}")                    # the slot is free, and has begun
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "conflict_case_opened"
    view = bookings.view(late.booking_id, "alice")
    assert view["status"] == "MANUAL_REVIEW"
    starts = [_at(option["starts_at"].replace("Z", "+00:00")) for option in view["resolution"]["alternatives"]]
    assert starts and all(start > clock.now for start in starts)
    expected = "succeeded" if mode == "one_stage" else "waiting_for_capture"
    assert provider.payments[payment_id]["status"] == expected          # kept for the choice, never captured


def test_a_late_payment_for_a_slot_with_nothing_left_that_day_is_given_back(
        appointments, room, bookings, payments, provider, clock, store):
    hire = service(appointments, room, name="Hall hire", mode="private", capacity=None, payment_mode="one_stage")
    late = book(appointments, hire, room, "alice", "10:00")
    payment_id = payments.start_payment(late.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)                                  # paid in time, reported after the day
    clock.advance(601)
    assert bookings.expire(late.booking_id)["outcome"] == "expired"
    clock.now = _at(f"{DAY}T21:30:00{MSK}")
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "refunded"
    assert store.get_booking(late.booking_id).status is S.REFUNDED   # not a review: nothing to decide


def test_a_late_payment_never_retakes_a_parking_window_that_has_ended(parking, payments, provider, clock, store,
                                                                       view_bookings):
    lot = make_lot(parking)
    over = reserve(parking, lot, start="10:00", end="12:00")
    running = reserve(parking, lot, start="13:00", end="15:00", customer="bob", plate="B1")
    paid = {b.booking_id: payments.start_payment(b.booking_id, b.customer_id, "p").payment.payment_id
            for b in (over, running)}
    clock.advance(601)
    for booking in (over, running):
        assert view_bookings.expire(booking.booking_id)["outcome"] == "expired"
        provider.pay(paid[booking.booking_id])
    clock.now = _at(f"{DAY}T13:30:00+00:00")   # the first window is over, the second has begun; both free
    assert payments.apply_provider_payment(provider.get_payment(paid[over.booking_id])) == "refunded"
    assert store.get_booking(over.booking_id).status is S.REFUNDED
    assert len(provider.refunds_for(paid[over.booking_id])) == 1
    # A window that has begun but not ended is still what the customer paid for: retaken.
    assert payments.apply_provider_payment(provider.get_payment(paid[running.booking_id])) == "confirmed_late"


# -------------------------------------------------------------- 7. a voided late authorisation

def test_a_voided_late_authorisation_is_recorded_and_settled(bookings, payments, provider, catalog, clock, store,
                                                             reconciler):
    event = catalog.create_event(event_request(capacity=1, payment_mode="two_stage"))
    ann = bookings.create_booking(event["event_id"], "ann", "a1", BookingIn(quantity=1)).booking
    payment_id = payments.start_payment(ann.booking_id, "ann", "p").payment.payment_id
    clock.advance(601)
    assert bookings.expire(ann.booking_id)["outcome"] == "expired"
    bookings.create_booking(event["event_id"], "bob", "b1", BookingIn(quantity=1))
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "authorisation_cancelled"
    after = store.get_booking(ann.booking_id)
    assert after.payment.provider_status == "canceled" and after.settled and after.due_at is None
    assert bookings.view(ann.booking_id, "ann")["payment"]["status"] == "canceled"
    clock.advance(25 * 3600)                                  # past reconciliation's limit
    assert reconciler.check(ann.booking_id)["outcome"] == "settled"
    assert [op for op, _ in provider.calls].count("cancel_payment") == 1
