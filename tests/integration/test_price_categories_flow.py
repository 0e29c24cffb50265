"""Issue 43 over HTTP: an event priced by category and ticket type, in zones and on a seat map;
the server prices every place, and the event page and seat map show what it priced by."""
from __future__ import annotations

import uuid

import pytest

pytestmark = pytest.mark.integration

RUB = "RUB"
CATEGORIES = [{"id": "vip", "name": "VIP", "color": "#aa2222"}, {"id": "std", "name": "Standard", "color": "#2255aa"}]
PRICES = [{"price_category": "vip", "ticket_type": "adult", "price": {"value": "5000.00", "currency": RUB}},
          {"price_category": "vip", "ticket_type": "child", "price": {"value": "2500.00", "currency": RUB}},
          {"price_category": "std", "ticket_type": "adult", "price": {"value": "2000.00", "currency": RUB}},
          {"price_category": "std", "ticket_type": "concession", "price": {"value": "1200.00", "currency": RUB}}]


def customer() -> str:
    return f"cust-{uuid.uuid4().hex[:10]}"


def test_zones_price_by_category_and_ticket_type_and_show_their_counts(api, system):
    event = api.create_event(price=None, capacity=None, price_categories=CATEGORIES, prices=PRICES,
                             zones=[{"id": "pit", "name": "Pit", "price_category": "vip", "capacity": 5},
                                    {"id": "hall", "name": "Hall", "price_category": "std", "capacity": 50}])
    assert event["price"] == {"value": "1200.00", "currency": RUB}
    alice = customer()
    held = api.book(event["event_id"], alice, {"quantity": 2, "zone": "pit", "ticket_type": "child"})
    assert held.status_code == 201, held.text
    assert held.json()["amount"] == {"value": "5000.00", "currency": RUB}
    # a client cannot price a place: an unknown type is refused, never sold at some price
    refused = api.book(event["event_id"], alice, {"quantity": 1, "zone": "hall", "ticket_type": "child"})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "unknown_ticket_type"
    assert api.book(event["event_id"], alice, {"quantity": 1}).json()["error"]["code"] == "zone_required"
    shown = api.request("GET", f"/events/{event['event_id']}").json()
    assert {zone["id"]: zone["counts"]["held"] for zone in shown["zones"]} == {"pit": 2, "hall": 0}
    assert [p["ticket_type"] for p in shown["prices"]] == ["adult", "child", "adult", "concession"]


def test_seats_are_priced_by_category_and_each_ones_ticket_type(api, system):
    event = api.create_event(price=None, capacity=None, price_categories=CATEGORIES, prices=PRICES,
                             seat_map={"seat_ids": [{"id": "V1", "price_category": "vip"},
                                                    "V2", {"id": "S1", "price_category": "std"},
                                                    {"id": "S2", "price_category": "std"}]})
    bob = customer()
    held = api.book(event["event_id"], bob, {"seats": ["V1", "S1", "S2"],
                                             "ticket_types": {"S2": "concession"}})
    assert held.status_code == 201, held.text
    # V1 vip adult 5000 + S1 std adult 2000 + S2 std concession 1200
    assert held.json()["amount"] == {"value": "8200.00", "currency": RUB}
    # a plain seat id (V2) takes the first price category
    seats = api.request("GET", f"/events/{event['event_id']}/seats").json()
    assert {s["seat"]: (s["price_category"], s["state"]) for s in seats["seats"]} == {
        "S1": ("std", "held"), "S2": ("std", "held"), "V1": ("vip", "held"), "V2": ("vip", "available")}
