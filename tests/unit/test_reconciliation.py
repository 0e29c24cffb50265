"""Reconciliation and manual review on the in-memory store and provider."""
import pytest

from holdfast.domain.errors import Conflict
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services.payments import PaymentOutcomeUnknown, PaymentProviderUnavailable
from holdfast.services.sweeper import sweep


@pytest.fixture
def store(fake_store):
    return fake_store


def hold(bookings, event, customer="alice", key="k", n=2):
    return bookings.create_booking(event["event_id"], customer, key, BookingIn(quantity=n)).booking


def status(store, booking):
    return store.get_booking(booking.booking_id).status


def test_lost_notification_is_found_by_polling(bookings, payments, provider, reconciler, store, ga_event):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    assert reconciler.check(booking.booking_id) == {"booking_id": booking.booking_id, "outcome": "pending",
                                                     "wait_seconds": 30, "status": "PAYMENT_PENDING"}
    assert reconciler.check(booking.booking_id)["wait_seconds"] == 60
    provider.pay(payment_id)  # the notification is lost: nobody calls apply_provider_payment
    assert reconciler.check(booking.booking_id)["outcome"] == "settled"
    assert status(store, booking) is BookingStatus.CONFIRMED
    journal = bookings.view(booking.booking_id, "alice")["journal"]
    assert journal[-1]["actor"] == "reconciler" and journal[-1]["action"] == "payment_succeeded"


def test_lost_create_response_within_the_key_window_repeats_the_call(bookings, payments, provider, reconciler, store, ga_event):
    booking = hold(bookings, ga_event)
    provider.fail("create_payment", "after")
    with pytest.raises(PaymentProviderUnavailable):
        payments.start_payment(booking.booking_id, "alice", "p")
    assert reconciler.check(booking.booking_id)["outcome"] == "pending"
    assert len(provider.payments_for(booking.booking_id)) == 1
    assert store.get_booking(booking.booking_id).payment.payment_id == provider.payments_for(booking.booking_id)[0]["id"]


def test_lost_create_response_after_the_key_window_is_found_by_metadata(bookings, payments, provider, reconciler,
                                                                        store, ga_event, clock):
    booking = hold(bookings, ga_event)
    provider.fail("create_payment", "after")
    with pytest.raises(PaymentProviderUnavailable):
        payments.start_payment(booking.booking_id, "alice", "p")
    provider.keys.clear()  # the provider forgot the key
    clock.advance(25 * 3600)
    found = []
    provider.find_payments = lambda **kw: found.append(kw) or provider.payments_for(kw["metadata"]["booking_id"])
    reconciler.check(booking.booking_id)
    assert found and found[0]["metadata"] == {"booking_id": booking.booking_id}
    assert len(provider.payments_for(booking.booking_id)) == 1
    assert store.get_booking(booking.booking_id).payment.payment_id


def test_payment_that_never_completes_fails_at_the_limit(bookings, payments, provider, reconciler, store, catalog,
                                                         ga_event, clock):
    booking = hold(bookings, ga_event)
    payments.start_payment(booking.booking_id, "alice", "p")
    clock.advance(300)
    assert reconciler.check(booking.booking_id)["outcome"] == "pending"
    clock.advance(24 * 3600)
    assert reconciler.check(booking.booking_id)["outcome"] == "settled"
    assert status(store, booking) is BookingStatus.PAYMENT_FAILED
    assert catalog.get_event(ga_event["event_id"])["counts"]["held"] == 0


def test_the_last_wait_ends_at_the_limit_itself_not_at_the_next_scheduled_look(bookings, payments, provider,
                                                                                  reconciler, store, ga_event, clock):
    """The hourly schedule would look next up to an hour after the limit; the last wait is cut to
    end at the limit, where the look gives up (issue 47)."""
    booking = hold(bookings, ga_event)
    payments.start_payment(booking.booking_id, "alice", "p")
    for _ in range(2):                       # past the schedule's 30 and 60 s: hourly from here
        clock.advance(100)
        assert reconciler.check(booking.booking_id)["outcome"] == "pending"
    clock.advance(24 * 3600 - 1000 - 200)    # an hourly look would come 2,600 s past the limit
    answer = reconciler.check(booking.booking_id)
    assert (answer["outcome"], answer["wait_seconds"]) == ("pending", 1000)
    clock.advance(999)
    assert reconciler.check(booking.booking_id)["wait_seconds"] == 1   # never 0: a Wait of at least a second
    assert status(store, booking) is not BookingStatus.PAYMENT_FAILED
    clock.advance(1)
    assert reconciler.check(booking.booking_id)["outcome"] == "settled"
    assert status(store, booking) is BookingStatus.PAYMENT_FAILED


