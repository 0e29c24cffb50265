"""Exchange with a price difference (issue 45): into cheaper places the difference is refunded from
the booking's payment, with its fiscal receipt where the organizer has receipts on; into dearer
places the exchange is refused with the difference named. A repeat, a lost answer or a crash after
the swap makes one refund; the booking keeps one payment, and what it paid stays known
(``Booking.charged``), so a notification of that payment delivered again changes nothing."""
from __future__ import annotations

from decimal import Decimal

import pytest

from holdfast.domain.errors import Conflict, PaymentProviderUnavailable
from holdfast.domain.exchange import given_back
from holdfast.domain.fiscal import FiscalSettings
from holdfast.domain.money import Money
from holdfast.domain.organizers import Caller
from holdfast.domain.statuses import BookingStatus
from holdfast.domain.commands import HoldPlaces
from holdfast.schemas import BookingIn
from holdfast.services.booking_views import describe
from holdfast.services.exchange import ExchangeService
from holdfast.services.money_at_provider import MoneyAtProvider
from holdfast.services.payments import PaymentService
from tests.support.fake_organizers import FakeOrganizerDirectory
from tests.unit.conftest import event_request

ORG = Caller("org-xc", "key-1")
RUB = "RUB"


def test_cheaper_places_give_the_difference_back_dearer_ones_are_refused_with_it():
    assert given_back(Money.parse("1500.00", RUB), Money.parse("1000.00", RUB)) == Money.parse("500.00", RUB)
    assert given_back(Money.parse("1500.00", RUB), Money.parse("1500.00", RUB)) is None
    with pytest.raises(Conflict) as dearer:
        given_back(Money.parse("1000.00", RUB), Money.parse("1500.00", RUB))
    assert dearer.value.code == "exchange_price_differs"
    assert dearer.value.details["difference"] == {"value": "500.00", "currency": RUB}


@pytest.fixture
def store(fake_store):
    return fake_store


@pytest.fixture
def directory(fake_store):
    return FakeOrganizerDirectory(fake_store.table)


@pytest.fixture
def paying(store, provider, clock, bookings, directory):
    return PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)


@pytest.fixture
def exchanges(store, clock, provider):
    return ExchangeService(store, clock, money=MoneyAtProvider(provider))


@pytest.fixture
def dates(catalog):
    """The same show on two dates of one organizer: 1500.00 a place, and 1000.00 the week after."""
    first = catalog.create_event(event_request(exchange_until_hours=24), "ev-a", ORG)
    later = catalog.create_event(event_request(starts_at="2030-02-08T20:00:00Z", exchange_until_hours=24,
                                               price={"value": "1000.00", "currency": RUB}), "ev-b", ORG)
    return first["event_id"], later["event_id"]


def _paid(bookings, paying, provider, event_id, n=2, who="alice"):
    booking = bookings.create_booking(event_id, who, f"hold-{who}",
                                      BookingIn(quantity=n, contact_email=f"{who}@example.com")).booking
    started = paying.start_payment(booking.booking_id, who, f"pay-{who}")
    provider.pay(started.payment.payment_id)
    paying.apply_provider_payment(provider.get_payment(started.payment.payment_id))
    paid = paying.store.get_booking(booking.booking_id)
    assert paid.status is BookingStatus.CONFIRMED
    return paid


def _refunded(provider, payment_id):
    return sorted(Decimal(r["amount"]["value"]) for r in provider.refunds_for(payment_id))


def test_a_cheaper_date_refunds_the_difference_once_and_the_booking_keeps_its_payment(
        bookings, paying, provider, exchanges, dates, store):
    first, later = dates
    booking = _paid(bookings, paying, provider, first)
    payment_id = booking.payment.payment_id
    moved = exchanges.exchange(booking.booking_id, "alice", "x-1", later, HoldPlaces(quantity=2))
    assert moved.status is BookingStatus.CONFIRMED and moved.event_id == later
    assert moved.amount == Money.parse("2000.00", RUB) and moved.charged == Money.parse("3000.00", RUB)
    assert _refunded(provider, payment_id) == [Decimal("1000.00")]
    [difference] = moved.payment.exchange_refunds
    assert difference["status"] == "succeeded" and difference["amount"] == {"value": "1000.00", "currency": RUB}
    view = describe(moved)
    assert view["payment"]["exchange_refunds"][0]["amount"] == {"value": "1000.00", "currency": RUB}
    # the same request again: answered from the first, no second refund
    again = exchanges.exchange(booking.booking_id, "alice", "x-1", later, HoldPlaces(quantity=2))
    assert again.version == moved.version and _refunded(provider, payment_id) == [Decimal("1000.00")]
    # the payment's notification delivered again: what it paid is still the booking's (no review)
    assert paying.apply_provider_payment(provider.get_payment(payment_id)) != "manual_review"
    assert store.get_booking(booking.booking_id).status is BookingStatus.CONFIRMED
    # the difference refund's notification is recorded as the exchange's, never as a cancellation's
    [refund] = provider.refunds_for(payment_id)
    assert paying.refunds.apply_provider_refund(refund) == "exchange_refund_succeeded"
    # cancelled afterwards: what is left goes back; in all, never more than was paid
    paying.cancel_confirmed(store.get_booking(booking.booking_id))
    assert _refunded(provider, payment_id) == [Decimal("1000.00"), Decimal("2000.00")]
    assert store.get_booking(booking.booking_id).status is BookingStatus.REFUNDED


