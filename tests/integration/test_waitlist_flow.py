"""The waitlist over HTTP on the local stack: a sold-out event, two customers in line, a hold
expires and the first gets an offer (a real hold, with its notification); the offer lapses and
the second gets it. The stack runs with the template's WaitlistOfferSeconds (900); an offer holds
for that long or the offering's own hold time, whichever is shorter. The tests move the stack's
clock past the holds and offers, and read the outcome once the move has settled.

A line is for places nobody can take now, and on a high-demand sale it is behind the waiting room
like a hold (issue 28, finding 5)."""
from __future__ import annotations

import time
import uuid

from holdfast.clock import parse_iso

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


def entry(api, event_id, customer):
    answer = api.request("GET", f"/events/{event_id}/waitlist", customer=customer)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_offers_go_to_the_first_in_line_and_pass_on(api, system):
    from holdfast import wiring

    stack = system["stack"]
    # The owner's hold and so the offer (min(WaitlistOfferSeconds=900, the hold time)) last ten
    # minutes of the stack's clock, which the test moves: no check below races a lapsing offer.
    event = api.create_event(capacity=2, hold_ttl_seconds=600)
    eid = event["event_id"]
    owner, first, second = (f"wl-{uuid.uuid4().hex[:8]}" for _ in range(3))
    assert api.book(eid, owner, {"quantity": 2}).status_code == 201
    joined = api.request("POST", f"/events/{eid}/waitlist", customer=first, json={"quantity": 2})
    assert joined.status_code == 200 and joined.json()["position"] == 1, joined.text
    time.sleep(0.01)
    joined = api.request("POST", f"/events/{eid}/waitlist", customer=second, json={"quantity": 1})
    assert joined.json()["position"] == 2

    # The owner's hold expires (state machine) -> the relay sees EXPIRED -> the first gets an offer.
    stack.advance_clock(610)
    offered = entry(api, eid, first)
    assert offered["state"] == "OFFERED", offered
    offer = api.booking(offered["offer"]["booking_id"], first)
    assert offer["status"] == "HELD" and offer["places"]["quantity"] == 2
    window = parse_iso(offer["hold_expires_at"]) - parse_iso(offer["created_at"])
    assert window.total_seconds() == 600, offer
    assert api.counts(eid)["available"] == 0  # held for the first in line; nobody else sees them
    assert api.book(eid, f"wl-{uuid.uuid4().hex[:8]}", {"quantity": 1}).status_code == 409
    assert entry(api, eid, second)["state"] == "WAITING" and entry(api, eid, second)["position"] == 1

    # The offer lapses (its ten minutes and its own expiry execution) -> the second gets one.
    stack.advance_clock(610)
    assert api.booking(offer["booking_id"], first)["status"] == "EXPIRED"
    offered_second = entry(api, eid, second)
    assert offered_second["state"] == "OFFERED", offered_second
    assert api.booking(offered_second["offer"]["booking_id"], second)["places"]["quantity"] == 1
    passed = entry(api, eid, first)
    assert passed["state"] == "PASSED" and passed["position"] is None

    # the stack is idle after the move: the notifications went out, once each
    kinds = [note["type"] for note in wiring.store().list_notifications(first)]
    assert kinds.count("waitlist.offer") == 1 and kinds.count("booking.expired") == 1, kinds
    # They came the service's way: relay -> NotificationsBus -> rule -> queue -> NotifierFunction.
    notifier = [p for name, p in stack.pollers.items() if name.startswith("NotifierFunction")]
    assert notifier and notifier[0].stats.records > 0


def _code(answer):
    return answer.status_code, answer.json().get("error", {}).get("code")


def test_a_line_is_for_a_sold_out_sale_behind_its_waiting_room_and_offers_hold_no_longer(api, system):
    # Places free: told to book, nothing held for the customer (it was OFFERED with a hold).
    plain = api.create_event(capacity=10, max_per_booking=10)["event_id"]
    who = f"wl-{uuid.uuid4().hex[:8]}"
    refused = api.request("POST", f"/events/{plain}/waitlist", customer=who, json={"quantity": 10})
    assert _code(refused) == (409, "places_available"), refused.text
    assert refused.json()["error"]["details"]["available"] == 10
    assert api.request("GET", f"/events/{plain}/waitlist", customer=who).status_code == 404
    assert api.counts(plain) == {"available": 10, "held": 0, "sold": 0}

    # A high-demand sale: no token, no hold, and no line either.
    surge = api.create_event(capacity=1, high_demand=True)["event_id"]
    first, second = (f"wl-{uuid.uuid4().hex[:8]}" for _ in range(2))
    assert _code(api.book(surge, first)) == (403, "admission_required")
    joined = api.request("POST", f"/events/{surge}/waitlist", customer=first, json={"quantity": 1})
    assert _code(joined) == (403, "admission_required"), joined.text
    tokens = {}
    for who in (first, second):
        assert api.request("POST", f"/events/{surge}/queue", customer=who).status_code == 200
    deadline = time.monotonic() + 20
    while len(tokens) < 2:
        assert time.monotonic() < deadline, "not admitted"
        for who in (first, second):
            status = api.request("GET", f"/events/{surge}/queue", customer=who)
            if status.status_code == 200 and status.json()["status"] == "admitted":
                tokens[who] = status.json()["admission_token"]
        time.sleep(0.2)
    booked = api.request("POST", f"/events/{surge}/bookings", customer=first, key=str(uuid.uuid4()),
                         json={"quantity": 1}, headers={"X-Admission-Token": tokens[first]})
    assert booked.status_code == 201, booked.text
    admitted = api.request("POST", f"/events/{surge}/waitlist", customer=second, json={"quantity": 1},
                           headers={"X-Admission-Token": tokens[second]})
    assert admitted.status_code == 200 and admitted.json()["state"] == "WAITING", admitted.text

    # The offer holds for the event's own ten minutes, not the stack's WaitlistOfferSeconds=900.
    quick = api.create_event(capacity=1, hold_ttl_seconds=600)["event_id"]
    owner, waiting = (f"wl-{uuid.uuid4().hex[:8]}" for _ in range(2))
    assert api.book(quick, owner).status_code == 201
    assert api.request("POST", f"/events/{quick}/waitlist", customer=waiting, json={"quantity": 1}).status_code == 200
    # the owner's ten minutes and the tick at its bucket's end (five-second buckets): the offer,
    # made then, has ten minutes of its own left when the move ends (no real delay lapses it)
    system["stack"].advance_clock(610)
    offered = entry(api, quick, waiting)
    assert offered["state"] == "OFFERED", offered
    offer = api.booking(offered["offer"]["booking_id"], waiting)
    window = parse_iso(offer["hold_expires_at"]) - parse_iso(offer["created_at"])
    assert window.total_seconds() == 600, offer
