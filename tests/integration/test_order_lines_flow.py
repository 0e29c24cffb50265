"""Issue 43 over HTTP, after confirmation: each line of an order lives its own life. The event
line's tickets are admitted by the event's doors (online, and offline through a door's sync), the
parking line's entry pass by the lot's gates (the line becomes CHECKED_IN, then COMPLETED, while
the order stays CONFIRMED); and the hold limit counts an order once per line toward each line's
own offering."""
from __future__ import annotations

import uuid

import pytest

from holdfast.clock import system_clock
from tests.integration.test_orders_flow import concert, customer, lot, order
from tests.support.stack_time import window_from_now

pytestmark = pytest.mark.integration


def ok(answer, status: int = 200) -> dict:
    assert answer.status_code == status, answer.text
    return answer.json()


def parking_now(lot_id: str, plate: str = "A123BC77") -> dict:
    start, end = window_from_now(2)
    return {"lot_id": lot_id, "vehicle_type": "REGULAR", "plate": plate, "from": start, "to": end}


def paid_order(api, sandbox, who: str, lines: list[dict]) -> dict:
    placed = ok(order(api, who, lines), 201)
    paying = ok(api.request("POST", f"/orders/{placed['order_id']}/payment", customer=who, key=str(uuid.uuid4())), 201)
    sandbox.pay(paying["payment_id"])
    api.wait_status(placed["order_id"], who, "CONFIRMED")
    return ok(api.request("GET", f"/orders/{placed['order_id']}", customer=who))


def door(api, event_id: str, name: str) -> dict:
    return ok(api.request("POST", f"/events/{event_id}/doors", organizer=True, json={"name": name}), 201)


def scan(api, event_id: str, door_: dict, pass_id: str, token: str) -> dict:
    return ok(api.request("POST", f"/events/{event_id}/doors/{door_['door_id']}/scan",
                          headers={"X-Door-Key": door_["door_key"]}, json={"event_id": pass_id, "token": token}))


def gate(api, lot_id: str) -> dict:
    return ok(api.request("POST", f"/lots/{lot_id}/gates", organizer=True, json={"name": "Main"}), 201)


def gate_pass(api, lot_id: str, gate_: dict, direction: str, **body) -> dict:
    return ok(api.request("POST", f"/lots/{lot_id}/gates/{gate_['gate_id']}/{direction}",
                          headers={"X-Gate-Key": gate_["gate_key"]}, json=body))


def test_an_orders_tickets_pass_its_doors_and_its_parking_pass_its_gates(api, sandbox, system):
    event_id, lot_id = concert(api), lot(api)
    alice = customer()
    shown = paid_order(api, sandbox, alice, [{"event_id": event_id, "seats": ["A-1", "A-2"]}, parking_now(lot_id)])
    seats_line, parking_line = shown["lines"]
    # every ticket, each naming its line, and the parking pass: on the order and on its lines
    assert [t["seat_id"] for t in seats_line["tickets"]] == ["A-1", "A-2"]
    assert [t["line_id"] for t in shown["tickets"]] == ["L1", "L1"]
    assert parking_line["entry_token"] == shown["entry_token"] and parking_line["plate"] == "A123BC77"
    first, second = seats_line["tickets"]
    svg = api.request("GET", f"/bookings/{shown['order_id']}/tickets/{first['ticket_id']}.svg", customer=alice)
    assert svg.status_code == 200 and svg.text.startswith("<svg")
    pass_svg = api.request("GET", f"/bookings/{shown['order_id']}/pass.svg", customer=alice)
    assert pass_svg.status_code == 200 and pass_svg.text.startswith("<svg")

    # the door: online once, then refused as checked in; the other ticket through an offline door
    main, side = door(api, event_id, "Main"), door(api, event_id, "Side")
    admitted = scan(api, event_id, main, "m-1", first["token"])
    assert (admitted["admitted"], admitted["ticket_id"], admitted["seat_id"]) == (True, first["ticket_id"], "A-1")
    assert scan(api, event_id, side, "s-1", first["token"])["reason"] == "already_checked_in"
    synced = ok(api.request("POST", f"/events/{event_id}/doors/{side['door_id']}/sync",
                            headers={"X-Door-Key": side["door_key"]},
                            json={"events": [{"seq": 1, "event_id": "s-off-1", "token": second["token"],
                                              "at": system_clock().isoformat()}]}))
    assert synced["results"][0]["result"]["admitted"] is True, synced
    assert "conflict" not in synced["results"][0]
    seen = ok(api.request("GET", f"/events/{event_id}/checkins", organizer=True))
    assert seen["checked_in"] == 2
    # a ticket of the order is no ticket of another event
    other = concert(api)
    assert scan(api, other, door(api, other, "Other"), "o-1", first["token"])["reason"] == "wrong_event"

    # the gate: the parking line enters (CHECKED_IN) while the order stays CONFIRMED
    gate_ = gate(api, lot_id)
    entered = gate_pass(api, lot_id, gate_, "entry", event_id="in-1", token=parking_line["entry_token"])
    assert entered["gate_open"] is True and entered["space_id"] == parking_line["space_id"]
    assert gate_pass(api, lot_id, gate_, "entry", event_id="in-2",
                     token=parking_line["entry_token"])["reason"] == "already_inside"
    inside = ok(api.request("GET", f"/orders/{shown['order_id']}", customer=alice))
    assert inside["status"] == "CONFIRMED" and inside["lines"][1]["status"] == "CHECKED_IN"
    assert "status" not in inside["lines"][0]
    # checked in at the door: the order can no longer be given up
    refused = api.request("POST", f"/orders/{shown['order_id']}/cancel", customer=alice)
    assert refused.status_code == 409, refused.text
    left = gate_pass(api, lot_id, gate_, "exit", event_id="out-1", ticket_id=entered["ticket_id"])
    assert left["exit_granted"] is True
    done = ok(api.request("GET", f"/orders/{shown['order_id']}", customer=alice))
    assert done["status"] == "CONFIRMED" and done["lines"][1]["status"] == "COMPLETED"
    assert done["journal"][-1]["action"] == "vehicle_exited"
    assert api.request("GET", f"/lots/{lot_id}").json()["counts"]["REGULAR"]["occupied"] == 0


