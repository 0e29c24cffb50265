"""Issue 45, comps over HTTP: an order that costs nothing (a 100 % code, or one the organizer gives
with POST /admin/orders) is confirmed at once without a payment, with its tickets and its
confirmation message, and its places are counted apart as ``comps`` in the sales view; giving it
up puts the places (and the count) back with nothing to refund."""
from __future__ import annotations

import time
import uuid

import pytest
import requests

from devstack.organizers import LOCAL_ORGANIZERS
from holdfast.products.orders.services import guest_customer
from tests.support.api import BookingApi

pytestmark = pytest.mark.integration


@pytest.fixture
def second(api):
    """The stack's second organizer (devstack/organizers.py)."""
    return BookingApi(api.base, organizer_key=LOCAL_ORGANIZERS[1][2])


def customer() -> str:
    return f"cust-{uuid.uuid4().hex[:10]}"


def sales_of(api, event_id: str) -> dict:
    answer = api.request("GET", "/admin/sales", organizer=True, params={"limit": 100})
    assert answer.status_code == 200, answer.text
    return next(offering for offering in answer.json()["offerings"] if offering["event_id"] == event_id)


def notified(who: str, booking_id: str, kind: str, timeout: float = 20.0) -> dict:
    """The notification recorded for one change, once the notifier has taken it from its queue."""
    from holdfast import wiring

    deadline = time.monotonic() + timeout
    while True:
        notes = [n for n in wiring.store().list_notifications(who)
                 if n["booking_id"] == booking_id and n["type"] == kind]
        if notes:
            return notes[0]
        assert time.monotonic() < deadline, f"no {kind} notification for {booking_id}"
        time.sleep(0.1)


def never_asked_to_pay(who: str, booking_id: str) -> list[dict]:
    """The "held, please pay" notifications recorded for a booking (a comp must have none)."""
    from holdfast import wiring

    return [n for n in wiring.store().list_notifications(who) if n["booking_id"] == booking_id
            and n["type"] == "booking.held"]


def test_a_full_discount_code_confirms_the_hold_without_a_payment(api, system):
    event_id = api.create_event(capacity=10)["event_id"]
    made = api.request("POST", f"/events/{event_id}/codes", organizer=True,
                       json={"code": "GUEST100", "kind": "percent", "value": 100, "max_uses": 5})
    assert made.status_code == 201, made.text
    alice = customer()
    held = api.book(event_id, alice, {"quantity": 2, "code": "guest100"})
    assert held.status_code == 201, held.text
    booking = held.json()
    assert booking["status"] == "CONFIRMED" and booking["amount"] == {"value": "0.00", "currency": "RUB"}
    view = api.booking(booking["booking_id"], alice)
    assert "payment" not in view or not view["payment"]
    assert [entry["action"] for entry in view["journal"]] == ["hold_created", "comp_confirmed"]
    assert len(view["tickets"]) == 2
    # nothing to pay: a payment is refused, and no provider payment exists
    assert api.pay(booking["booking_id"], alice).status_code == 409
    assert api.counts(event_id) == {"available": 8, "held": 0, "sold": 2}
    assert sales_of(api, event_id)["comps"] == 2
    notified(alice, booking["booking_id"], "booking.confirmed")
    system["stack"].wait_idle()   # every message of the hold's changes has been taken
    assert not never_asked_to_pay(alice, booking["booking_id"])
    # giving it up: places and the comps count back, nothing refunded
    cancelled = api.cancel(booking["booking_id"], alice)
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "CANCELLED"
    assert api.counts(event_id) == {"available": 10, "held": 0, "sold": 0}
    assert sales_of(api, event_id)["comps"] == 0


def test_an_order_the_organizer_gives_is_confirmed_once_for_its_key(api, system):
    event_id = api.create_event(capacity=10)["event_id"]
    email = f"guest-{uuid.uuid4().hex[:8]}@example.org"
    body = {"lines": [{"event_id": event_id, "quantity": 3}], "for_email": email, "note": "sponsor's guests"}
    key = str(uuid.uuid4())
    given = api.request("POST", "/admin/orders", organizer=True, key=key, json=body)
    assert given.status_code == 201, given.text
    order = given.json()
    assert order["status"] == "CONFIRMED" and order["amount"]["value"] == "0.00"
    assert given.headers["Idempotent-Replayed"] == "false"
    again = api.request("POST", "/admin/orders", organizer=True, key=key, json=body)
    assert again.status_code == 201 and again.json()["order_id"] == order["order_id"]
    assert again.headers["Idempotent-Replayed"] == "true"
    reused = api.request("POST", "/admin/orders", organizer=True, key=key, json={**body, "note": "another"})
    assert reused.status_code == 409 or reused.status_code == 422, reused.text
    assert api.counts(event_id)["sold"] == 3
    assert sales_of(api, event_id)["comps"] == 3
    # the guest's confirmation reaches the address the organizer named
    notified(guest_customer(email), order["order_id"], "booking.confirmed")
    system["stack"].wait_idle()
    assert not never_asked_to_pay(guest_customer(email), order["order_id"])
    # the organizer takes it back: the places return with nothing to refund
    cancelled = api.request("POST", f"/admin/bookings/{order['order_id']}/cancel", organizer=True,
                            json={"operator": "box office", "note": "sponsor withdrew"})
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "CANCELLED"
    assert api.counts(event_id)["sold"] == 0 and sales_of(api, event_id)["comps"] == 0


def test_an_organizer_gives_only_its_own_offerings_and_a_key_is_needed(api, second, system):
    event_id = api.create_event(capacity=10)["event_id"]
    body = {"lines": [{"event_id": event_id, "quantity": 1}], "for_email": "someone@example.org"}
    theirs = second.request("POST", "/admin/orders", organizer=True, key=str(uuid.uuid4()), json=body)
    assert theirs.status_code == 404 and theirs.json()["error"]["code"] == "event_not_found", theirs.text
    keyless = api.request("POST", "/admin/orders", organizer=True, json=body)
    assert keyless.status_code == 400, keyless.text
    anonymous = requests.post(f"{api.base}/admin/orders", json=body, headers={"Idempotency-Key": "k"}, timeout=10)
    assert anonymous.status_code == 401
    bad = api.request("POST", "/admin/orders", organizer=True, key=str(uuid.uuid4()),
                      json={"lines": [{"event_id": event_id, "quantity": 1}], "for_email": "not an address"})
    assert bad.status_code == 400, bad.text
    assert api.counts(event_id)["sold"] == 0
