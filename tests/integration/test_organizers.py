"""Over HTTP on the local stack: organizers and their keys (issue 30). The stack starts with two
organizers (devstack/organizers.py): `local-organizer-key` and `local-organizer-key-2`; the
platform key is `local-platform-key`."""
from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from devstack.organizers import LOCAL_ORGANIZERS, PLATFORM_KEY
from holdfast.clock import iso, system_clock
from tests.support.api import BookingApi
from tests.support.flows import booked_and_paying, customer, move_past_the_hold
from tests.support.stack_time import days_ahead

pytestmark = pytest.mark.integration

SECOND_KEY = LOCAL_ORGANIZERS[1][2]


@pytest.fixture
def second(api):
    return BookingApi(api.base, organizer_key=SECOND_KEY)


def as_platform(api, method, path, **kwargs):
    return api.request(method, path, headers={"X-Api-Key": PLATFORM_KEY}, **kwargs)


def new_organizer(api, name="Acme"):
    made = as_platform(api, "POST", "/admin/organizers", json={"name": name})
    assert made.status_code == 201, made.text
    return made.json()


def test_the_platform_creates_lists_suspends_and_resumes_organizers(api):
    assert api.request("POST", "/admin/organizers", organizer=True, json={"name": "x"}).status_code == 401
    assert as_platform(api, "POST", "/admin/organizers", json={"name": ""}).status_code == 400
    made = new_organizer(api)
    acme = BookingApi(api.base, organizer_key=made["api_key"])
    assert acme.request("GET", "/organizers/me", organizer=True).json()["organizer_id"] == made["organizer_id"]
    listed = as_platform(api, "GET", "/admin/organizers").json()["organizers"]
    assert {"org-demo", "org-second", made["organizer_id"]} <= {o["organizer_id"] for o in listed}
    assert made["api_key"] not in str(listed)
    suspended = as_platform(api, "POST", f"/admin/organizers/{made['organizer_id']}/suspend")
    assert suspended.status_code == 200 and suspended.json()["status"] == "suspended"
    answer = acme.request("POST", "/events", organizer=True, json={"name": "x"})
    assert (answer.status_code, answer.json()["error"]["code"]) == (401, "unauthorized")
    assert acme.request("GET", "/organizers/me", organizer=True).status_code == 401
    assert as_platform(api, "POST", f"/admin/organizers/{made['organizer_id']}/resume").status_code == 200
    assert acme.request("GET", "/organizers/me", organizer=True).status_code == 200
    assert as_platform(api, "POST", "/admin/organizers/no-such-one/suspend").status_code == 404


def test_an_organizer_rotates_its_keys_and_a_deleted_key_is_401(api):
    made = new_organizer(api, "Rotating")
    old = BookingApi(api.base, organizer_key=made["api_key"])
    last = old.request("DELETE", f"/organizers/me/keys/{made['key_id']}", organizer=True)
    assert (last.status_code, last.json()["error"]["code"]) == (409, "last_key")
    added = old.request("POST", "/organizers/me/keys", organizer=True)
    assert added.status_code == 201
    new = BookingApi(api.base, organizer_key=added.json()["api_key"])
    assert new.request("DELETE", f"/organizers/me/keys/{made['key_id']}", organizer=True).status_code == 204
    assert old.request("GET", "/organizers/me", organizer=True).status_code == 401
    me = new.request("GET", "/organizers/me", organizer=True).json()
    assert [k["key_id"] for k in me["keys"]] == [added.json()["key_id"]]
    assert me["keys"][0]["last_used_at"] is not None and "api_key" not in str(me)


