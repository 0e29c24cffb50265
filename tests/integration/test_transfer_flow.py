"""Issue 45's transfer over HTTP on the local stack: a paid booking offered to an address, the link
mailed to it (the local inbox at /dev/mail), opened by a browser (sent on to the page, nothing
changes), accepted by another signed-in customer; at the door the giver's ticket is refused and
the taker's admitted, and the offline void list names the old tickets; once one of its tickets was
checked in the booking is not given on. A second offer's link
lapses after its seven days on the stack's clock."""
from __future__ import annotations

import re
import uuid

import pytest
import requests

from tests.integration.test_doors_flow import make_door, ok, scan, tickets_of
from tests.integration.test_mail_delivery import _inbox
from tests.support.flows import customer

pytestmark = pytest.mark.integration


def _link(message: dict) -> str:
    return re.search(r"(http://\S+/transfer/accept\?token=\S+)", message["text"]).group(1)


def test_a_transferred_booking_admits_its_taker_and_refuses_the_giver_at_the_door(api, sandbox, system):
    event = api.create_event(capacity=5)
    booking_id, giver, old = tickets_of(api, sandbox, event["event_id"], 1)
    door = make_door(api, event["event_id"], "Main")
    address = f"friend-{uuid.uuid4().hex[:8]}@example.org"

    offered = ok(api.request("POST", f"/bookings/{booking_id}/transfer", customer=giver, json={"to_email": address}),
                 202)
    [mail] = _inbox(api, address, 1)
    link = _link(mail)
    assert link == offered["accept_url"] and event["name"] in mail["subject"]

    # a browser opening the link is sent to the page; nothing changes
    opened = requests.get(link, headers={"Accept": "text/html"}, allow_redirects=False, timeout=10)
    assert opened.status_code == 303 and "/transfer.html?booking=" in opened.headers["Location"]
    assert ok(api.request("GET", f"/bookings/{booking_id}", customer=giver))["tickets"] == old

    taker = customer()
    taken = ok(requests.post(link, headers={"X-Customer-Id": taker}, timeout=10))
    assert taken["status"] == "CONFIRMED" and len(taken["tickets"]) == 1
    assert taken["tickets"][0]["ticket_id"] != old[0]["ticket_id"]
    assert api.request("GET", f"/bookings/{booking_id}", customer=giver).status_code == 403

    refused = ok(scan(api, event["event_id"], door, "t-old", old[0]["token"]))
    assert (refused["admitted"], refused["reason"]) == (False, "ticket_void")
    admitted = ok(scan(api, event["event_id"], door, "t-new", taken["tickets"][0]["token"]))
    assert (admitted["admitted"], admitted["ticket_id"]) == (True, taken["tickets"][0]["ticket_id"])
    config = ok(api.request("GET", f"/events/{event['event_id']}/doors/{door['door_id']}/config",
                            headers={"X-Door-Key": door["door_key"]}))
    assert old[0]["ticket_id"] in config["voided_tickets"]

    # now that a ticket of it was checked in, it cannot be given on
    on = api.request("POST", f"/bookings/{booking_id}/transfer", customer=taker, json={"to_email": address})
    assert (on.status_code, on.json()["error"]["code"]) == (409, "ticket_checked_in")

    # another booking's link expires after seven days on the stack's clock
    second, holder, _ = tickets_of(api, sandbox, event["event_id"], 1)
    again = ok(api.request("POST", f"/bookings/{second}/transfer", customer=holder,
                           json={"to_email": f"later-{uuid.uuid4().hex[:8]}@example.org"}), 202)
    system["stack"].advance_clock(7 * 86_400 + 1)
    late = requests.post(again["accept_url"], headers={"X-Customer-Id": customer()}, timeout=10)
    assert (late.status_code, late.json()["error"]["code"]) == (409, "transfer_expired")
