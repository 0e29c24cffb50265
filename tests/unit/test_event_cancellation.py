"""Issue 18: an organizer cancels an event. Sales stop at once; the job's steps release every hold
and refund every paid booking exactly once, whatever is retried or run twice; a payment that
arrives for the cancelled event is given back, never confirmed. In-memory store (with the waitlist's
items in its table) and provider."""
import pytest

from holdfast.domain.errors import EventCancelled, IdempotencyKeyReused
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services.cancellation_job import CancellationJob
from holdfast.services.event_cancellation import EventCancellationService
from holdfast.services.provider_keys import PaymentOutcomeUnknown
from holdfast.services.waitlist import WaitlistService
from tests.support.fake_store import FakeWaitlistStore
from tests.unit.conftest import event_request

S = BookingStatus


@pytest.fixture
def store():
    return FakeWaitlistStore()


class FakeJobs:
    def __init__(self):
        self.started: list[tuple[str, int]] = []
        self.states: dict[tuple[str, int], str] = {}

    def start(self, event_id, attempt, reason):
        if (event_id, attempt) in self.states:
            return False
        self.started.append((event_id, attempt))
        self.states[(event_id, attempt)] = "RUNNING"
        return True

    def state(self, event_id, attempt):
        return self.states.get((event_id, attempt))


@pytest.fixture
def jobs():
    return FakeJobs()


@pytest.fixture
def cancellation(store, clock, jobs):
    return EventCancellationService(store, clock, jobs)


@pytest.fixture
def job(store, payments, clock):
    return CancellationJob(store, payments, clock, page_size=3)


def hold(bookings, event, customer, n=1):
    return bookings.create_booking(event["event_id"], customer, f"k-{customer}", BookingIn(quantity=n)).booking


def paid(bookings, payments, provider, event, customer):
    booking = hold(bookings, event, customer)
    payment_id = payments.start_payment(booking.booking_id, customer, "p").payment.payment_id
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed"
    return booking.booking_id, payment_id


def run_job(job, event_id, reason="storm"):
    """The state machine's loop, step by step: pages, one settle per booking, finish."""
    passes = 1
    while True:
        after, more = "", True
        while more:
            page = job.list_page(event_id, after)
            for booking_id in page["bookings"]:
                for _ in range(3):   # the Map's retries: the same step again
                    try:
                        job.settle(event_id, booking_id, reason)
                        break
                    except PaymentOutcomeUnknown:
                        continue
            after, more = page["after"], page["more"]
        result = job.finish(event_id, passes)
        if result["done"]:
            return result
        passes = result["pass"]


def test_cancel_stops_sales_and_starts_one_job(cancellation, jobs, bookings, ga_event, store):
    event_id = ga_event["event_id"]
    view, replayed = cancellation.cancel(event_id, "c-1", "storm")
    assert (replayed, view["state"], view["reason"]) == (False, "running", "storm")
    with pytest.raises(EventCancelled):
        hold(bookings, ga_event, "late")
    # the same request again, another key, the same key with another reason
    assert cancellation.cancel(event_id, "c-1", "storm")[1] is True
    assert cancellation.cancel(event_id, "c-2", "flood")[0]["reason"] == "storm"
    with pytest.raises(IdempotencyKeyReused):
        cancellation.cancel(event_id, "c-1", "flood")
    assert jobs.started == [(event_id, 1)]
    assert store.get_event(event_id)["cancel_reason"] == "storm"


def test_job_refunds_every_paid_booking_once_and_releases_holds(cancellation, job, bookings, payments, provider,
                                                                 catalog, ga_event, store):
    event_id = ga_event["event_id"]
    paid_ids = [paid(bookings, payments, provider, ga_event, f"c{i}") for i in range(4)]
    held = hold(bookings, ga_event, "holder")
    pending = hold(bookings, ga_event, "payer")
    pending_payment = payments.start_payment(pending.booking_id, "payer", "p").payment.payment_id
    cancellation.cancel(event_id, "c-1", "storm")
    provider.fail("create_refund", "after", "before")   # two lost answers on the way
    result = run_job(job, event_id)
    assert result["done"] and result["open"] == 0
    for booking_id, payment_id in paid_ids:
        booking = store.get_booking(booking_id)
        assert booking.status is S.REFUNDED and booking.event_cancelled
        assert len(provider.refunds_for(payment_id)) == 1
        journal = store.get_booking_with_journal(booking_id)[1]
        assert any(e.action == "event_cancelled_refund_started" and "storm" in e.decision for e in journal)
    assert store.get_booking(held.booking_id).status is S.CANCELLED
    assert store.get_booking(pending.booking_id).status is S.CANCELLED
    assert catalog.get_event(event_id)["counts"] == {"available": 10, "held": 0, "sold": 0}
    # the job run again (a restarted execution) does nothing twice
    run_job(job, event_id)
    assert all(len(provider.refunds_for(p)) == 1 for _, p in paid_ids)
    progress = cancellation.progress(event_id)
    assert progress["state"] == "finished"
    assert progress["counts"]["refunded"] == 4 and progress["counts"]["holds_released"] == 2
    assert progress["summary"]["refunded"] == 4
    # (4) the customer who was paying pays after all: the money goes back, the booking is never confirmed
    provider.pay(pending_payment)
    assert payments.apply_provider_payment(provider.get_payment(pending_payment)) == "refunded"
    assert store.get_booking(pending.booking_id).status is S.REFUNDED
    assert len(provider.refunds_for(pending_payment)) == 1