def test_the_second_organizer_gets_404_on_the_first_ones_objects_and_sees_none(api, second, sandbox):
    event = api.create_event(capacity=1, hold_ttl_seconds=4)
    eid = event["event_id"]
    for method, path, body in [("PATCH", f"/events/{eid}", {"name": "Mine now"}),
                               ("POST", f"/events/{eid}/publish", None)]:
        theirs, missing = (second.request(method, path.replace(eid, e), organizer=True, json=body)
                           for e in (eid, str(uuid.uuid4())))
        assert theirs.status_code == missing.status_code == 404, (path, theirs.text)
        assert theirs.json()["error"]["code"] == missing.json()["error"]["code"] == "event_not_found"
    cancel = second.request("POST", f"/events/{eid}/cancel", organizer=True, key="c-1", json={"reason": "mine"})
    assert cancel.status_code == 404
    assert second.request("GET", f"/events/{eid}/cancellation", organizer=True).status_code == 404
    assert api.request("GET", f"/events/{eid}").json()["name"] == "Integration night"

    room = api.create_resource()
    service = second.request("POST", "/services", organizer=True, json={
        "name": "Yoga", "mode": "group", "capacity": 3, "duration_minutes": 60, "resource_ids": [room["resource_id"]],
        "price": {"value": "700.00", "currency": "RUB"}})
    assert (service.status_code, service.json()["error"]["code"]) == (400, "unknown_resource")

    lot = api.request("POST", "/lots", organizer=True, json={
        "name": "Central", "spaces": [{"space_id": "C1", "type": "COMPACT"}],
        "tariff": {"hourly": {"value": "150.00", "currency": "RUB"}}}).json()
    for path, body in [(f"/lots/{lot['lot_id']}/gates", {"name": "Mine"}),
                       (f"/lots/{lot['lot_id']}/subscriptions",
                        {"plate": "A1", "valid_from": f"{days_ahead(200)}T00:00:00Z", "valid_to": f"{days_ahead(230)}T00:00:00Z"})]:
        answer = second.request("POST", path, organizer=True, json=body)
        assert (answer.status_code, answer.json()["error"]["code"]) == (404, "lot_not_found")

    # a booking of the first organizer's event goes to review: only the first organizer sees it
    who, rival = customer(), customer()
    booking_id, payment_id = booked_and_paying(api, event, who)
    sandbox.add_fault("hold", times=1, match={"object_id": payment_id})
    sandbox.add_fault("error_500_before", route="GET /v3/payments/{id}", times=1000)
    sandbox.pay(payment_id)
    move_past_the_hold(api, booking_id, who)
    api.wait_status(booking_id, who, "EXPIRED", timeout=15)
    assert api.book(eid, rival).status_code == 201
    sandbox.clear_faults()
    sandbox.release(object_id=payment_id)
    api.wait_status(booking_id, who, "MANUAL_REVIEW")
    assert booking_id in [r["booking_id"] for r in api.request("GET", "/admin/reviews", organizer=True).json()["reviews"]]
    theirs = second.request("GET", "/admin/reviews", organizer=True).json()
    assert booking_id not in str(theirs)
    assert second.request("GET", f"/admin/bookings/{booking_id}", organizer=True).status_code == 404
    decide = {"action": "refund", "operator": "mallory", "note": "mine"}
    assert second.request("POST", f"/admin/reviews/{booking_id}/resolve", organizer=True, json=decide).status_code == 404
    assert api.booking(booking_id, who)["status"] == "MANUAL_REVIEW"

    # the first organizer decides; the journal names the organizer and key, never the key itself
    me = api.request("GET", "/organizers/me", organizer=True).json()
    done = api.request("POST", f"/admin/reviews/{booking_id}/resolve", organizer=True,
                       json={"action": "refund", "operator": "olga", "note": "resold"})
    assert done.status_code == 200, done.text
    journal = api.request("GET", f"/admin/bookings/{booking_id}", organizer=True).json()["journal"]
    decided = [e for e in journal if e["action"] == "review_refund_started"]
    assert decided and decided[0]["ids"]["organizer_id"] == "org-demo" and decided[0]["ids"]["key_id"] == me["key_id"]
    assert api.organizer_key not in str(journal)


def test_the_same_idempotency_key_from_both_organizers_makes_two_objects(api, second):
    key = f"shared-{uuid.uuid4()}"
    body = {"name": "Twin", "venue": "Hall", "city": "Moscow", "category": "club",
            "starts_at": f"{days_ahead(200)}T20:00:00Z", "price": {"value": "1000.00", "currency": "RUB"}, "capacity": 5}
    first = api.request("POST", "/events", organizer=True, key=key, json=body)
    again = api.request("POST", "/events", organizer=True, key=key, json=body)
    other = second.request("POST", "/events", organizer=True, key=key, json=body)
    assert first.status_code == again.status_code == other.status_code == 201
    assert first.json()["event_id"] == again.json()["event_id"] != other.json()["event_id"]
    lot = {"name": "Twin lot", "spaces": [{"space_id": "C1", "type": "COMPACT"}],
           "tariff": {"hourly": {"value": "150.00", "currency": "RUB"}}}
    lots = [who.request("POST", "/lots", organizer=True, key=key, json=lot).json()["lot_id"] for who in (api, second)]
    assert lots[0] != lots[1]
    resources = [who.request("POST", "/resources", organizer=True, key=key, json={
        "name": "Hall", "timezone": "Europe/Moscow", "opening_hours": {"open": "09:00", "close": "21:00"}}
    ).json()["resource_id"] for who in (api, second)]
    assert resources[0] != resources[1]