def test_a_lost_answer_or_a_crash_after_the_swap_still_makes_one_refund(
        bookings, paying, provider, exchanges, dates, store, catalog, monkeypatch):
    first, later = dates
    booking = _paid(bookings, paying, provider, first)
    payment_id = booking.payment.payment_id
    provider.fail("create_refund", "after")   # the refund is made, its answer lost
    with pytest.raises(PaymentProviderUnavailable):
        exchanges.exchange(booking.booking_id, "alice", "x-1", later, HoldPlaces(quantity=2))
    stored = store.get_booking(booking.booking_id)
    assert stored.event_id == later and stored.payment.exchange_refunds[0]["status"] == "requested"
    sold = [catalog.get_event(event_id)["counts"]["sold"] for event_id in (first, later)]
    assert sold == [0, 2]   # moved once: no place held twice
    exchanges.exchange(booking.booking_id, "alice", "x-1", later, HoldPlaces(quantity=2))
    assert _refunded(provider, payment_id) == [Decimal("1000.00")]
    assert store.get_booking(booking.booking_id).payment.exchange_refunds[0]["status"] == "succeeded"
    # a crash between the swap and the provider call: the repeat asks for it, once
    other = _paid(bookings, paying, provider, first, who="bob")
    monkeypatch.setenv("HOLDFAST_CRASH_POINTS", "exchange.after_swap:1")
    with pytest.raises(Exception):
        exchanges.exchange(other.booking_id, "bob", "x-2", later, HoldPlaces(quantity=2))
    monkeypatch.delenv("HOLDFAST_CRASH_POINTS")
    assert provider.refunds_for(other.payment.payment_id) == []
    exchanges.exchange(other.booking_id, "bob", "x-2", later, HoldPlaces(quantity=2))
    exchanges.exchange(other.booking_id, "bob", "x-2", later, HoldPlaces(quantity=2))
    assert _refunded(provider, other.payment.payment_id) == [Decimal("1000.00")]


def test_the_refunded_difference_carries_its_receipt_and_the_view_lists_both(
        bookings, paying, provider, exchanges, dates, directory):
    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 1), "2030-01-01T00:00:00.000Z")
    first, later = dates
    booking = _paid(bookings, paying, provider, first)
    moved = exchanges.exchange(booking.booking_id, "alice", "x-1", later, HoldPlaces(quantity=2))
    [refund] = provider.refunds_for(booking.payment.payment_id)
    assert refund["receipt"]["customer"] == {"email": "alice@example.com"}
    assert sum(Decimal(item["amount"]["value"]) * Decimal(str(item["quantity"]))
               for item in refund["receipt"]["items"]) == Decimal("1000.00")
    kinds_and_amounts = [(r["type"], r["amount"]["value"]) for r in describe(moved)["receipts"]]
    # paid 3000.00, 1000.00 given back, and the settlement receipt is owed for what was kept
    assert kinds_and_amounts == [("payment", "3000.00"), ("settlement", "2000.00"), ("refund", "1000.00")]


def test_dearer_places_and_a_refused_refund_change_nothing_they_should_not(
        bookings, paying, provider, exchanges, dates, store):
    first, later = dates
    cheap = _paid(bookings, paying, provider, later)
    with pytest.raises(Conflict) as dearer:
        exchanges.exchange(cheap.booking_id, "alice", "x-1", first, HoldPlaces(quantity=2))
    assert dearer.value.code == "exchange_price_differs"
    assert store.get_booking(cheap.booking_id) == cheap and provider.refunds_for(cheap.payment.payment_id) == []
    # the provider refuses the refund for good: the exchange stands, the refusal is recorded to be seen
    booking = _paid(bookings, paying, provider, first, who="bob")
    provider.fail("create_refund", "refused")
    moved = exchanges.exchange(booking.booking_id, "bob", "x-2", later, HoldPlaces(quantity=2))
    assert moved.event_id == later and moved.payment.exchange_refunds[0]["status"] == "rejected"


