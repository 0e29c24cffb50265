"""Seed 003's story end to end over HTTP on the local stack: the hold ends (12:10), another
customer takes the slot (12:11), the first payment arrives (12:12). The kind here is the toy
entry-windows kind (tests/support/toy_windows.py), registered in this process, which is where the
local stack runs its handlers; it offers the other windows as alternatives and defaults to
two-stage payments."""
from __future__ import annotations

import uuid

import pytest

from tests.integration.conftest import PAYING_HOLD, RESOLUTION_WINDOW
from tests.support import toy_windows
from tests.support.flows import actions, booked_and_paying, customer, move_past_the_hold

pytestmark = pytest.mark.integration


def late_story(api, sandbox, **event):
    toy_windows.register()
    created = api.create_event(category="windowed", capacity=1, hold_ttl_seconds=PAYING_HOLD, **event)
    who, rival = customer(), customer()
    booking_id, payment_id = booked_and_paying(api, created, who)
    move_past_the_hold(api, booking_id, who)
    api.wait_status(booking_id, who, "EXPIRED", timeout=15)                        # 12:10
    assert api.book(created["event_id"], rival).json()["places"]["window"] == "12:00"   # 12:11
    sandbox.pay(payment_id)                                                         # 12:12
    case = api.wait_status(booking_id, who, "MANUAL_REVIEW")
    return created, who, booking_id, payment_id, case


def choose(api, booking_id, who, body, key=None):
    return api.request("POST", f"/bookings/{booking_id}/resolution", customer=who, key=key or str(uuid.uuid4()),
                       json=body)


def test_late_authorisation_moves_to_a_chosen_window_with_the_same_payment(api, sandbox):
    event, who, booking_id, payment_id, case = late_story(api, sandbox)
    assert event["payment_mode"] == "two_stage"                          # the kind's default
    assert sandbox.payment(payment_id)["status"] == "waiting_for_capture"  # kept, not taken, not cancelled
    assert case["resolution"]["open"] and [a["window"] for a in case["resolution"]["alternatives"]] == ["12:30", "13:00"]
    assert case["review"]["reason"] == "places_taken_alternatives_offered"
    key = str(uuid.uuid4())
    answer = choose(api, booking_id, who, {"choice": "alternative", "window": "12:30"}, key)
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "CONFIRMED" and answer.json()["places"]["window"] == "12:30"
    assert choose(api, booking_id, who, {"choice": "alternative", "window": "12:30"}, key).json() == answer.json()
    assert choose(api, booking_id, who, {"choice": "refund"}).json()["error"]["code"] == "resolution_closed"
    assert sandbox.payment(payment_id)["status"] == "succeeded" and sandbox.refunds(payment_id) == []
    journal = actions(api.booking(booking_id, who))
    assert journal[-3:] == ["conflict_case_opened", "alternative_chosen", "payment_captured"], journal
    assert api.counts(event["event_id"]) == {"available": 1, "held": 1, "sold": 1}


def test_refund_chosen_on_a_one_stage_case_refunds_once(api, sandbox):
    event, who, booking_id, payment_id, _ = late_story(api, sandbox, payment_mode="one_stage")
    assert sandbox.payment(payment_id)["status"] == "succeeded"
    answer = choose(api, booking_id, who, {"choice": "refund"})
    assert answer.status_code == 200, answer.text
    api.wait_status(booking_id, who, "REFUNDED")
    assert len(sandbox.refunds(payment_id)) == 1
    assert api.counts(event["event_id"]) == {"available": 2, "held": 1, "sold": 0}


def test_a_case_nobody_decides_is_given_back_by_the_sweeper(api, sandbox, system):
    _, who, booking_id, payment_id, _ = late_story(api, sandbox)
    stack = system["stack"]
    # past the case's window, the sweeper's grace and one interval of the stack's scheduled sweeper
    # (a minute); the move returns once the stack is idle
    stack.advance_clock(RESOLUTION_WINDOW + 62)
    lapsed = api.booking(booking_id, who)
    assert lapsed["status"] == "PAYMENT_FAILED" and lapsed["resolution"]["decision"]["by"] == "timer"
    assert actions(lapsed).count("authorisation_cancelled") == 1
    # given back once: the next sweep finds no case to lapse
    again = stack.invoke("SweepDueFunction", {"detail-type": "Scheduled Event", "source": "aws.events"})
    assert again["lapsed"] == 0, again
    assert actions(api.booking(booking_id, who)) == actions(lapsed)
    assert sandbox.payment(payment_id)["status"] == "canceled" and sandbox.refunds(payment_id) == []
