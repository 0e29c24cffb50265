"""A confirmed booking given to another customer through the bookings handler (issue 45, Transfer):
the offer answered 202 with its link, every repeat decided (a second offer, to oneself, the giver
pressing the link, a second press, a third customer, a withdrawal after the acceptance), the old
tickets refused at the door online and listed void offline while the new ones admit, the journal
naming both owners, the organizer's ``transfers_allowed``, a checked-in ticket, a booking
cancelled while its offer waits, and a link past its seven days."""
import json
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from holdfast import wiring
from holdfast.clock import system_clock
from tests.handlers.test_doors_api import create_event, door, paid_tickets, request, scan
from tests.handlers.test_tickets_api import tickets_env, view  # noqa: F401 - the tickets' fixture
from tests.support.handlers import call

GIVER, TAKER, THIRD = "customer-42", "customer-77", "customer-99"


def bookings(method, path, customer=GIVER, body=None, token=None, headers=None):
    booking_id = path.split("/")[2]
    resource = path.replace(booking_id, "{booking_id}", 1)
    sent = {"X-Customer-Id": customer, **(headers or {})}
    event = {"resource": resource, "path": path, "httpMethod": method,
             "headers": sent, "multiValueHeaders": {key: [value] for key, value in sent.items()},
             "pathParameters": {"booking_id": booking_id},
             "queryStringParameters": {"token": token} if token is not None else None,
             "body": None if body is None else json.dumps(body), "isBase64Encoded": False,
             "requestContext": {"requestId": "r", "identity": {"sourceIp": "192.0.2.1"}}}
    return call("bookings_api", event)


def offer(booking_id, to="friend@example.com", customer=GIVER, **headers):
    return bookings("POST", f"/bookings/{booking_id}/transfer", customer, {"to_email": to}, headers=headers)


def token_of(answer):
    return parse_qs(urlsplit(answer["accept_url"]).query)["token"][0]


def accept(booking_id, token, customer=TAKER):
    return bookings("POST", f"/bookings/{booking_id}/transfer/accept", customer, token=token)


def test_a_transfer_moves_the_booking_and_voids_its_old_tickets_online_and_offline(tickets_env):
    event = create_event("transfer-1", capacity=10)
    main = door(event["event_id"])
    booking_id, old = paid_tickets(tickets_env, event["event_id"], 2, "t-1")

    mine = offer(booking_id, "Me@Example.com", **{"X-Customer-Email": "me@example.com"})
    assert mine[1]["error"]["code"] \
        == "transfer_to_self"
    assert offer(booking_id, customer=THIRD)[0] == 403
    assert offer(booking_id, "not-an-address")[0] == 400
    status, offered = offer(booking_id)
    assert status == 202 and offered["transfer_id"] and "/transfer/accept?token=" in offered["accept_url"]
    token = token_of(offered)
    assert token.startswith(offered["transfer_id"] + ".")
    status, again = offer(booking_id, "other@example.com")
    assert status == 409 and again["error"]["code"] == "transfer_pending"
    assert view(booking_id)[1]["transfer"]["transfer_id"] == offered["transfer_id"]

    # the link's GET changes nothing; a browser is sent to the page (none configured here: JSON)
    status, shown = bookings("GET", f"/bookings/{booking_id}/transfer/accept", THIRD, token=token)
    assert status == 200 and shown["state"] == "pending" and shown["name"] == event["name"]
    assert view(booking_id)[1]["tickets"] == old
    # the wrong secret, the giver themselves: refused, nothing written
    assert accept(booking_id, offered["transfer_id"] + ".wrong")[1]["error"]["code"] == "transfer_invalid"
    assert accept(booking_id, "garbage")[1]["error"]["code"] == "transfer_invalid"
    assert accept(booking_id, token, GIVER)[1]["error"]["code"] == "transfer_to_self"

    status, taken = accept(booking_id, token)
    assert status == 200 and taken["status"] == "CONFIRMED" and taken["booking_id"] == booking_id
    new = taken["tickets"]
    assert len(new) == 2 and not {t["ticket_id"] for t in new} & {t["ticket_id"] for t in old}
    assert "transfer" not in taken
    # the same press again: the same booking, nothing more; anyone else: used; the giver: not theirs
    assert accept(booking_id, token) == (200, taken)
    assert accept(booking_id, token, THIRD)[1]["error"]["code"] == "transfer_used"
    assert view(booking_id)[0] == 403
    assert bookings("DELETE", f"/bookings/{booking_id}/transfer")[0] == 403
    assert bookings("GET", f"/bookings/{booking_id}/transfer/accept", THIRD, token=token)[1] == {
        "state": "accepted", "accept_with": f"POST /bookings/{booking_id}/transfer/accept?token=..."}

    # the door: old tokens void online and on the offline list, the new ones admit
    assert scan(event["event_id"], main, "p-1", old[0]["token"])[1]["reason"] == "ticket_void"
    status, config = request("GET", f"/events/{event['event_id']}/doors/{main['door_id']}/config",
                             headers={"X-Door-Key": main["door_key"]})
    assert status == 200 and config["voided_tickets"] == sorted(t["ticket_id"] for t in old)
    admitted = scan(event["event_id"], main, "p-2", new[0]["token"])[1]
    assert admitted["admitted"] is True and admitted["ticket_id"] == new[0]["ticket_id"]

    # the journal keeps both owners; the taker's data export finds the booking, the giver's does not
    journal = view(booking_id, TAKER)[1]["journal"]
    assert [e["action"] for e in journal if e["action"].startswith("transfer")] == \
        ["transfer_offered", "transfer_accepted"]
    stored = wiring.store().get_booking_with_journal(booking_id)[1]
    moved = next(e for e in stored if e.action == "transfer_accepted")
    assert moved.ids["from_customer"] == GIVER and moved.ids["to_customer"] == TAKER
    assert booking_id in wiring.store().customer_bookings(TAKER)
    assert booking_id not in wiring.store().customer_bookings(GIVER)