def test_unreachable_provider_at_the_limit_goes_to_review(bookings, payments, provider, reconciler, store, ga_event, clock):
    booking = hold(bookings, ga_event)
    payments.start_payment(booking.booking_id, "alice", "p")
    clock.advance(25 * 3600)
    provider.fail("get_payment", "before")
    assert reconciler.check(booking.booking_id)["outcome"] == "settled"
    stored = store.get_booking(booking.booking_id)
    assert stored.status is BookingStatus.MANUAL_REVIEW and stored.review["reason"] == "provider_unreachable"


def test_refund_with_unknown_outcome_is_retried_once_at_the_provider(bookings, payments, provider, reconciler, store,
                                                                     ga_event):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    provider.fail("create_refund", "after")
    assert bookings.cancel(booking.booking_id, "alice", refund=payments.cancel_confirmed).status is BookingStatus.REFUND_PENDING
    assert reconciler.check(booking.booking_id)["outcome"] == "settled"
    assert status(store, booking) is BookingStatus.REFUNDED
    assert len(provider.refunds_for(payment_id)) == 1


def test_sweeper_expires_overdue_holds_and_restarts_reconciliation(bookings, payments, store, ga_event, clock):
    stale_hold = hold(bookings, ga_event, key="a", n=1)
    paying = hold(bookings, ga_event, customer="bob", key="b", n=1)
    payments.start_payment(paying.booking_id, "bob", "p")
    started = []
    clock.advance(200)
    never = pytest.fail  # nothing here keeps failing
    assert sweep(store, clock, bookings.expire, lambda b, tag: started.append((b, tag)), give_up=never) == \
        {"expired": 0, "reconciling": 1, "skipped": 0, "failed": 0, "gave_up": 0}
    clock.advance(600)
    result = sweep(store, clock, bookings.expire, lambda b, tag: started.append((b, tag)), give_up=never)
    assert result["expired"] == 2
    assert status(store, stale_hold) is BookingStatus.EXPIRED
    assert started[0] == (paying.booking_id, "sweep-0-1")


def test_operator_refunds_a_review(bookings, payments, provider, reviews, store, ga_event, clock):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id, at="2030-01-01T12:09:00.000Z")
    clock.advance(601)
    bookings.expire(booking.booking_id)
    hold(bookings, ga_event, customer="bob", key="b", n=10)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    assert [r["booking_id"] for r in reviews.open_reviews()] == [booking.booking_id]
    with pytest.raises(Conflict) as err:
        reviews.resolve(booking.booking_id, "confirm", "olga", "try to seat")
    assert err.value.code == "places_unavailable"
    resolved = reviews.resolve(booking.booking_id, "refund", "olga", "customer asked for money back")
    assert resolved["status"] == "REFUNDED"
    assert reviews.resolve(booking.booking_id, "refund", "olga", "again")["status"] == "REFUNDED"
    assert reviews.open_reviews() == []
    assert len(provider.refunds_for(payment_id)) == 1
    # The operator's name and note are kept for the operators; the customer's view has neither.
    entry = [e for e in reviews.booking_with_journal(booking.booking_id)["journal"] if e["actor"] == "operator"][0]
    assert entry["ids"]["operator"] == "olga" and "money back" in entry["decision"]
    shown = [e for e in bookings.view(booking.booking_id, "alice")["journal"] if e["actor"] == "operator"][0]
    assert "operator" not in shown["ids"] and "money back" not in shown["decision"]


def test_operator_confirms_when_places_are_free(bookings, payments, provider, reviews, store, catalog, ga_event, clock):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    provider.payments[payment_id]["amount"] = {"value": "3000.00", "currency": "USD"}
    payments.apply_provider_payment(provider.get_payment(payment_id))
    assert status(store, booking) is BookingStatus.MANUAL_REVIEW
    assert reviews.resolve(booking.booking_id, "confirm", "olga", "currency checked by phone")["status"] == "CONFIRMED"
    assert catalog.get_event(ga_event["event_id"])["counts"] == {"available": 8, "held": 0, "sold": 2}


