"""Issue 11, findings 2, 3, 8, 9, 10: money moved twice, refunds settled against the wrong refund or
timed from the wrong moment, operator decisions blind to the provider, and customer cancellations
that the customer still pays for. In-memory store and provider."""
import random

import pytest

from holdfast.ports import ProviderRejected
from holdfast.domain.booking import IllegalTransition
from holdfast.domain.errors import Conflict, PaymentProviderUnavailable
from holdfast.domain.inventory import Move
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services import transitions
from holdfast.services.bookings import BookingService
from tests.unit.conftest import event_request


@pytest.fixture
def store(fake_store):
    return fake_store


@pytest.fixture
def two_stage_event(catalog):
    return catalog.create_event(event_request(payment_mode="two_stage"))


def hold(bookings, event, customer="alice", key="k", n=2):
    return bookings.create_booking(event["event_id"], customer, key, BookingIn(quantity=n)).booking


def paying(bookings, payments, event, customer="alice", n=2):
    booking = hold(bookings, event, customer, key=f"k-{customer}", n=n)
    return booking, payments.start_payment(booking.booking_id, customer, "p").payment.payment_id


def counts(catalog, event):
    return catalog.get_event(event["event_id"])["counts"]


def stored(store, booking):
    return store.get_booking(booking.booking_id)


def actions(store, booking):
    return [entry.action for entry in store.get_booking_with_journal(booking.booking_id)[1]]


# ------------------------------------------------------------------ 2: one move per status change

def test_a_transition_that_keeps_the_status_never_moves_places(bookings, payments, provider, store, catalog, ga_event,
                                                               clock):
    booking, payment_id = paying(bookings, payments, ga_event)
    hold(bookings, ga_event, customer="bob", key="b", n=2)
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    confirmed = stored(store, booking)
    with pytest.raises(IllegalTransition):
        transitions.apply(store, confirmed, clock(), status=BookingStatus.CONFIRMED, actor="system", action="x",
                          decision="x", move=Move.SELL)
    with pytest.raises(IllegalTransition):  # a move the statuses do not imply is refused as well
        transitions.apply(store, confirmed, clock(), status=BookingStatus.REFUND_PENDING, actor="system",
                          action="x", decision="x", move=Move.RELEASE)
    assert counts(catalog, ga_event) == {"available": 6, "held": 2, "sold": 2}


def _reconciler_runs_during(provider, payments, operation, before_answer=None):
    """The reconciliation check interleaves with the consumer's provider call ``operation``: it
    runs once the provider has done its part and before the consumer hears the answer."""
    real = getattr(provider, operation)

    def interleaved(payment_id, *args):
        try:
            answer = real(payment_id, *args)
        finally:
            if before_answer:
                before_answer(payment_id)
            payments.apply_provider_payment(provider.get_payment(payment_id), actor="reconciler")
        return answer

    setattr(provider, operation, interleaved)


def test_capture_raced_by_reconciliation_sells_the_places_once(bookings, payments, provider, store, catalog,
                                                               two_stage_event):
    booking, payment_id = paying(bookings, payments, two_stage_event)
    hold(bookings, two_stage_event, customer="bob", key="b", n=2)   # same pool: a second SELL would pass
    provider.pay(payment_id)
    _reconciler_runs_during(provider, payments, "capture_payment")
    payments.apply_provider_payment(provider.get_payment(payment_id))
    assert counts(catalog, two_stage_event) == {"available": 6, "held": 2, "sold": 2}
    after = stored(store, booking)
    assert after.status is BookingStatus.CONFIRMED and not after.places_secured and after.settled
    assert actions(store, booking).count("payment_captured") + actions(store, booking).count("payment_succeeded") == 1


