"""Holes found in review (issue 11), over HTTP on the local stack: a double-click on cancel of a
paid booking, and a customer who sends a waitlist offer's key for a booking of their own.

The local stack runs one Lambda invocation at a time (devstack/aws/runtime.py), so parallel
cancels reach the service one after the other here: that test guards the contract (200 for the
repeat, never 5xx). The interleaving itself is driven on the atomic stores with real threads in
tests/correctness/test_concurrent_writes.py, and with injected conflicts in
tests/handlers/test_store_errors.py."""
from __future__ import annotations

import threading
import time
import uuid

import pytest

from .test_waitlist_flow import wait_entry

pytestmark = pytest.mark.integration


def new_customer() -> str:
    return f"cc-{uuid.uuid4().hex[:10]}"


def test_parallel_cancels_of_a_confirmed_booking_answer_200_or_409_never_5xx(api, sandbox):
    event = api.create_event(capacity=5)
    alice = new_customer()
    booking_id = api.book(event["event_id"], alice, {"quantity": 2}).json()["booking_id"]
    payment_id = api.pay(booking_id, alice).json()["payment_id"]
    sandbox.pay(payment_id)
    api.wait_status(booking_id, alice, "CONFIRMED")

    clicks = 4
    barrier = threading.Barrier(clicks)
    answers: list[tuple[int, dict]] = []

    def click() -> None:
        barrier.wait(timeout=10)
        answer = api.cancel(booking_id, alice)
        answers.append((answer.status_code, answer.json()))

    threads = [threading.Thread(target=click) for _ in range(clicks)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert len(answers) == clicks
    assert all(status < 500 for status, _ in answers), answers
    assert any(status == 200 for status, _ in answers), answers
    for status, body in answers:
        if status == 200:
            assert body["status"] in ("REFUND_PENDING", "REFUNDED")
        else:
            assert (status, body["error"]["code"]) in ((409, "booking_changed"), (429, "busy"),
                                                      (429, "rate_limited")), body
    done = api.wait_status(booking_id, alice, "REFUNDED")
    assert [e["action"] for e in done["journal"]].count("cancelled_after_payment") == 1
    assert api.counts(event["event_id"])["available"] == 5


def test_a_customer_sending_an_offer_key_does_not_block_the_waitlist(api):
    event = api.create_event(capacity=1)
    other = api.create_event(capacity=5)
    eid = event["event_id"]
    owner, mallory, ann = new_customer(), new_customer(), new_customer()
    held = api.book(eid, owner, {"quantity": 1})
    assert held.status_code == 201, held.text
    joined = api.request("POST", f"/events/{eid}/waitlist", customer=mallory, json={"quantity": 1})
    assert joined.status_code == 200, joined.text
    time.sleep(0.01)
    assert api.request("POST", f"/events/{eid}/waitlist", customer=ann, json={"quantity": 1}).status_code == 200
    squatted = api.book(other["event_id"], mallory, {"quantity": 1}, key=f"waitlist-offer-{joined.json()['entry_id']}")
    assert squatted.status_code == 201, squatted.text

    assert api.cancel(held.json()["booking_id"], owner).status_code == 200

    offered = wait_entry(api, eid, mallory, "OFFERED")
    offer = api.booking(offered["offer"]["booking_id"], mallory)
    assert offer["event_id"] == eid and offer["status"] == "HELD"
    assert api.booking(squatted.json()["booking_id"], mallory)["event_id"] == other["event_id"]
    assert wait_entry(api, eid, ann, "WAITING")["position"] == 1
