"""Issue 46 over HTTP on the local stack: a door staff key scans tickets but cannot refund or read
sales; a key limited to one offering sees only it; a refund shows in the audit log with its key's
name, and nothing secret does."""
from __future__ import annotations

import pytest

from tests.integration.test_doors_flow import make_door, ok, scan, tickets_of
from tests.support.api import BookingApi

pytestmark = pytest.mark.integration


def key_of(api, **grant) -> BookingApi:
    made = ok(api.request("POST", "/organizers/me/keys", organizer=True, json=grant), 201)
    return BookingApi(api.base, organizer_key=made["api_key"])


def test_a_doors_key_scans_but_cannot_refund_or_read_sales_and_the_log_names_the_cashier(api, sandbox):
    event = api.create_event(capacity=5)
    booking_id, who, tickets = tickets_of(api, sandbox, event["event_id"], 2)
    doors = key_of(api, name="Door staff", scopes=["doors"])
    door = make_door(doors, event["event_id"], "Main")
    assert ok(scan(api, event["event_id"], door, "p-1", tickets[0]["token"]))["admitted"] is True
    for method, path, body in [("POST", f"/admin/bookings/{booking_id}/cancel", {"operator": "x", "note": "y"}),
                               ("GET", "/admin/sales", None)]:
        refused = doors.request(method, path, organizer=True, json=body)
        assert (refused.status_code, refused.json()["error"]["code"]) == (403, "scope_required"), path
    refused = doors.request("POST", f"/events/{event['event_id']}/cancel", organizer=True, key="c-1",
                            json={"reason": "rain"})
    assert refused.json()["error"]["details"] == {"scope": "refunds"}

    other = api.create_event(capacity=5)
    cashier = key_of(api, name="Cashier Olga", scopes=["refunds", "sales:read", "keys"],
                     offerings=[event["event_id"]])
    sales = ok(cashier.request("GET", "/admin/sales", organizer=True))["offerings"]
    assert [row["event_id"] for row in sales] == [event["event_id"]]
    hidden = cashier.request("GET", f"/events/{other['event_id']}/cancellation", organizer=True)
    assert (hidden.status_code, hidden.json()["error"]["code"]) == (404, "event_not_found")

    note = f"asked by {who} on the phone"
    ok(cashier.request("POST", f"/admin/bookings/{booking_id}/cancel", organizer=True,
                       json={"operator": "Olga", "note": note}))
    entries = ok(cashier.request("GET", "/organizers/me/audit", organizer=True))["entries"]
    refund = next(e for e in entries if e["action"] == "POST /admin/bookings/{booking_id}/cancel")
    assert refund["actor"]["key_name"] == "Cashier Olga" and refund["objects"]["booking_id"] == booking_id
    assert note not in str(entries) and who not in str(entries) and door["door_key"] not in str(entries)
    assert cashier.organizer_key not in str(entries) and api.organizer_key not in str(entries)
