"""The waitlist per zone over HTTP (issue 43): a customer waiting for one zone of a sold-out
event is offered only places released in that zone; one waiting for another zone, first in line,
waits on. An event of several zones asks which one to wait for."""
from __future__ import annotations

import uuid

import pytest

from tests.integration.test_waitlist_flow import wait_entry

pytestmark = pytest.mark.integration

RUB = "RUB"


def test_a_place_released_in_one_zone_is_offered_to_that_zones_line_only(api, system):
    event = api.create_event(
        capacity=None, price=None, hold_ttl_seconds=600,
        price_categories=[{"id": "stalls", "name": "Stalls"}, {"id": "balcony", "name": "Balcony"}],
        prices=[{"price_category": "stalls", "ticket_type": "adult", "price": {"value": "3000.00", "currency": RUB}},
                {"price_category": "balcony", "ticket_type": "adult", "price": {"value": "1000.00", "currency": RUB}}],
        zones=[{"id": "floor", "name": "Floor", "price_category": "stalls", "capacity": 1},
               {"id": "up", "name": "Upstairs", "price_category": "balcony", "capacity": 1}])
    eid = event["event_id"]
    owner, ann, ben = (f"wz-{uuid.uuid4().hex[:8]}" for _ in range(3))
    assert api.book(eid, owner, {"quantity": 1, "zone": "floor"}).status_code == 201
    upstairs = api.book(eid, owner, {"quantity": 1, "zone": "up"}, key=str(uuid.uuid4()))
    assert upstairs.status_code == 201, upstairs.text
    refused = api.request("POST", f"/events/{eid}/waitlist", customer=ann, json={"quantity": 1})
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, "zone_required")
    unknown = api.request("POST", f"/events/{eid}/waitlist", customer=ann, json={"quantity": 1, "zone": "roof"})
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (400, "unknown_zone")
    joined = api.request("POST", f"/events/{eid}/waitlist", customer=ann, json={"quantity": 1, "zone": "floor"})
    assert joined.status_code == 200 and joined.json()["zone"] == "floor", joined.text
    joined = api.request("POST", f"/events/{eid}/waitlist", customer=ben,
                         json={"quantity": 1, "price_category": "balcony"})
    assert joined.status_code == 200 and joined.json()["zone"] == "up", joined.text
    # the upstairs place comes back: ben, second in line but first for that zone, is offered it
    cancelled = api.request("POST", f"/bookings/{upstairs.json()['booking_id']}/cancel", customer=owner)
    assert cancelled.status_code == 200, cancelled.text
    offered = wait_entry(api, eid, ben, "OFFERED")
    assert api.booking(offered["offer"]["booking_id"], ben)["status"] == "HELD"
    zones = {zone["id"]: zone["counts"] for zone in api.request("GET", f"/events/{eid}").json()["zones"]}
    assert zones["up"]["held"] == 1 and zones["up"]["available"] == 0   # the offer holds the upstairs place
    assert wait_entry(api, eid, ann, "WAITING")["position"] == 1
