"""Issue 45, exchange over HTTP on the local stack: a paid booking moved to another seat of its
event, or to another date of the same organizer, in one write (the old places back on sale, the
old tickets void at the doors, new ones issued); an exchange to a seat someone else has changes
nothing."""
from __future__ import annotations

import uuid

import pytest

from tests.integration.conftest import PAYING_HOLD

pytestmark = pytest.mark.integration


def customer() -> str:
    return f"cust-{uuid.uuid4().hex[:10]}"


def ok(answer, status: int = 200) -> dict:
    assert answer.status_code == status, answer.text
    return answer.json()


def paid(api, sandbox, event_id: str, body: dict) -> tuple[str, str, list[dict]]:
    who = customer()
    booking = ok(api.book(event_id, who, body), 201)
    sandbox.pay(ok(api.pay(booking["booking_id"], who), 201)["payment_id"])
    confirmed = api.wait_for(booking["booking_id"], who, lambda b: b["status"] == "CONFIRMED" and b.get("tickets"),
                             what="a confirmed booking with its tickets")
    return booking["booking_id"], who, confirmed["tickets"]


def seat_states(api, event_id: str) -> dict[str, str]:
    """Each seat's state as stored, read consistently (the public seat map is cached for a second
    per container, so two reads within that second would agree whatever happened between them)."""
    from holdfast import wiring

    return {unit["unit"]: unit["state"] for unit in wiring.store().list_units(event_id)}


def exchange(api, booking_id: str, who: str, body: dict, key: str = "swap-1"):
    return api.request("POST", f"/bookings/{booking_id}/exchange", customer=who, key=key, json=body)


def test_a_seat_is_exchanged_or_nothing_changes(api, sandbox, system):
    event_id = api.create_event(capacity=None, seat_map={"rows": [{"name": "A", "seats": 4}]},
                                exchange_until_hours=24)["event_id"]
    booking_id, who, old_tickets = paid(api, sandbox, event_id, {"seats": ["A-1"]})
    assert api.book(event_id, customer(), {"seats": ["A-2"]}).status_code == 201
    before, view = seat_states(api, event_id), api.booking(booking_id, who)

    taken = exchange(api, booking_id, who, {"seats": ["A-2"]}, key="swap-taken")
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "seats_unavailable", taken.text
    assert seat_states(api, event_id) == before
    assert api.booking(booking_id, who)["journal"] == view["journal"]

    moved = ok(exchange(api, booking_id, who, {"seats": ["A-3"]}))
    assert moved["status"] == "CONFIRMED" and [t["seat_id"] for t in moved["tickets"]] == ["A-3"]
    assert moved["tickets"][0]["ticket_id"] != old_tickets[0]["ticket_id"]
    assert moved["journal"][-1]["action"] == "exchanged"
    assert seat_states(api, event_id) == {"A-1": "available", "A-2": "held", "A-3": "sold", "A-4": "available"}
    again = ok(exchange(api, booking_id, who, {"seats": ["A-3"]}))   # the repeat moves nothing
    assert again["journal"] == moved["journal"]
    reused = exchange(api, booking_id, who, {"seats": ["A-4"]})
    assert reused.status_code == 422 and reused.json()["error"]["code"] == "idempotency_key_reused"

    door = ok(api.request("POST", f"/events/{event_id}/doors", organizer=True, json={"name": "Main"}), 201)
    scan = ok(api.request("POST", f"/events/{event_id}/doors/{door['door_id']}/scan",
                          headers={"X-Door-Key": door["door_key"]},
                          json={"event_id": "old-1", "token": old_tickets[0]["token"]}))
    assert (scan["admitted"], scan["reason"]) == (False, "ticket_void")
    config = ok(api.request("GET", f"/events/{event_id}/doors/{door['door_id']}/config",
                            headers={"X-Door-Key": door["door_key"]}))
    assert old_tickets[0]["ticket_id"] in config["voided_tickets"]
    assert moved["tickets"][0]["ticket_id"] not in config["voided_tickets"]


def test_a_booking_moves_to_another_date_and_a_closed_offering_refuses(api, sandbox, system):
    first = api.create_event(capacity=5, exchange_until_hours=24)
    later = api.create_event(capacity=5, exchange_until_hours=24, starts_at=first["starts_at"].replace("T20", "T21"))
    closed = api.create_event(capacity=5)   # offers no exchange
    booking_id, who, _ = paid(api, sandbox, first["event_id"], {"quantity": 2})

    refused = exchange(api, booking_id, who, {"event_id": closed["event_id"], "quantity": 2}, key="to-closed")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "exchange_not_offered", refused.text

    moved = ok(exchange(api, booking_id, who, {"event_id": later["event_id"], "quantity": 2}))
    assert moved["event_id"] == later["event_id"] and len(moved["tickets"]) == 2
    assert api.counts(first["event_id"]) == {"available": 5, "held": 0, "sold": 0}
    assert api.counts(later["event_id"]) == {"available": 3, "held": 0, "sold": 2}
    assert api.counts(closed["event_id"])["sold"] == 0


