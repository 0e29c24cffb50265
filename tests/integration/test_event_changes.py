"""Issue 18 over HTTP: a change of an event's start time or venue is announced (event.changed on
the bus) and every customer with a confirmed booking or an open hold is notified once per change;
the same PATCH again notifies nobody; after a change of time a customer may cancel with a full
refund within the organizer's window, which the booking shows."""
from __future__ import annotations

import time
from datetime import timedelta

import pytest

from holdfast import wiring
from holdfast.clock import iso, parse_iso
from holdfast.services.message_words import date_time
from tests.support.flows import actions, customer
from tests.support.stack_time import running_stack

pytestmark = pytest.mark.integration


def patch(api, event_id, body):
    answer = api.request("PATCH", f"/events/{event_id}", organizer=True, json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


def changes_heard(who):
    return [n for n in wiring.store().list_notifications(who) if n["type"] == "event.changed"]


def wait_heard(who, count, timeout=20.0):
    deadline = time.monotonic() + timeout
    while len(changes_heard(who)) < count:
        assert time.monotonic() < deadline, f"{who} heard {len(changes_heard(who))} of {count} changes"
        time.sleep(0.1)


def test_a_change_notifies_each_holder_once_and_a_repeat_nobody(api, sandbox):
    event = api.create_event(capacity=10, hold_ttl_seconds=3600)   # 60 days ahead at 20:00 UTC
    event_id = event["event_id"]
    moved = iso(parse_iso(event["starts_at"]) + timedelta(days=1, hours=1))
    paid, holder, gone, twice = customer(), customer(), customer(), customer()
    paid_booking = api.book(event_id, paid).json()["booking_id"]
    sandbox.pay(api.pay(paid_booking, paid).json()["payment_id"])
    api.wait_status(paid_booking, paid, "CONFIRMED")
    api.book(event_id, holder)
    gone_booking = api.book(event_id, gone).json()["booking_id"]
    assert api.cancel(gone_booking, gone).status_code == 200
    api.book(event_id, twice)
    api.book(event_id, twice)   # two bookings: still one notification per change
    patch(api, event_id, {"starts_at": moved, "change_refund_hours": 48})
    for who in (paid, holder, twice):
        wait_heard(who, 1)
    patch(api, event_id, {"starts_at": moved})   # the same values: no change
    patch(api, event_id, {"name": "Renamed night"})                 # not announced
    patch(api, event_id, {"venue": "Other hall"})
    for who in (paid, holder, twice):
        wait_heard(who, 2)
    running_stack().wait_idle()   # anything a repeat would have sent has arrived
    assert [len(changes_heard(who)) for who in (paid, holder, twice, gone)] == [2, 2, 2, 0]
    first = sorted(changes_heard(paid), key=lambda n: n["at"])[0]
    was, now = (date_time(moment, "UTC", "en") for moment in (event["starts_at"], moved))
    assert f"Start: {was} → {now}" in first["message"]   # "1 March 2027, 20:00 (UTC) → ..."
    assert "full refund" in first["message"]
    # The paid customer cannot come: the booking shows the window, and cancelling refunds in full.
    booking = api.booking(paid_booking, paid)
    assert booking["change_refund_until"] > booking["updated_at"]
    assert api.cancel(paid_booking, paid).status_code == 200
    refunded = api.wait_status(paid_booking, paid, "REFUNDED")
    assert "cancelled_after_time_change" in actions(refunded)
    assert len(sandbox.refunds(refunded["payment"]["payment_id"])) == 1
