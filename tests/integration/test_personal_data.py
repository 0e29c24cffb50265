"""Personal data over HTTP on the local stack (issue 34, finding 7): a customer reads what is held
about them, cannot erase it while a booking is live, and once it has ended ``DELETE /customers/me``
takes their address and id out of the booking and its journal (read from the table itself) while
the payment and refund records stay."""
from __future__ import annotations

import time

import pytest

from tests.support.flows import customer

pytestmark = pytest.mark.integration

EMAIL = "private.person@example.com"


def _partition(system, pk: str) -> list[dict]:
    stack = system["stack"]
    return stack.boto3_client("dynamodb").query(
        TableName=stack.resources["BookingsTable"], ConsistentRead=True,
        KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": {"S": pk}})["Items"]


def _notified(api, who: str, kind: str, timeout: float = 20.0) -> None:
    """Wait for the notifier to record ``kind``: it works from the stream, after the change, and
    a notification recorded after the erasure would name the customer again (docs/data-model.md)."""
    deadline = time.monotonic() + timeout
    while not any(note.get("type") == kind
                  for note in api.request("GET", "/customers/me/data", customer=who).json()["notifications"]):
        assert time.monotonic() < deadline, f"no {kind} notification recorded"
        time.sleep(0.1)


def test_erased_personal_data_is_gone_from_the_table_and_the_journal_while_the_money_stays(api, sandbox, system):
    who = customer()
    event = api.create_event(capacity=5)
    booking = api.book(event["event_id"], who, {"quantity": 1, "contact_email": EMAIL}).json()
    booking_id = booking["booking_id"]
    payment_id = api.pay(booking_id, who).json()["payment_id"]
    sandbox.pay(payment_id)
    api.wait_status(booking_id, who, "CONFIRMED")

    held = api.request("GET", "/customers/me/data", customer=who)
    assert held.status_code == 200, held.text
    [mine] = held.json()["bookings"]
    assert mine["contact_email"] == EMAIL and mine["payment"]["payment_id"] == payment_id and mine["journal"]

    refused = api.request("DELETE", "/customers/me", customer=who)   # the event is still to come
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "bookings_active"
    assert refused.json()["error"]["details"]["bookings"] == [booking_id]

    assert api.cancel(booking_id, who).status_code == 200
    api.wait_status(booking_id, who, "REFUNDED")
    _notified(api, who, "booking.refunded")
    for _ in range(2):   # a repeat finds nothing left and answers alike
        erased = api.request("DELETE", "/customers/me", customer=who)
        assert erased.status_code == 204, erased.text
    assert api.request("GET", "/customers/me/data", customer=who).json()["bookings"] == []

    items = _partition(system, f"BOOKING#{booking_id}")
    meta = next(item for item in items if item["sk"]["S"] == "META")
    journal = [item for item in items if item["sk"]["S"].startswith("JOURNAL#")]
    assert not any(who in repr(item) or EMAIL in repr(item) for item in items), "nothing names the customer"
    assert "contact_email" not in meta and meta["customer_id"]["S"].startswith("erased-")
    assert not [item for item in items if item["sk"]["S"].startswith("OUTBOX#")]
    assert journal and all(item["decision"]["S"] == "" for item in journal)
    # the money records stay: the payment, its refund, the amount and every status
    payment = meta["payment"]["M"]
    assert payment["payment_id"]["S"] == payment_id and payment["refund"]["M"]
    assert meta["amount"]["S"] == "1000.00" and meta["status"]["S"] == "REFUNDED"
    assert {item["to_status"]["S"] for item in journal} >= {"HELD", "CONFIRMED", "REFUNDED"}
    assert any(item["ids"]["M"].get("payment_id", {}).get("S") == payment_id for item in journal)
    assert _partition(system, f"CUSTOMER#{who}") == [], "the customer's markers, counters and notes are gone"


def test_an_erased_customer_leaves_the_lines_they_wait_in(api, system):
    who, owner = customer(), customer()
    event = api.create_event(capacity=1)
    assert api.book(event["event_id"], owner, {"quantity": 1}).status_code == 201
    joined = api.request("POST", f"/events/{event['event_id']}/waitlist", customer=who,
                         json={"quantity": 1, "contact_email": EMAIL})
    assert joined.status_code == 200, joined.text
    assert any(who in repr(item) for item in _partition(system, f"WAITLIST#{event['event_id']}"))

    erased = api.request("DELETE", "/customers/me", customer=who)   # no booking of theirs: nothing live
    assert erased.status_code == 204, erased.text
    assert api.request("GET", f"/events/{event['event_id']}/waitlist", customer=who).status_code == 404
    line = _partition(system, f"WAITLIST#{event['event_id']}")
    assert not any(who in repr(item) or EMAIL in repr(item) for item in line), "the line names them no more"
    assert _partition(system, f"CUSTOMER#{who}") == []


def test_a_car_inside_is_not_erased_and_leaves_by_its_ticket(api, sandbox, system):
    """Issue 42, finding 1: a checked-in reservation whose last half hour has begun (here a window of
    one half hour, begun at the current one) answered 204 to DELETE /customers/me, and every exit
    of the car then answered 500. Checked in is live until the car has left."""
    from tests.integration.test_parking_flow import create_lot, gate, now_window, paid, pass_, reserve

    lot = create_lot(api, spaces=[{"space_id": "R1", "type": "REGULAR"}])
    gate_, who = gate(api, lot["lot_id"]), customer()
    held = reserve(api, lot["lot_id"], "REGULAR", *now_window(hours=0.5), who=who, plate="E042KX77").json()
    token = paid(api, sandbox, held, who)["entry_token"]
    entered = pass_(api, lot["lot_id"], gate_, "entry", event_id="in-1", token=token)
    assert entered["gate_open"] is True
    refused = api.request("DELETE", "/customers/me", customer=who)
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["details"]["bookings"] == [held["booking_id"]]
    page = api.request("GET", f"/lots/{lot['lot_id']}/tickets/{entered['ticket_id']}/exit-payment")
    assert page.status_code < 500, page.text
    left = pass_(api, lot["lot_id"], gate_, "exit", event_id="out-1", ticket_id=entered["ticket_id"])
    assert "exit_granted" in left


def test_a_postponed_event_keeps_its_bookings_after_its_old_start(api, sandbox, system):
    """Issue 42, finding 2: after PATCH of a later start, DELETE /customers/me answered 204 once the
    old start had passed and took the customer's confirmed booking for the event months ahead."""
    from datetime import timedelta

    from holdfast.clock import system_clock

    # on the stack's clock, which a test before this one may have moved ahead of the machine's
    old_start = (system_clock() + timedelta(seconds=25)).replace(microsecond=0)
    event = api.create_event(starts_at=old_start.isoformat().replace("+00:00", "Z"))
    who = customer()
    booking_id = api.book(event["event_id"], who, {"quantity": 1, "contact_email": EMAIL}).json()["booking_id"]
    sandbox.pay(api.pay(booking_id, who).json()["payment_id"])
    api.wait_status(booking_id, who, "CONFIRMED")
    moved = api.request("PATCH", f"/events/{event['event_id']}", organizer=True,
                        json={"starts_at": (old_start + timedelta(days=120)).isoformat().replace("+00:00", "Z")})
    assert moved.status_code == 200, moved.text
    # past the old start: the stack's clock moves there, firing what falls due on the way
    system["stack"].advance_clock(max(0.0, (old_start - system_clock()).total_seconds()) + 1)
    refused = api.request("DELETE", "/customers/me", customer=who)
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["details"]["bookings"] == [booking_id]


def test_erasure_is_refused_while_a_waitlist_offer_is_being_made_for_the_customer(api, system):
    """Issue 42, finding 7, over HTTP: the relay has claimed the customer's turn (its offer's hold
    not made yet; claimed here in the table as a relay that died would leave it), and DELETE
    /customers/me answers 409 ``offer_pending`` and erases nothing; once the turn is back in the
    line, the erasure takes the customer out of it (204), so no relay can make them an offer."""
    from holdfast.adapters.dynamo import BookingStore
    from holdfast.clock import iso, system_clock

    stack = system["stack"]
    store = BookingStore(stack.resources["BookingsTable"], stack.boto3_client("dynamodb"))
    who, rival = customer(), customer()
    event_id = api.create_event(capacity=1)["event_id"]
    assert api.book(event_id, rival).status_code == 201
    joined = api.request("POST", f"/events/{event_id}/waitlist", customer=who,
                         json={"quantity": 1, "contact_email": EMAIL})
    assert joined.status_code in (200, 201), joined.text
    head = store.waitlist_head(event_id)
    assert head["customer_id"] == who and store.waitlist_claim(event_id, head, iso(system_clock()))

    refused = api.request("DELETE", "/customers/me", customer=who)
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "offer_pending"
    assert refused.json()["error"]["details"]["events"] == [event_id]
    assert api.request("GET", f"/events/{event_id}/waitlist", customer=who).json()["state"] == "OFFERING"

    [offer] = [o for o in store.waitlist_offers(event_id) if o["customer_id"] == who]
    assert store.waitlist_unclaim(event_id, offer)   # the places were not there: back in the line
    assert api.request("DELETE", "/customers/me", customer=who).status_code == 204
    assert api.request("GET", f"/events/{event_id}/waitlist", customer=who).status_code == 404
    assert store.waitlist_head(event_id) is None