def test_a_cheaper_date_refunds_the_difference_once_and_a_cancel_after_it_the_rest(api, sandbox, system):
    first = api.create_event(capacity=5, exchange_until_hours=24)
    cheaper = api.create_event(capacity=5, exchange_until_hours=24, price={"value": "600.00", "currency": "RUB"},
                               starts_at=first["starts_at"].replace("T20", "T21"))
    booking_id, who, _ = paid(api, sandbox, first["event_id"], {"quantity": 2})
    payment_id = api.booking(booking_id, who)["payment"]["payment_id"]
    paid_value = api.booking(booking_id, who)["amount"]["value"]

    back = exchange(api, booking_id, who, {"event_id": first["event_id"], "quantity": 1},
                    key="fewer")   # fewer places of the same date: the difference goes back too
    fewer = ok(back)
    moved = ok(exchange(api, booking_id, who, {"event_id": cheaper["event_id"], "quantity": 1}, key="cheaper"))
    again = ok(exchange(api, booking_id, who, {"event_id": cheaper["event_id"], "quantity": 1}, key="cheaper"))
    assert again["journal"] == moved["journal"]   # the repeat: no second move, no second refund
    assert moved["event_id"] == cheaper["event_id"] and moved["amount"] == {"value": "600.00", "currency": "RUB"}
    refunds = sorted(r["amount"]["value"] for r in sandbox.refunds(payment_id))
    first_back = f"{float(paid_value) - float(fewer['amount']['value']):.2f}"
    second_back = f"{float(fewer['amount']['value']) - 600:.2f}"
    assert refunds == sorted([first_back, second_back]), refunds
    assert [d["amount"]["value"] for d in moved["payment"]["exchange_refunds"]] == [first_back, second_back]
    assert moved["cancel_refund_amount"] == {"value": "600.00", "currency": "RUB"}
    assert api.counts(first["event_id"])["sold"] == 0 and api.counts(cheaper["event_id"])["sold"] == 1

    assert api.cancel(booking_id, who).status_code == 200
    done = api.wait_status(booking_id, who, "REFUNDED")
    assert done["payment"]["refund"]["amount"] == {"value": "600.00", "currency": "RUB"}
    total = sum(float(r["amount"]["value"]) for r in sandbox.refunds(payment_id))
    assert f"{total:.2f}" == f"{float(paid_value):.2f}"   # all of it back, in three parts, never more


def dates(api, dear_ttl: int = 600) -> tuple[str, str]:
    """One show on two dates of one organizer: 1000.00 a place, and 1500.00 the day after."""
    cheap = api.create_event(capacity=3, exchange_until_hours=24)
    dear = api.create_event(capacity=3, exchange_until_hours=24, price={"value": "1500.00", "currency": "RUB"},
                            hold_ttl_seconds=dear_ttl, starts_at=cheap["starts_at"].replace("T20", "T21"))
    return cheap["event_id"], dear["event_id"]


def test_a_dearer_date_is_paid_by_a_second_payment_and_swapped_in_one_write(api, sandbox, system):
    cheap, dear = dates(api)
    booking_id, who, old_tickets = paid(api, sandbox, cheap, {"quantity": 2})
    asked = exchange(api, booking_id, who, {"event_id": dear, "quantity": 2}, key="dearer")
    held = ok(asked)
    difference = held["exchange_difference"]
    assert difference["amount"] == {"value": "1000.00", "currency": "RUB"} and difference["confirmation_url"]
    assert held["event_id"] == cheap and [t["ticket_id"] for t in held["tickets"]] == \
        [t["ticket_id"] for t in old_tickets]   # the old places stay the customer's until it is paid
    assert api.counts(cheap) == {"available": 1, "held": 0, "sold": 2}
    assert api.counts(dear) == {"available": 1, "held": 2, "sold": 0}
    again = ok(exchange(api, booking_id, who, {"event_id": dear, "quantity": 2}, key="dearer"))
    assert again["exchange_difference"]["payment_id"] == difference["payment_id"]   # one payment

    sandbox.pay(difference["payment_id"])
    moved = api.wait_for(booking_id, who, lambda b: b["event_id"] == dear, what="the paid exchange")
    assert moved["amount"] == {"value": "3000.00", "currency": "RUB"} and "exchange_difference" not in moved
    assert {t["ticket_id"] for t in moved["tickets"]}.isdisjoint({t["ticket_id"] for t in old_tickets})
    assert [(p["purpose"], p["amount"]["value"], p["status"]) for p in moved["payments"]] == [
        ("booking", "2000.00", "succeeded"), ("exchange_difference", "1000.00", "succeeded")]
    assert api.counts(cheap) == {"available": 3, "held": 0, "sold": 0}
    assert api.counts(dear) == {"available": 1, "held": 0, "sold": 2}


def test_a_lapsed_difference_releases_the_new_places_and_a_late_one_takes_them_again(api, sandbox, system):
    cheap, dear = dates(api, dear_ttl=PAYING_HOLD)
    booking_id, who, _ = paid(api, sandbox, cheap, {"quantity": 1})
    held = ok(exchange(api, booking_id, who, {"event_id": dear, "quantity": 1}, key="dearer"))
    assert api.counts(dear)["held"] == 1
    system["stack"].advance_clock(150)   # the hold's seconds, the sweeper's grace and its minute
    lapsed = api.wait_for(booking_id, who, lambda b: "exchange_difference" not in b, what="the lapsed difference")
    assert lapsed["event_id"] == cheap and lapsed["status"] == "CONFIRMED"
    assert lapsed["payments"][-1]["exchange_state"] == "lapsed"
    assert api.counts(dear) == {"available": 3, "held": 0, "sold": 0}
    assert api.counts(cheap)["sold"] == 1
    # paid after all, the place still free: taken again and swapped
    sandbox.pay(held["exchange_difference"]["payment_id"])
    moved = api.wait_for(booking_id, who, lambda b: b["event_id"] == dear, what="the late exchange")
    assert moved["payments"][-1]["exchange_state"] == "paid"
    assert api.counts(dear)["sold"] == 1 and api.counts(cheap)["sold"] == 0
