"""Price categories, ticket types and zones (issue 43): the engine prices each place by its
category and ticket type on the server, a zone is its own capacity, and an event of one price and
one capacity is sold as before."""
from __future__ import annotations

import pytest

from holdfast.domain import pricing
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import InvalidRequest, SoldOut
from holdfast.schemas import BookingIn

from .conftest import event_request

RUB = "RUB"
CATEGORIES = [{"id": "stalls", "name": "Stalls", "color": "#cc3333"}, {"id": "balcony", "name": "Balcony"}]
PRICES = [
    {"price_category": "stalls", "ticket_type": "adult", "price": {"value": "3000.00", "currency": RUB}},
    {"price_category": "stalls", "ticket_type": "child", "price": {"value": "1500.00", "currency": RUB}},
    {"price_category": "balcony", "ticket_type": "adult", "price": {"value": "1000.00", "currency": RUB}},
]


def zoned(catalog, caller=None, **overrides):
    body = dict(price=None, capacity=None, price_categories=CATEGORIES, prices=PRICES,
                zones=[{"id": "floor", "name": "Floor", "price_category": "stalls", "capacity": 30},
                       {"id": "up", "name": "Upstairs", "price_category": "balcony", "capacity": 2}])
    body.update(overrides)
    return catalog.create_event(event_request(**body), caller=caller)


def seated(catalog, caller=None):
    return catalog.create_event(caller=caller, request=event_request(
        price=None, capacity=None, price_categories=CATEGORIES, prices=PRICES,
        seat_map={"rows": [{"name": "A", "seats": 4, "price_category": "stalls"},
                           {"name": "B", "seats": 4, "price_category": "balcony"}]}))


def hold(bookings, event, key, **body):
    return bookings.create_booking(event["event_id"], "alice", key,
                                   HoldPlaces.of(BookingIn.model_validate(body).model_dump())).booking


def test_a_zone_is_priced_by_its_category_and_the_ticket_type(catalog, bookings):
    event = zoned(catalog)
    assert event["price"] == {"value": "1000.00", "currency": RUB}   # the lowest: "from"
    assert [zone["id"] for zone in event["zones"]] == ["floor", "up"]
    adults = hold(bookings, event, "k1", quantity=2, zone="floor")
    assert adults.amount.text == "6000.00"   # stalls' first listed type is adult
    children = hold(bookings, event, "k2", quantity=3, zone="floor", ticket_type="child")
    assert children.amount.text == "4500.00"
    assert pricing.line_items(children, "Club night") == (
        pricing.LineItem("Club night, stalls, child, floor", 3, pricing.Money.parse("1500.00", RUB)),)
    up = hold(bookings, event, "k3", quantity=1, zone="up")
    assert up.amount.text == "1000.00"


def test_zones_are_separate_pools_and_answer_their_own_counts(catalog, bookings):
    event = zoned(catalog)
    hold(bookings, event, "k1", quantity=2, zone="up")
    with pytest.raises(SoldOut):
        hold(bookings, event, "k2", quantity=1, zone="up")
    hold(bookings, event, "k3", quantity=2, zone="floor")
    shown = {zone["id"]: zone["counts"] for zone in catalog.get_event(event["event_id"])["zones"]}
    assert shown == {"floor": {"available": 28, "held": 2, "sold": 0}, "up": {"available": 0, "held": 2, "sold": 0}}
    assert catalog.get_event(event["event_id"])["counts"]["available"] == 28


@pytest.mark.parametrize("body, code", [
    ({"quantity": 1}, "zone_required"),
    ({"quantity": 1, "zone": "roof"}, "unknown_zone"),
    ({"quantity": 1, "zone": "up", "ticket_type": "child"}, "unknown_ticket_type"),
])
def test_a_request_the_price_list_cannot_price_is_refused(catalog, bookings, body, code):
    event = zoned(catalog)
    with pytest.raises(InvalidRequest) as refused:
        hold(bookings, event, "k", **body)
    assert refused.value.code == code


