"""The notifications service: every kind has a template; one notification per change however often
it is delivered; SES only when configured; a failed email is taken back so a redelivery retries.

The service runs on the in-memory notification log (tests/contract/storage holds it to the
adapter on moto and DynamoDB Local); the CLI, SES and the bus on moto."""
from __future__ import annotations

import json

import boto3
import pytest

from holdfast.adapters.aws import NotificationsBus, SesEmailSender
from holdfast.ports import Message
from holdfast.services.notifications import NotificationNotSent, bus_entry, notify
from holdfast.services.mail_policy import CONFIRM_SUBJECT, MailGate
from tests.support.fake_mail import FakeMailPolicy
from tests.support.fake_store import FakeBookingStore
from tests.support.fakes import FakeNotificationLog


class Log(FakeBookingStore, FakeNotificationLog):
    """The notification log with the bookings and offerings a message reads (one table)."""


@pytest.fixture
def log() -> Log:
    return Log()


def detail(**overrides):
    return {"type": "booking.held", "booking_id": "b-1", "customer_id": "ann@example.com", "event_id": "e-1",
            "status": "HELD", "version": 1, "at": "2030-01-01T12:00:00.000Z",
            "hold_expires_at": "2030-01-01T12:10:00.000Z"} | overrides


def gate() -> MailGate:
    """The mail policy on a fake: a customer whose id is their address is mailed (issue 33: any
    other address must be confirmed first, tests/unit/test_mail_policy.py)."""
    from datetime import datetime, timezone

    return MailGate(FakeMailPolicy(), lambda: datetime(2030, 1, 1, 12, tzinfo=timezone.utc), 100,
                    "https://example.com/contacts/confirm")


class Recorder:
    def __init__(self, fail=False):
        self.sent, self.messages, self.fail = [], [], fail

    def send(self, to, message):
        if self.fail:  # as SES words it for an unverified recipient in a sandboxed account
            raise RuntimeError(f"Email address is not verified. The following identities failed the check: {to}")
        self.sent.append((to, message.subject))
        self.messages.append(message)
        return "m-1"


def test_one_notification_per_change_even_when_delivered_twice(log):
    sender, policy = Recorder(), gate()
    assert notify(log, detail(), sender, gate=policy) is True
    assert notify(log, detail(), sender, gate=policy) is False
    assert notify(log, detail(type="booking.confirmed", status="CONFIRMED", version=2), sender, gate=policy) is True
    notes = log.list_notifications("ann@example.com")
    assert [n["type"] for n in notes] == ["booking.held", "booking.confirmed"]
    assert [to for to, _ in sender.sent] == ["ann@example.com"] * 2 and notes[0]["channel"] == "email"


def test_without_a_sender_or_an_address_it_is_only_recorded(log):
    assert notify(log, detail(customer_id="customer-42"), Recorder(), gate=gate()) is True
    assert log.list_notifications("customer-42")[0]["channel"] == "record"
    assert notify(log, detail(booking_id="b-2")) is True


def test_a_failed_email_is_taken_back_for_the_retry(log):
    policy = gate()
    with pytest.raises(NotificationNotSent) as failed:
        notify(log, detail(), Recorder(fail=True), gate=policy)
    # What reaches the logs names the booking and the error, not the address or SES's words.
    assert "b-1" in str(failed.value) and "ann@example.com" not in str(failed.value)
    assert failed.value.__cause__ is None and failed.value.__suppress_context__
    assert log.list_notifications("ann@example.com") == []
    sender = Recorder()
    assert notify(log, detail(), sender, gate=policy) is True and len(sender.sent) == 1


def test_reminders_are_once_per_booking(log):
    assert notify(log, detail(type="booking.hold_expiring", version=1)) is True
    assert notify(log, detail(type="booking.hold_expiring", version=2)) is False


def test_ses_adapter_sends_through_sesv2(aws):
    ses = boto3.client("sesv2", region_name="eu-central-1")
    ses.create_email_identity(EmailIdentity="tickets@example.com")
    assert SesEmailSender("tickets@example.com", ses).send("ann@example.com", Message("Subject", "Body"))


