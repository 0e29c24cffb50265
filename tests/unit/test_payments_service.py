"""Payments through the in-memory store and provider: one payment per booking, the
webhook/reconciliation verdicts, late payments, capture, refunds that fail and are retried."""
import pytest

from holdfast.domain.errors import Conflict, PaymentProviderUnavailable, RequestInProgress
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services.payments import PaymentOutcomeUnknown
from tests.unit.conftest import event_request


@pytest.fixture
def store(fake_store):
    return fake_store


def hold(bookings, event, customer="alice", key="k", n=2):
    return bookings.create_booking(event["event_id"], customer, key, BookingIn(quantity=n)).booking


def counts(catalog, event):
    return catalog.get_event(event["event_id"])["counts"]


def actions(bookings, booking, customer="alice"):
    return [entry["action"] for entry in bookings.view(booking.booking_id, customer)["journal"]]


def test_start_payment_creates_one_payment_with_the_server_amount(bookings, payments, provider, ga_event):
    booking = hold(bookings, ga_event)
    started = payments.start_payment(booking.booking_id, "alice", "pay-1")
    again = payments.start_payment(booking.booking_id, "alice", "pay-2")
    assert started.status is BookingStatus.PAYMENT_PENDING
    assert again.payment.payment_id == started.payment.payment_id
    [payment] = provider.payments_for(booking.booking_id)
    assert payment["amount"] == {"value": "3000.00", "currency": "RUB"}
    assert actions(bookings, booking) == ["hold_created", "payment_requested", "payment_created"]


@pytest.mark.parametrize("mode", ["before", "after"])
def test_lost_create_answer_is_retried_with_the_same_key(bookings, payments, provider, ga_event, clock, mode):
    booking = hold(bookings, ga_event)
    provider.fail("create_payment", mode)
    with pytest.raises(PaymentProviderUnavailable):
        payments.start_payment(booking.booking_id, "alice", "pay-1")
    assert bookings.view(booking.booking_id, "alice")["payment"]["status"] == "unknown"
    retried = payments.start_payment(booking.booking_id, "alice", "pay-1")
    assert retried.payment.payment_id
    assert len(provider.payments_for(booking.booking_id)) == 1
    keys = {key for op, key in provider.calls if op == "create_payment"}
    assert keys == {f"hf-pay-{booking.booking_id}"}


def test_concurrent_start_while_the_first_call_is_in_flight(bookings, payments, store, ga_event, clock):
    booking = hold(bookings, ga_event)
    # Simulate a first request that stored its attempt and has not come back yet.
    provider_call = payments._create_at_provider
    payments._create_at_provider = lambda b: b
    try:
        payments.start_payment(booking.booking_id, "alice", "pay-1")
    finally:
        payments._create_at_provider = provider_call
    with pytest.raises(RequestInProgress):
        payments.start_payment(booking.booking_id, "alice", "pay-1")
    clock.advance(31)  # the first caller's lease lapsed: it crashed; a repeat takes over
    assert payments.start_payment(booking.booking_id, "alice", "pay-1").payment.payment_id


def test_paid_booking_is_confirmed_once_however_often_it_is_reported(bookings, payments, provider, catalog, ga_event):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    outcomes = [payments.apply_provider_payment(provider.get_payment(payment_id)) for _ in range(5)]
    assert outcomes == ["confirmed"] + ["already_confirmed"] * 4
    assert counts(catalog, ga_event) == {"available": 8, "held": 0, "sold": 2}
    assert actions(bookings, booking).count("payment_succeeded") == 1


def test_forged_or_early_notification_changes_nothing(bookings, payments, provider, ga_event):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "payment_not_final"
    assert bookings.view(booking.booking_id, "alice")["status"] == "PAYMENT_PENDING"


