"""Issue 45, a cancellation policy with fees over HTTP: an event that gives back half the price
within 48 hours of its start says so in the booking's view (``cancel_refund_amount``), and a
customer's cancel then refunds exactly that half at the provider; the view shows the refund's
amount afterwards. Early enough, the whole price; within the last tier, nothing (the cancel is
refused)."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import pytest

from holdfast.clock import iso, system_clock

pytestmark = pytest.mark.integration

POLICY = [{"until_hours": 48, "refund_percent": 100}, {"until_hours": 2, "refund_percent": 50},
          {"until_hours": 0, "refund_percent": 0}]


def customer() -> str:
    return f"cust-{uuid.uuid4().hex[:10]}"


def paid_booking(api, sandbox, event_id, who):
    held = api.book(event_id, who, {"quantity": 2})
    assert held.status_code == 201, held.text
    booking_id = held.json()["booking_id"]
    paying = api.pay(booking_id, who)
    assert paying.status_code == 201, paying.text
    sandbox.pay(paying.json()["payment_id"])
    api.wait_status(booking_id, who, "CONFIRMED")
    return booking_id


def test_a_late_cancel_refunds_by_the_policy(api, sandbox, system):
    starts = system_clock() + timedelta(hours=24)
    event = api.create_event(capacity=10, starts_at=iso(starts), cancellation=POLICY)
    assert event["cancellation"] == POLICY
    who = customer()
    booking_id = paid_booking(api, sandbox, event["event_id"], who)
    view = api.booking(booking_id, who)
    assert view["cancellable"] is True
    assert view["cancel_refund_amount"] == {"value": "1000.00", "currency": "RUB"}   # half of 2000.00
    cancelled = api.cancel(booking_id, who)
    assert cancelled.status_code == 200, cancelled.text
    done = api.wait_status(booking_id, who, "REFUNDED")
    assert done["payment"]["refund"]["amount"] == {"value": "1000.00", "currency": "RUB"}
    assert api.counts(event["event_id"])["sold"] == 0


def test_an_early_cancel_refunds_everything_and_the_last_hours_nothing(api, sandbox, system):
    early = api.create_event(capacity=10, starts_at=iso(system_clock() + timedelta(days=5)), cancellation=POLICY)
    who = customer()
    booking_id = paid_booking(api, sandbox, early["event_id"], who)
    assert api.booking(booking_id, who)["cancel_refund_amount"] == {"value": "2000.00", "currency": "RUB"}
    late = api.create_event(capacity=10, starts_at=iso(system_clock() + timedelta(minutes=90)), cancellation=POLICY)
    other = customer()
    kept = paid_booking(api, sandbox, late["event_id"], other)
    view = api.booking(kept, other)
    assert view["cancellable"] is False and view["cancel_refund_amount"]["value"] == "0.00"
    refused = api.cancel(kept, other)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "no_refund_now", refused.text
    assert api.booking(kept, other)["status"] == "CONFIRMED"


def test_a_bad_policy_is_refused(api, system):
    answer = api.request("POST", "/events", organizer=True, json={
        "name": "Bad policy", "venue": "Hall", "city": "Moscow", "category": "club",
        "starts_at": iso(system_clock() + timedelta(days=3)), "price": {"value": "100.00", "currency": "RUB"},
        "capacity": 5, "cancellation": [{"until_hours": 24, "refund_percent": 150}]})
    assert answer.status_code == 400, answer.text


def test_an_appointment_service_cancel_refunds_by_its_policy_counted_from_the_slot(api, sandbox, system):
    hall = api.create_resource()["resource_id"]
    service = api.create_service([hall], cancellation=POLICY)
    assert service["cancellation"] == POLICY
    now = system_clock()
    # a slot between 2 and 48 hours ahead: half back (the service itself has no start of its own)
    slots = [slot for offset in range(3) for slot in api.availability(
        service["service_id"], (now + timedelta(days=offset)).strftime("%Y-%m-%d"))]
    slot = next(s for s in slots if timedelta(hours=3) <= datetime.fromisoformat(s["starts_at"]) - now
                <= timedelta(hours=40))
    who = customer()
    held = api.book_slot(service["service_id"], who, {"starts_at": slot["starts_at"], "resource_id": hall,
                                                      "quantity": 1})
    assert held.status_code == 201, held.text
    booking_id = held.json()["booking_id"]
    paying = api.pay(booking_id, who)
    assert paying.status_code == 201, paying.text
    sandbox.pay(paying.json()["payment_id"])
    api.wait_status(booking_id, who, "CONFIRMED")
    assert api.booking(booking_id, who)["cancel_refund_amount"] == {"value": "350.00", "currency": "RUB"}
    cancelled = api.cancel(booking_id, who)
    assert cancelled.status_code == 200, cancelled.text
    done = api.wait_status(booking_id, who, "REFUNDED")
    assert done["payment"]["refund"]["amount"] == {"value": "350.00", "currency": "RUB"}
