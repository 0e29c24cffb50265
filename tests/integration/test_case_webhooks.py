"""Issue 46's ``case.opened`` webhook over HTTP on the local stack: a door's synced pass that opens
a check-in case is one signed ``case.opened`` fact to the organizer's endpoint, written in the
case's own transaction (a repeated sync makes no second case and no second fact), with no
customer's data in it."""
from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest

from holdfast.clock import system_clock
from holdfast.domain import webhooks as rules
from tests.integration.test_doors_flow import make_door, ok, tickets_of
from tests.integration.test_webhooks import arrivals, deliveries, receiver_url, register, webhooks_key

pytestmark = pytest.mark.integration


def test_a_check_in_case_opened_at_a_door_is_one_signed_case_opened_fact(api, sandbox, system):
    stack, name = system["stack"], f"cases-{uuid.uuid4().hex[:8]}"
    crm = webhooks_key(api)
    hook = register(crm, receiver_url(system, name), ["case.opened"])
    event = api.create_event(capacity=5)
    booking_id, who, tickets = tickets_of(api, sandbox, event["event_id"], 1)
    door = make_door(api, event["event_id"], "Clock ahead")
    ahead = (system_clock() + timedelta(hours=3)).isoformat()
    sync = {"events": [{"seq": 1, "event_id": "ahead-1", "token": tickets[0]["token"], "at": ahead}]}
    path = f"/events/{event['event_id']}/doors/{door['door_id']}/sync"
    first = ok(api.request("POST", path, headers={"X-Door-Key": door["door_key"]}, json=sync))
    case_id = first["results"][0]["conflict"]["case_id"]
    # the door did not hear the answer and sends the same pass again: the same case, no second fact
    again = ok(api.request("POST", path, headers={"X-Door-Key": door["door_key"]}, json=sync))
    assert again["results"][0].get("conflict", {}).get("case_id", case_id) == case_id
    stack.wait_idle()

    got = [a for a in arrivals(system, name) if a["type"] == "case.opened"]
    assert len(got) == 1, got
    assert rules.verify(hook["secret"], got[0]["signature"], got[0]["body"], now=got[0]["at"])
    body = json.loads(got[0]["body"])
    assert body["type"] == "case.opened" and body["organizer_id"]
    data = body["data"]
    assert (data["case_id"], data["case_type"], data["reason"]) == (case_id, "checkin", "pass_time_in_future")
    assert (data["offering_id"], data["door_id"], data["ticket_id"]) == \
        (event["event_id"], door["door_id"], tickets[0]["ticket_id"])
    assert who not in got[0]["body"]          # never the customer
    listed = deliveries(crm, hook["webhook_id"])
    assert [(d["type"], d["status"]) for d in listed] == [("case.opened", "delivered")]
    # the case itself is what the operator lists, the same id
    cases = ok(api.request("GET", "/admin/reviews", organizer=True))["checkin_cases"]
    assert case_id in [c["case_id"] for c in cases]