def test_rejected_capture_raced_by_reconciliation_releases_once(bookings, payments, provider, store, catalog,
                                                                two_stage_event):
    booking, payment_id = paying(bookings, payments, two_stage_event)
    hold(bookings, two_stage_event, customer="bob", key="b", n=2)
    provider.pay(payment_id)

    def authorisation_lapses(payment_id):
        provider.payments[payment_id].update(status="canceled", cancellation_details={"reason": "expired_on_capture"})

    real_capture = provider.capture_payment

    def capture_after_lapse(payment_id, *args):
        authorisation_lapses(payment_id)
        payments.apply_provider_payment(provider.get_payment(payment_id), actor="reconciler")
        return real_capture(payment_id, *args)

    provider.capture_payment = capture_after_lapse
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) in ("payment_failed",
                                                                                 "cancelled_payment_for_closed_booking")
    assert counts(catalog, two_stage_event) == {"available": 8, "held": 2, "sold": 0}
    assert stored(store, booking).status is BookingStatus.PAYMENT_FAILED
    assert actions(store, booking).count("payment_canceled") == 1


def test_confirm_clears_places_secured(bookings, payments, provider, store, two_stage_event):
    booking, payment_id = paying(bookings, payments, two_stage_event)
    provider.pay(payment_id)
    provider.fail("capture_payment", "after")   # captured; the consumer never hears it
    with pytest.raises(Exception):
        payments.apply_provider_payment(provider.get_payment(payment_id))
    assert stored(store, booking).places_secured
    assert payments.apply_provider_payment(provider.get_payment(payment_id), actor="reconciler") == "confirmed"
    after = stored(store, booking)
    assert after.status is BookingStatus.CONFIRMED and not after.places_secured and after.settled


# ------------------------------------------------------------------ 3: refunds timed from the refund

def _confirmed(bookings, payments, provider, event, customer="alice"):
    booking, payment_id = paying(bookings, payments, event, customer)
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    return booking, payment_id


def test_refund_requested_a_day_after_payment_gets_its_own_day(bookings, payments, provider, reconciler, store,
                                                               ga_event, clock):
    booking, payment_id = _confirmed(bookings, payments, provider, ga_event)
    clock.advance(25 * 3600)
    provider.fail("create_refund", "before", "before")
    assert bookings.cancel(booking.booking_id, "alice", refund=payments.cancel_confirmed).status \
        is BookingStatus.REFUND_PENDING
    assert stored(store, booking).payment.refund["requested_at"]
    assert reconciler.check(booking.booking_id)["outcome"] == "pending"
    assert stored(store, booking).status is BookingStatus.REFUND_PENDING
    assert reconciler.check(booking.booking_id)["outcome"] == "settled"
    assert stored(store, booking).status is BookingStatus.REFUNDED
    assert len(provider.refunds_for(payment_id)) == 1


def _refund_in_review(bookings, payments, provider, reconciler, store, event, clock, first_call: str):
    """A cancelled booking whose refund nobody could confirm for a day: it waits for an operator.
    ``first_call``: "lost" (never reached the provider), "answer_lost" (the refund happened, its
    answer was lost) or "pending" (the provider accepted it and has not finished it)."""
    booking, payment_id = _confirmed(bookings, payments, provider, event)
    if first_call == "pending":
        provider.refund_status = "pending"
    else:
        provider.fail("create_refund", "after" if first_call == "answer_lost" else "before")
    bookings.cancel(booking.booking_id, "alice", refund=payments.cancel_confirmed)
    provider.fail("create_refund", *["before"] * 5)
    clock.advance(24 * 3600 + 1)
    reconciler.check(booking.booking_id)
    in_review = stored(store, booking)
    assert in_review.status is BookingStatus.MANUAL_REVIEW and in_review.review["reason"] == "refund_not_confirmed"
    provider.faults.clear()
    return booking, payment_id


def test_a_succeeded_refund_settles_a_booking_in_review(bookings, payments, provider, reconciler, store, ga_event,
                                                        clock):
    booking, payment_id = _refund_in_review(bookings, payments, provider, reconciler, store, ga_event, clock,
                                            "answer_lost")
    [refund] = provider.refunds_for(payment_id)
    assert payments.apply_provider_refund(provider.get_refund(refund["id"])) == "refunded"
    after = stored(store, booking)
    assert after.status is BookingStatus.REFUNDED and after.review is None


