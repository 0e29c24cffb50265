"""Issue 43 over HTTP: a ticket and its parking in one order, held together, paid with one
payment on the sandbox and confirmed together; an order with one unavailable line holds nothing;
expiry and cancellation move every line at once."""
from __future__ import annotations

import uuid

import pytest
from tests.support.stack_time import days_ahead

pytestmark = pytest.mark.integration

RUB = "RUB"
#: The concert's day, months ahead (a fixed date would one day be past).
DAY = days_ahead(200)
START = f"{DAY}T19:00:00Z"


def customer() -> str:
    return f"cust-{uuid.uuid4().hex[:10]}"


def lot(api, spaces=1):
    answer = api.request("POST", "/lots", organizer=True, json={
        "name": "Venue parking", "spaces": [{"space_id": f"R{n}", "type": "REGULAR"} for n in range(spaces)],
        "tariff": {"hourly": {"value": "150.00", "currency": RUB}, "daily_cap": {"value": "900.00", "currency": RUB},
                   "grace_minutes": 10}})
    assert answer.status_code == 201, answer.text
    return answer.json()["lot_id"]


def concert(api, **more):
    return api.create_event(capacity=None, starts_at=START, price=None,
                            price_categories=[{"id": "stalls", "name": "Stalls"}],
                            prices=[{"price_category": "stalls", "ticket_type": "adult", "price": {"value": "2000.00", "currency": RUB}},
                                    {"price_category": "stalls", "ticket_type": "child", "price": {"value": "800.00", "currency": RUB}}],
                            seat_map={"rows": [{"name": "A", "seats": 4}]}, **more)["event_id"]


def order(api, who, lines, key=None):
    return api.request("POST", "/orders", customer=who, key=key or str(uuid.uuid4()), json={"lines": lines})


def parking(lot_id, plate="A123BC77"):
    return {"lot_id": lot_id, "vehicle_type": "REGULAR", "plate": plate,
            "from": f"{DAY}T18:00:00Z", "to": f"{DAY}T22:00:00Z"}


def seats(api, event_id):
    return {s["seat"]: s["state"] for s in api.request("GET", f"/events/{event_id}/seats").json()["seats"]}


def stored_seats(event_id):
    """Each seat's state as stored, read consistently. The public seat map (``seats``) is cached for
    a second per container (services/listing.py, SEAT_MAP_CACHE_SECONDS): read once while an
    order's seats were held, it may still say so a moment after the order is confirmed."""
    from holdfast import wiring

    return {unit["unit"]: unit["state"] for unit in wiring.store().list_units(event_id)}


def test_seats_and_parking_held_together_and_paid_with_one_payment(api, sandbox, system):
    event_id, lot_id = concert(api), lot(api)
    alice = customer()
    placed = order(api, alice, [{"event_id": event_id, "seats": ["A-1", "A-2"], "ticket_types": {"A-2": "child"}},
                                parking(lot_id)])
    assert placed.status_code == 201, placed.text
    body = placed.json()
    # 2000 + 800 for the seats, four hours at 150 for the car: priced on the server
    assert body["status"] == "HELD" and body["amount"] == {"value": "3400.00", "currency": RUB}
    assert [(line["kind"], line["amount"]["value"]) for line in body["lines"]] == [("seated", "2800.00"),
                                                                                   ("parking_spaces", "600.00")]
    assert body["lines"][0]["ticket_types"] == {"A-1": "adult", "A-2": "child"}
    assert seats(api, event_id)["A-1"] == "held"
    paying = api.request("POST", f"/orders/{body['order_id']}/payment", customer=alice, key=str(uuid.uuid4()))
    assert paying.status_code == 201, paying.text
    assert paying.json()["amount"] == {"value": "3400.00", "currency": RUB}
    sandbox.pay(paying.json()["payment_id"])
    confirmed = api.wait_status(body["order_id"], alice, "CONFIRMED")
    assert confirmed["payment"]["status"] == "succeeded"
    shown = api.request("GET", f"/orders/{body['order_id']}", customer=alice).json()
    assert shown["status"] == "CONFIRMED" and len(shown["lines"]) == 2
    assert stored_seats(event_id) == {"A-1": "sold", "A-2": "sold", "A-3": "available", "A-4": "available"}
    assert api.counts(event_id) == {"available": 2, "held": 0, "sold": 2}
    # the one space is the order's: another car is refused for the window
    other = order(api, customer(), [parking(lot_id, "C555CC77")])
    assert other.status_code == 409 and other.json()["error"]["code"] == "no_space_available"