@pytest.fixture
def roomy_burst(monkeypatch):
    """One holder makes some twenty changes in the next test, after the file's first test made its
    own: more than the per-customer burst of changes a minute (10), which is not what it is about."""
    with monkeypatch.context() as env:
        env.setenv("BOOKING_RATE_BURST", "100")
        wiring.reset()
        yield
    wiring.reset()


def test_withdrawing_forbidden_offerings_checked_in_tickets_cancelled_and_expired_offers(tickets_env, roomy_burst,
                                                                                         monkeypatch):
    event = create_event("transfer-2", capacity=10)
    booking_id, tickets = paid_tickets(tickets_env, event["event_id"], 2, "t-2")

    status, first = offer(booking_id)
    assert bookings("DELETE", f"/bookings/{booking_id}/transfer") == (200, {"withdrawn": True})
    assert bookings("DELETE", f"/bookings/{booking_id}/transfer") == (200, {"withdrawn": False})
    assert accept(booking_id, token_of(first))[1]["error"]["code"] == "transfer_invalid"
    assert "transfer" not in view(booking_id)[1]

    # a link past its seven days: expired, and the holder may offer again
    status, second = offer(booking_id)
    later = system_clock() + timedelta(days=7, seconds=1)
    with monkeypatch.context() as moved:
        moved.setattr(wiring, "system_clock", lambda: later)
        status, expired = accept(booking_id, token_of(second))
        assert status == 409 and expired["error"]["code"] == "transfer_expired"
        assert offer(booking_id)[0] == 202

    # cancelled while the offer waits: the offer lapses
    withdrawn = bookings("DELETE", f"/bookings/{booking_id}/transfer")
    assert withdrawn == (200, {"withdrawn": True})
    status, pending = offer(booking_id)
    cancelled = bookings("POST", f"/bookings/{booking_id}/cancel")
    assert cancelled[0] == 200, cancelled
    status, lapsed = accept(booking_id, token_of(pending))
    assert status == 409 and lapsed["error"]["code"] == "transfer_lapsed"
    assert offer(booking_id)[1]["error"]["code"] == "booking_not_confirmed"

    # a checked-in ticket: no transfer
    main = door(event["event_id"])
    checked, tickets = paid_tickets(tickets_env, event["event_id"], 1, "t-3")
    assert scan(event["event_id"], main, "c-1", tickets[0]["token"])[1]["admitted"] is True
    status, refused = offer(checked)
    assert status == 409 and refused["error"]["code"] == "ticket_checked_in"

    # the organizer forbids transfers for an offering
    closed = create_event("transfer-3", capacity=5, transfers_allowed=False)
    assert closed["transfers_allowed"] is False and event["transfers_allowed"] is True
    kept, _ = paid_tickets(tickets_env, closed["event_id"], 1, "t-4")
    status, refused = offer(kept)
    assert status == 409 and refused["error"]["code"] == "transfers_not_allowed", refused