def test_operator_refund_refuses_while_a_refund_is_in_flight(bookings, payments, provider, reconciler, reviews,
                                                             store, ga_event, clock):
    booking, payment_id = _refund_in_review(bookings, payments, provider, reconciler, store, ga_event, clock, "pending")
    calls = len(provider.calls)
    for action in ("refund", "close", "confirm"):
        with pytest.raises(Conflict) as err:
            reviews.resolve(booking.booking_id, action, "olga", "send it again")
        assert err.value.code == "refund_in_flight"
    assert [op for op, _ in provider.calls[calls:] if op == "create_refund"] == []
    assert stored(store, booking).status is BookingStatus.MANUAL_REVIEW
    [refund] = provider.refunds_for(payment_id)
    refund["status"] = "succeeded"   # the provider finishes it: the booking settles by itself
    assert payments.apply_provider_refund(provider.get_refund(refund["id"])) == "refunded"
    assert stored(store, booking).status is BookingStatus.REFUNDED


def test_operator_refund_when_the_money_already_went_back_sends_nothing(bookings, payments, provider, reconciler,
                                                                       reviews, store, ga_event, clock):
    booking, payment_id = _refund_in_review(bookings, payments, provider, reconciler, store, ga_event, clock,
                                            "answer_lost")
    calls = len(provider.calls)
    with pytest.raises(Conflict) as err:
        reviews.resolve(booking.booking_id, "refund", "olga", "send it again")
    assert err.value.code == "refund_exists"
    assert [op for op, _ in provider.calls[calls:] if op == "create_refund"] == []
    assert reviews.resolve(booking.booking_id, "close", "olga", "money went back")["status"] == "REFUNDED"
    assert len(provider.refunds_for(payment_id)) == 1
    # REFUNDED names the refund that carried the money back (make proof's M3), not just a status.
    recorded = stored(store, booking).payment.refund
    assert recorded["refund_id"] == provider.refunds_for(payment_id)[0]["id"] and recorded["status"] == "succeeded"


def test_operator_refund_of_a_refund_that_never_reached_the_provider(bookings, payments, provider, reconciler,
                                                                     reviews, store, ga_event, clock):
    booking, payment_id = _refund_in_review(bookings, payments, provider, reconciler, store, ga_event, clock, "lost")
    assert reviews.resolve(booking.booking_id, "refund", "olga", "send it")["status"] == "REFUNDED"
    assert len(provider.refunds_for(payment_id)) == 1


def test_operator_refund_after_a_rejected_refund_uses_a_new_key(bookings, payments, provider, reviews, store,
                                                                ga_event):
    booking, payment_id = _confirmed(bookings, payments, provider, ga_event)
    real = provider.create_refund

    def rejected_once(*args):
        provider.create_refund = real
        raise ProviderRejected("invalid_request", "refund refused", 400)

    provider.create_refund = rejected_once
    bookings.cancel(booking.booking_id, "alice", refund=payments.cancel_confirmed)
    assert stored(store, booking).status is BookingStatus.MANUAL_REVIEW
    assert reviews.resolve(booking.booking_id, "refund", "olga", "try again")["status"] == "REFUNDED"
    assert len(provider.refunds_for(payment_id)) == 1


# ------------------------------------------------------------------ 8: refunds matched to their payment

def test_refund_of_another_payment_does_not_settle_the_booking(bookings, payments, provider, store, ga_event):
    booking, payment_id = _confirmed(bookings, payments, provider, ga_event)
    stray = provider.create_payment(amount={"value": "3000.00", "currency": "RUB"}, description="x",
                                    metadata={"booking_id": booking.booking_id}, capture=True, return_url="r",
                                    idempotence_key="someone-else")
    provider.pay(stray["id"])
    provider.fail("create_refund", "before")
    bookings.cancel(booking.booking_id, "alice", refund=payments.cancel_confirmed)
    assert stored(store, booking).status is BookingStatus.REFUND_PENDING
    stray_refund = provider.create_refund(stray["id"], {"value": "3000.00", "currency": "RUB"}, "dashboard", "d-1")
    assert payments.apply_provider_refund(provider.get_refund(stray_refund["id"])) == "refund_of_another_payment"
    assert stored(store, booking).status is BookingStatus.REFUND_PENDING


