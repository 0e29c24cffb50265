"""The late-payment conflict case with alternatives (seed 003's 12:10/12:11/12:12 story), on a toy
kind that offers them (tests/support/toy_windows.py): the case is opened with the money kept, the
customer (or an operator, or the deadline) decides, the booking moves with the SAME payment or the
money goes back once. Kinds without alternatives keep today's behaviour."""
import json

import pytest

from holdfast.domain.errors import Conflict, IdempotencyKeyReused, PaymentProviderUnavailable
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services.resolutions import ResolutionService
from holdfast.services.sweeper import sweep
from tests.correctness.helpers import check_invariants, check_money, snapshot_of
from tests.support import toy_windows

from .conftest import event_request


@pytest.fixture
def store(fake_store):
    return fake_store


@pytest.fixture
def resolutions(store, payments, clock):
    return ResolutionService(store, payments, clock)


def windowed(catalog, **overrides):
    toy_windows.register()
    return catalog.create_event(event_request(capacity=2, category="windowed", max_per_booking=2, **overrides))


def late_story(bookings, payments, provider, clock, event, n=2):
    """12:00 Ann holds the 12:00 window and starts paying; 12:10 the hold lapses; 12:11 Bob takes
    the window; 12:12 Ann's payment is reported."""
    ann = bookings.create_booking(event["event_id"], "ann", "a1", BookingIn(quantity=n)).booking
    payment_id = payments.start_payment(ann.booking_id, "ann", "pay").payment.payment_id
    clock.advance(600)
    assert bookings.expire(ann.booking_id)["outcome"] == "expired"
    clock.advance(60)
    bob = bookings.create_booking(event["event_id"], "bob", "b1", BookingIn(quantity=2)).booking
    assert bob.places.pools == ann.places.pools                   # the same window, resold
    clock.advance(60)
    provider.pay(payment_id)
    return ann, bob, payment_id


def check(provider, settled=False, *, store):
    """The in-memory store's whole table and the provider's records against docs/invariants.md
    (I1-I10, money M/S)."""
    snap = snapshot_of(store.table.items.values())
    check_invariants(snap)
    check_money(snap, provider, settled)


def counts(store, event_id):
    return {pool.pool_id: (pool.available, pool.held, pool.sold) for pool in store.read_pools(event_id)}


def test_a_kind_sets_the_default_payment_mode_and_a_request_overrides_it(catalog):
    assert windowed(catalog)["payment_mode"] == "two_stage"
    assert windowed(catalog, payment_mode="one_stage")["payment_mode"] == "one_stage"
    assert catalog.create_event(event_request())["payment_mode"] == "one_stage"      # events: unchanged


def test_late_authorisation_with_the_window_taken_opens_a_case_and_keeps_the_authorisation(
        bookings, payments, provider, catalog, clock, store):
    event = windowed(catalog)
    ann, bob, payment_id = late_story(bookings, payments, provider, clock, event)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "conflict_case_opened"
    assert provider.payments[payment_id]["status"] == "waiting_for_capture"    # neither captured nor cancelled
    view = bookings.view(ann.booking_id, "ann")
    assert view["status"] == "MANUAL_REVIEW"
    case = view["resolution"]
    assert case["open"] and case["reason"] == "places_taken_alternatives_offered"
    assert [option["window"] for option in case["alternatives"]] == ["12:30", "13:00"]   # nearest first
    assert case["respond_by"] == "2030-01-02T12:12:00.000Z" and case["operator"] == "on-call"
    assert "alternatives" in view["review"]["next_step"]
    entry = store.get_booking_with_journal(ann.booking_id)[1][-1]
    assert entry.action == "conflict_case_opened" and entry.ids["payment_id"] == payment_id
    assert entry.ids["provider_event"] == "payment.waiting_for_capture"
    assert entry.ids["hold_expires_at"] == ann.hold_expires_at
    assert bookings.store.get_booking(bob.booking_id).status is BookingStatus.HELD   # never restored over Bob
    assert [b.booking_id for b in store.list_reviews()] == [ann.booking_id]
    check(provider, settled=True, store=store)     # S2: an authorisation may wait only while its booking is in review


