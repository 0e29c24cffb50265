"""An event is sold until it starts (products/events/start.py): from ``starts_at`` on a hold and a
waitlist join are 409 ``event_started``, a late payment is given back rather than sold the places
again, and the listing and its search show no started event, whatever ``from`` asks."""
from __future__ import annotations

from datetime import timedelta

import pytest

from holdfast.clock import parse_iso
from holdfast.domain.errors import Conflict
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn, EventListQuery
from holdfast.services.listing import ListingService
from holdfast.services.waitlist import WaitlistService
from tests.support.fake_store import FakeWaitlistStore
from tests.unit.conftest import event_request, store_for

STARTS = "2030-02-01T20:00:00Z"


@pytest.fixture
def store(request):
    return store_for(request, FakeWaitlistStore())


def started(clock, seconds=0):
    clock.now = parse_iso(STARTS) + timedelta(seconds=seconds)


def hold(bookings, event, customer, key, **wanted):
    return bookings.create_booking(event["event_id"], customer, key, BookingIn(**(wanted or {"quantity": 1})))


@pytest.mark.parametrize("seated", [False, True])
def test_nothing_is_held_from_the_start_on_but_a_repeat_is_answered(catalog, bookings, clock, seated):
    shape = {"capacity": None, "seat_map": {"rows": [{"name": "A", "seats": 4}]}} if seated else {"capacity": 4}
    event = catalog.create_event(event_request(starts_at=STARTS, **shape))
    early = hold(bookings, event, "ann", "k-1", quantity=1, **({"best_available": True} if seated else {}))
    started(clock, -1)
    hold(bookings, event, "bob", "k-2", quantity=1, **({"best_available": True} if seated else {}))   # a second before
    started(clock)
    with pytest.raises(Conflict) as refused:
        hold(bookings, event, "cat", "k-3", quantity=1, **({"best_available": True} if seated else {}))
    assert (refused.value.status, refused.value.code) == (409, "event_started")
    assert parse_iso(refused.value.details["starts_at"]) == parse_iso(STARTS)
    again = hold(bookings, event, "ann", "k-1", quantity=1, **({"best_available": True} if seated else {}))
    assert again.booking.booking_id == early.booking.booking_id          # a repeat: its first answer


def test_a_late_payment_after_the_start_is_given_back_not_sold(catalog, bookings, payments, provider, clock):
    event = catalog.create_event(event_request(starts_at=STARTS, capacity=4))
    booking = hold(bookings, event, "ann", "k-1", quantity=2).booking
    payment_id = payments.start_payment(booking.booking_id, "ann", "p").payment.payment_id
    started(clock, 60)                                                   # the hold lapsed, the event began
    assert bookings.expire(booking.booking_id)["outcome"] == "expired"
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) != "confirmed_late"
    after = bookings.store.get_booking(booking.booking_id)
    assert after.status in (BookingStatus.REFUND_PENDING, BookingStatus.REFUNDED)
    assert catalog.get_event(event["event_id"])["counts"]["sold"] == 0   # the places free, not sold
    decisions = [e["decision"] for e in bookings.view(booking.booking_id, "ann")["journal"]]
    assert any("its time has passed" in d for d in decisions)


def test_nobody_joins_the_line_of_an_event_that_has_started(catalog, bookings, store, clock):
    event = catalog.create_event(event_request(starts_at=STARTS, capacity=1))
    hold(bookings, event, "owner", "k-o")
    waitlist = WaitlistService(store, bookings, clock, offer_seconds=900)
    assert waitlist.join(event["event_id"], "ann", 1)[1] is True
    started(clock)
    with pytest.raises(Conflict) as refused:
        waitlist.join(event["event_id"], "bob", 1)
    assert refused.value.code == "event_started"
    assert waitlist.join(event["event_id"], "ann", 1)[1] is False        # already in line: answered as before