def test_refund_other_than_the_stored_one_does_not_settle_the_booking(bookings, payments, provider, store, ga_event):
    booking, payment_id = _confirmed(bookings, payments, provider, ga_event)
    provider.refund_status = "pending"
    bookings.cancel(booking.booking_id, "alice", refund=payments.cancel_confirmed)
    ours = stored(store, booking).payment.refund["refund_id"]
    provider.refunds["other"] = {"id": "other", "payment_id": payment_id, "status": "succeeded",
                                 "amount": {"value": "1.00", "currency": "RUB"}}
    assert payments.apply_provider_refund(provider.get_refund("other")) == "refund_not_ours"
    assert stored(store, booking).status is BookingStatus.REFUND_PENDING
    provider.refunds[ours]["status"] = "succeeded"
    assert payments.apply_provider_refund(provider.get_refund(ours)) == "refunded"


# ------------------------------------------------------------------ 9: operator decisions see the money

def _unreachable_review(bookings, payments, provider, reconciler, store, event, clock):
    booking, payment_id = paying(bookings, payments, event)
    clock.advance(25 * 3600)
    provider.fail("get_payment", "before")
    reconciler.check(booking.booking_id)
    assert stored(store, booking).review["reason"] == "provider_unreachable"
    return booking, payment_id


@pytest.mark.parametrize("money", ["never_paid", "declined"])
def test_operator_cannot_confirm_without_captured_money(bookings, payments, provider, reconciler, reviews, store,
                                                        ga_event, clock, money):
    booking, payment_id = _unreachable_review(bookings, payments, provider, reconciler, store, ga_event, clock)
    if money == "declined":
        provider.decline(payment_id)
    with pytest.raises(Conflict) as err:
        reviews.resolve(booking.booking_id, "confirm", "olga", "looks paid")
    assert err.value.code == "payment_not_captured"
    assert stored(store, booking).status is BookingStatus.MANUAL_REVIEW


def _mismatch_review(bookings, payments, provider, store, event):
    booking, payment_id = paying(bookings, payments, event)
    provider.pay(payment_id)
    provider.payments[payment_id]["amount"] = {"value": "3000.00", "currency": "USD"}
    payments.apply_provider_payment(provider.get_payment(payment_id))
    assert stored(store, booking).status is BookingStatus.MANUAL_REVIEW
    return booking, payment_id


def test_operator_cannot_confirm_a_refunded_payment(bookings, payments, provider, reviews, store, ga_event):
    booking, payment_id = _mismatch_review(bookings, payments, provider, store, ga_event)
    provider.create_refund(payment_id, {"value": "3000.00", "currency": "USD"}, "dashboard", "d-1")
    with pytest.raises(Conflict) as err:
        reviews.resolve(booking.booking_id, "confirm", "olga", "checked")
    assert err.value.code == "payment_refunded"


def test_operator_cannot_close_while_money_is_owed(bookings, payments, provider, reviews, store, ga_event):
    booking, payment_id = _mismatch_review(bookings, payments, provider, store, ga_event)
    with pytest.raises(Conflict) as err:
        reviews.resolve(booking.booking_id, "close", "olga", "nothing to do")
    assert err.value.code == "payment_owed"
    assert stored(store, booking).status is BookingStatus.MANUAL_REVIEW


def test_operator_close_with_nothing_paid_fails_the_booking(bookings, payments, provider, reconciler, reviews, store,
                                                            ga_event, clock):
    booking, payment_id = _unreachable_review(bookings, payments, provider, reconciler, store, ga_event, clock)
    provider.decline(payment_id)
    assert reviews.resolve(booking.booking_id, "close", "olga", "declined")["status"] == "PAYMENT_FAILED"


def test_operator_confirm_captures_an_authorisation_first(bookings, payments, provider, reconciler, reviews, store,
                                                          catalog, two_stage_event, clock):
    booking, payment_id = _unreachable_review(bookings, payments, provider, reconciler, store, two_stage_event, clock)
    provider.pay(payment_id)   # authorised, not captured
    assert reviews.resolve(booking.booking_id, "confirm", "olga", "seat them")["status"] == "CONFIRMED"
    assert provider.payments[payment_id]["status"] == "succeeded"
    assert counts(catalog, two_stage_event) == {"available": 8, "held": 0, "sold": 2}


