"""Issue 45, organizer holds over HTTP: a block keeps an event's places out of sale (a seat map's
named seats, or a quantity of a general-admission event) until the organizer ends it; a blocked
seat is unavailable on the map and to every hold, counts as ``blocked``, and is sold again once
the block ends. A block never takes a place someone holds."""
from __future__ import annotations

import uuid

import pytest

pytestmark = pytest.mark.integration


def customer() -> str:
    return f"cust-{uuid.uuid4().hex[:10]}"


def seated_event(api):
    return api.create_event(capacity=None, seat_map={"rows": [{"name": "A", "seats": 4}]})["event_id"]


def test_a_blocked_seat_is_unsellable_until_the_block_ends(api, system):
    event_id = seated_event(api)
    made = api.request("POST", f"/events/{event_id}/blocks", organizer=True,
                       json={"seats": ["A-1", "A-2"], "label": "sponsor"})
    assert made.status_code == 201, made.text
    block_id = made.json()["block_id"]
    refused = api.book(event_id, customer(), {"seats": ["A-2"]})
    assert refused.status_code == 409, refused.text
    seats = {seat["seat"]: seat["state"] for seat in api.request("GET", f"/events/{event_id}/seats").json()["seats"]}
    assert seats["A-1"] == seats["A-2"] == "blocked" and seats["A-3"] == "available"
    assert api.counts(event_id) == {"available": 2, "held": 0, "sold": 0, "blocked": 2}
    listed = api.request("GET", f"/events/{event_id}/blocks", organizer=True).json()["blocks"]
    assert [(b["block_id"], b["label"], b["seats"]) for b in listed] == [(block_id, "sponsor", ["A-1", "A-2"])]
    # a seat someone holds cannot be blocked: nothing is blocked then
    holder = customer()
    assert api.book(event_id, holder, {"seats": ["A-3"]}).status_code == 201
    taken = api.request("POST", f"/events/{event_id}/blocks", organizer=True, json={"seats": ["A-3", "A-4"]})
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "seats_unavailable", taken.text
    assert api.counts(event_id)["blocked"] == 2
    ended = api.request("DELETE", f"/events/{event_id}/blocks/{block_id}", organizer=True)
    assert ended.status_code == 204, ended.text
    again = api.request("DELETE", f"/events/{event_id}/blocks/{block_id}", organizer=True)
    assert again.status_code == 404 and again.json()["error"]["code"] == "block_not_found"
    assert api.counts(event_id) == {"available": 3, "held": 1, "sold": 0}
    assert api.book(event_id, customer(), {"seats": ["A-2"]}).status_code == 201


def test_a_quantity_block_keeps_general_admission_places_back(api, system):
    event_id = api.create_event(capacity=5)["event_id"]
    made = api.request("POST", f"/events/{event_id}/blocks", organizer=True, json={"quantity": 3, "label": "press"})
    assert made.status_code == 201, made.text
    assert api.counts(event_id) == {"available": 2, "held": 0, "sold": 0, "blocked": 3}
    assert api.book(event_id, customer(), {"quantity": 3}).status_code == 409
    assert api.book(event_id, customer(), {"quantity": 2}).status_code == 201
    too_many = api.request("POST", f"/events/{event_id}/blocks", organizer=True, json={"quantity": 1})
    assert too_many.status_code == 409 and too_many.json()["error"]["code"] == "sold_out", too_many.text
    assert api.request("DELETE", f"/events/{event_id}/blocks/{made.json()['block_id']}",
                       organizer=True).status_code == 204
    assert api.counts(event_id) == {"available": 3, "held": 2, "sold": 0}


def test_blocks_are_the_organizers_own(api, system):
    from devstack.organizers import LOCAL_ORGANIZERS
    from tests.support.api import BookingApi

    second = BookingApi(api.base, organizer_key=LOCAL_ORGANIZERS[1][2])
    event_id = api.create_event(capacity=5)["event_id"]
    theirs = second.request("POST", f"/events/{event_id}/blocks", organizer=True, json={"quantity": 1})
    assert theirs.status_code == 404 and theirs.json()["error"]["code"] == "event_not_found"
    mine = api.request("POST", f"/events/{event_id}/blocks", organizer=True, json={"quantity": 1}).json()
    assert second.request("DELETE", f"/events/{event_id}/blocks/{mine['block_id']}",
                          organizer=True).status_code == 404
    bad = api.request("POST", f"/events/{event_id}/blocks", organizer=True, json={"quantity": 1, "seats": ["A-1"]})
    assert bad.status_code == 400
    assert api.counts(event_id)["blocked"] == 1