def test_second_payment_for_a_confirmed_booking_reaches_the_operators(bookings, payments, provider, reviews, store,
                                                                      ga_event):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    stray = provider.paid_stray(booking.booking_id)
    assert payments.apply_provider_payment(provider.get_payment(stray["id"])) == "second_payment_for_booking"
    listed = reviews.open_reviews()
    assert [(r["booking_id"], r["status"], r["review"]["reason"]) for r in listed] == [
        (booking.booking_id, "CONFIRMED", "second_payment_for_booking")]
    with pytest.raises(Conflict) as err:
        reviews.resolve(booking.booking_id, "refund", "olga", "refund the stray one")
    assert err.value.code == "review_close_only"
    assert reviews.resolve(booking.booking_id, "close", "olga", "stray payment refunded in the dashboard")["status"] == \
        "CONFIRMED"
    assert reviews.open_reviews() == []


def test_the_bucket_s_first_check_reads_a_due_booking_once_before_asking_the_provider(
        bookings, payments, provider, reconciler, store, ga_event, clock, monkeypatch):
    from holdfast.adapters.expiry_buckets import bucket_of
    from holdfast.clock import parse_iso

    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)  # the notification is lost
    bucket = bucket_of(store.get_booking(booking.booking_id).payment.next_check_at)
    clock.advance((parse_iso(bucket) - clock()).total_seconds() + 1)
    reads, reads_at_provider = [], []
    read, fetch = store.get_booking, provider.get_payment
    monkeypatch.setattr(store, "get_booking", lambda *a, **k: reads.append(a[0]) or read(*a, **k))
    monkeypatch.setattr(provider, "get_payment", lambda *a, **k: reads_at_provider.append(len(reads)) or fetch(*a, **k))
    result = reconciler.check_bucket(bucket, follow_up=None)
    assert result["checked"] == 1 and result["followed_up"] == 0
    assert reads_at_provider == [1]   # the bucket's read serves the check (it read it twice before)
    assert status(store, booking) is BookingStatus.CONFIRMED


def _authorisation_in_review(bookings, payments, provider, reconciler, store, catalog, clock):
    """A two-stage booking whose capture never got an answer and whose provider was unreachable at
    the limit: in review, its payment recorded as an authorisation held."""
    from tests.unit.conftest import event_request

    event = catalog.create_event(event_request(payment_mode="two_stage"))
    booking = hold(bookings, event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    provider.fail("capture_payment", "before")
    with pytest.raises(PaymentOutcomeUnknown):
        payments.apply_provider_payment(provider.get_payment(payment_id))
    clock.advance(25 * 3600)
    provider.fail("get_payment", "before")
    assert reconciler.check(booking.booking_id)["outcome"] == "settled"
    stored = store.get_booking(booking.booking_id)
    assert stored.status is BookingStatus.MANUAL_REVIEW and stored.payment.provider_status == "waiting_for_capture"
    return booking, payment_id


def test_an_authorisation_that_lapses_during_a_review_is_recorded(bookings, payments, provider, reconciler, store,
                                                                  catalog, clock):
    booking, payment_id = _authorisation_in_review(bookings, payments, provider, reconciler, store, catalog, clock)
    provider.payments[payment_id].update(status="canceled", cancellation_details={"party": "yoo_money",
                                                                                  "reason": "expired_on_capture"})
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "cancelled_payment_recorded"
    stored = store.get_booking(booking.booking_id)
    # The void is the provider's: the booking stays in review (the operator closes it), but it no
    # longer shows money held, and nothing polls it.
    assert stored.status is BookingStatus.MANUAL_REVIEW
    assert stored.payment.provider_status == "canceled" and stored.payment.next_check_at is None
    assert bookings.view(booking.booking_id, "alice")["journal"][-1]["action"] == "payment_cancel_recorded"
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "cancelled_payment_for_closed_booking"


def test_an_operator_s_void_is_recorded_and_never_repeated(bookings, payments, provider, reconciler, reviews, store,
                                                           catalog, clock):
    booking, payment_id = _authorisation_in_review(bookings, payments, provider, reconciler, store, catalog, clock)
    assert reviews.resolve(booking.booking_id, "close", "olga", "customer gave up")["status"] == "PAYMENT_FAILED"
    assert provider.payments[payment_id]["status"] == "canceled"
    stored = store.get_booking(booking.booking_id)
    assert stored.payment.provider_status == "canceled" and stored.settled
    # Reconciliation has nothing left to do: no second void, no review reopened.
    assert reconciler.check(booking.booking_id)["outcome"] == "settled"
    assert store.get_booking(booking.booking_id).status is BookingStatus.PAYMENT_FAILED
    assert [op for op, _ in provider.calls if op == "cancel_payment"] == ["cancel_payment"]
