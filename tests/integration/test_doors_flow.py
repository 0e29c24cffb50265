"""Issue 32's "Done when", over HTTP on the local stack: pay -> tickets; scan -> admitted; scan
again -> already_checked_in; another event's door -> wrong_event; a cancelled booking's ticket ->
ticket_void; a revoked door's key -> 401; and a customer's cancel of a checked-in booking -> 409."""
from __future__ import annotations

import pytest

from holdfast.clock import system_clock
from tests.support.flows import customer

pytestmark = pytest.mark.integration


def ok(answer, status: int = 200) -> dict:
    assert answer.status_code == status, answer.text
    return answer.json()


def tickets_of(api, sandbox, event_id: str, quantity: int) -> tuple[str, str, list[dict]]:
    who = customer()
    booking = ok(api.book(event_id, who, {"quantity": quantity}), 201)
    payment = ok(api.pay(booking["booking_id"], who), 201)
    sandbox.pay(payment["payment_id"])
    confirmed = api.wait_for(booking["booking_id"], who, lambda b: b["status"] == "CONFIRMED" and b.get("tickets"),
                             what="a confirmed booking with its tickets")
    return booking["booking_id"], who, confirmed["tickets"]


def make_door(api, event_id: str, name: str) -> dict:
    return ok(api.request("POST", f"/events/{event_id}/doors", organizer=True, json={"name": name}), 201)


def scan(api, event_id: str, door: dict, pass_id: str, token: str):
    return api.request("POST", f"/events/{event_id}/doors/{door['door_id']}/scan",
                       headers={"X-Door-Key": door["door_key"]}, json={"event_id": pass_id, "token": token})


def test_tickets_are_checked_in_once_at_the_door(api, sandbox):
    event, other = api.create_event(capacity=10), api.create_event(capacity=5)
    booking_id, who, tickets = tickets_of(api, sandbox, event["event_id"], 2)
    assert [t["seat_id"] for t in tickets] == [None, None] and len({t["ticket_id"] for t in tickets}) == 2
    code = api.request("GET", f"/bookings/{booking_id}/tickets/{tickets[0]['ticket_id']}.svg", customer=who)
    assert code.status_code == 200 and code.headers["Content-Type"].startswith("image/svg+xml")
    assert code.text.startswith("<svg")
    assert api.request("GET", f"/bookings/{booking_id}/tickets/{tickets[0]['ticket_id']}.svg",
                       customer=customer()).status_code == 403

    main, side = make_door(api, event["event_id"], "Main"), make_door(api, event["event_id"], "Side")
    first = ok(scan(api, event["event_id"], main, "main-1", tickets[0]["token"]))
    assert (first["admitted"], first["reason"], first["ticket_id"]) == (True, "admitted", tickets[0]["ticket_id"])
    again = ok(scan(api, event["event_id"], side, "side-1", tickets[0]["token"]))
    assert (again["admitted"], again["reason"]) == (False, "already_checked_in")
    assert (again["checked_in_at"], again["door_id"]) == (first["checked_in_at"], main["door_id"])
    assert ok(scan(api, event["event_id"], main, "main-1", tickets[0]["token"])) == first   # the pass id repeated

    refused = api.request("POST", f"/bookings/{booking_id}/cancel", customer=who)
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "checked_in")

    other_door = make_door(api, other["event_id"], "Other")
    assert ok(scan(api, other["event_id"], other_door, "o-1", tickets[1]["token"]))["reason"] == "wrong_event"
    assert ok(scan(api, event["event_id"], main, "main-2", "forged.token"))["reason"] == "bad_token"

    void_id, void_who, void_tickets = tickets_of(api, sandbox, event["event_id"], 1)
    ok(api.request("POST", f"/bookings/{void_id}/cancel", customer=void_who))
    cancelled = api.wait_for(void_id, void_who, lambda b: b["status"] != "CONFIRMED", what="the cancel")
    assert "tickets" not in cancelled
    assert ok(scan(api, event["event_id"], main, "main-3", void_tickets[0]["token"]))["reason"] == "ticket_void"
    config = ok(api.request("GET", f"/events/{event['event_id']}/doors/{main['door_id']}/config",
                            headers={"X-Door-Key": main["door_key"]}))
    assert void_tickets[0]["ticket_id"] in config["voided_tickets"]

    assert api.request("DELETE", f"/events/{event['event_id']}/doors/{side['door_id']}",
                       organizer=True).status_code == 204
    revoked = scan(api, event["event_id"], side, "side-2", tickets[1]["token"])
    assert (revoked.status_code, revoked.json()["error"]["code"]) == (401, "door_unauthorized")

    seen = ok(api.request("GET", f"/events/{event['event_id']}/checkins", organizer=True))
    assert seen["checked_in"] == 1 and {d["name"]: d["checked_in"] for d in seen["doors"]} == {"Main": 1, "Side": 0}


