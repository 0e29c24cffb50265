"""The notifier's two entry points on the sample events: a queued bus event (once, however often
it arrives) and the hold reminder (only while the hold is unpaid)."""
from __future__ import annotations

import functools

from holdfast import wiring
from holdfast.services.mail_policy import CONFIRM_SUBJECT
from tests.support.handlers import api_event, call, load_event


def test_a_queued_change_is_recorded_once(handler_env):
    event = load_event("notification_sqs.json")
    for _ in range(2):
        assert call("notifier", event)[1] == {"batchItemFailures": []}
    notes = wiring.store().list_notifications("customer-42")
    assert [(n["type"], n["channel"]) for n in notes] == [("booking.confirmed", "record")]
    # the sample's booking is not in the store: the message names it by its id
    assert notes[0]["subject"] == f"Confirmed: booking {notes[0]['booking_id']}"


def test_a_malformed_message_fails_alone(handler_env):
    event = load_event("notification_sqs.json")
    bad = dict(event["Records"][0], messageId="bad", body="not json")
    status, result = call("notifier", {"Records": [event["Records"][0], bad]})
    assert result == {"batchItemFailures": [{"itemIdentifier": "bad"}]}


def test_reminder_only_for_an_unpaid_hold(handler_env):
    created = call("events_api", api_event("create_event.json", headers={"X-Api-Key": "organizer-test-key"}))[1]
    status, booking = call("bookings_api", api_event(
        "create_booking.json", path_params={"event_id": created["event_id"]}, body={"quantity": 1},
        headers={"Idempotency-Key": "r-1", "X-Customer-Id": "rem-1"}))
    assert status == 201
    reminder = {"remind_booking_id": booking["booking_id"]}
    assert call("notifier", reminder)[1] == {"booking_id": booking["booking_id"], "reminded": True}
    assert call("notifier", reminder)[1]["reminded"] is False
    assert [n["type"] for n in wiring.store().list_notifications("rem-1")] == ["booking.hold_expiring"]
    assert call("notifier", load_event("hold_reminder.json"))[1]["reminded"] is False  # no such booking


def test_the_reminder_goes_to_the_booking_s_contact_address(handler_env, monkeypatch):
    sent = []

    class Outbox:
        def send(self, to, message):
            sent.append((to, message.subject))
            return "m-1"

    # A cached factory, like the real one (wiring.reset() clears every factory's cache).
    monkeypatch.setattr(wiring, "email_sender", functools.cache(Outbox))
    created = call("events_api", api_event("create_event.json", headers={"X-Api-Key": "organizer-test-key"}))[1]
    status, booking = call("bookings_api", api_event(
        "create_booking.json", path_params={"event_id": created["event_id"]},
        body={"quantity": 1, "contact_email": "rem@example.org"},
        headers={"Idempotency-Key": "r-2", "X-Customer-Id": "rem-2"}))
    assert status == 201
    assert call("notifier", {"remind_booking_id": booking["booking_id"]})[1]["reminded"] is True
    # not the customer's own address: what reaches it first is the request to confirm it (issue 33)
    assert sent == [("rem@example.org", CONFIRM_SUBJECT)]
    assert wiring.store().list_notifications("rem-2")[0]["channel"] == "email"
