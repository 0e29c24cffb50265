"""Scoped organizer keys through the handlers: a doors-only key scans its event's tickets through a
door it made, but cannot refund or read sales; a key limited to one offering sees only that one;
a key gives only the rights it holds; keys made before scopes, or without naming any, hold them
all; device keys are untouched."""
from __future__ import annotations

import json

from tests.handlers.conftest import ORGANIZER_KEY
from tests.handlers.test_doors_api import create_event, paid_tickets, request, scan
from tests.handlers.test_tickets_api import tickets_env  # noqa: F401 - the tickets' fixture
from tests.support.handlers import api_event, call

OWNER = {"X-Api-Key": ORGANIZER_KEY}


def admin(method: str, path: str, headers: dict, body=None, params=None):
    event = {"resource": path, "path": path, "httpMethod": method, "headers": headers,
             "multiValueHeaders": {k: [v] for k, v in headers.items()}, "pathParameters": params,
             "queryStringParameters": None, "body": None if body is None else json.dumps(body),
             "isBase64Encoded": False, "requestContext": {"requestId": "r", "identity": {"sourceIp": "192.0.2.1"}}}
    if params:
        for name, value in params.items():
            event["path"] = event["path"].replace("{" + name + "}", value)
    return call("admin_api", event)


def new_key(headers: dict, **body) -> tuple[int, dict]:
    return admin("POST", "/organizers/me/keys", headers, body)


def made_key(headers: dict = OWNER, **body) -> dict:
    status, made = new_key(headers, **body)
    assert status == 201, made
    return made


def as_key(made: dict) -> dict:
    return {"X-Api-Key": made["api_key"]}


def test_a_doors_key_scans_but_cannot_refund_or_read_sales(tickets_env):
    event = create_event(capacity=10)
    booking_id, tickets = paid_tickets(tickets_env, event["event_id"], 1, "d-1")
    doors = made_key(name="Door staff", scopes=["doors"])
    assert (doors["name"], doors["scopes"], doors["offerings"]) == ("Door staff", ["doors"], None)

    status, door = request("POST", f"/events/{event['event_id']}/doors", {"name": "Main"}, as_key(doors))
    assert status == 201, door
    status, admitted = scan(event["event_id"], door, "p-1", tickets[0]["token"])
    assert status == 200 and admitted["admitted"] is True
    status, seen = request("GET", f"/events/{event['event_id']}/checkins", headers=as_key(doors))
    assert status == 200 and seen["checked_in"] == 1

    status, refused = admin("POST", "/admin/bookings/{booking_id}/cancel", as_key(doors),
                            {"operator": "Door", "note": "no"}, {"booking_id": booking_id})
    assert (status, refused["error"]["code"], refused["error"]["details"]) == (403, "scope_required",
                                                                              {"scope": "refunds"})
    status, refused = admin("GET", "/admin/sales", as_key(doors))
    assert (status, refused["error"]["details"]["scope"]) == (403, "sales:read")
    status, refused = call("events_api", api_event("cancel_event.json", path_params={"event_id": event["event_id"]},
                                                   headers=as_key(doors) | {"Idempotency-Key": "c-1"},
                                                   body={"reason": "rain"}))
    assert (status, refused["error"]["details"]["scope"]) == (403, "refunds")
    # nothing moved: the booking is still confirmed
    status, journal = admin("GET", "/admin/bookings/{booking_id}", OWNER, params={"booking_id": booking_id})
    assert status == 200 and journal["status"] == "CONFIRMED"
    # it reads itself, but not the team's other keys
    status, me = admin("GET", "/organizers/me", as_key(doors))
    assert status == 200 and me["key"]["scopes"] == ["doors"] and "keys" not in me
    assert admin("GET", "/organizers/me/keys", as_key(doors))[1]["error"]["details"] == {"scope": "keys"}


def test_a_key_limited_to_an_offering_sees_only_it(tickets_env):
    mine = create_event("limited-1", capacity=5, name="Mine")
    other = create_event("limited-2", capacity=5, name="Not mine")
    limited = made_key(name="Promoter", scopes=["events:write", "sales:read", "keys"], offerings=[mine["event_id"]])

    status, sales = admin("GET", "/admin/sales", as_key(limited))
    assert status == 200 and [row["event_id"] for row in sales["offerings"]] == [mine["event_id"]]
    assert {row["event_id"] for row in admin("GET", "/admin/sales", OWNER)[1]["offerings"]} >= {
        mine["event_id"], other["event_id"]}

    patch = api_event("create_event.json", headers=as_key(limited), body={"name": "Renamed"})
    for event_id, expected in ((mine["event_id"], 200), (other["event_id"], 404)):
        event = {**patch, "httpMethod": "PATCH", "resource": "/events/{event_id}", "path": f"/events/{event_id}",
                 "pathParameters": {"event_id": event_id}}
        status, answer = call("events_api", event)
        assert status == expected, answer
        if expected == 404:
            assert answer["error"]["code"] == "event_not_found"   # as another organizer's would be

    status, refused = call("events_api", api_event("create_event.json", headers=as_key(limited)))
    assert (status, refused["error"]["code"]) == (403, "key_limited_to_offerings")
    # what it gives stays within its offering
    status, refused = new_key(as_key(limited), scopes=["sales:read"], offerings=[other["event_id"]])
    assert (status, refused["error"]["code"]) == (403, "offering_not_held")
    inherited = made_key(as_key(limited), scopes=["sales:read"])
    assert inherited["offerings"] == [mine["event_id"]]


def test_a_key_gives_only_what_it_holds(tickets_env):
    cashier = made_key(name="Cashier", scopes=["refunds", "sales:read", "keys"])
    status, refused = new_key(as_key(cashier), scopes=["refunds", "doors"])
    assert (status, refused["error"]["code"], refused["error"]["details"]["scopes"]) == (403, "scope_not_held",
                                                                                        ["doors"])
    # without scopes: the giver's own, never more
    assert made_key(as_key(cashier), name="Second till")["scopes"] == ["sales:read", "refunds", "keys"]
    status, unknown = new_key(OWNER, scopes=["everything"])
    assert (status, unknown["error"]["code"]) == (400, "unknown_scope") and "doors" in unknown["error"]["details"]["known"]
    # a lesser key cannot delete a stronger one
    status, refused = admin("DELETE", "/organizers/me/keys/{key_id}", as_key(cashier),
                            params={"key_id": made_key(scopes=["doors"])["key_id"]})
    assert (status, refused["error"]["code"]) == (403, "scope_not_held")
    lesser = made_key(as_key(cashier), scopes=["refunds"])
    assert admin("DELETE", "/organizers/me/keys/{key_id}", as_key(cashier), params={"key_id": lesser["key_id"]})[0] == 204


def test_keys_made_before_scopes_or_without_any_hold_every_scope(tickets_env):
    from holdfast.kinds.products import every_scope

    SCOPES = every_scope()
    status, me = admin("GET", "/organizers/me", OWNER)     # the seeded key: made with no scopes stored
    assert status == 200 and me["key"]["scopes"] == list(SCOPES) and me["key"]["offerings"] is None
    status, plain = admin("POST", "/organizers/me/keys", OWNER)   # no body at all, as before scopes
    assert status == 201 and plain["scopes"] == list(SCOPES)
    listed = {key["key_id"]: key for key in admin("GET", "/organizers/me/keys", as_key(plain))[1]["keys"]}
    assert listed[plain["key_id"]]["scopes"] == list(SCOPES) and "key_hash" not in listed[plain["key_id"]]
    assert all(plain["api_key"] not in json.dumps(key) for key in listed.values())
