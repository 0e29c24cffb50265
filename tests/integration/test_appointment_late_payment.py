"""Seed 003's story on a real appointment service over HTTP on the local stack: the hold of 10:00
ends (12:10), another customer takes 10:00 and confirms (12:11), the first customer's two-stage
authorisation arrives (12:12). The booking goes to MANUAL_REVIEW with the nearest free times of
the service; the customer moves to one with the same payment, or takes the money back.

Nothing in the story races a real timer: the first hold (LIMIT - 6 seconds, to pay it in) lapses,
and its payment's reconciliation reaches its limit, in one move of the stack's clock, so both are
behind the story before it goes on; the rival takes 10:00 through the hall's other service, whose
hold is ten minutes, so no delay between its hold and its payment lapses it; the conflict case's
window is the package's ten minutes."""
from __future__ import annotations

import uuid

import pytest

from tests.integration.conftest import LIMIT
from tests.integration.test_appointments_flow import DAY, at, free
from tests.support.flows import actions, customer
from tests.support.stack_time import running_stack

pytestmark = pytest.mark.integration

#: The first customer's hold: seconds of real time to pay it in, its expiry tick (the end of its
#: 5-second bucket) still before the reconciliation limit counted from the payment after it.
FIRST_HOLD = LIMIT - 6


def utc(clock: str) -> str:
    hour, minute = clock.split(":")
    return f"{DAY}T{int(hour) - 3:02d}:{minute}:00.000Z"


def late_story(api, sandbox, **service):
    hall = api.create_resource()["resource_id"]
    hire = api.create_service([hall], **{"name": "Hall hire", "mode": "private", "capacity": None,
                                         "hold_ttl_seconds": FIRST_HOLD} | service)
    who, rival, other = customer(), customer(), customer()
    slot = {"starts_at": at("10:00"), "resource_id": hall}
    # 11:00 is held by another service on the same hall (a long hold), so the nearest free times
    # are 09:00, then 12:00 and later.
    meeting = api.create_service([hall], name="Meeting", mode="private", capacity=None)
    assert api.book_slot(meeting["service_id"], other, {"starts_at": at("11:00"), "resource_id": hall}).status_code == 201
    held = api.book_slot(hire["service_id"], who, slot).json()
    assert held["hold_expires_at"] in held["hold_next_step"] and "released" in held["hold_next_step"]
    booking_id = held["booking_id"]
    paying = api.pay(booking_id, who)
    assert paying.status_code == 201, paying.text
    payment_id = paying.json()["payment_id"]
    # past the hold's expiry tick (its 5-second bucket's end, before the limit) and the limit
    running_stack().advance_clock(LIMIT + 2)                                                   # 12:10
    assert api.booking(booking_id, who)["status"] == "EXPIRED"
    # the rival's hold is the meeting's ten minutes: the hall's 10:00 is the same time whichever
    # service sells it, and no real delay between its hold and its payment lapses it
    taken = api.book_slot(meeting["service_id"], rival, slot).json()                           # 12:11
    rival_paying = api.pay(taken["booking_id"], rival)
    assert rival_paying.status_code == 201, rival_paying.text
    sandbox.pay(rival_paying.json()["payment_id"])
    assert api.wait_status(taken["booking_id"], rival, "CONFIRMED")["places"]["starts_at"] == utc("10:00")
    sandbox.pay(payment_id)                                                                    # 12:12
    case = api.wait_status(booking_id, who, "MANUAL_REVIEW")
    return hire, hall, who, booking_id, payment_id, case


def opening(api, service, clock):
    return [s["available"] for s in api.availability(service["service_id"], DAY) if s["starts_at"] == utc(clock)]


def choose(api, booking_id, who, body, key=None):
    return api.request("POST", f"/bookings/{booking_id}/resolution", customer=who, key=key or str(uuid.uuid4()),
                       json=body)


def test_late_authorisation_on_a_taken_time_moves_to_a_nearby_time_with_the_same_payment(api, sandbox):
    hire, hall, who, booking_id, payment_id, case = late_story(api, sandbox)
    assert sandbox.payment(payment_id)["status"] == "waiting_for_capture"       # kept, nothing taken
    offered = case["resolution"]["alternatives"]
    assert [(a["starts_at"], a["resource_id"]) for a in offered][:3] == [(utc(t), hall) for t in ("09:00", "12:00", "13:00")]
    assert case["review"]["reason"] == "places_taken_alternatives_offered" and case["resolution"]["open"]
    # A time that was not offered is refused and changes nothing.
    refused = choose(api, booking_id, who, {"choice": "alternative", "starts_at": utc("11:00"), "resource_id": hall})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "not_an_offered_alternative"
    key = str(uuid.uuid4())
    # The page may send the offered time in local time (+03:00): the same instant, so accepted.
    body = {"choice": "alternative", "starts_at": at("12:00"), "resource_id": hall}
    answer = choose(api, booking_id, who, body, key)
    assert answer.status_code == 200, answer.text
    moved = answer.json()
    assert moved["status"] == "CONFIRMED" and moved["places"]["starts_at"] == utc("12:00")
    assert choose(api, booking_id, who, body, key).json() == moved                     # a repeat: the same answer
    assert sandbox.payment(payment_id)["status"] == "succeeded" and sandbox.refunds(payment_id) == []
    assert [p["id"] for p in sandbox.find_payments(booking_id=booking_id)] == [payment_id]   # never a second one
    journal = actions(api.booking(booking_id, who))
    assert journal[-3:] == ["conflict_case_opened", "alternative_chosen", "payment_captured"], journal
    assert journal.count("payment_captured") == 1
    assert free(api, hire, "11:00", hall) == 0 and free(api, hire, "10:00", hall) == 0
    assert opening(api, hire, "12:00") == [0]


def test_late_authorisation_refund_choice_cancels_it_and_takes_nothing(api, sandbox):
    hire, hall, who, booking_id, payment_id, _ = late_story(api, sandbox)
    answer = choose(api, booking_id, who, {"choice": "refund"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "PAYMENT_FAILED" and answer.json()["resolution"]["decision"]["choice"] == "refund"
    assert sandbox.payment(payment_id)["status"] == "canceled" and sandbox.refunds(payment_id) == []
    assert free(api, hire, "10:00", hall) == 0 and opening(api, hire, "12:00") == [1]   # the rival keeps 10:00
