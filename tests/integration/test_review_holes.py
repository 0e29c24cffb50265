"""Over HTTP on the local stack, the holes of issue 11 that a customer or an organizer can reach
by themselves: event-creation retries (1), inputs that answered 500 (6), sparse seat maps (11)
and the per-customer hold limit (13)."""
from __future__ import annotations

import base64
import json
import uuid

import pytest
from tests.support.stack_time import days_ahead

pytestmark = pytest.mark.integration

EVENT = {"name": "Retry night", "venue": "Hall", "city": "Moscow", "category": "club",
         "starts_at": f"{days_ahead(200)}T20:00:00Z", "price": {"value": "1000.00", "currency": "RUB"}}


def create(api, key, **body):
    return api.request("POST", "/events", organizer=True, key=key, json=EVENT | body)


def seat_states(api, event_id):
    return {seat["seat"]: seat["state"] for seat in api.request("GET", f"/events/{event_id}/seats").json()["seats"]}


def test_retrying_event_creation_never_resets_sales(api):
    key = f"create-{uuid.uuid4().hex}"
    first = create(api, key, capacity=10)
    assert first.status_code == 201, first.text
    event_id = first.json()["event_id"]
    assert api.book(event_id, "retry-a", {"quantity": 4}).status_code == 201
    replay = create(api, key, capacity=10)
    assert replay.status_code in (200, 201) and replay.json()["event_id"] == event_id
    other = create(api, key, capacity=99)
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"
    assert api.counts(event_id) == {"available": 6, "held": 4, "sold": 0}


def test_retrying_seated_event_creation_keeps_seat_states(api):
    key = f"create-{uuid.uuid4().hex}"
    seat_map = {"rows": [{"name": "A", "seats": 5}]}
    event_id = create(api, key, seat_map=seat_map).json()["event_id"]
    assert api.book(event_id, "retry-b", {"seats": ["A-2", "A-3"]}).status_code == 201
    before = seat_states(api, event_id)
    assert create(api, key, seat_map=seat_map).json()["event_id"] == event_id
    other = create(api, key, seat_map={"rows": [{"name": "B", "seats": 5}]})
    assert other.status_code == 422
    assert seat_states(api, event_id) == before and before["A-2"] == "held"


def test_best_available_on_a_sparse_seat_map(api):
    event = api.create_event(capacity=None, seat_map={"seat_ids": ["A-1", "A-99999999999999"]})
    answer = api.book(event["event_id"], "sparse-a", {"quantity": 2, "best_available": True})
    assert answer.status_code == 201, answer.text
    assert sorted(answer.json()["places"]["seats"]) == ["A-1", "A-99999999999999"]


def test_bad_inputs_are_400_with_a_code_over_http(api):
    event = api.create_event(capacity=None, seat_map={"rows": [{"name": "A", "seats": 3}]})
    deep = "[" * 20_000 + "]" * 20_000
    for method, path, extra in (("POST", "/events", {"organizer": True}),
                                ("POST", f"/events/{event['event_id']}/bookings", {"customer": "deep-c", "key": "d1"}),
                                ("POST", f"/events/{event['event_id']}/waitlist", {"customer": "deep-c"}),
                                ("PATCH", f"/events/{event['event_id']}", {"organizer": True}),
                                ("POST", f"/admin/reviews/{uuid.uuid4()}/resolve", {"organizer": True})):
        answer = api.request(method, path, data=deep, headers={"Content-Type": "application/json"}, **extra)
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "body_too_deep", (path, answer.text)
    answer = api.request("POST", "/webhooks/payments", data='{"type": "notification", "object": ' + deep + "}")
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "malformed_notification", answer.text
    long_seat = api.book(event["event_id"], "long-seat", {"seats": ["A-1", "A" * 1100]})
    assert long_seat.status_code == 400 and long_seat.json()["error"]["code"] == "validation_error"
    for params in ({"city": "\ufdfa" * 100}, {"q": "\u3300" * 200}):
        answer = api.request("GET", "/events", params=params)
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "query_too_long", answer.text
    cursor = base64.urlsafe_b64encode(json.dumps({"p": "LIST#ALL", "s": "0000#x"}).encode()).decode()
    answer = api.request("GET", "/events", params={"cursor": cursor})
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "invalid_cursor"


def test_the_hold_limit_over_http(api):
    event = api.create_event(capacity=20, max_holds_per_customer=2)
    assert api.request("GET", f"/events/{event['event_id']}").json()["max_holds_per_customer"] == 2
    first, second = (api.book(event["event_id"], "capped", {"quantity": 1}) for _ in range(2))
    assert first.status_code == second.status_code == 201
    third = api.book(event["event_id"], "capped", {"quantity": 1})
    assert third.status_code == 409 and third.json()["error"] == {
        "code": "hold_limit_reached", "message": third.json()["error"]["message"], "details": {"limit": 2}}
    assert api.cancel(first.json()["booking_id"], "capped").status_code == 200
    assert api.book(event["event_id"], "capped", {"quantity": 1}).status_code == 201
    assert api.counts(event["event_id"]) == {"available": 18, "held": 2, "sold": 0}


def test_operator_notes_stay_out_of_the_customers_view(api, sandbox):
    """Finding 12 over HTTP: a booking paid in time but reported after its place was resold goes
    to an operator, whose refund decision carries a note; the customer sees the refund, not it."""
    from tests.integration.conftest import PAYING_HOLD
    from tests.support.flows import move_past_the_hold

    from .test_payments_that_go_wrong import booked_and_paying, customer

    event = api.create_event(capacity=1, hold_ttl_seconds=PAYING_HOLD)
    who, rival = customer(), customer()
    booking_id, payment_id = booked_and_paying(api, event, who)
    sandbox.add_fault("hold", times=1, match={"object_id": payment_id})
    sandbox.add_fault("error_500_before", route="GET /v3/payments/{id}", times=1000)
    sandbox.pay(payment_id)
    move_past_the_hold(api, booking_id, who)
    api.wait_status(booking_id, who, "EXPIRED", timeout=15)
    assert api.book(event["event_id"], rival).status_code == 201
    sandbox.clear_faults()
    sandbox.release(object_id=payment_id)
    api.wait_status(booking_id, who, "MANUAL_REVIEW")
    note = "card holder is on the chargeback watch list"
    resolved = api.request("POST", f"/admin/reviews/{booking_id}/resolve", organizer=True,
                           json={"action": "refund", "operator": "olga.k", "note": note})
    assert resolved.status_code == 200, resolved.text
    final = api.wait_status(booking_id, who, "REFUNDED")
    shown = json.dumps(final["journal"])
    assert note not in shown and "olga.k" not in shown and "paid_in_time_places_resold" not in shown
    assert [e["to_status"] for e in final["journal"]][-3:] == ["MANUAL_REVIEW", "REFUND_PENDING", "REFUNDED"]
    admin = api.request("GET", f"/admin/bookings/{booking_id}", organizer=True).json()
    assert any(note in e["decision"] and e["ids"].get("operator") == "olga.k" for e in admin["journal"])