def test_a_payment_for_a_held_booking_of_a_cancelled_event_is_given_back(cancellation, bookings, payments, provider,
                                                                         catalog, ga_event, store):
    """The job has not reached this booking yet: the payment must still not confirm it."""
    booking = hold(bookings, ga_event, "alice")
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    cancellation.cancel(ga_event["event_id"], "c-1", "storm")
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "refunded"
    after, journal = store.get_booking_with_journal(booking.booking_id)
    assert after.status is S.REFUNDED
    assert "CONFIRMED" not in [e.to_status for e in journal]
    assert catalog.get_event(ga_event["event_id"])["counts"]["sold"] == 0


def test_a_late_payment_after_expiry_for_a_cancelled_event_is_refunded(cancellation, bookings, payments, provider,
                                                                       clock, ga_event, store):
    booking = hold(bookings, ga_event, "alice")
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    clock.advance(601)
    assert bookings.expire(booking.booking_id)["outcome"] == "expired"
    cancellation.cancel(ga_event["event_id"], "c-1", "storm")
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "refunded"
    assert store.get_booking(booking.booking_id).status is S.REFUNDED


def test_resume_starts_the_next_execution_only_after_the_last_one_died(cancellation, jobs, ga_event, store):
    event_id = ga_event["event_id"]
    cancellation.cancel(event_id, "c-1", "storm")
    assert cancellation.resume(event_id) == "running"
    jobs.states[(event_id, 1)] = "ABORTED"
    assert cancellation.resume_all() == {"resumed": 1}
    assert cancellation.resume(event_id) == "running"
    assert jobs.started == [(event_id, 1), (event_id, 2)]
    store.finish_cancellation(event_id, {"open": 0}, "2030-01-01T00:00:00Z")
    jobs.states[(event_id, 2)] = "FAILED"
    assert cancellation.resume(event_id) == "nothing_to_do"
    assert store.cancelling_events() == []


def test_waitlist_refuses_and_offers_nothing_for_a_cancelled_event(cancellation, store, bookings, clock, ga_event):
    waitlist = WaitlistService(store, bookings, clock)
    cancellation.cancel(ga_event["event_id"], "c-1", "storm")
    with pytest.raises(EventCancelled):
        waitlist.join(ga_event["event_id"], "bob", 1)
    assert waitlist.advance(ga_event["event_id"]) == []


def test_a_repeat_of_a_hold_made_before_the_cancellation_is_still_its_replay(cancellation, bookings, ga_event):
    """Found by the model (make proof SEED=1251): the repeat answered event_cancelled instead."""
    first = hold(bookings, ga_event, "alice")
    cancellation.cancel(ga_event["event_id"], "c-1", "storm")
    again = bookings.create_booking(ga_event["event_id"], "alice", "k-alice", BookingIn(quantity=1))
    assert again.replayed and again.booking.booking_id == first.booking_id


def test_a_booking_exchanged_away_is_no_longer_the_cancelled_events_to_settle_or_count(
        cancellation, job, bookings, payments, provider, catalog, store, clock):
    """A paid booking exchanged to another date before its first date is cancelled: the old
    event's index keeps its entry (its doors void the former tickets by it), but the booking is
    the other event's now. The job settles nothing of it, finishes in one pass with nothing open,
    and neither its summary nor the progress view counts it."""
    from holdfast.domain.commands import HoldPlaces
    from holdfast.services.exchange import ExchangeService

    first = catalog.create_event(event_request(exchange_until_hours=24))
    second = catalog.create_event(event_request(starts_at="2030-02-08T20:00:00Z", exchange_until_hours=24))
    booking_id, payment_id = paid(bookings, payments, provider, first, "ann")
    ExchangeService(store, clock).exchange(booking_id, "ann", "x-1", second["event_id"], HoldPlaces(quantity=1))
    assert booking_id in store.event_booking_ids(first["event_id"])
    cancellation.cancel(first["event_id"], "c-1", "storm")
    result = run_job(job, first["event_id"])
    assert (result["done"], result["pass"], result["open"]) == (True, 1, 0)
    assert store.get_booking(booking_id).status is S.CONFIRMED and provider.refunds_for(payment_id) == []
    progress = cancellation.progress(first["event_id"])
    assert progress["summary"]["bookings"] == 0 and progress["counts"]["bookings"] == 0
