"""The audit log through the handlers: a refund shows with its key's name, the platform's actions
show in the organizer's log, refused attempts do not, pages follow one another, and no key,
secret, note or customer's id ever reaches it; a failed append never fails the action."""
from __future__ import annotations

import json

from holdfast import wiring
from tests.contract.test_route_scopes import template_routes
from tests.handlers.conftest import ORGANIZER_KEY
from tests.handlers.test_doors_api import create_event, paid_tickets, request
from tests.handlers.test_scoped_keys import OWNER, admin, as_key, made_key
from tests.handlers.test_tickets_api import tickets_env  # noqa: F401 - the tickets' fixture
from tests.support.handlers import load_handler

PLATFORM = {"X-Api-Key": "platform-test-key-0123"}


def audit(headers=OWNER, **query):
    event_query = {key: str(value) for key, value in query.items()} or None
    status, page = admin_query("/organizers/me/audit", headers, event_query)
    assert status == 200, page
    return page


def admin_query(path, headers, query):
    from tests.support.handlers import call

    event = {"resource": path, "path": path, "httpMethod": "GET", "headers": headers,
             "multiValueHeaders": {k: [v] for k, v in headers.items()}, "pathParameters": None,
             "queryStringParameters": query, "body": None, "isBase64Encoded": False,
             "requestContext": {"requestId": "r", "identity": {"sourceIp": "192.0.2.1"}}}
    return call("admin_api", event)


def whole_log(headers=OWNER) -> list[dict]:
    entries, cursor = [], None
    while True:
        page = audit(headers, limit=2, **({"cursor": cursor} if cursor else {}))
        entries += page["entries"]
        cursor = page["next_cursor"]
        if not cursor:
            return entries


def test_a_refund_shows_with_its_key_s_name_and_nothing_secret(tickets_env):
    event = create_event("audit-1", capacity=5)
    booking_id, tickets = paid_tickets(tickets_env, event["event_id"], 1, "a-1")
    cashier = made_key(name="Cashier Anna", scopes=["refunds", "keys"])
    status, door = request("POST", f"/events/{event['event_id']}/doors", {"name": "Main"}, OWNER)
    assert status == 201
    note = "Refund asked by phone by the customer customer-42, alice@example.org"
    status, cancelled = admin("POST", "/admin/bookings/{booking_id}/cancel", as_key(cashier),
                              {"operator": "Anna Petrova", "note": note}, {"booking_id": booking_id})
    assert status == 200, cancelled
    # refused attempts are not actions
    assert admin("GET", "/admin/sales", as_key(cashier))[0] == 403
    assert admin("POST", "/organizers/me/keys", as_key(cashier), {"scopes": ["doors"]})[0] == 403

    log = whole_log(as_key(cashier))
    actions = [entry["action"] for entry in log]
    assert actions == ["POST /admin/bookings/{booking_id}/cancel", "POST /events/{event_id}/doors",
                       "POST /organizers/me/keys", "POST /events"]      # newest first
    refund = log[0]
    assert refund["actor"] == {"kind": "key", "key_id": cashier["key_id"], "key_name": "Cashier Anna"}
    assert refund["objects"]["booking_id"] == booking_id and refund["status"] == 200
    assert refund["organizer_id"] == "org-test" and refund["at"]
    assert log[1]["objects"] == {"door_id": door["door_id"], "event_id": event["event_id"]}
    assert log[2]["objects"] == {"key_id": cashier["key_id"]}
    assert log[3]["objects"]["event_id"] == event["event_id"]

    written = json.dumps(log)
    for secret in (cashier["api_key"], ORGANIZER_KEY, door["door_key"], tickets[0]["token"], "customer-42",
                   "alice@example.org", "Anna Petrova", note):
        assert secret not in written


def test_the_platform_s_actions_show_in_the_organizer_s_log(tickets_env):
    status, made = admin("POST", "/admin/organizers", PLATFORM, {"name": "Acme"})
    assert status == 201
    assert admin("POST", "/admin/organizers/{organizer_id}/suspend", PLATFORM,
                 params={"organizer_id": made["organizer_id"]})[0] == 200
    assert admin("POST", "/admin/organizers/{organizer_id}/resume", PLATFORM,
                 params={"organizer_id": made["organizer_id"]})[0] == 200
    log = whole_log({"X-Api-Key": made["api_key"]})
    assert [(entry["actor"], entry["action"]) for entry in log] == [
        ({"kind": "platform"}, "POST /admin/organizers/{organizer_id}/resume"),
        ({"kind": "platform"}, "POST /admin/organizers/{organizer_id}/suspend"),
        ({"kind": "platform"}, "POST /admin/organizers")]
    assert made["api_key"] not in json.dumps(log)
    assert audit()["entries"] == []     # not in another organizer's


def test_pages_follow_one_another_and_a_foreign_cursor_is_refused(tickets_env):
    for number in range(5):
        made_key(name=f"till {number}")
    first = audit(limit=2)
    assert len(first["entries"]) == 2 and first["next_cursor"]
    entries = whole_log()
    assert len(entries) == 5 and len({entry["entry_id"] for entry in entries}) == 5
    assert [entry["at"] for entry in entries] == sorted((entry["at"] for entry in entries), reverse=True)
    status, refused = admin_query("/organizers/me/audit", OWNER, {"cursor": "bm90LW91cnM"})
    assert (status, refused["error"]["code"]) == (400, "invalid_cursor")
    status, refused = admin_query("/organizers/me/audit", OWNER, {"limit": "500"})
    assert (status, refused["error"]["code"]) == (400, "invalid_limit")
    # another organizer's cursor is not this one's
    status, refused = admin_query("/organizers/me/audit", {"X-Api-Key": "organizer-test-key-2"},
                                  {"cursor": first["next_cursor"]})
    assert (status, refused["error"]["code"]) == (400, "invalid_cursor")


def test_a_failed_append_never_fails_the_action(tickets_env, monkeypatch):
    from holdfast.entry import http
    from holdfast.adapters.audit_store import AuditStore

    def broken(self, organizer_id, entry):
        raise RuntimeError("table unavailable")

    counted = []
    monkeypatch.setattr(AuditStore, "append", broken)
    monkeypatch.setattr(http, "count", counted.append)
    status, made = admin("POST", "/organizers/me/keys", OWNER, {"name": "still made"})
    assert status == 201 and made["api_key"]
    assert counted == ["AuditAppendFailed"]
    monkeypatch.undo()
    assert audit()["entries"] == []
    assert {key["name"] for key in wiring.organizers().list_keys(
        wiring.organizers().authenticate(ORGANIZER_KEY))} >= {"still made"}


def test_every_function_serving_organizer_routes_appends_to_the_log(tickets_env):
    from holdfast.kinds.products import route_scopes

    folders = {template_routes()[route] for route in route_scopes()}
    assert folders and all(load_handler(folder).app.audited for folder in folders)
