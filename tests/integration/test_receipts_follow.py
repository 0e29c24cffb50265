"""Issue 44 over HTTP, the receipts' loose ends: a settlement receipt follows the event's start
as it is now when the event is moved earlier (read from the event, never the start the booking
was sold with)."""
from __future__ import annotations

from datetime import timedelta

import pytest

from holdfast.clock import system_clock
from tests.integration.test_receipts import (fiscal_organizer, paid_before_start, past_the_start, settlement_receipts,
                                             sweep)

pytestmark = pytest.mark.integration


def journal_has(org, booking_id, who, action):
    return any(entry["action"] == action for entry in org.booking(booking_id, who)["journal"])


def test_a_settlement_receipt_follows_an_event_moved_earlier(api, sandbox, system):
    org = fiscal_organizer(api)
    booking_id, who, payment_id, old_start = paid_before_start(org, sandbox, system, seconds_ahead=3 * 86400)
    event_id = org.booking(booking_id, who)["event_id"]
    new_start = (system_clock() + timedelta(seconds=600)).replace(microsecond=0)
    moved = org.request("PATCH", f"/events/{event_id}", organizer=True,
                        json={"starts_at": new_start.strftime("%Y-%m-%dT%H:%M:%SZ")})
    assert moved.status_code == 200, moved.text
    # the announcement moves the look at the owed receipt to the new, earlier start
    org.wait_for(booking_id, who, lambda b: any(e["action"] == "settlement_rescheduled" for e in b["journal"]),
                 what="the settlement's look moved earlier")
    past_the_start(system, new_start)
    sweep(system)
    [settlement] = settlement_receipts(sandbox, payment_id)
    assert settlement["settlements"][0]["amount"] == {"value": "2000.00", "currency": "RUB"}
    assert system_clock() < old_start   # sent at the new start, days before the old one
    assert journal_has(org, booking_id, who, "settlement_receipt_sent")


def test_the_messages_say_a_receipt_was_sent_and_where_in_english_and_russian(api, sandbox, system):
    import uuid

    from tests.integration.test_messages import _notes
    from tests.support.flows import customer

    org = fiscal_organizer(api)
    event_id = org.create_event(capacity=5)["event_id"]
    for language, address, confirmed_row, refunded_row in (
            ("en", "en@example.com", "Fiscal receipt: sent to en@example.com",
             "Fiscal receipt: sent to en@example.com"),
            ("ru", "ru@example.com", "Кассовый чек: отправлен на ru@example.com",
             "Кассовый чек: отправлен на ru@example.com")):
        who = customer()
        held = org.request("POST", f"/events/{event_id}/bookings", customer=who, key=str(uuid.uuid4()),
                           json={"quantity": 1, "contact_email": address}, headers={"Accept-Language": language})
        assert held.status_code == 201, held.text
        booking_id = held.json()["booking_id"]
        sandbox.pay(org.pay(booking_id, who).json()["payment_id"])
        org.wait_status(booking_id, who, "CONFIRMED")
        confirmed = {n["type"]: n for n in _notes(who, "booking.confirmed")}["booking.confirmed"]
        assert confirmed_row in confirmed["message"], confirmed["message"]
        assert org.cancel(booking_id, who).status_code == 200
        org.wait_status(booking_id, who, "REFUNDED")
        refunded = {n["type"]: n for n in _notes(who, "booking.refunded")}["booking.refunded"]
        assert refunded_row in refunded["message"], refunded["message"]


def test_a_booking_paid_after_its_event_moved_earlier_settles_at_the_new_start(api, sandbox, system):
    """Held with the old start, moved earlier, then paid: the payment reads the start where it lives."""
    from tests.support.flows import customer

    org = fiscal_organizer(api)
    old_start = (system_clock() + timedelta(days=3)).replace(microsecond=0)
    event_id = org.create_event(capacity=5, starts_at=old_start.strftime("%Y-%m-%dT%H:%M:%SZ"))["event_id"]
    who = customer()
    held = org.book(event_id, who, {"quantity": 1, "contact_email": "early@example.com"})
    assert held.status_code == 201, held.text
    booking_id = held.json()["booking_id"]
    new_start = (system_clock() + timedelta(seconds=600)).replace(microsecond=0)
    moved = org.request("PATCH", f"/events/{event_id}", organizer=True,
                        json={"starts_at": new_start.strftime("%Y-%m-%dT%H:%M:%SZ")})
    assert moved.status_code == 200, moved.text
    payment_id = org.pay(booking_id, who).json()["payment_id"]
    sandbox.pay(payment_id)
    org.wait_status(booking_id, who, "CONFIRMED")
    past_the_start(system, new_start)
    sweep(system)
    assert len(settlement_receipts(sandbox, payment_id)) == 1
    assert system_clock() < old_start


def test_a_settlement_receipt_the_register_canceled_is_read_back_and_sent_again(api, sandbox, system):
    from holdfast.services.settlements import RETRY_SECONDS

    org = fiscal_organizer(api)
    booking_id, who, payment_id, starts = paid_before_start(org, sandbox, system)
    sandbox.add_fault("canceled", route="receipt", times=1)   # the next receipt registered: the settlement's
    past_the_start(system, starts)
    [first] = settlement_receipts(sandbox, payment_id)
    # the next looks read its status back: canceled, so a new receipt; then that one registered
    for _ in range(3):
        system["stack"].advance_clock(RETRY_SECONDS[0] + 62)
        view = org.booking(booking_id, who)
        [settlement] = [r for r in view["receipts"] if r["type"] == "settlement"]
        if settlement.get("provider_status") == "succeeded":
            break
    made = settlement_receipts(sandbox, payment_id)
    assert [(r["id"], r["status"]) for r in made if r["id"] == first["id"]] == [(first["id"], "canceled")]
    [standing] = [r for r in made if r["status"] != "canceled"]
    assert standing["status"] == "succeeded" and len(made) == 2
    assert (settlement["status"], settlement["provider_status"], settlement["receipt_id"]) == \
        ("sent", "succeeded", standing["id"])
    actions = [e["action"] for e in view["journal"]]
    assert actions.count("settlement_receipt_canceled") == 1 and actions.count("settlement_receipt_registered") == 1