def test_the_deadline_falls_before_the_authorisation_would_lapse(bookings, payments, provider, catalog, clock):
    event = windowed(catalog)
    ann, _, payment_id = late_story(bookings, payments, provider, clock, event)
    provider.payments[payment_id]["expires_at"] = "2030-01-01T18:00:00.000Z"   # sooner than the 24 h window
    payments.apply_provider_payment(provider.get_payment(payment_id))
    assert bookings.view(ann.booking_id, "ann")["resolution"]["respond_by"] == "2030-01-01T17:00:00.000Z"


def test_choosing_an_alternative_pins_it_then_captures_the_same_payment_once(
        bookings, payments, provider, catalog, clock, store, resolutions):
    event = windowed(catalog)
    ann, _, payment_id = late_story(bookings, payments, provider, clock, event)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    provider.fail("capture_payment", "after")         # the capture happens, its answer is lost
    with pytest.raises(PaymentProviderUnavailable):
        resolutions.choose(ann.booking_id, "ann", "r1", "alternative", {"window": "13:00"})
    pinned = store.get_booking(ann.booking_id)
    assert pinned.status is BookingStatus.PAYMENT_PENDING and pinned.places_secured
    assert counts(store, event["event_id"])["POOL#002"] == (0, 2, 0)   # held for Ann before any capture
    check(provider, store=store)
    view = resolutions.choose(ann.booking_id, "ann", "r1", "alternative", {"window": "13:00"})   # retry, same key
    assert view["status"] == "CONFIRMED" and view["places"]["window"] == "13:00"
    assert [key for op, key in provider.calls if op == "capture_payment"] == [f"hf-cap-{ann.booking_id}"] * 2
    assert provider.payments[payment_id]["status"] == "succeeded"
    assert provider.payments_for(ann.booking_id) == [provider.payments[payment_id]]  # never a second payment
    assert counts(store, event["event_id"])["POOL#002"] == (0, 0, 2)
    assert view["resolution"]["decision"]["choice"] == "alternative" and not view["resolution"]["open"]
    with pytest.raises(Conflict) as closed:
        resolutions.choose(ann.booking_id, "ann", "r2", "refund", {})
    assert closed.value.code == "resolution_closed"
    with pytest.raises(IdempotencyKeyReused):
        resolutions.choose(ann.booking_id, "ann", "r1", "alternative", {"window": "12:30"})
    check(provider, settled=True, store=store)


def test_one_stage_alternative_is_confirmed_with_the_captured_payment(
        bookings, payments, provider, catalog, clock, store, resolutions):
    event = windowed(catalog, payment_mode="one_stage")
    ann, _, payment_id = late_story(bookings, payments, provider, clock, event)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    assert provider.payments[payment_id]["status"] == "succeeded"
    view = resolutions.choose(ann.booking_id, "ann", "r1", "alternative", {"window": "12:30"})
    assert view["status"] == "CONFIRMED" and view["places"]["window"] == "12:30"
    assert counts(store, event["event_id"]) == {"POOL#000": (0, 2, 0), "POOL#001": (0, 0, 2), "POOL#002": (2, 0, 0)}
    assert not provider.refunds_for(payment_id) and len(provider.payments_for(ann.booking_id)) == 1
    check(provider, settled=True, store=store)


@pytest.mark.parametrize("mode", ["one_stage", "two_stage"])
def test_refund_choice_gives_the_money_back_once(bookings, payments, provider, catalog, clock, store, resolutions, mode):
    event = windowed(catalog, payment_mode=mode)
    ann, _, payment_id = late_story(bookings, payments, provider, clock, event)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    view = resolutions.choose(ann.booking_id, "ann", "r1", "refund", {})
    again = resolutions.choose(ann.booking_id, "ann", "r1", "refund", {})
    if mode == "two_stage":
        assert view["status"] == again["status"] == "PAYMENT_FAILED"
        assert provider.payments[payment_id]["status"] == "canceled" and not provider.refunds_for(payment_id)
    else:
        assert view["status"] == again["status"] == "REFUNDED"
        assert len(provider.refunds_for(payment_id)) == 1
    assert counts(store, event["event_id"])["POOL#000"] == (0, 2, 0)    # Bob's hold untouched
    check(provider, settled=True, store=store)