def test_a_rotated_or_deleted_gates_old_key_is_401_and_a_deleted_gates_passes_open_cases(api, second):
    lot = api.request("POST", "/lots", organizer=True, json={
        "name": "Gated", "spaces": [{"space_id": "C1", "type": "COMPACT"}],
        "tariff": {"hourly": {"value": "150.00", "currency": "RUB"}}}).json()
    gate = api.request("POST", f"/lots/{lot['lot_id']}/gates", organizer=True, json={"name": "North"}).json()
    gates = f"/lots/{lot['lot_id']}/gates/{gate['gate_id']}"

    def config(key):
        return api.request("GET", gates + "/config", headers={"X-Gate-Key": key}).status_code

    assert second.request("POST", gates + "/key", organizer=True).status_code == 404
    assert second.request("DELETE", gates, organizer=True).status_code == 404
    assert config(gate["gate_key"]) == 200
    rotated = api.request("POST", gates + "/key", organizer=True)
    assert rotated.status_code == 200
    new_key = rotated.json()["gate_key"]
    assert (config(gate["gate_key"]), config(new_key)) == (401, 200)
    assert api.request("DELETE", gates, organizer=True).status_code == 204
    assert api.request("DELETE", gates, organizer=True).status_code == 204      # a repeat changes nothing
    assert config(new_key) == 401
    entry = api.request("POST", gates + "/entry", headers={"X-Gate-Key": new_key},
                        json={"event_id": "in-after-delete", "plate": "A1"})
    assert entry.status_code == 401
    # what the gate let through offline before it heard: refused at sync, each with a gate case
    passed_at = iso(system_clock() - timedelta(minutes=5))   # offline, a few minutes ago on the stack's clock
    synced = api.request("POST", gates + "/sync", headers={"X-Gate-Key": new_key}, json={"events": [
        {"seq": 1, "event_id": "off-1", "kind": "entry", "at": passed_at, "plate": "A1"}]})
    assert synced.status_code == 200, synced.text
    [result] = synced.json()["results"]
    assert result["status"] == "failed" and result["result"]["error"]["code"] == "gate_deleted"
    mine = api.request("GET", "/admin/reviews", organizer=True).json()["gate_cases"]
    assert result["conflict"]["case_id"] in [case["case_id"] for case in mine]
    assert result["conflict"]["case_id"] not in str(second.request("GET", "/admin/reviews", organizer=True).json())
    assert api.request("POST", gates + "/sync", headers={"X-Gate-Key": gate["gate_key"]}, json={"events": [
        {"seq": 2, "event_id": "off-2", "kind": "entry", "at": passed_at, "plate": "B2"}]}
    ).status_code == 401    # the key it had before the rotation names nothing


def test_each_organizer_sees_only_its_own_sales(api, second):
    event = api.create_event(name="Only mine")
    mine = api.request("GET", "/admin/sales", organizer=True).json()["offerings"]
    theirs = second.request("GET", "/admin/sales", organizer=True).json()["offerings"]
    assert event["event_id"] in [o["event_id"] for o in mine]
    assert event["event_id"] not in [o["event_id"] for o in theirs]
    assert all(o["name"] != "Only mine" for o in theirs)


def test_a_lots_gates_and_a_resources_day_are_read_by_their_organizer_only(api, second):
    """The operator page's reads (GET /lots/{id}/gates, GET /resources/{id}/day): another
    organizer is answered as if the lot or resource did not exist, and no read shows a gate key."""
    lot = api.request("POST", "/lots", organizer=True, json={
        "name": "Own lot", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}}).json()
    made = api.request("POST", f"/lots/{lot['lot_id']}/gates", organizer=True, json={"name": "Main"}).json()
    path = f"/lots/{lot['lot_id']}/gates"
    listed = api.request("GET", path, organizer=True)
    assert listed.status_code == 200
    assert [(g["gate_id"], g["name"]) for g in listed.json()["gates"]] == [(made["gate_id"], "Main")]
    assert made["gate_key"] not in listed.text
    assert api.request("DELETE", f"{path}/{made['gate_id']}", organizer=True).status_code == 204
    assert "deleted_at" in api.request("GET", path, organizer=True).json()["gates"][0]
    refused = second.request("GET", path, organizer=True)
    assert (refused.status_code, refused.json()["error"]["code"]) == (404, "lot_not_found")
    assert api.request("GET", path).status_code == 401

    hall = api.create_resource(name="Own hall")["resource_id"]
    yoga = api.create_service([hall], name="Own class")
    date = days_ahead(200)
    held = api.book_slot(yoga["service_id"], customer(), {"starts_at": f"{date}T10:00:00+03:00",
                                                          "resource_id": hall, "quantity": 2})
    assert held.status_code == 201, held.text
    day = api.request("GET", f"/resources/{hall}/day", organizer=True, params={"date": date})
    assert day.status_code == 200, day.text
    assert day.json()["times"] == [{"starts_at": f"{date}T07:00:00.000Z", "ends_at": f"{date}T08:00:00.000Z",
                                    "held": 2, "sold": 0, "mode": "group", "service_id": yoga["service_id"]}]
    refused = second.request("GET", f"/resources/{hall}/day", organizer=True, params={"date": date})
    assert (refused.status_code, refused.json()["error"]["code"]) == (404, "resource_not_found")
