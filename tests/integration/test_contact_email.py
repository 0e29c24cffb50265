"""A contact address over HTTP on the local stack: every route that takes one (a hold, a slot, a
parking reservation, a waitlist join) refuses what is not an address with 400 and writes nothing,
and keeps a real one (issue 28, finding 8: the reservation took any string and its notifications
ended in the dead-letter queue)."""
from __future__ import annotations

import uuid

import pytest

from tests.support.flows import customer
from tests.support.stack_time import days_ahead

pytestmark = pytest.mark.integration

NOT_AN_ADDRESS = "not an address"


def _refused(answer):
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "validation_error", error
    assert "contact_email" in answer.text


def test_every_route_that_takes_an_address_refuses_what_is_not_one(api):
    lot = api.request("POST", "/lots", organizer=True, json={
        "name": "Lot", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}}).json()
    day = days_ahead(180)
    reservation = {"vehicle_type": "REGULAR", "plate": "A123BC77", "from": f"{day}T10:00:00Z",
                   "to": f"{day}T11:00:00Z"}
    who = customer()
    _refused(api.request("POST", f"/lots/{lot['lot_id']}/reservations", customer=who, key=str(uuid.uuid4()),
                         json={**reservation, "contact_email": NOT_AN_ADDRESS}))
    assert api.request("GET", f"/lots/{lot['lot_id']}").json()["counts"]["REGULAR"]["held"] == 0, "nothing held"

    event = api.create_event(capacity=1)
    _refused(api.book(event["event_id"], who, {"quantity": 1, "contact_email": NOT_AN_ADDRESS}))
    assert api.counts(event["event_id"])["held"] == 0
    assert api.book(event["event_id"], customer(), {"quantity": 1}).status_code == 201   # sold out now
    _refused(api.request("POST", f"/events/{event['event_id']}/waitlist", customer=who,
                         json={"quantity": 1, "contact_email": NOT_AN_ADDRESS}))
    assert api.request("GET", f"/events/{event['event_id']}/waitlist", customer=who).status_code == 404

    hall = api.create_resource()["resource_id"]
    service = api.create_service([hall])
    _refused(api.book_slot(service["service_id"], who, {"starts_at": f"{day}T10:00:00+03:00",
                                                        "resource_id": hall, "contact_email": NOT_AN_ADDRESS}))

    # the same address, written as an address, is kept (its domain lower-cased, as on every route)
    kept = api.request("POST", f"/lots/{lot['lot_id']}/reservations", customer=who, key=str(uuid.uuid4()),
                       json={**reservation, "contact_email": "Driver@Example.COM"})
    assert kept.status_code == 201, kept.text
    assert api.booking(kept.json()["booking_id"], who)["contact_email"] == "Driver@example.com"