def test_a_stale_authorisation_after_the_case_was_decided_does_not_reopen_it(
        bookings, payments, provider, catalog, clock, store, resolutions):
    event = windowed(catalog)
    ann, _, payment_id = late_story(bookings, payments, provider, clock, event)
    stale = provider.get_payment(payment_id)                        # waiting_for_capture, read before...
    payments.apply_provider_payment(stale)
    resolutions.choose(ann.booking_id, "ann", "r1", "refund", {})   # ...the case was decided: voided
    assert payments.apply_provider_payment(stale) != "conflict_case_opened"   # a slow consumer's copy
    booking = store.get_booking(ann.booking_id)
    assert booking.status is BookingStatus.PAYMENT_FAILED and booking.resolution["decision"]["choice"] == "refund"
    check(provider, settled=True, store=store)


def test_bad_choices_are_refused_without_writing(bookings, payments, provider, catalog, clock, store, resolutions):
    event = windowed(catalog)
    ann, _, payment_id = late_story(bookings, payments, provider, clock, event)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    version = store.get_booking(ann.booking_id).version
    bookings.create_booking(event["event_id"], "cat", "c1", BookingIn(quantity=2))     # takes 12:30
    for fields, code in (({"window": "12:00"}, "not_an_offered_alternative"), ({}, "not_an_offered_alternative"),
                         ({"window": "12:30"}, "alternative_unavailable")):
        with pytest.raises(Conflict) as refused:
            resolutions.choose(ann.booking_id, "ann", "r1", "alternative", fields)
        assert refused.value.code == code
    with pytest.raises(Conflict):
        resolutions.choose(bookings.create_booking(event["event_id"], "dan", "d1", BookingIn(quantity=1))
                           .booking.booking_id, "dan", "r1", "refund", {})      # no case on this booking
    assert store.get_booking(ann.booking_id).version == version
    assert provider.payments[payment_id]["status"] == "waiting_for_capture"


def test_nobody_choosing_by_the_deadline_gives_the_money_back_from_the_sweeper(
        bookings, payments, provider, catalog, clock, store, resolutions):
    event = windowed(catalog, payment_mode="one_stage")
    ann, _, payment_id = late_story(bookings, payments, provider, clock, event)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    run = lambda: sweep(store, clock, bookings.expire, lambda *_: None, give_up=lambda *_: None,  # noqa: E731
                        lapse_resolution=resolutions.lapse)
    clock.advance(24 * 3600 - 61)
    assert run()["lapsed"] == 0 and store.get_booking(ann.booking_id).status is BookingStatus.MANUAL_REVIEW
    clock.advance(62)
    assert run()["lapsed"] == 1
    assert store.get_booking(ann.booking_id).status is BookingStatus.REFUNDED
    assert len(provider.refunds_for(payment_id)) == 1
    assert run()["lapsed"] == 0
    [*_, entry] = store.get_booking_with_journal(ann.booking_id)[1]
    assert entry.action == "refund_succeeded"
    check(provider, settled=True, store=store)


def test_an_operator_decides_a_case_from_the_reviews(bookings, payments, provider, catalog, clock, store, reviews):
    event = windowed(catalog)
    ann, _, payment_id = late_story(bookings, payments, provider, clock, event)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    [listed] = reviews.open_reviews()
    assert listed["resolution"]["alternatives"]
    view = reviews.resolve(ann.booking_id, "alternative", "olga", "customer phoned", choice={"window": "12:30"})
    assert view["status"] == "CONFIRMED" and view["resolution"]["decision"]["by"] == "operator"
    assert provider.payments[payment_id]["status"] == "succeeded"
    assert "customer phoned" not in json.dumps(bookings.view(ann.booking_id, "ann"))    # notes stay internal
    assert "customer phoned" in json.dumps(reviews.booking_with_journal(ann.booking_id))


def test_kinds_without_alternatives_keep_todays_behaviour(bookings, payments, provider, catalog, clock):
    event = catalog.create_event(event_request(capacity=2, payment_mode="two_stage", max_per_booking=2))
    ann, _, payment_id = late_story(bookings, payments, provider, clock, event)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "authorisation_cancelled"
    assert "resolution" not in bookings.view(ann.booking_id, "ann")