@pytest.mark.on_moto("the listing's sort key ranges")
def test_the_listing_and_its_search_show_no_started_event(catalog, store, clock):
    listing = ListingService(store, clock)
    soon = catalog.create_event(event_request(name="Jazz early", starts_at=STARTS))
    later = catalog.create_event(event_request(name="Jazz late", starts_at="2030-03-01T20:00:00Z"))
    for event in (soon, later):
        listing.publish(event["event_id"])
    started(clock)

    def ids(**params):
        return [e["event_id"] for e in listing.list_events(EventListQuery.model_validate(params).search())["events"]]

    assert ids() == [later["event_id"]]
    assert ids(**{"from": "2030-01-01T00:00:00Z"}) == [later["event_id"]]
    assert ids(q="jazz", **{"from": "2030-01-01T00:00:00Z"}) == [later["event_id"]]
    assert ids(**{"from": "2030-01-01T00:00:00Z", "to": "2030-02-01T00:00:00Z"}) == []   # all of it past


@pytest.mark.on_moto("the listing's change is a conditional write")
def test_a_late_payment_is_judged_by_the_start_as_it_is_now_not_as_it_was_at_the_hold(
        catalog, bookings, payments, provider, store, clock):
    """The booking keeps the start it was sold for (``ends_at``); the organizer then moves the
    concert a day later. A payment that arrives after the old start but before the new one still
    finds its places free and is sold them, as any late payment before the start is."""
    event = catalog.create_event(event_request(starts_at=STARTS, capacity=4))
    booking = hold(bookings, event, "ann", "k-1", quantity=2).booking
    payment_id = payments.start_payment(booking.booking_id, "ann", "p").payment.payment_id
    ListingService(store, clock).update(event["event_id"], {"starts_at": parse_iso(STARTS) + timedelta(days=1)})
    started(clock, 60)                                    # past the old start, a day before the new one
    assert bookings.expire(booking.booking_id)["outcome"] == "expired"
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed_late"
    after = bookings.store.get_booking(booking.booking_id)
    assert after.status is BookingStatus.CONFIRMED
    assert parse_iso(after.ends_at) == parse_iso(STARTS) + timedelta(days=1)   # the end it is kept by moves too


@pytest.mark.on_moto("the sale gate's check is a conditional write")
def test_a_warm_container_sells_by_the_start_as_it_is_now(catalog, bookings, store, clock):
    """Issue 42, finding 3: the hold path keeps the offering for the container's life; after PATCH
    of its start, a warm container refused every hold as ``event_started`` (moved later) or kept
    selling (moved earlier). The sale gate checks the copy's version in the hold's transaction."""
    event = catalog.create_event(event_request(starts_at=STARTS, capacity=4))
    hold(bookings, event, "ann", "k-1")                   # the container now keeps the offering
    listing = ListingService(store, clock)
    listing.update(event["event_id"], {"starts_at": parse_iso(STARTS) + timedelta(days=1)})
    started(clock, 60)                                    # past the old start, a day before the new one
    assert hold(bookings, event, "bob", "k-2").booking.status is BookingStatus.HELD
    listing.update(event["event_id"], {"starts_at": parse_iso(STARTS)})   # back to the old one, now past
    with pytest.raises(Conflict) as refused:
        hold(bookings, event, "cid", "k-3")
    assert refused.value.code == "event_started"


def test_a_hold_of_a_cancelled_event_is_not_paid_for(catalog, bookings, payments, store, clock):
    """Issue 42, finding 7: start_payment did not refuse a hold of a cancelled event, so a customer
    paid for places the cancellation job was about to release."""
    from holdfast.services.event_cancellation import EventCancellationService

    event = catalog.create_event(event_request(starts_at=STARTS, capacity=4))
    held = hold(bookings, event, "ann", "k-1").booking
    EventCancellationService(store, clock, None).cancel(event["event_id"], "c-1", "the hall flooded")
    with pytest.raises(Conflict) as refused:
        payments.start_payment(held.booking_id, "ann", "p-1")
    assert refused.value.code == "event_cancelled"
    assert store.get_booking(held.booking_id).payment is None