def test_the_cancel_sentence_says_in_full_only_when_all_that_was_paid_goes_back(
        bookings, paying, provider, exchanges, dates, store, catalog, clock):
    from holdfast.domain.texts import TEXTS
    from holdfast.services.booking_views import cancel_terms

    first, later = dates
    booking = _paid(bookings, paying, provider, first)
    whole = cancel_terms(booking, store.get_event(first), clock(), "en")
    assert whole["texts"] == {"cancel": "cancel.refund"} and whole["cancel_next_step"] == TEXTS["en"]["cancel.refund"]
    moved = exchanges.exchange(booking.booking_id, "alice", "x-1", later, HoldPlaces(quantity=2))
    part = cancel_terms(moved, store.get_event(later), clock(), "ru")
    assert part["texts"] == {"cancel": "cancel.refund_part"} and part["cancel_refund_amount"]["value"] == "2000.00"
    assert "2" in part["cancel_next_step"] and "полностью" not in part["cancel_next_step"]
    # a policy's share: the sentence names the share, never "in full"
    fees = catalog.create_event(event_request(cancellation=[{"until_hours": 0, "refund_percent": 50}]), "ev-c", ORG)
    shared = _paid(bookings, paying, provider, fees["event_id"], who="carol")
    terms = cancel_terms(shared, store.get_event(fees["event_id"]), clock(), "en")
    assert terms["cancel_refund_amount"]["value"] == "1500.00" and terms["texts"] == {"cancel": "cancel.refund_part"}
    assert "in full" not in terms["cancel_next_step"]


def test_a_difference_whose_receipt_has_no_address_is_refused_before_anything_moves(
        bookings, paying, provider, exchanges, dates, directory, store):
    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 1), "2030-01-01T00:00:00.000Z")
    first, later = dates
    booking = _paid(bookings, paying, provider, first)
    # a booking taken by a customer with no address of their own (a transfer) keeps its receipt
    from holdfast.services import transitions
    stored = transitions.apply(store, booking, paying.clock(), actor="test", action="taken", decision="test",
                               contact_email=None)
    with pytest.raises(Exception) as refused:
        exchanges.exchange(booking.booking_id, "alice", "x-1", later, HoldPlaces(quantity=2))
    assert getattr(refused.value, "code", None) == "contact_required"
    assert store.get_booking(booking.booking_id) == stored and provider.refunds_for(stored.payment.payment_id) == []


def test_a_lost_refund_answer_nobody_repeats_is_asked_again_by_the_sweeper_once(
        bookings, paying, provider, exchanges, dates, store, clock):
    from holdfast.clock import iso
    from holdfast.services.sweeper import sweep

    first, later = dates
    booking = _paid(bookings, paying, provider, first)
    provider.fail("create_refund", "after")   # made at the provider, its answer lost; the customer leaves
    with pytest.raises(PaymentProviderUnavailable):
        exchanges.exchange(booking.booking_id, "alice", "x-1", later, HoldPlaces(quantity=2))
    provider.faults.pop("create_refund", None)
    stored = store.get_booking(booking.booking_id)
    assert stored.payment.exchange_refunds[0]["status"] == "requested" and stored.due_at is not None

    def run():
        return sweep(store, clock, bookings.expire, lambda *_: None, give_up=lambda *_: None,
                     differences=paying.differences, part_refunds=exchanges.part_refunds.retry)

    assert "exchange_refund_succeeded" not in run()   # not yet due
    clock.advance(100)
    assert run().get("exchange_refund_succeeded") == 1
    done = store.get_booking(booking.booking_id)
    assert done.payment.exchange_refunds[0]["status"] == "succeeded"
    assert "next_check_at" not in done.payment.exchange_refunds[0]
    assert _refunded(provider, booking.payment.payment_id) == [Decimal("1000.00")]   # the one refund
    clock.advance(1000)
    run()
    assert _refunded(provider, booking.payment.payment_id) == [Decimal("1000.00")] and iso(clock())