def test_the_hold_limit_counts_every_line_toward_its_own_offering(api, system):
    first = concert(api, max_holds_per_customer=1)
    second = concert(api, max_holds_per_customer=1)
    alice = customer()
    ok(order(api, alice, [{"event_id": first, "seats": ["A-1"]}, {"event_id": second, "seats": ["A-1"]}]), 201)
    # the second line's offering is at its limit for alice: the order is refused on that line
    refused = order(api, alice, [{"event_id": second, "seats": ["A-2"]}])
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "hold_limit_reached"
    again = order(api, alice, [{"event_id": concert(api), "seats": ["A-1"]}, {"event_id": second, "seats": ["A-3"]}])
    assert again.status_code == 409 and again.json()["error"]["details"]["line"] == 1, again.text
    # another customer is not limited by alice's holds
    ok(order(api, customer(), [{"event_id": second, "seats": ["A-2"]}]), 201)


def test_a_cancelled_order_gives_each_lines_hold_slot_back(api, system):
    first = concert(api, max_holds_per_customer=1)
    second = concert(api, max_holds_per_customer=1)
    alice = customer()
    placed = ok(order(api, alice, [{"event_id": first, "seats": ["A-1"]}, {"event_id": second, "seats": ["A-1"]}]),
                201)
    ok(api.request("POST", f"/orders/{placed['order_id']}/cancel", customer=alice))
    ok(order(api, alice, [{"event_id": second, "seats": ["A-2"]}]), 201)


def test_one_message_per_order_carries_every_ticket_the_parking_pass_and_a_calendar_entry_per_line(api, sandbox,
                                                                                                   system):
    import io

    import vobject
    import zxingcpp
    from PIL import Image

    from holdfast import wiring
    from holdfast.clock import parse_iso
    from holdfast.services.messages import compose
    from tests.integration.test_messages import _notes

    event_id, lot_id = concert(api), lot(api)
    alice = customer()
    line = parking_now(lot_id)
    shown = paid_order(api, sandbox, alice, [{"event_id": event_id, "seats": ["A-1", "A-2"]}, line])
    notes = _notes(alice, "booking.confirmed")
    confirmed = [n for n in notes if n["type"] == "booking.confirmed"]
    assert len(confirmed) == 1   # one message for the whole order
    assert "each ticket at the door, the parking pass at the gate" in confirmed[0]["message"]

    # the message as the notifier composes it, with its files
    message = compose(wiring.store(), {"type": "booking.confirmed", "booking_id": shown["order_id"],
                                       "customer_id": alice, "status": "CONFIRMED"}, wiring.message_site())
    images = {a.name: a.data for a in message.inline}
    assert sorted(images) == ["pass.png", "ticket-1.png", "ticket-2.png"]
    decoded = {name: zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))[0].text for name, png in images.items()}
    assert decoded == {"ticket-1.png": shown["tickets"][0]["token"], "ticket-2.png": shown["tickets"][1]["token"],
                       "pass.png": shown["entry_token"]}
    for name in images:
        assert f"cid:{name}" in message.html
    assert "Parking pass: Venue parking, A123BC77" in message.html
    [ics] = [a for a in message.attachments if a.name == "booking.ics"]
    calendar = vobject.readOne(ics.data.decode())
    entries = {e.uid.value: e for e in calendar.vevent_list}
    order_id = shown["order_id"]
    assert sorted(entries) == [f"booking-{order_id}-L1@holdfast", f"booking-{order_id}-L2@holdfast"]
    starts_at = api.request("GET", f"/events/{event_id}").json()["starts_at"]   # the event's own start
    assert entries[f"booking-{order_id}-L1@holdfast"].dtstart.value == parse_iso(starts_at)
    parked = entries[f"booking-{order_id}-L2@holdfast"]
    assert parked.dtstart.value.strftime("%Y-%m-%dT%H:%M:%SZ") == line["from"]
    assert parked.dtend.value.strftime("%Y-%m-%dT%H:%M:%SZ") == line["to"]