def test_bus_publishes_the_outbox_event_as_its_detail(aws):
    events = boto3.client("events", region_name="eu-central-1")
    sqs = boto3.client("sqs", region_name="eu-central-1")
    events.create_event_bus(Name="notes")
    url = sqs.create_queue(QueueName="notes")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="all", EventBusName="notes", EventPattern=json.dumps({"source": ["holdfast.bookings"]}))
    events.put_targets(Rule="all", EventBusName="notes", Targets=[{"Id": "q", "Arn": arn}])
    image = {"pk": "BOOKING#b-1", "sk": "OUTBOX#000001", "ttl": 1, **detail()}
    bus = NotificationsBus("notes", events)
    assert bus.publish_many([bus_entry("notes", image)]) == []
    [message] = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
    body = json.loads(message["Body"])
    assert body["detail-type"] == "booking.held" and body["detail"] == detail()
    with pytest.raises(ValueError):
        bus.publish_many([bus_entry("notes", image)] * 11)


class RejectingEvents:
    """PutEvents that rejects the entries at the given positions, as EventBridge reports it."""

    def __init__(self, rejected):
        self.rejected, self.calls = set(rejected), []

    def put_events(self, Entries):  # noqa: N803 - boto3's argument name
        self.calls.append(len(Entries))
        results = [{"ErrorCode": "InternalFailure", "ErrorMessage": "try again"} if i in self.rejected
                   else {"EventId": f"e-{i}"} for i in range(len(Entries))]
        return {"FailedEntryCount": len(self.rejected & set(range(len(Entries)))), "Entries": results}


def test_bus_reports_which_entries_were_rejected():
    entries = [bus_entry("notes", {**detail(), "booking_id": f"b-{i}"}) for i in range(4)]
    assert NotificationsBus("notes", RejectingEvents({1, 3})).publish_many(entries) == [1, 3]
    assert NotificationsBus("notes", RejectingEvents(set())).publish_many(entries) == []


def test_cli_lists_a_customers_notifications(store, capsys, monkeypatch):
    from holdfast.tools import cli

    notify(store, detail())
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    assert cli.main(["notifications", "ann@example.com", "--table", store.table, "--endpoint", ""]) == 0
    out = capsys.readouterr().out
    assert "booking.held" in out and "1 notification(s) for ann@example.com" in out


def test_the_contact_address_wins_over_the_customer_id(log):
    sender, policy = Recorder(), gate()
    assert notify(log, detail(customer_id="customer-7", contact_email="seven@example.org"), sender, gate=policy) is True
    assert notify(log, detail(booking_id="b-2", contact_email="second@example.org"), sender, gate=policy) is True
    # neither is the customer's own: each first hears only the request to confirm it
    assert sender.sent == [("seven@example.org", CONFIRM_SUBJECT), ("second@example.org", CONFIRM_SUBJECT)]
    # Recorded under the customer (the sink is per customer), marked as emailed.
    assert log.list_notifications("customer-7")[0]["channel"] == "email"


def test_the_message_is_the_bookings_in_its_language_with_its_calendar_entry(store, bookings, payments, provider,
                                                                              ga_event):
    from holdfast.domain.commands import HoldPlaces
    from holdfast.services.messages import Site

    held = bookings.create_booking(ga_event["event_id"], "cust-1", "k1",
                                   HoldPlaces(quantity=2, contact_email="ann@example.com", language="ru")).booking
    sender, site = Recorder(), Site(booking_url="http://127.0.0.1:3000/booking.html?id={booking_id}")
    policy = gate()
    policy.own_address("cust-1", "ann@example.com")   # the signed-in customer's verified address
    base = {"booking_id": held.booking_id, "customer_id": "cust-1", "event_id": ga_event["event_id"],
            "contact_email": "ann@example.com", "at": held.created_at}
    assert notify(store, {**base, "type": "booking.held", "status": "HELD", "version": 1,
                          "hold_expires_at": held.hold_expires_at}, sender, site, policy)
    payment_id = payments.start_payment(held.booking_id, "cust-1", "pay-1").payment.payment_id
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed"
    assert notify(store, {**base, "type": "booking.confirmed", "status": "CONFIRMED", "version": 3}, sender, site, policy)
    first, confirmed = sender.messages
    assert first.subject.startswith(f"Места на «{ga_event['name']}» удержаны до ")
    assert "2 места" in first.text and f"booking.html?id={held.booking_id}" in first.html
    assert confirmed.subject.startswith("Бронь подтверждена") and "3\u00a0000,00\u00a0₽" in confirmed.text
    [ics] = confirmed.attachments
    assert ics.name == "booking.ics" and f"UID:booking-{held.booking_id}@holdfast" in ics.data.decode()
    # the record keeps the plain text (the CLI reads it)
    assert store.list_notifications("cust-1")[1]["message"] == confirmed.text.strip()