def test_a_lost_refund_answer_of_a_booking_in_a_case_is_asked_again_by_the_sweeper_too(
        bookings, paying, provider, exchanges, dates, store, clock):
    """make proof seed 20261208154: a booking in a case (here a second payment for it) sits in the
    review index, not the due index, so the sweeper never came back to its lost refund answer: the
    refund was made at the provider and the booking kept saying it was asked for."""
    from holdfast.services import transitions
    from holdfast.services.sweeper import sweep

    first, later = dates
    booking = _paid(bookings, paying, provider, first)
    provider.fail("create_refund", "after")
    with pytest.raises(PaymentProviderUnavailable):
        exchanges.exchange(booking.booking_id, "alice", "x-1", later, HoldPlaces(quantity=2))
    provider.faults.pop("create_refund", None)
    stored = store.get_booking(booking.booking_id)
    in_case = transitions.apply(store, stored, clock(), actor="test", action="case_opened", decision="test",
                                review={"reason": "second_payment_for_booking"})
    assert [b.booking_id for b in store.list_reviews()] == [booking.booking_id]
    assert booking.booking_id not in store.due_bookings("9999", 100)
    clock.advance(100)
    counts = sweep(store, clock, bookings.expire, lambda *_: None, give_up=lambda *_: None,
                   part_refunds=exchanges.part_refunds.retry)
    assert counts.get("exchange_refund_succeeded") == 1
    done = store.get_booking(booking.booking_id)
    assert done.payment.exchange_refunds[0]["status"] == "succeeded" and done.review == in_case.review
    assert _refunded(provider, booking.payment.payment_id) == [Decimal("1000.00")]


def _cancelled_into_review(bookings, paying, provider, exchanges, dates, store, clock, answered=False):
    """Seeds 20261214471 and 20261217091 of ``make proof``: a cheaper exchange whose refund answer
    was lost (``answered``: the request repeated, so the difference's refund id is recorded, as in
    both seeds; else never asked again), then a cancel whose refund answer was lost too, then a day
    without the provider: the booking waits for an operator with two refunds of its payment at the
    provider, the difference's (listed first) and its own, whose id it never learned."""
    from holdfast.services.reconciliation import ReconciliationService

    first, later = dates
    booking = _paid(bookings, paying, provider, first)
    payment_id = booking.payment.payment_id
    provider.fail("create_refund", "after")
    with pytest.raises(PaymentProviderUnavailable):
        exchanges.exchange(booking.booking_id, "alice", "x-1", later, HoldPlaces(quantity=2))
    if answered:
        exchanges.exchange(booking.booking_id, "alice", "x-1", later, HoldPlaces(quantity=2))
    provider.fail("create_refund", "after")
    paying.cancel_confirmed(store.get_booking(booking.booking_id))
    provider.fail("create_refund", *["before"] * 5)
    clock.advance(24 * 3600 + 1)
    ReconciliationService(store, provider, paying, clock, schedule_seconds=(30, 60, 3600), limit_seconds=24 * 3600,
                          key_retention_seconds=24 * 3600).check(booking.booking_id)
    provider.faults.clear()
    in_review = store.get_booking(booking.booking_id)
    assert in_review.status is BookingStatus.MANUAL_REVIEW
    assert bool(in_review.payment.exchange_refunds[0].get("refund_id")) is answered
    assert not in_review.payment.refund.get("refund_id")
    difference, own = provider.refunds_for(payment_id)
    assert (difference["amount"]["value"], own["amount"]["value"]) == ("1000.00", "2000.00")
    return booking, difference, own


@pytest.mark.parametrize("answered", [True, False], ids=["difference_answered", "difference_unanswered"])
def test_an_operators_close_records_the_bookings_own_refund_not_the_differences(
        bookings, paying, provider, exchanges, dates, store, clock, answered):
    from holdfast.services.reviews import ReviewService

    booking, difference, own = _cancelled_into_review(bookings, paying, provider, exchanges, dates, store, clock,
                                                      answered)
    closed = ReviewService(store, paying, clock).resolve(booking.booking_id, "close", "olga", "money went back")
    assert closed["status"] == "REFUNDED"
    after = store.get_booking(booking.booking_id)
    assert after.payment.refund["refund_id"] == own["id"] and after.payment.refund["status"] == "succeeded"
    assert len(provider.refunds_for(booking.payment.payment_id)) == 2   # asking again made no third refund


def test_a_differences_refund_notified_before_its_answer_is_never_taken_for_the_bookings_own(
        bookings, paying, provider, exchanges, dates, store, clock):
    booking, difference, own = _cancelled_into_review(bookings, paying, provider, exchanges, dates, store, clock)
    # the difference's notification: the difference's refund and the booking's own, each asked
    # again under its key, are both recorded; the notified one is the difference's, not the
    # booking's, and no third refund is made
    assert paying.refunds.apply_provider_refund(dict(difference)) == "exchange_refund_succeeded"
    after = store.get_booking(booking.booking_id)
    assert after.status is BookingStatus.REFUNDED and after.payment.refund["refund_id"] == own["id"]
    assert [e.get("refund_id") for e in after.payment.exchange_refunds] == [difference["id"]]
    assert len(provider.refunds_for(booking.payment.payment_id)) == 2
    # the booking's own refund, notified later, changes nothing
    paying.refunds.apply_provider_refund(dict(own))
    assert store.get_booking(booking.booking_id).version == after.version
