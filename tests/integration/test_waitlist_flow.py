"""The waitlist over HTTP on the local stack: a sold-out event, two customers in line, a hold
expires and the first gets an offer (a real hold, with its notification); the offer lapses and
the second gets it. The stack runs with WaitlistOfferSeconds=3 (see conftest)."""
from __future__ import annotations

import time
import uuid

import pytest

pytestmark = pytest.mark.integration


def wait_entry(api, event_id, customer, state, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        answer = api.request("GET", f"/events/{event_id}/waitlist", customer=customer)
        assert answer.status_code == 200, answer.text
        if answer.json()["state"] == state:
            return answer.json()
        if time.monotonic() > deadline:
            raise AssertionError(f"{customer} is {answer.json()['state']}, not {state}")
        time.sleep(0.1)


def test_offers_go_to_the_first_in_line_and_pass_on(api, system):
    from holdfast import wiring

    event = api.create_event(capacity=2, hold_ttl_seconds=2)
    eid = event["event_id"]
    owner, first, second = (f"wl-{uuid.uuid4().hex[:8]}" for _ in range(3))
    assert api.book(eid, owner, {"quantity": 2}).status_code == 201
    joined = api.request("POST", f"/events/{eid}/waitlist", customer=first, json={"quantity": 2})
    assert joined.status_code == 200 and joined.json()["position"] == 1, joined.text
    time.sleep(0.01)
    joined = api.request("POST", f"/events/{eid}/waitlist", customer=second, json={"quantity": 1})
    assert joined.json()["position"] == 2

    # The owner's hold expires (state machine) -> the relay sees EXPIRED -> the first gets an offer.
    offered = wait_entry(api, eid, first, "OFFERED")
    offer = api.booking(offered["offer"]["booking_id"], first)
    assert offer["status"] == "HELD" and offer["places"]["quantity"] == 2
    assert api.counts(eid)["available"] == 0  # held for the first in line; nobody else sees them
    assert api.book(eid, f"wl-{uuid.uuid4().hex[:8]}", {"quantity": 1}).status_code == 409
    assert wait_entry(api, eid, second, "WAITING")["position"] == 1

    # The offer lapses (its own 3-second window and expiry execution) -> the second gets one.
    api.wait_status(offer["booking_id"], first, "EXPIRED", timeout=20)
    offered_second = wait_entry(api, eid, second, "OFFERED")
    assert api.booking(offered_second["offer"]["booking_id"], second)["places"]["quantity"] == 1
    assert wait_entry(api, eid, first, "PASSED")["position"] is None

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        kinds = [note["type"] for note in wiring.store().list_notifications(first)]
        if "waitlist.offer" in kinds and "booking.expired" in kinds:
            break
        time.sleep(0.1)
    assert kinds.count("waitlist.offer") == 1 and kinds.count("booking.expired") == 1
    # They came the service's way: relay -> NotificationsBus -> rule -> queue -> NotifierFunction.
    notifier = [p for name, p in system["stack"].pollers.items() if name.startswith("NotifierFunction")]
    assert notifier and notifier[0].stats.records > 0