def test_ses_adapter_sends_attachments_as_one_mime_message(aws):
    from email import message_from_bytes, policy

    from holdfast.adapters.aws import mime_bytes
    from holdfast.ports import Attachment

    ses = boto3.client("sesv2", region_name="eu-central-1")
    ses.create_email_identity(EmailIdentity="tickets@example.com")
    message = Message("Подтверждено", "Текст", "<p>HTML <img src=\"cid:pass.png\"></p>",
                      (Attachment("booking.ics", "text/calendar; method=PUBLISH; charset=UTF-8", b"BEGIN:VCALENDAR\r\n"),),
                      (Attachment("pass.png", "image/png", b"\x89PNG fake"),))
    assert SesEmailSender("tickets@example.com", ses).send("ann@example.com", message)
    mail = message_from_bytes(mime_bytes("tickets@example.com", "ann@example.com", message), policy=policy.default)
    assert mail["Subject"] == "Подтверждено" and mail.get_content_type() == "multipart/mixed"
    parts = {part.get_content_type(): part for part in mail.walk()}
    assert parts["text/plain"].get_content().strip() == "Текст" and "cid:pass.png" in parts["text/html"].get_content()
    assert parts["image/png"]["Content-ID"] == "<pass.png>" and parts["image/png"].get_content() == b"\x89PNG fake"
    assert parts["text/calendar"].get_filename() == "booking.ics"
    assert parts["text/calendar"].get_param("method") == "PUBLISH"
    assert parts["multipart/related"] is not None and parts["multipart/alternative"] is not None


class Capturing:
    """A sesv2 client that keeps what it was asked to send."""

    def __init__(self):
        self.calls = []

    def send_email(self, **kwargs):
        self.calls.append(kwargs)
        return {"MessageId": "m-1"}


def test_ses_adapter_sends_text_alone_as_simple_content_and_html_as_mime():
    client = Capturing()
    SesEmailSender("tickets@example.com", client).send("ann@example.com", Message("S", "T"))
    SesEmailSender("tickets@example.com", client).send("ann@example.com", Message("S", "T", "<p>H</p>"))
    plain, html = client.calls
    assert plain["Content"] == {"Simple": {"Subject": {"Data": "S", "Charset": "UTF-8"},
                                           "Body": {"Text": {"Data": "T", "Charset": "UTF-8"}}}}
    # both alternatives travel in one MIME message (SES's simple content keeps one body in some stores)
    from email import message_from_bytes, policy

    mail = message_from_bytes(html["Content"]["Raw"]["Data"], policy=policy.default)
    parts = {part.get_content_type(): part.get_content().strip() for part in mail.walk() if not part.is_multipart()}
    assert parts == {"text/plain": "T", "text/html": "<p>H</p>"}


def test_a_sender_without_the_mail_policy_is_refused(log):
    with pytest.raises(TypeError):
        notify(log, detail(), Recorder())
    assert log.list_notifications("ann@example.com") == []


def test_a_repeat_is_known_by_its_record_before_anything_is_rendered(log, monkeypatch):
    """Issue 35: the record is checked first; a redelivered change reads and renders nothing."""
    from holdfast.services import notifications

    sender = Recorder()
    assert notify(log, detail(), sender, gate=gate()) is True

    def no_render(*args, **kwargs):
        raise AssertionError("a recorded notification was rendered again")

    monkeypatch.setattr(notifications, "compose", no_render)
    assert notify(log, detail(), sender, gate=gate()) is False
    assert len(sender.sent) == 1


def test_a_hold_of_a_cancelled_event_is_not_reminded_to_pay(log):
    """Issue 42, finding 7: the expiry tick reminded the holds of a cancelled event to pay."""
    log.table.items[("EVENT#e-1", "META")] = {"pk": "EVENT#e-1", "sk": "META", "event_id": "e-1",
                                              "cancelled_at": "2030-01-01T11:00:00.000Z"}
    assert notify(log, detail(type="booking.hold_expiring")) is False
    assert not log.notification_recorded("ann@example.com", "b-1#reminder")