def test_declined_payment_releases_the_places(bookings, payments, provider, catalog, ga_event):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.decline(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "payment_failed"
    assert counts(catalog, ga_event) == {"available": 10, "held": 0, "sold": 0}


def test_payment_after_the_hold_lapsed_cannot_start(bookings, payments, ga_event, clock):
    booking = hold(bookings, ga_event)
    clock.advance(600)
    with pytest.raises(Conflict) as err:
        payments.start_payment(booking.booking_id, "alice", "p")
    assert err.value.code == "hold_expired"


def test_expiry_and_confirmation_race_has_one_winner(bookings, payments, provider, catalog, ga_event, clock):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    clock.advance(601)
    # Paid, deadline passed, places not yet released: whoever writes first wins, and the
    # payment wins here because it arrives first. The timer then finds nothing to do.
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed"
    assert bookings.expire(booking.booking_id)["outcome"] == "noop_confirmed"
    assert counts(catalog, ga_event) == {"available": 8, "held": 0, "sold": 2}


def test_two_stage_captures_only_after_securing_the_places(bookings, payments, provider, catalog, catalog_two_stage, clock):
    event = catalog_two_stage
    booking = hold(bookings, event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    provider.fail("capture_payment", "after")
    with pytest.raises(PaymentOutcomeUnknown):
        payments.apply_provider_payment(provider.get_payment(payment_id))
    clock.advance(601)
    assert bookings.expire(booking.booking_id)["outcome"] == "not_yet"  # places pinned for the capture
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed"
    booking_view = bookings.view(booking.booking_id, "alice")
    assert booking_view["status"] == "CONFIRMED"
    assert [key for op, key in provider.calls if op == "capture_payment"] == [f"hf-cap-{booking.booking_id}"]
    assert counts(catalog, event) == {"available": 8, "held": 0, "sold": 2}


@pytest.fixture
def catalog_two_stage(catalog):
    return catalog.create_event(event_request(payment_mode="two_stage"))


def _expire(bookings, booking, clock):
    clock.advance(601)
    assert bookings.expire(booking.booking_id)["outcome"] == "expired"


def test_late_payment_with_places_free_is_confirmed(bookings, payments, provider, catalog, ga_event, clock):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    _expire(bookings, booking, clock)
    provider.pay(payment_id, at="2030-01-01T12:10:02.000Z")
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed_late"
    assert counts(catalog, ga_event) == {"available": 8, "held": 0, "sold": 2}
    assert actions(bookings, booking)[-1] == "late_payment_places_retaken"


def test_late_payment_after_resale_is_refunded_exactly_once(bookings, payments, provider, catalog, ga_event, clock):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    _expire(bookings, booking, clock)
    hold(bookings, ga_event, customer="bob", key="b", n=10)
    provider.pay(payment_id, at="2030-01-01T12:10:02.000Z")
    provider.fail("create_refund", "after")
    with pytest.raises(PaymentOutcomeUnknown):
        payments.apply_provider_payment(provider.get_payment(payment_id))
    assert bookings.view(booking.booking_id, "alice")["status"] == "REFUND_PENDING"
    booking_now = bookings.store.get_booking(booking.booking_id)
    assert payments.refund(booking_now, "reconciler") == "refunded"
    assert len(provider.refunds_for(payment_id)) == 1
    assert bookings.view(booking.booking_id, "alice")["status"] == "REFUNDED"
    assert counts(catalog, ga_event) == {"available": 0, "held": 10, "sold": 0}


def test_paid_in_time_but_reported_after_resale_goes_to_review(bookings, payments, provider, catalog, ga_event, clock):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id, at="2030-01-01T12:09:59.000Z")
    _expire(bookings, booking, clock)
    hold(bookings, ga_event, customer="bob", key="b", n=10)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "manual_review"
    view = bookings.view(booking.booking_id, "alice")
    assert view["status"] == "MANUAL_REVIEW"
    assert view["review"]["reason"] == "paid_in_time_places_resold"
    assert "refund" in view["review"]["next_step"]


def test_late_authorisation_after_resale_is_cancelled(bookings, payments, provider, catalog, catalog_two_stage, clock):
    event = catalog_two_stage
    booking = hold(bookings, event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    _expire(bookings, booking, clock)
    hold(bookings, event, customer="bob", key="b", n=10)
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "authorisation_cancelled"
    assert provider.payments[payment_id]["status"] == "canceled"
    assert bookings.view(booking.booking_id, "alice")["status"] == "EXPIRED"
    assert actions(bookings, booking)[-1] == "late_authorisation_cancelled"


def test_late_authorisation_with_places_free_is_captured(bookings, payments, provider, catalog, catalog_two_stage, clock):
    event = catalog_two_stage
    booking = hold(bookings, event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    _expire(bookings, booking, clock)
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed"
    assert provider.payments[payment_id]["status"] == "succeeded"
    assert counts(catalog, event) == {"available": 8, "held": 0, "sold": 2}


def test_cancelling_a_confirmed_booking_returns_places_then_money(bookings, payments, provider, catalog, ga_event):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    cancelled = bookings.cancel(booking.booking_id, "alice", refund=payments.cancel_confirmed)
    assert cancelled.status is BookingStatus.REFUNDED
    assert bookings.cancel(booking.booking_id, "alice", refund=payments.cancel_confirmed).status is BookingStatus.REFUNDED
    assert len(provider.refunds_for(payment_id)) == 1
    assert counts(catalog, ga_event) == {"available": 10, "held": 0, "sold": 0}
    assert actions(bookings, booking)[-2:] == ["cancelled_after_payment", "refund_succeeded"]


def test_amount_mismatch_goes_to_review_and_releases(bookings, payments, provider, catalog, ga_event):
    booking = hold(bookings, ga_event)
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    provider.payments[payment_id]["amount"] = {"value": "1.00", "currency": "RUB"}
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "amount_mismatch"
    assert bookings.view(booking.booking_id, "alice")["status"] == "MANUAL_REVIEW"
    assert counts(catalog, ga_event)["held"] == 0


def test_return_url_names_the_booking_so_the_customer_comes_back_to_its_page(bookings, store, provider, clock,
                                                                              ga_event):
    from holdfast.services.payments import PaymentService

    sent = []
    create = provider.create_payment
    provider.create_payment = lambda **kwargs: sent.append(kwargs["return_url"]) or create(**kwargs)
    payments = PaymentService(store, provider, clock, bookings,
                              "https://site.example/booking.html?id={booking_id}")
    booking = hold(bookings, ga_event)
    payments.start_payment(booking.booking_id, "alice", "pay-1")
    assert sent == [f"https://site.example/booking.html?id={booking.booking_id}"]
