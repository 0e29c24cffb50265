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


def test_a_batch_of_held_messages_reads_once_and_each_is_delivered_once(handler_env, monkeypatch):
    """Issue 35: a batch reads its bookings, offerings and notification records in one request;
    a repeat (in the batch or in the next delivery) is known by its record and rendered no more.
    Each held message still reaches its customer exactly once."""
    import json
    import threading
    import uuid
    from collections import Counter

    from botocore.client import BaseClient

    from holdfast.services import notifications

    sent = []

    class Outbox:
        def send(self, to, message):
            sent.append((to, message.subject, bool(message.html)))
            return "m-1"

    monkeypatch.setattr(wiring, "email_sender", functools.cache(Outbox))
    created = call("events_api", api_event("create_event.json", headers={"X-Api-Key": "organizer-test-key"}))[1]
    records = []
    for n in range(3):
        status, booking = call("bookings_api", api_event(
            "create_booking.json", path_params={"event_id": created["event_id"]}, body={"quantity": 1},
            headers={"Idempotency-Key": f"b-{n}", "X-Customer-Id": f"batch-{n}",
                     "X-Customer-Email": f"batch-{n}@example.org"}))
        assert status == 201, booking
        outbox = wiring.store().db._get(f"BOOKING#{booking['booking_id']}", "OUTBOX#000001")
        entry = notifications.bus_entry("bus", outbox)
        records.append({"messageId": uuid.uuid4().hex, "body": json.dumps(
            {"detail-type": entry["DetailType"], "source": entry["Source"], "detail": json.loads(entry["Detail"])})})
    batch = {"Records": records + [dict(records[0], messageId="again")]}   # the bus delivered one twice

    calls, rendered = Counter(), Counter()
    original_call, original_compose = BaseClient._make_api_call, notifications.compose
    me = threading.get_ident()

    def counting(client, operation, params):
        if threading.get_ident() == me:
            calls[operation] += 1
        return original_call(client, operation, params)

    def compose(store, detail, site=None, html=True):
        rendered[detail["booking_id"]] += 1
        return original_compose(store, detail, site, html)

    monkeypatch.setattr(BaseClient, "_make_api_call", counting)
    monkeypatch.setattr(notifications, "compose", compose)
    assert call("notifier", batch)[1] == {"batchItemFailures": []}
    # one read for the batch, then per message its record and the mail policy's suppression read
    # and hourly count (its own address: no standing read); the duplicate costs nothing
    assert dict(calls) == {"BatchGetItem": 1, "GetItem": 3, "UpdateItem": 3, "PutItem": 3}, calls
    assert sum(rendered.values()) == 3, rendered
    assert sorted(to for to, _, _ in sent) == [f"batch-{n}@example.org" for n in range(3)]
    assert all(subject != CONFIRM_SUBJECT and html for _, subject, html in sent)

    calls.clear()
    rendered.clear()
    assert call("notifier", batch)[1] == {"batchItemFailures": []}       # the queue delivers it all again
    assert not rendered and len(sent) == 3, (rendered, sent)
    assert dict(calls) == {"BatchGetItem": 1}, calls
    for n in range(3):
        assert [note["delivery"] for note in wiring.store().list_notifications(f"batch-{n}")] == ["sent"]


