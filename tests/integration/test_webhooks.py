"""Issue 46's webhooks over HTTP on the local stack, aimed at its local receiver (/dev/webhooks):
one signed ``order.confirmed`` per confirmation, a receiver's 500 retried, a redelivery by hand,
and the fault test: the receiver down for an hour on the stack's clock, then up, and every fact
delivered, none lost, none delivered twice under one delivery id."""
from __future__ import annotations

import json
import uuid

import pytest
import requests

from holdfast.domain import webhooks as rules
from tests.integration.test_doors_flow import make_door, ok, scan, tickets_of
from tests.support.api import BookingApi

pytestmark = pytest.mark.integration


def receiver_url(system, name: str) -> str:
    return f"{system['stack'].api_url}{'/dev/webhooks/receiver'}/{name}"


def set_receiver(system, name: str, status: int) -> None:
    answer = requests.post(system["stack"].api_url + "/dev/webhooks/mode", json={"receiver": name, "status": status},
                           timeout=10)
    assert answer.status_code == 200, answer.text


def arrivals(system, name: str) -> list[dict]:
    return system["stack"].webhook_receiver.arrivals(name)


def webhooks_key(api) -> BookingApi:
    made = ok(api.request("POST", "/organizers/me/keys", organizer=True,
                          json={"name": "CRM", "scopes": ["webhooks"]}), 201)
    return BookingApi(api.base, organizer_key=made["api_key"])


def register(crm: BookingApi, url: str, events: list[str]) -> dict:
    return ok(crm.request("POST", "/organizers/me/webhooks", organizer=True, json={"url": url, "events": events}), 201)


def deliveries(crm: BookingApi, webhook_id: str) -> list[dict]:
    return ok(crm.request("GET", f"/organizers/me/webhooks/{webhook_id}/deliveries?limit=100",
                          organizer=True))["deliveries"]


def test_one_signed_order_confirmed_per_confirmation_a_500_retried_and_a_redelivery(api, sandbox, system):
    stack, name = system["stack"], f"r-{uuid.uuid4().hex[:8]}"
    crm = webhooks_key(api)
    hook = register(crm, receiver_url(system, name), ["order.confirmed", "checkin.created"])
    assert hook["secret"].startswith("whsec_")
    assert hook["secret"] not in json.dumps(ok(crm.request("GET", "/organizers/me/webhooks", organizer=True)))
    set_receiver(system, name, 500)

    event = api.create_event(capacity=5)
    booking_id, who, tickets = tickets_of(api, sandbox, event["event_id"], 2)
    stack.wait_idle()
    first = arrivals(system, name)
    assert [a["answered"] for a in first] == [500] and first[0]["type"] == "order.confirmed"
    set_receiver(system, name, 200)
    stack.advance_clock(35)        # the second attempt comes 30 s after the first
    got = arrivals(system, name)
    assert [a["answered"] for a in got] == [500, 200]
    assert len({a["delivery_id"] for a in got}) == 1
    body = json.loads(got[-1]["body"])
    assert body["type"] == "order.confirmed" and body["data"]["booking_id"] == booking_id
    assert body["data"]["offering_id"] == event["event_id"] and who not in got[-1]["body"]
    assert rules.verify(hook["secret"], got[-1]["signature"], got[-1]["body"], now=got[-1]["at"])
    listed = deliveries(crm, hook["webhook_id"])
    assert [(d["status"], d["attempts"], d["last_attempt"]["status_code"]) for d in listed] == [("delivered", 2, 200)]

    # a check-in at a door is a fact of its own
    door = make_door(api, event["event_id"], "Main")
    assert ok(scan(api, event["event_id"], door, "p-1", tickets[0]["token"]))["admitted"] is True
    stack.wait_idle()
    checkins = [a for a in arrivals(system, name) if a["type"] == "checkin.created"]
    assert len(checkins) == 1 and json.loads(checkins[0]["body"])["data"]["booking_id"] == booking_id

    # by hand: the same delivery id and body once more
    again = ok(crm.request("POST", f"/organizers/me/webhooks/{hook['webhook_id']}/deliveries/"
                                   f"{listed[0]['delivery_id']}/redeliver", organizer=True), 202)
    assert again["status"] == "pending"
    stack.wait_idle()
    confirmed = [a for a in arrivals(system, name) if a["type"] == "order.confirmed"]
    assert [a["answered"] for a in confirmed] == [500, 200, 200]
    assert confirmed[-1]["delivery_id"] == listed[0]["delivery_id"] and confirmed[-1]["body"] == got[-1]["body"]

    # the test route, and the audit log holds the endpoint's id, never its secret
    ok(crm.request("POST", f"/organizers/me/webhooks/{hook['webhook_id']}/test", organizer=True), 202)
    stack.wait_idle()
    assert arrivals(system, name)[-1]["type"] == "webhook.test"
    audit = json.dumps(ok(api.request("GET", "/organizers/me/audit", organizer=True)))
    assert hook["webhook_id"] in audit and hook["secret"] not in audit


