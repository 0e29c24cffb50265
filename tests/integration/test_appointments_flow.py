"""Appointment slots end to end over HTTP on the local stack: the real handlers, the hold expiry
state machine, the payment sandbox. (The stack runs one Lambda invocation at a time, so races
between functions are the correctness suite's business; here every rule is checked through the
routes a customer and an organizer use.)"""
from __future__ import annotations

import concurrent.futures as futures
from collections import Counter

import pytest

from tests.support.flows import customer
from tests.support.stack_time import days_ahead, running_stack

pytestmark = pytest.mark.integration

#: Months ahead on the stack's clock when the module is read (a fixed date would one day be past).
DAY = days_ahead(200)


def at(clock: str) -> str:
    return f"{DAY}T{clock}:00+03:00"


def free(api, service, clock, resource_id):
    wanted = {"10:00": "07:00", "10:30": "07:30", "11:00": "08:00", "11:30": "08:30", "09:30": "06:30"}[clock]
    [slot] = [s for s in api.availability(service["service_id"], DAY)
              if s["starts_at"] == f"{DAY}T{wanted}:00.000Z" and s["resource_id"] == resource_id]
    return slot["available"]


@pytest.fixture
def hall(api):
    return api.create_resource()["resource_id"]


def test_ten_customers_for_a_three_seat_session_get_exactly_three(api, hall):
    yoga = api.create_service([hall])
    body = {"starts_at": at("10:00"), "resource_id": hall, "quantity": 1}
    with futures.ThreadPoolExecutor(10) as pool:
        answers = list(pool.map(lambda _: api.book_slot(yoga["service_id"], customer(), body), range(10)))
    statuses = Counter(answer.status_code for answer in answers)
    assert statuses == {201: 3, 409: 7}, [a.text for a in answers]
    assert {a.json()["error"]["code"] for a in answers if a.status_code == 409} == {"slot_unavailable"}
    assert free(api, yoga, "10:00", hall) == 0


def test_group_and_private_overlap_and_adjacency_on_one_room(api, hall):
    yoga = api.create_service([hall])
    hire = api.create_service([hall], name="Hall hire", mode="private", capacity=None, step_minutes=30)
    alice, bob, carol = customer(), customer(), customer()
    assert api.book_slot(yoga["service_id"], alice, {"starts_at": at("10:00"), "resource_id": hall}).status_code == 201
    # The session in use blocks a private booking overlapping it, not an adjacent one.
    refused = api.book_slot(hire["service_id"], bob, {"starts_at": at("10:30"), "resource_id": hall})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "slot_unavailable"
    nearby = refused.json()["error"]["details"]["nearby"]
    assert nearby and all(slot["available"] == 1 for slot in nearby)
    assert api.book_slot(hire["service_id"], bob, {"starts_at": at("11:00"), "resource_id": hall}).status_code == 201
    # Overlapping privates never both succeed; adjacent ones do (09:00-10:00 meets yoga at 10:00).
    refused = api.book_slot(hire["service_id"], carol, {"starts_at": at("11:30"), "resource_id": hall})
    assert refused.status_code == 409
    assert api.book_slot(hire["service_id"], carol, {"starts_at": at("12:00"), "resource_id": hall}).status_code == 201
    assert free(api, hire, "09:30", hall) == 0 and free(api, yoga, "11:00", hall) == 0


def test_releasing_every_seat_reopens_the_room(api, hall):
    yoga = api.create_service([hall])
    hire = api.create_service([hall], name="Hall hire", mode="private", capacity=None)
    alice, bob, carol = customer(), customer(), customer()
    first = api.book_slot(yoga["service_id"], alice, {"starts_at": at("10:00"), "resource_id": hall}).json()
    second = api.book_slot(yoga["service_id"], bob, {"starts_at": at("10:00"), "resource_id": hall}).json()
    assert free(api, yoga, "10:00", hall) == 1 and free(api, hire, "10:00", hall) == 0
    assert api.cancel(first["booking_id"], alice).json()["status"] == "CANCELLED"
    assert api.book_slot(hire["service_id"], carol, {"starts_at": at("10:00"), "resource_id": hall}).status_code == 409
    assert api.cancel(second["booking_id"], bob).json()["status"] == "CANCELLED"
    assert free(api, hire, "10:00", hall) == 1
    assert api.book_slot(hire["service_id"], carol, {"starts_at": at("10:00"), "resource_id": hall}).status_code == 201


def test_hold_pay_on_the_sandbox_two_stage_and_confirm(api, sandbox, hall):
    hire = api.create_service([hall], name="Hall hire", mode="private", capacity=None)
    alice = customer()
    held = api.book_slot(hire["service_id"], alice, {"starts_at": at("10:00"), "resource_id": hall}, key="a-1")
    assert held.status_code == 201, held.text
    booking = held.json()
    assert booking["status"] == "HELD" and booking["payment_mode"] == "two_stage"
    assert booking["amount"] == {"value": "700.00", "currency": "RUB"} and booking["hold_expires_at"]
    again = api.book_slot(hire["service_id"], alice, {"starts_at": at("10:00"), "resource_id": hall}, key="a-1")
    assert again.json()["booking_id"] == booking["booking_id"] and again.headers["Idempotent-Replayed"] == "true"
    payment = api.pay(booking["booking_id"], alice)
    assert payment.status_code == 201, payment.text
    sandbox.pay(payment.json()["payment_id"])
    confirmed = api.wait_status(booking["booking_id"], alice, "CONFIRMED")
    # Two-stage: the authorisation was captured once the time was secured.
    assert confirmed["payment"]["status"] == "succeeded"
    assert sandbox.payment(payment.json()["payment_id"])["status"] == "succeeded"
    assert confirmed["places"]["starts_at"] == f"{DAY}T07:00:00.000Z"
    assert free(api, hire, "10:00", hall) == 0


def test_an_unpaid_hold_expires_and_the_time_is_free_again(api, hall):
    hire = api.create_service([hall], name="Hall hire", mode="private", capacity=None, hold_ttl_seconds=600)
    bob = customer()
    booking = api.book_slot(hire["service_id"], bob, {"starts_at": at("10:00"), "resource_id": hall}).json()
    assert free(api, hire, "10:00", hall) == 0
    running_stack().advance_clock(610)   # the hold's ten minutes and its expiry tick's bucket
    expired = api.booking(booking["booking_id"], bob)
    assert expired["status"] == "EXPIRED"
    assert expired["journal"][-1]["actor"] == "timer"
    assert free(api, hire, "10:00", hall) == 1
