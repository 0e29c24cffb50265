"""Messages over HTTP on the local stack (issue 33): a booking made with ``Accept-Language: ru``
is written to in Russian by the notifier, from the booking and its event as stored, and the
record the local sink keeps is the rendered text."""
from __future__ import annotations

import time
import uuid

import pytest

from holdfast.services.message_words import date_time

pytestmark = pytest.mark.integration


def _notes(customer: str, kind: str) -> list[dict]:
    from holdfast import wiring

    deadline = time.monotonic() + 15   # the relay, the bus and the queue deliver asynchronously
    while time.monotonic() < deadline:
        notes = wiring.store().list_notifications(customer)
        if any(note["type"] == kind for note in notes):
            return notes
        time.sleep(0.1)
    return wiring.store().list_notifications(customer)


def test_a_booking_made_in_russian_is_written_to_in_russian(api, sandbox):
    event = api.create_event(capacity=5, name="Джаз & <блюз>")
    ivan, anna = f"cust-{uuid.uuid4().hex[:10]}", f"cust-{uuid.uuid4().hex[:10]}"
    held = api.request("POST", f"/events/{event['event_id']}/bookings", customer=ivan, key=str(uuid.uuid4()),
                       json={"quantity": 2}, headers={"Accept-Language": "ru-RU,ru;q=0.9,en;q=0.8"})
    assert held.status_code == 201, held.text
    booking_id = held.json()["booking_id"]
    payment = api.pay(booking_id, ivan).json()
    sandbox.pay(payment["payment_id"])
    api.wait_status(booking_id, ivan, "CONFIRMED")
    notes = {note["type"]: note for note in _notes(ivan, "booking.confirmed")}
    assert notes["booking.held"]["subject"].startswith("Места на «Джаз & <блюз>» удержаны до ")
    starts = date_time(event["starts_at"], "UTC", "ru").split(",")[0]   # "1 января 2031": the event's day
    assert notes["booking.confirmed"]["subject"].startswith(f"Бронь подтверждена: «Джаз & <блюз>», {starts}")
    assert "2\u00a0000,00\u00a0₽" in notes["booking.confirmed"]["message"]

    # no Accept-Language (or one we do not write in): English
    other = api.request("POST", f"/events/{event['event_id']}/bookings", customer=anna, key=str(uuid.uuid4()),
                        json={"quantity": 1}, headers={"Accept-Language": "de-DE"})
    assert other.status_code == 201, other.text
    [note] = [n for n in _notes(anna, "booking.held") if n["type"] == "booking.held"]
    assert note["subject"].startswith("Your places for Джаз & <блюз> are held until ")


def test_a_parking_confirmation_carries_the_pass_and_the_exit_its_receipt(api, sandbox, system):
    from tests.integration.test_parking_flow import create_lot, gate, now_window, paid, pass_, reserve
    from tests.support.flows import customer

    lot = create_lot(api, spaces=[{"space_id": "R1", "type": "REGULAR"}])
    gate_, who = gate(api, lot["lot_id"]), customer()
    held = reserve(api, lot["lot_id"], "REGULAR", *now_window(), who=who).json()
    confirmed = paid(api, sandbox, held, who)
    # the message renders the booking as it is when the notifier reads it: a pass only while the
    # reservation can still use one, so the car comes once the confirmation went out
    assert any(note["type"] == "booking.confirmed" for note in _notes(who, "booking.confirmed"))
    entered = pass_(api, lot["lot_id"], gate_, "entry", event_id="in-1", token=confirmed["entry_token"])
    pass_(api, lot["lot_id"], gate_, "exit", event_id="out-1", ticket_id=entered["ticket_id"])
    notes = {note["type"]: note for note in _notes(who, "vehicle.exited")}
    # the notifier signed the pass as the booking's view does (it read the parking seed)
    assert "Your entry pass is the QR code in this message" in notes["booking.confirmed"]["message"]
    receipt = notes["vehicle.exited"]["message"]
    assert notes["vehicle.exited"]["subject"] == "Receipt: Lot, ₽0.00"   # within the prepaid window
    for line in ("Space: R1", "Entered: ", "Left: ", "Tariff: ₽100.00 per hour, at most ₽900.00 per day, first 10 min free",
                 "Charge: ₽0.00"):
        assert line in receipt, receipt