def test_the_organizer_sells_places_out_of_a_block_to_a_named_customer(api, system):
    event_id = seated_event(api)
    block = api.request("POST", f"/events/{event_id}/blocks", organizer=True,
                        json={"seats": ["A-1", "A-2", "A-3"], "label": "sponsor"}).json()
    email = f"guest-{uuid.uuid4().hex[:8]}@example.org"

    def give(line, key=None):
        return api.request("POST", "/admin/orders", organizer=True, key=key or str(uuid.uuid4()), json={
            "lines": [{"event_id": event_id, "block_id": block["block_id"], **line}], "for_email": email,
            "note": "sponsor's guest"})

    # a seat the block does not keep is refused, and nothing moves
    outside = give({"seats": ["A-4"]})
    assert outside.status_code == 409 and outside.json()["error"]["code"] == "not_in_block", outside.text
    given = give({"seats": ["A-2"]})
    assert given.status_code == 201, given.text
    assert given.json()["status"] == "CONFIRMED" and given.json()["amount"]["value"] == "0.00"
    # the seat went from the block straight to the order: sold, one fewer kept, A-4 never on offer to it
    seats = {seat["seat"]: seat["state"] for seat in api.request("GET", f"/events/{event_id}/seats").json()["seats"]}
    assert seats["A-2"] == "sold" and seats["A-1"] == seats["A-3"] == "blocked" and seats["A-4"] == "available"
    assert api.counts(event_id) == {"available": 1, "held": 0, "sold": 1, "blocked": 2}
    listed = api.request("GET", f"/events/{event_id}/blocks", organizer=True).json()["blocks"]
    assert [(b["quantity"], b["seats"]) for b in listed] == [(2, ["A-1", "A-3"])]
    # the rest taken: the block is then gone
    rest = give({"seats": ["A-1", "A-3"]})
    assert rest.status_code == 201, rest.text
    assert api.counts(event_id) == {"available": 1, "held": 0, "sold": 3}
    assert api.request("GET", f"/events/{event_id}/blocks", organizer=True).json()["blocks"] == []
    gone = give({"seats": ["A-1"]})
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "block_not_found", gone.text
    # a customer's own order never names a block
    own = api.request("POST", "/orders", customer=customer(), key=str(uuid.uuid4()), json={
        "lines": [{"event_id": event_id, "block_id": block["block_id"], "quantity": 1}]})
    assert own.status_code == 400, own.text


def test_a_quantity_block_sells_part_of_its_count(api, system):
    event_id = api.create_event(capacity=5)["event_id"]
    block = api.request("POST", f"/events/{event_id}/blocks", organizer=True, json={"quantity": 3, "label": "press"})
    block_id = block.json()["block_id"]
    too_many = api.request("POST", "/admin/orders", organizer=True, key=str(uuid.uuid4()), json={
        "lines": [{"event_id": event_id, "block_id": block_id, "quantity": 4}], "for_email": "press@example.org"})
    assert too_many.status_code == 409 and too_many.json()["error"]["code"] == "not_in_block", too_many.text
    given = api.request("POST", "/admin/orders", organizer=True, key=str(uuid.uuid4()), json={
        "lines": [{"event_id": event_id, "block_id": block_id, "quantity": 2}], "for_email": "press@example.org"})
    assert given.status_code == 201 and given.json()["status"] == "CONFIRMED", given.text
    assert api.counts(event_id) == {"available": 2, "held": 0, "sold": 2, "blocked": 1}
    # ending the block puts only what it still keeps back on sale
    assert api.request("DELETE", f"/events/{event_id}/blocks/{block_id}", organizer=True).status_code == 204
    assert api.counts(event_id) == {"available": 3, "held": 0, "sold": 2}