def test_a_buckets_reminders_read_per_chunk_and_go_once_to_each_unpaid_hold(handler_env, monkeypatch):
    """Issue 35: the tick's reminder step (a bucket shared by every offering) reads its holds, their offering and their
    records a chunk at a time (two BatchGetItem), not four GetItem per hold; a hold no longer
    held gets none, and the step run again reminds nobody twice."""
    import threading
    from collections import Counter

    from botocore.client import BaseClient

    from holdfast.adapters.expiry_buckets import bucket_of

    created = call("events_api", api_event("create_event.json", headers={"X-Api-Key": "organizer-test-key"}))[1]
    bookings = []
    for n in range(3):
        status, booking = call("bookings_api", api_event(
            "create_booking.json", path_params={"event_id": created["event_id"]}, body={"quantity": 1},
            headers={"Idempotency-Key": f"rb-{n}", "X-Customer-Id": f"rb-{n}"}))
        assert status == 201, booking
        bookings.append(booking)
    buckets = {bucket_of(b["hold_expires_at"]) for b in bookings}
    cancelled = call("bookings_api", api_event("cancel_booking.json", path_params={"booking_id": bookings[2]["booking_id"]},
                                               headers={"X-Customer-Id": "rb-2"}))
    assert cancelled[0] == 200, cancelled

    calls, me = Counter(), threading.get_ident()
    original = BaseClient._make_api_call

    def counting(client, operation, params):
        if threading.get_ident() == me:
            calls[operation] += 1
        return original(client, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", counting)
    reminded = sum(call("notifier", {"remind_bucket": {"bucket": bucket}})[1]["reminded"]
                   for bucket in sorted(buckets))
    assert reminded == 2
    assert calls["GetItem"] == 0 and calls["BatchGetItem"] <= 2 * len(buckets) and calls["PutItem"] == 2, calls
    assert [n["type"] for n in wiring.store().list_notifications("rb-0")] == ["booking.hold_expiring"]
    assert wiring.store().list_notifications("rb-2") == []
    assert sum(call("notifier", {"remind_bucket": {"bucket": bucket}})[1]["reminded"]
               for bucket in sorted(buckets)) == 0


def test_a_message_held_for_an_address_goes_out_once_the_address_is_confirmed(handler_env, monkeypatch):
    """Issue 42, finding 6, through the handlers: a hold names an address that is not the
    customer's own; its message becomes a request to confirm; POST /contacts/confirm with the
    link's token writes ``contact.confirmed`` with the confirmation, and the notifier, given that
    event, sends the held message (once, however often the event arrives)."""
    import json

    sent = []

    class Outbox:
        def send(self, to, message):
            sent.append((to, message.subject, message.text))
            return f"m-{len(sent)}"

    def queued(detail):
        envelope = {"detail-type": detail["type"], "source": "holdfast.bookings", "detail": detail}
        return {"Records": [{"messageId": f"m-{detail['type']}", "receiptHandle": "r", "body": json.dumps(envelope, default=str)}]}

    monkeypatch.setattr(wiring, "email_sender", functools.cache(Outbox))
    created = call("events_api", api_event("create_event.json", headers={"X-Api-Key": "organizer-test-key"}))[1]
    status, booking = call("bookings_api", api_event(
        "create_booking.json", path_params={"event_id": created["event_id"]},
        body={"quantity": 1, "contact_email": "held@example.org"},
        headers={"Idempotency-Key": "h-1", "X-Customer-Id": "held-1"}))
    assert status == 201
    held = wiring.store().booking_outbox(booking["booking_id"], 1)
    assert call("notifier", queued(held))[1] == {"batchItemFailures": []}
    [(to, subject, text)] = sent
    assert (to, subject) == ("held@example.org", CONFIRM_SUBJECT)
    token = next(word for word in text.split() if "token=" in word).split("token=")[1]

    confirm = api_event("create_booking.json", drop_headers=("X-Customer-Id",))
    confirm.update(resource="/contacts/confirm", path="/contacts/confirm", httpMethod="POST", body=None,
                   pathParameters=None, queryStringParameters={"token": token},
                   multiValueQueryStringParameters={"token": [token]})
    confirm["requestContext"].update(resourcePath="/contacts/confirm", httpMethod="POST", path="/contacts/confirm")
    status, answer = call("bookings_api", confirm)
    assert (status, answer) == (200, {"confirmed": True})
    [announcement] = wiring.store().db._query_prefix("CUSTOMER#held-1", "OUTBOX#CONTACT#")
    detail = {k: v for k, v in announcement.items() if k not in ("pk", "sk", "ttl")}
    for _ in range(2):
        assert call("notifier", queued(detail))[1] == {"batchItemFailures": []}
    assert [(to, subject == CONFIRM_SUBJECT) for to, subject, _ in sent] == [
        ("held@example.org", True), ("held@example.org", False)]
    assert booking["booking_id"] in sent[1][2]