def test_operator_close_voids_an_authorisation(bookings, payments, provider, reconciler, reviews, store,
                                               two_stage_event, clock):
    booking, payment_id = _unreachable_review(bookings, payments, provider, reconciler, store, two_stage_event, clock)
    provider.pay(payment_id)
    assert reviews.resolve(booking.booking_id, "close", "olga", "give up")["status"] == "PAYMENT_FAILED"
    assert provider.payments[payment_id]["status"] == "canceled"


def test_operator_decision_with_the_provider_unreachable_is_503(bookings, payments, provider, reconciler, reviews,
                                                                store, ga_event, clock):
    booking, payment_id = _unreachable_review(bookings, payments, provider, reconciler, store, ga_event, clock)
    provider.pay(payment_id)
    provider.fail("get_payment", "before")
    with pytest.raises(PaymentProviderUnavailable) as err:
        reviews.resolve(booking.booking_id, "confirm", "olga", "paid")
    assert err.value.details.get("retry_after")
    assert stored(store, booking).status is BookingStatus.MANUAL_REVIEW


# ------------------------------------------------------------------ 10: a cancellation the customer still pays

def test_payment_after_the_customer_cancelled_is_refunded(bookings, payments, provider, store, catalog, ga_event):
    booking, payment_id = paying(bookings, payments, ga_event)
    assert bookings.cancel(booking.booking_id, "alice", void=payments.void_after_cancel).status \
        is BookingStatus.CANCELLED
    provider.pay(payment_id)   # the payment page was still open
    payments.apply_provider_payment(provider.get_payment(payment_id))
    assert stored(store, booking).status is BookingStatus.REFUNDED
    assert len(provider.refunds_for(payment_id)) == 1
    assert counts(catalog, ga_event) == {"available": 10, "held": 0, "sold": 0}


def test_authorisation_after_the_customer_cancelled_is_voided(bookings, payments, provider, store, catalog,
                                                              two_stage_event):
    booking, payment_id = paying(bookings, payments, two_stage_event)
    bookings.cancel(booking.booking_id, "alice", void=payments.void_after_cancel)
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    assert provider.payments[payment_id]["status"] == "canceled"
    assert stored(store, booking).status is BookingStatus.CANCELLED
    assert counts(catalog, two_stage_event) == {"available": 10, "held": 0, "sold": 0}


def test_cancelling_voids_an_authorisation_at_once(bookings, payments, provider, store, two_stage_event):
    booking, payment_id = paying(bookings, payments, two_stage_event)
    provider.pay(payment_id)   # authorised; the notification has not been processed yet
    bookings.cancel(booking.booking_id, "alice", void=payments.void_after_cancel)
    assert provider.payments[payment_id]["status"] == "canceled"
    assert stored(store, booking).status is BookingStatus.CANCELLED


def test_payment_after_expiry_still_takes_the_places_again(bookings, payments, provider, store, ga_event, clock):
    booking, payment_id = paying(bookings, payments, ga_event)
    clock.advance(601)
    bookings.expire(booking.booking_id)
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed_late"


# ------------------------------------------------------------------ the limit acts on a fresh read too

def test_limit_reached_while_the_payment_succeeds_keeps_the_confirmation(bookings, payments, provider, reconciler,
                                                                        store, catalog, ga_event, clock):
    booking, payment_id = paying(bookings, payments, ga_event)
    clock.advance(25 * 3600)
    real_commit = store.commit

    def paid_just_before_the_limit_is_written(change):
        action = change.journal.action if change.journal else None
        if action == "reconciliation_limit_reached" and not provider.payments[payment_id]["status"] == "succeeded":
            provider.pay(payment_id)
            payments.apply_provider_payment(provider.get_payment(payment_id))   # the notification wins
        return real_commit(change)

    store.commit = paid_just_before_the_limit_is_written
    reconciler.check(booking.booking_id)
    after = stored(store, booking)
    assert after.status is BookingStatus.CONFIRMED and after.payment.provider_status == "succeeded"
    assert actions(store, booking)[-1] == "payment_succeeded"
    assert counts(catalog, ga_event) == {"available": 8, "held": 0, "sold": 2}