def test_seats_are_priced_by_their_rows_category_and_each_seats_ticket_type(catalog, bookings, listing_of):
    event = seated(catalog)
    booking = hold(bookings, event, "k1", seats=["A-1", "A-2", "B-1"], ticket_types={"A-2": "child"})
    assert booking.amount.text == "5500.00"   # 3000 + 1500 + 1000
    assert booking.kind_details["ticket_types"] == {"A-1": "adult", "A-2": "child", "B-1": "adult"}
    items = pricing.line_items(booking)
    assert sum((item.amount.value for item in items), start=pricing.Decimal(0)) == booking.amount.value
    seats = listing_of(event["event_id"])
    assert {seat["seat"]: seat["price_category"] for seat in seats["seats"]}["B-2"] == "balcony"
    assert [category["id"] for category in seats["price_categories"]] == ["stalls", "balcony"]


def test_best_available_keeps_to_the_asked_price_category(catalog, bookings):
    event = seated(catalog)
    booking = hold(bookings, event, "k1", quantity=2, best_available=True, price_category="balcony")
    assert set(booking.places.units) <= {"B-1", "B-2", "B-3", "B-4"}
    assert booking.amount.text == "2000.00"
    with pytest.raises(InvalidRequest) as refused:   # no child ticket on the balcony
        hold(bookings, event, "k2", quantity=1, best_available=True, ticket_type="child")
    assert refused.value.code == "unknown_ticket_type"


def test_an_event_of_one_price_is_sold_as_before(catalog, bookings, ga_event):
    booking = hold(bookings, ga_event, "k1", quantity=2)
    assert booking.amount.text == "3000.00" and booking.kind_details is None
    assert "zones" not in catalog.get_event(ga_event["event_id"])
    with pytest.raises(InvalidRequest) as refused:
        hold(bookings, ga_event, "k2", quantity=1, ticket_type="child")
    assert refused.value.code == "unknown_ticket_type"


@pytest.mark.parametrize("overrides, code", [
    ({"prices": PRICES[:1]}, "price_category_without_price"),
    ({"prices": PRICES + [{"price_category": "vip", "ticket_type": "adult",
                           "price": {"value": "1.00", "currency": RUB}}]}, "unknown_price_category"),
    ({"prices": PRICES[:2] + [{"price_category": "balcony", "ticket_type": "adult",
                               "price": {"value": "1.00", "currency": "EUR"}}]}, "currency_mismatch"),
])
def test_a_price_list_that_does_not_add_up_is_refused_with_its_code(catalog, overrides, code):
    with pytest.raises(InvalidRequest) as refused:
        zoned(catalog, **overrides)
    assert refused.value.code == code


def test_one_capacity_with_categories_is_one_zone_of_the_first(catalog, bookings):
    event = catalog.create_event(event_request(price=None, price_categories=CATEGORIES[:1], prices=PRICES[:2]))
    assert [zone["id"] for zone in event["zones"]] == ["main"]
    assert hold(bookings, event, "k1", quantity=1, ticket_type="child").amount.text == "1500.00"


@pytest.fixture
def listing_of(store, clock):
    from holdfast.services.listing import ListingService

    service = ListingService(store, clock)
    return service.seat_map


def test_the_operators_sales_count_each_price_category_and_zone(catalog, bookings, store):
    from holdfast.domain.organizers import Caller

    caller = Caller(organizer_id="org-1", key_id="key-1")
    zoned_event = zoned(catalog, caller)
    seated_event = seated(catalog, caller)
    hold(bookings, zoned_event, "k1", quantity=2, zone="up")
    hold(bookings, seated_event, "k2", seats=["B-1"])
    sales = {view["event_id"]: view for view in catalog.sales(caller)["offerings"]}
    assert sales[zoned_event["event_id"]]["by_price_category"] == {
        "stalls": {"available": 30, "held": 0, "sold": 0}, "balcony": {"available": 0, "held": 2, "sold": 0}}
    assert {zone["id"]: zone["counts"]["held"] for zone in sales[zoned_event["event_id"]]["zones"]} == {"floor": 0, "up": 2}
    assert sales[seated_event["event_id"]]["by_price_category"]["balcony"] == {"available": 3, "held": 1, "sold": 0}