def test_an_order_with_one_unavailable_line_holds_nothing(api, system):
    event_id, lot_id = concert(api), lot(api)
    bob = customer()
    taken = api.request("POST", f"/lots/{lot_id}/reservations", customer=bob, key=str(uuid.uuid4()),
                        json={k: v for k, v in parking(lot_id, "B777BB77").items() if k != "lot_id"})
    assert taken.status_code == 201, taken.text
    alice = customer()
    refused = order(api, alice, [{"event_id": event_id, "seats": ["A-3"]}, parking(lot_id)])
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "no_space_available"
    assert refused.json()["error"]["details"]["line"] == 1
    assert seats(api, event_id)["A-3"] == "available"
    # and a line the route of its own offering would refuse is refused the same way
    bad = order(api, alice, [{"event_id": event_id, "seats": ["Z-9"]}])
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "unknown_seats"
    assert bad.json()["error"]["details"]["line"] == 0


def test_cancelling_a_held_order_releases_every_line_at_once(api, system):
    event_id, lot_id = concert(api), lot(api)
    alice = customer()
    placed = order(api, alice, [{"event_id": event_id, "seats": ["A-4"]}, parking(lot_id)]).json()
    cancelled = api.request("POST", f"/orders/{placed['order_id']}/cancel", customer=alice)
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "CANCELLED"
    assert seats(api, event_id)["A-4"] == "available"
    again = order(api, customer(), [{"event_id": event_id, "seats": ["A-4"]}, parking(lot_id)])
    assert again.status_code == 201, again.text   # the space came back with the seat


def test_a_confirmed_orders_cancel_refunds_each_line_by_its_policy_in_one_refund(api, sandbox, system):
    event_id = concert(api)
    strict = api.request("POST", "/lots", organizer=True, json={
        "name": "Strict parking", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "150.00", "currency": RUB}}, "policy": {"cancel_refund": "none"}})
    assert strict.status_code == 201, strict.text
    alice = customer()
    placed = order(api, alice, [{"event_id": event_id, "seats": ["A-1"]}, parking(strict.json()["lot_id"])]).json()
    paying = api.request("POST", f"/orders/{placed['order_id']}/payment", customer=alice, key=str(uuid.uuid4())).json()
    sandbox.pay(paying["payment_id"])
    api.wait_status(placed["order_id"], alice, "CONFIRMED")
    cancelled = api.request("POST", f"/orders/{placed['order_id']}/cancel", customer=alice)
    assert cancelled.status_code == 200, cancelled.text
    refunded = api.wait_status(placed["order_id"], alice, "REFUNDED")
    assert any("kept by their own policy: L2 600.00" in entry["decision"] for entry in refunded["journal"]), \
        refunded["journal"]
    assert seats(api, event_id)["A-1"] == "available"


def test_a_held_order_expires_as_one(api, system):
    event_id = concert(api, hold_ttl_seconds=600)
    alice = customer()
    placed = order(api, alice, [{"event_id": event_id, "seats": ["A-2"]}, {"event_id": concert(api), "seats": ["A-3"]}])
    assert placed.status_code == 201, placed.text
    body = placed.json()
    system["stack"].advance_clock(610)   # the hold's ten minutes and its expiry tick's bucket, not waited for
    expired = api.wait_status(body["order_id"], alice, "EXPIRED", timeout=20)
    assert expired["journal"][-1]["actor"] == "timer"
    assert seats(api, event_id)["A-2"] == "available"
    assert seats(api, body["lines"][1]["offering_id"])["A-3"] == "available"