def test_a_door_s_sync_dated_ahead_checks_nothing_in_and_opens_a_case(api, sandbox):
    from datetime import timedelta

    event = api.create_event(capacity=5)
    _, _, tickets = tickets_of(api, sandbox, event["event_id"], 1)
    door = make_door(api, event["event_id"], "Clock ahead")
    ahead = (system_clock() + timedelta(hours=3)).isoformat()
    sync = {"events": [{"seq": 1, "event_id": "ahead-1", "token": tickets[0]["token"], "at": ahead}]}
    answer = ok(api.request("POST", f"/events/{event['event_id']}/doors/{door['door_id']}/sync",
                            headers={"X-Door-Key": door["door_key"]}, json=sync))
    result = answer["results"][0]
    assert answer["expected_seq"] == 2 and result["status"] == "failed"
    assert result["result"]["error"]["code"] == "pass_time_in_future" and result["conflict"]["case_id"]
    seen = ok(api.request("GET", f"/events/{event['event_id']}/checkins", organizer=True))
    assert seen["checked_in"] == 0
    cases = ok(api.request("GET", "/admin/reviews", organizer=True))["checkin_cases"]
    assert [(c["reason"], c["ticket_id"]) for c in cases if c["event_id"] == event["event_id"]] == \
        [("pass_time_in_future", tickets[0]["ticket_id"])]


def test_a_ticket_names_a_key_the_doors_config_lists_and_expires_after_its_events_start(api, sandbox):
    """Issue 42, finding 12, over HTTP: the door's config gives public keys only (the list a door
    checks with), the ticket names one of them and carries its expiry (the event's start + 12 h);
    a ticket made with any other root is refused, online and by the door's own program."""
    from datetime import timedelta

    from gate_controller.tokens import verify_ticket
    from holdfast.clock import parse_iso
    from holdfast.domain.signatures import claimed
    from holdfast.products.events.tickets import EventKeys

    event = api.create_event(capacity=3)
    booking_id, _, tickets = tickets_of(api, sandbox, event["event_id"], 1)
    door = make_door(api, event["event_id"], "Main")
    config = ok(api.request("GET", f"/events/{event['event_id']}/doors/{door['door_id']}/config",
                            headers={"X-Door-Key": door["door_key"]}))
    said = claimed(tickets[0]["token"])
    assert said["kid"] == config["kid"] == door["kid"] and said["kid"] in [key["kid"] for key in config["keys"]]
    assert parse_iso(said["exp"]) == parse_iso(event["starts_at"]) + timedelta(hours=12)
    assert verify_ticket(tickets[0]["token"], config["keys"], event["event_id"], system_clock()).ok
    forged = EventKeys(b"not-this-stacks-ticket-root-0123456789").ticket_token(
        event["event_id"], booking_id, tickets[0]["ticket_id"], None, starts_at=event["starts_at"])
    assert not verify_ticket(forged, config["keys"], event["event_id"], system_clock()).ok
    assert ok(scan(api, event["event_id"], door, "forged-1", forged))["reason"] == "bad_token"
    assert ok(scan(api, event["event_id"], door, "main-1", tickets[0]["token"]))["admitted"] is True