# ------------------------------------------------------------------ a customer's cancellation survives a review

def _cancelled_then_reviewed(bookings, payments, provider, reconciler, store, event, clock):
    """The customer cancels while paying, the provider is unreachable when the later payment is
    given back, and reconciliation hands the booking to an operator (the proof's seed 901931)."""
    booking, payment_id = paying(bookings, payments, event)
    bookings.cancel(booking.booking_id, "alice", void=payments.void_after_cancel)
    assert stored(store, booking).status is BookingStatus.CANCELLED
    clock.advance(25 * 3600)
    provider.fail("get_payment", "before")
    reconciler.check(booking.booking_id)
    assert stored(store, booking).status is BookingStatus.MANUAL_REVIEW
    return booking, payment_id


def test_operator_cannot_confirm_a_booking_its_customer_cancelled(bookings, payments, provider, reconciler, reviews,
                                                                  store, catalog, two_stage_event, clock):
    booking, payment_id = _cancelled_then_reviewed(bookings, payments, provider, reconciler, store, two_stage_event,
                                                   clock)
    provider.pay(payment_id)   # authorised on the page the customer left open
    with pytest.raises(Conflict) as err:
        reviews.resolve(booking.booking_id, "confirm", "olga", "seat them")
    assert err.value.code == "customer_cancelled"
    assert provider.payments[payment_id]["status"] == "waiting_for_capture"   # nothing captured
    assert counts(catalog, two_stage_event) == {"available": 10, "held": 0, "sold": 0}


def test_a_late_authorisation_after_a_closed_review_of_a_cancelled_booking_is_voided(
        bookings, payments, provider, reconciler, reviews, store, catalog, two_stage_event, clock):
    booking, payment_id = _cancelled_then_reviewed(bookings, payments, provider, reconciler, store, two_stage_event,
                                                   clock)
    assert reviews.resolve(booking.booking_id, "close", "olga", "nothing paid")["status"] == "PAYMENT_FAILED"
    provider.pay(payment_id)   # the customer still authorises on the open page
    payments.apply_provider_payment(provider.get_payment(payment_id))
    assert provider.payments[payment_id]["status"] == "canceled"
    assert stored(store, booking).status is BookingStatus.PAYMENT_FAILED
    assert counts(catalog, two_stage_event) == {"available": 10, "held": 0, "sold": 0}


# ------------------------------------------------------------------ an operator refunds what was paid

@pytest.mark.parametrize("paid", ["1.00", "9999.00"], ids=["paid_less", "paid_more"])
def test_operator_refund_of_an_amount_mismatch_returns_what_the_provider_took(bookings, payments, provider, reviews,
                                                                              store, ga_event, paid):
    """A payment whose amount differs from the booking's goes to review; the refund an operator
    sends is the money the provider actually took, not the booking's price (less: the provider
    refuses a refund above the payment; more: the customer would get only part of it back)."""
    booking, payment_id = paying(bookings, payments, ga_event)
    assert booking.amount.text not in ("1.00", "9999.00")
    provider.pay(payment_id)
    provider.payments[payment_id]["amount"] = {"value": paid, "currency": "RUB"}
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "amount_mismatch"
    assert reviews.resolve(booking.booking_id, "refund", "olga", "wrong amount paid")["status"] == "REFUNDED"
    [refund] = provider.refunds_for(payment_id)
    assert refund["amount"] == {"value": paid, "currency": "RUB"}
    assert stored(store, booking).payment.refund["refund_id"] == refund["id"]


# ------------------------------------------------------------------ an operator's confirm: places first, then money

def _authorised_review(bookings, payments, provider, reconciler, store, event, clock):
    booking, payment_id = _unreachable_review(bookings, payments, provider, reconciler, store, event, clock)
    provider.pay(payment_id)   # authorised, not captured
    return booking, payment_id


