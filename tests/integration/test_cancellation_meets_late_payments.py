"""Issue 28 over HTTP on the local stack, where two features meet: a conflict case of a service
the organizer cancels (finding 1), and a late payment for a slot that has begun (finding 2)."""
from __future__ import annotations

from datetime import timedelta

import pytest

from tests.integration.conftest import PAYING_HOLD
from tests.integration.test_appointment_late_payment import choose, late_story, utc
from tests.integration.test_event_cancellation import cancel, wait_finished
from holdfast.clock import system_clock
from tests.support.flows import actions, customer, move_past_the_hold

pytestmark = pytest.mark.integration


def test_a_conflict_case_of_a_cancelled_service_is_refunded_once_and_a_late_choice_is_refused(api, sandbox):
    """The issue's scenario: one-stage slot service; A's hold expires, B takes the time, A pays
    late (conflict case); the organizer cancels the service and its job finishes; A chooses an
    alternative: 409 event_cancelled, and A's money went back exactly once."""
    hire, hall, who, booking_id, payment_id, case = late_story(api, sandbox, payment_mode="one_stage")
    assert sandbox.payment(payment_id)["status"] == "succeeded" and case["resolution"]["open"]
    assert cancel(api, hire["service_id"]).status_code in (200, 202)
    view = wait_finished(api, hire["service_id"])
    assert view["summary"]["in_review"] == 0, view
    refunded = api.wait_status(booking_id, who, "REFUNDED")
    assert refunded["resolution"]["decision"]["by"] == "organizer"
    answer = choose(api, booking_id, who, {"choice": "alternative", "starts_at": utc("12:00"), "resource_id": hall})
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"]["code"] == "event_cancelled"
    again = choose(api, booking_id, who, {"choice": "refund"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "event_cancelled"
    assert api.booking(booking_id, who)["status"] == "REFUNDED"
    refunds = sandbox.refunds(payment_id)
    assert len(refunds) == 1 and refunds[0]["status"] == "succeeded"
    journal = actions(api.booking(booking_id, who))
    assert "alternative_chosen" not in journal and journal.count("resolution_refund_started") == 1, journal


def test_a_late_payment_for_a_slot_that_has_begun_is_not_retaken(api, sandbox, system):
    """Slots start on quarter hours: the test books the next quarter hour, lets the hold lapse, and
    pays only once that slot has begun, moving the stack's clock there (it waited up to 15 minutes
    of the machine's time before the clock could be moved). The slot is free (nobody took it), so
    the old retake confirmed it; now the customer is offered later times."""
    stack = system["stack"]

    def next_quarter_hour():
        now = system_clock()
        start = (now + timedelta(seconds=20)).replace(second=0, microsecond=0)
        start += timedelta(minutes=-start.minute % 15)
        return start + timedelta(minutes=15) if start <= now + timedelta(seconds=20) else start

    start = next_quarter_hour()
    if start.date() != (start + timedelta(minutes=45)).date():
        # later slots the same day are needed: the clock moves on to the next day's first minutes
        stack.advance_clock((start + timedelta(minutes=45)).replace(hour=0, minute=1).timestamp()
                            - system_clock().timestamp())
        start = next_quarter_hour()
    assert start.date() == (start + timedelta(minutes=45)).date()
    hall = api.create_resource(timezone="UTC", opening_hours={"open": "00:00", "close": "23:45"})["resource_id"]
    svc = api.create_service([hall], name="Quick", mode="private", capacity=None, duration_minutes=15,
                             payment_mode="one_stage", hold_ttl_seconds=PAYING_HOLD)
    who = customer()
    slot = start.strftime("%Y-%m-%dT%H:%M:00.000Z")
    held = api.book_slot(svc["service_id"], who, {"starts_at": slot, "resource_id": hall})
    assert held.status_code == 201, held.text
    booking_id = held.json()["booking_id"]
    payment_id = api.pay(booking_id, who).json()["payment_id"]
    assert move_past_the_hold(api, booking_id, who)["status"] == "EXPIRED"
    stack.advance_clock((start - system_clock()).total_seconds() + 2)   # the slot has begun
    sandbox.pay(payment_id)
    case = api.wait_status(booking_id, who, "MANUAL_REVIEW", timeout=30)
    offered = [a["starts_at"] for a in case["resolution"]["alternatives"]]
    assert offered and all(option > slot for option in offered), offered
    assert sandbox.payment(payment_id)["status"] == "succeeded" and sandbox.refunds(payment_id) == []
    assert "late_payment_places_retaken" not in actions(api.booking(booking_id, who))