def test_the_routes_need_the_webhooks_scope_and_refuse_inner_addresses(api, system):
    crm = webhooks_key(api)
    doors = BookingApi(api.base, organizer_key=ok(api.request(
        "POST", "/organizers/me/keys", organizer=True, json={"name": "Door", "scopes": ["doors"]}), 201)["api_key"])
    refused = doors.request("GET", "/organizers/me/webhooks", organizer=True)
    assert (refused.status_code, refused.json()["error"]["details"]) == (403, {"scope": "webhooks"})
    for url, code in [("https://169.254.169.254/latest", "webhook_url_not_public"),
                      ("https://10.0.0.1/hook", "webhook_url_not_public"),
                      ("https://u:p@hooks.example.com/in", "webhook_url_invalid")]:
        answer = crm.request("POST", "/organizers/me/webhooks", organizer=True, json={"url": url, "events": ["order.confirmed"]})
        assert (answer.status_code, answer.json()["error"]["code"]) == (400, code), url
    answer = crm.request("POST", "/organizers/me/webhooks", organizer=True,
                         json={"url": receiver_url(system, "x"), "events": ["order.shipped"]})
    assert answer.json()["error"]["code"] == "unknown_webhook_event"
    hook = register(crm, receiver_url(system, "x"), ["order.cancelled"])
    assert crm.request("DELETE", f"/organizers/me/webhooks/{hook['webhook_id']}", organizer=True).status_code == 204
    gone = crm.request("DELETE", f"/organizers/me/webhooks/{hook['webhook_id']}", organizer=True)
    assert (gone.status_code, gone.json()["error"]["code"]) == (404, "webhook_not_found")


def test_a_receiver_down_for_an_hour_then_up_gets_every_fact_once_per_delivery_id(api, sandbox, system):
    stack, name = system["stack"], f"down-{uuid.uuid4().hex[:8]}"
    crm = webhooks_key(api)
    hook = register(crm, receiver_url(system, name), ["order.confirmed", "order.cancelled"])
    set_receiver(system, name, 503)
    event = api.create_event(capacity=10)
    confirmed = [tickets_of(api, sandbox, event["event_id"], 1)[0] for _ in range(3)]
    who = f"cust-{uuid.uuid4().hex[:8]}"
    held = ok(api.book(event["event_id"], who, {"quantity": 1}), 201)
    ok(api.cancel(held["booking_id"], who))
    cancelled = held["booking_id"]
    stack.wait_idle()
    stack.advance_clock(3600)
    down = arrivals(system, name)
    assert down and all(a["answered"] == 503 for a in down)
    assert all(d["status"] == "pending" for d in deliveries(crm, hook["webhook_id"]))

    set_receiver(system, name, 200)
    stack.advance_clock(2 * 3600)       # the attempt after an hour of failures comes within 1 h 45 min
    got = arrivals(system, name)
    answered = [a for a in got if a["answered"] == 200]
    facts = {(a["type"], json.loads(a["body"])["data"]["booking_id"]) for a in answered}
    assert facts == {("order.confirmed", b) for b in confirmed} | {("order.cancelled", cancelled)}
    ids = [a["delivery_id"] for a in answered]
    assert len(ids) == len(set(ids)) == 4      # each delivery arrived (answered) once: nothing lost, nothing twice
    assert {a["delivery_id"] for a in got} == set(ids)      # every failed attempt was one of these deliveries
    for arrival in answered:
        assert rules.verify(hook["secret"], arrival["signature"], arrival["body"], now=arrival["at"])
    listed = deliveries(crm, hook["webhook_id"])
    assert sorted(d["status"] for d in listed) == ["delivered"] * 4
    assert all(d["attempts"] >= 5 for d in listed)