def _sell_out_after_replan(payments, bookings, catalog, event):
    """The fault: between the operator's look at the places and taking them, others take them all.
    The others are other containers: they read the table, not this container's availability snapshot."""
    real = payments.replan
    others = BookingService(bookings.store, bookings.clock, rng=random.Random(11), snapshot_seconds=0)

    def replan_then_lose_the_race(booking):
        places = real(booking)
        n = 0
        while counts(catalog, event)["available"]:
            n += 1
            hold(others, event, customer=f"rival-{n}", key=f"r-{n}", n=min(2, counts(catalog, event)["available"]))
        return places

    payments.replan = replan_then_lose_the_race


def test_operator_confirm_that_loses_the_places_captures_nothing(bookings, payments, provider, reconciler, reviews,
                                                                 store, catalog, two_stage_event, clock):
    booking, payment_id = _authorised_review(bookings, payments, provider, reconciler, store, two_stage_event, clock)
    _sell_out_after_replan(payments, bookings, catalog, two_stage_event)
    with pytest.raises(Conflict) as err:
        reviews.resolve(booking.booking_id, "confirm", "olga", "seat them")
    assert err.value.code == "places_unavailable"
    assert provider.payments[payment_id]["status"] == "waiting_for_capture"   # no money taken for nothing
    assert stored(store, booking).status is BookingStatus.MANUAL_REVIEW
    assert counts(catalog, two_stage_event) == {"available": 0, "held": 10, "sold": 0}
    # The operator can still close it: the authorisation is cancelled, nothing was ever taken.
    assert reviews.resolve(booking.booking_id, "close", "olga", "no places")["status"] == "PAYMENT_FAILED"
    assert provider.payments[payment_id]["status"] == "canceled"


def test_operator_confirm_whose_capture_answer_is_lost_finishes_on_a_retry(bookings, payments, provider, reconciler,
                                                                          reviews, store, catalog, two_stage_event,
                                                                          clock):
    booking, payment_id = _authorised_review(bookings, payments, provider, reconciler, store, two_stage_event, clock)
    provider.fail("capture_payment", "after")          # captured at the provider, the answer lost
    with pytest.raises(PaymentProviderUnavailable):
        reviews.resolve(booking.booking_id, "confirm", "olga", "seat them")
    pinned = stored(store, booking)
    assert pinned.status is BookingStatus.PAYMENT_PENDING and pinned.places_secured
    assert counts(catalog, two_stage_event) == {"available": 8, "held": 2, "sold": 0}
    assert reviews.resolve(booking.booking_id, "confirm", "olga", "again")["status"] == "CONFIRMED"
    assert counts(catalog, two_stage_event) == {"available": 8, "held": 0, "sold": 2}
    keys = {key for op, key in provider.calls if op == "capture_payment"}
    assert len(keys) == 1 and provider.payments[payment_id]["status"] == "succeeded"


def test_operator_confirm_of_a_lapsed_authorisation_gives_the_places_back(bookings, payments, provider, reconciler,
                                                                          reviews, store, catalog, two_stage_event,
                                                                          clock):
    booking, payment_id = _authorised_review(bookings, payments, provider, reconciler, store, two_stage_event, clock)
    real = provider.capture_payment

    def lapsed(payment_id, amount, key):           # the bank let the authorisation lapse meanwhile
        provider.payments[payment_id]["status"] = "canceled"
        return real(payment_id, amount, key)

    provider.capture_payment = lapsed
    with pytest.raises(Conflict) as err:
        reviews.resolve(booking.booking_id, "confirm", "olga", "seat them")
    assert err.value.code == "payment_not_captured"
    after = stored(store, booking)
    assert after.status is BookingStatus.MANUAL_REVIEW and after.review["reason"] == "provider_unreachable"
    assert counts(catalog, two_stage_event) == {"available": 10, "held": 0, "sold": 0}
    assert reviews.resolve(booking.booking_id, "close", "olga", "lapsed")["status"] == "PAYMENT_FAILED"
