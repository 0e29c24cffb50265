"""The waitlist per zone and per price category (issue 43): a customer waits for a zone of a
general-admission event or a price category of a seat map, and is offered only places released
there; first come, first served within each section, a head waiting for its own section holding
back no one waiting for another."""
from __future__ import annotations

import pytest

from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import InvalidRequest
from holdfast.schemas import BookingIn
from holdfast.services.waitlist import WaitlistService
from tests.support.fake_store import FakeWaitlistStore
from tests.unit.conftest import event_request, store_for
from tests.unit.test_price_categories import CATEGORIES, PRICES


@pytest.fixture
def store(request):
    return store_for(request, FakeWaitlistStore())


@pytest.fixture
def waitlist(store, bookings, clock):
    return WaitlistService(store, bookings, clock, offer_seconds=900)


def hold(bookings, event, who, **body):
    return bookings.create_booking(event["event_id"], who, f"k-{who}",
                                   HoldPlaces.of(BookingIn.model_validate(body).model_dump())).booking


@pytest.fixture
def zoned(catalog):
    return catalog.create_event(event_request(
        price=None, capacity=None, price_categories=CATEGORIES, prices=PRICES,
        zones=[{"id": "floor", "name": "Floor", "price_category": "stalls", "capacity": 2},
               {"id": "up", "name": "Upstairs", "price_category": "balcony", "capacity": 2}]))


@pytest.fixture
def seated(catalog):
    return catalog.create_event(event_request(
        price=None, capacity=None, price_categories=CATEGORIES, prices=PRICES,
        seat_map={"rows": [{"name": "A", "seats": 2, "price_category": "stalls"},
                           {"name": "B", "seats": 2, "price_category": "balcony"}]}))


def test_a_zones_line_is_offered_only_places_released_in_its_zone(waitlist, bookings, zoned, clock, store):
    event_id = zoned["event_id"]
    floor = hold(bookings, zoned, "f-owner", quantity=2, zone="floor")
    up = hold(bookings, zoned, "u-owner", quantity=2, zone="up")
    ann, _ = waitlist.join(event_id, "ann", 1, zone="floor")
    clock.advance(1)
    ben, _ = waitlist.join(event_id, "ben", 1, price_category="balcony")   # the one zone of that category
    assert (ann["zone"], ben["zone"]) == ("floor", "up")
    bookings.cancel(up.booking_id, "u-owner")                # places come back upstairs
    [offer_id] = waitlist.advance(event_id)
    offer = store.get_booking(offer_id)
    assert offer.customer_id == "ben" and offer.kind_details["zone"] == "up"   # ann, first in line, waits
    assert waitlist.status(event_id, "ann")["state"] == "WAITING"
    bookings.cancel(floor.booking_id, "f-owner")
    [offer_id] = waitlist.advance(event_id)
    assert store.get_booking(offer_id).customer_id == "ann"
    assert store.get_booking(offer_id).kind_details["zone"] == "floor"


def test_within_a_zone_first_come_first_served(waitlist, bookings, zoned, clock, store):
    event_id = zoned["event_id"]
    hold(bookings, zoned, "f-owner", quantity=2, zone="floor")
    up = hold(bookings, zoned, "u-owner", quantity=2, zone="up")
    waitlist.join(event_id, "ann", 2, zone="up")
    clock.advance(1)
    waitlist.join(event_id, "ben", 1, zone="up")
    bookings.cancel(up.booking_id, "u-owner")
    offers = waitlist.advance(event_id)
    assert [store.get_booking(o).customer_id for o in offers] == ["ann"]


def test_a_price_categorys_line_is_offered_only_its_seats(waitlist, bookings, seated, store):
    event_id = seated["event_id"]
    stalls = hold(bookings, seated, "s-owner", seats=["A-1", "A-2"])
    balcony = hold(bookings, seated, "b-owner", seats=["B-1", "B-2"])
    waitlist.join(event_id, "ann", 1, price_category="balcony")
    bookings.cancel(stalls.booking_id, "s-owner")
    assert waitlist.advance(event_id) == []                   # stalls came back: not what ann waits for
    bookings.cancel(balcony.booking_id, "b-owner")
    [offer_id] = waitlist.advance(event_id)
    assert set(store.get_booking(offer_id).places.units) <= {"B-1", "B-2"}


@pytest.mark.parametrize("body, code", [
    ({"zone": "roof"}, "unknown_zone"),
    ({}, "zone_required"),
    ({"price_category": "vip"}, "unknown_price_category"),
])
def test_a_section_the_event_has_not_is_refused(waitlist, bookings, zoned, body, code):
    hold(bookings, zoned, "f-owner", quantity=2, zone="floor")
    hold(bookings, zoned, "u-owner", quantity=2, zone="up")
    with pytest.raises(InvalidRequest) as refused:
        waitlist.join(zoned["event_id"], "ann", 1, **body)
    assert refused.value.code == code


def test_a_seat_maps_unknown_category_and_a_free_section_are_refused(waitlist, bookings, seated):
    from holdfast.domain.errors import Conflict

    hold(bookings, seated, "b-owner", seats=["B-1", "B-2"])
    with pytest.raises(InvalidRequest) as refused:
        waitlist.join(seated["event_id"], "ann", 1, price_category="vip")
    assert refused.value.code == "unknown_price_category"
    with pytest.raises(Conflict) as free:   # stalls are free: book them
        waitlist.join(seated["event_id"], "ann", 1, price_category="stalls")
    assert free.value.code == "places_available"
    entry, _ = waitlist.join(seated["event_id"], "ann", 1, price_category="balcony")
    assert entry["price_category"] == "balcony" and entry["state"] == "WAITING"
