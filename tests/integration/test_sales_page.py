"""The operator's sales page over HTTP on the local stack (GET /admin/sales/{offering_id}, issue
44): an offering's confirmed orders newest first by when each was placed, whatever order they were
paid in, paged by a cursor that neither repeats nor skips a sale."""
from __future__ import annotations

import pytest

from tests.integration.test_doors_flow import ok
from tests.support.flows import customer

pytestmark = pytest.mark.integration


def test_an_offerings_sales_come_newest_first_a_page_at_a_time(api, sandbox, system):
    stack = system["stack"]
    event = api.create_event(capacity=10)["event_id"]
    placed = []
    for _ in range(4):   # placed a minute apart
        stack.advance_clock(60)
        who = customer()
        placed.append((ok(api.book(event, who, {"quantity": 1}), 201)["booking_id"], who))
    for n in (2, 0, 3, 1):   # paid in another order
        booking_id, who = placed[n]
        sandbox.pay(ok(api.pay(booking_id, who), 201)["payment_id"])
        api.wait_for(booking_id, who, lambda b: b["status"] == "CONFIRMED", what="a confirmed booking")
    first = ok(api.request("GET", f"/admin/sales/{event}", organizer=True, params={"limit": 3}))
    rest = ok(api.request("GET", f"/admin/sales/{event}", organizer=True,
                          params={"limit": 3, "cursor": first["next_cursor"]}))
    assert rest["next_cursor"] is None
    shown = [sale["booking_id"] for sale in first["sales"] + rest["sales"]]
    assert shown == [booking_id for booking_id, _ in reversed(placed)]
    times = [sale["created_at"] for sale in first["sales"] + rest["sales"]]
    assert times == sorted(times, reverse=True) and len(set(times)) == 4
    bad = api.request("GET", f"/admin/sales/{event}", organizer=True, params={"cursor": "not-a-cursor"})
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "invalid_cursor")
