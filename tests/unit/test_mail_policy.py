"""The mail policy before each send (issue 33): a suppressed address gets nothing; an address that
is not the customer's own first gets exactly one confirmation request, and nothing else until the
link is used; each address takes a limited number of messages an hour. Every held-back message is
recorded with its verdict, never retried (no exception for the queue) and never sent.

On the fakes (tests/contract/storage/test_mail_policy.py holds the fake to the adapter)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from urllib.parse import parse_qs, urlsplit

import pytest

from holdfast.services.mail_policy import (CONFIRM_SUBJECT, InvalidConfirmation, MailGate, address_key,
                                           record_feedback)
from holdfast.services.notifications import NotificationNotSent, notify
from tests.support.fake_mail import FakeMailPolicy
from tests.support.fake_store import FakeNotificationStore

CONFIRM_URL = "https://example.com/contacts/confirm"


class Clock:
    def __init__(self):
        self.now = datetime(2031, 5, 1, 9, 30, tzinfo=timezone.utc)

    def __call__(self):
        return self.now


class Outbox:
    def __init__(self):
        self.sent: list[tuple[str, str, str]] = []
        self.fail = False

    def send(self, to, message):
        if self.fail:
            raise RuntimeError("throttled")
        self.sent.append((to, message.subject, message.text))
        return f"m-{len(self.sent)}"


@pytest.fixture
def world():
    clock, policy = Clock(), FakeMailPolicy()
    return clock, policy, MailGate(policy, clock, 3, CONFIRM_URL), FakeNotificationStore(), Outbox()


def detail(version=1, **overrides):
    return {"type": "booking.held", "booking_id": "b-1", "customer_id": "cust-1", "event_id": "e-1",
            "status": "HELD", "version": version, "at": "2031-05-01T09:30:00.000Z",
            "hold_expires_at": "2031-05-01T09:40:00.000Z", "contact_email": "friend@example.org"} | overrides


def deliveries(log, customer="cust-1"):
    return [note.get("delivery") for note in log.list_notifications(customer)]


def token_of(body: str) -> str:
    link = next(word for word in body.split() if word.startswith(CONFIRM_URL))
    return parse_qs(urlsplit(link).query)["token"][0]


def test_an_unconfirmed_address_gets_exactly_one_message_the_request_to_confirm(world):
    clock, policy, gate, log, outbox = world
    assert notify(log, detail(1), outbox, gate=gate) is True
    assert notify(log, detail(1), outbox, gate=gate) is False                          # a redelivery
    assert notify(log, detail(2, status="CONFIRMED", type="booking.confirmed"), outbox, gate=gate) is True
    assert notify(log, detail(3, booking_id="b-2"), outbox, gate=gate) is True
    assert [(to, subject) for to, subject, _ in outbox.sent] == [("friend@example.org", CONFIRM_SUBJECT)]
    assert "b-1" not in outbox.sent[0][2]                                        # nothing of the booking
    assert deliveries(log) == ["unconfirmed", "unconfirmed", "unconfirmed"]


def test_after_confirming_the_next_message_arrives(world):
    clock, policy, gate, log, outbox = world
    notify(log, detail(1), outbox, gate=gate)
    notify(log, detail(2, type="booking.confirmed", status="CONFIRMED"), outbox, gate=gate)
    gate.confirm(token_of(outbox.sent[0][2]))
    gate.confirm(token_of(outbox.sent[0][2]))                                    # a second click: fine
    notify(log, detail(3, type="booking.cancelled", status="CANCELLED"), outbox, gate=gate)
    assert len(outbox.sent) == 2 and outbox.sent[1][1] != CONFIRM_SUBJECT and "b-1" in outbox.sent[1][2]
    # held back before confirming, not delivered afterwards
    assert deliveries(log) == ["unconfirmed", "unconfirmed", "sent"]


def test_the_confirmation_is_per_customer(world):
    clock, policy, gate, log, outbox = world
    notify(log, detail(1), outbox, gate=gate)
    gate.confirm(token_of(outbox.sent[0][2]))
    notify(log, detail(1, customer_id="cust-2", booking_id="b-9"), outbox, gate=gate)   # a stranger types it too
    assert outbox.sent[1][1] == CONFIRM_SUBJECT


@pytest.mark.parametrize("spoil", [lambda t: t + "x", lambda t: t.split(".")[0], lambda t: "", lambda t: "a.b.c",
                                   lambda t: "!!!." + t.split(".", 1)[1]])
def test_a_wrong_or_malformed_token_confirms_nothing(world, spoil):
    clock, policy, gate, log, outbox = world
    notify(log, detail(1), outbox, gate=gate)
    with pytest.raises(InvalidConfirmation):
        gate.confirm(spoil(token_of(outbox.sent[0][2])))
    notify(log, detail(2), outbox, gate=gate)
    assert len(outbox.sent) == 1


def test_an_expired_link_confirms_nothing_and_a_new_request_goes_out_after_it(world):
    clock, policy, gate, log, outbox = world
    notify(log, detail(1), outbox, gate=gate)
    clock.now += timedelta(days=7, seconds=1)
    with pytest.raises(InvalidConfirmation):
        gate.confirm(token_of(outbox.sent[0][2]))
    notify(log, detail(2), outbox, gate=gate)
    assert [subject for _, subject, _ in outbox.sent] == [CONFIRM_SUBJECT, CONFIRM_SUBJECT]
    gate.confirm(token_of(outbox.sent[1][2]))


def test_the_customers_own_address_needs_no_confirmation(world):
    clock, policy, gate, log, outbox = world
    notify(log, detail(1, customer_id="Me@Example.org", contact_email=None), outbox, gate=gate)   # its id is its address
    gate.own_address("cust-1", "friend@example.org")                                         # a verified claim
    notify(log, detail(1), outbox, gate=gate)
    assert [to for to, _, _ in outbox.sent] == ["Me@Example.org", "friend@example.org"]
    assert all(subject != CONFIRM_SUBJECT and "b-1" in body for _, subject, body in outbox.sent)
    assert deliveries(log) == ["sent"] and deliveries(log, "Me@Example.org") == ["sent"]


def test_the_bookings_own_address_mark_is_enough_and_writes_no_standing(world):
    """Issue 35: the hold no longer records the identity's address in the policy; the booking's
    outbox event says the address is the customer's own (``contact_own``), and that is enough.
    Without the mark the same address still needs its confirmation first."""
    clock, policy, gate, log, outbox = world
    notify(log, detail(1, contact_own=True), outbox, gate=gate)
    assert [(to, subject != CONFIRM_SUBJECT) for to, subject, _ in outbox.sent] == [("friend@example.org", True)]
    assert deliveries(log) == ["sent"]
    assert policy.contact("cust-1", address_key("friend@example.org")) is None   # nothing written for it
    notify(log, detail(1, customer_id="cust-2", booking_id="b-2"), outbox, gate=gate)    # not marked
    assert outbox.sent[-1][1] == CONFIRM_SUBJECT and deliveries(log, "cust-2") == ["unconfirmed"]


def test_a_suppressed_address_gets_nothing_more(world):
    clock, policy, gate, log, outbox = world
    gate.own_address("cust-1", "friend@example.org")
    notify(log, detail(1), outbox, gate=gate)
    bounce = {"eventType": "Bounce", "bounce": {"bounceType": "Permanent",
                                                 "bouncedRecipients": [{"emailAddress": "FRIEND@example.org"}]}}
    assert record_feedback(policy, bounce, "2031-05-01T09:31:00.000Z") == 1
    assert record_feedback(policy, bounce, "2031-05-01T09:32:00.000Z") == 0      # SNS delivers twice
    assert notify(log, detail(2), outbox, gate=gate) is True                          # recorded, not raised
    assert notify(log, detail(3, customer_id="cust-2", booking_id="b-3"), outbox, gate=gate) is True   # anyone's
    assert len(outbox.sent) == 1
    assert deliveries(log) == ["sent", "suppressed"] and deliveries(log, "cust-2") == ["suppressed"]


def test_complaints_suppress_and_transient_bounces_do_not(world):
    clock, policy, gate, log, outbox = world
    soft = {"eventType": "Bounce", "bounce": {"bounceType": "Transient",
                                               "bouncedRecipients": [{"emailAddress": "a@example.org"}]}}
    complaint = {"notificationType": "Complaint",
                 "complaint": {"complainedRecipients": [{"emailAddress": "b@example.org"}]}}
    delivery = {"eventType": "Delivery", "delivery": {"recipients": ["c@example.org"]}}
    assert record_feedback(policy, soft, "t") == 0 and record_feedback(policy, delivery, "t") == 0
    assert record_feedback(policy, complaint, "t") == 1
    assert [policy.is_suppressed(address_key(a)) for a in ("a@example.org", "b@example.org")] == [False, True]


def test_each_address_takes_a_limited_number_an_hour_and_the_rest_are_recorded(world):
    clock, policy, gate, log, outbox = world
    gate.own_address("cust-1", "friend@example.org")
    for version in range(1, 6):
        assert notify(log, detail(version), outbox, gate=gate) is True
    assert len(outbox.sent) == 3
    assert deliveries(log) == ["sent", "sent", "sent", "rate_limited", "rate_limited"]
    clock.now += timedelta(hours=1)
    notify(log, detail(6), outbox, gate=gate)
    assert len(outbox.sent) == 4


def test_a_failed_send_is_taken_back_with_its_count_and_its_confirmation_request(world):
    clock, policy, gate, log, outbox = world
    outbox.fail = True
    with pytest.raises(NotificationNotSent):
        notify(log, detail(1), outbox, gate=gate)
    assert log.list_notifications("cust-1") == []
    assert policy.contact("cust-1", address_key("friend@example.org")) is None
    outbox.fail = False
    notify(log, detail(1), outbox, gate=gate)                                  # the queue's redelivery
    assert [subject for _, subject, _ in outbox.sent] == [CONFIRM_SUBJECT]
    assert deliveries(log) == ["unconfirmed"]


def test_the_policy_keeps_no_address(world):
    clock, policy, gate, log, outbox = world
    notify(log, detail(1), outbox, gate=gate)
    record_feedback(policy, {"eventType": "Complaint", "complaint": {
        "complainedRecipients": [{"emailAddress": "friend@example.org"}]}}, "t")
    assert "friend@example.org" not in repr(policy.table.items).lower()


def test_one_customer_may_name_only_a_few_unconfirmed_addresses(world):
    """Finding 10 of issue 42: nothing capped how many strangers one customer could have a
    confirmation sent to. Naming one more than the customer's caps is a 429 with its own code;
    an address they named already, confirmed, or their own is never refused."""
    from holdfast.domain.errors import AddressLimitReached
    from holdfast.services.mail_policy import NEW_ADDRESSES_PER_DAY, PENDING_ADDRESSES

    clock, policy, gate, log, outbox = world
    for n in range(PENDING_ADDRESSES):
        gate.admit_address("cust-1", f"stranger{n}@example.org")
        notify(log, detail(n + 1, booking_id=f"b-{n}", contact_email=f"stranger{n}@example.org"), outbox, gate=gate)
    assert len(outbox.sent) == PENDING_ADDRESSES                   # one confirmation request each
    gate.admit_address("cust-1", "stranger0@example.org")          # named again: waits already, fine
    with pytest.raises(AddressLimitReached) as refused:
        gate.admit_address("cust-1", "one-more@example.org")
    assert (refused.value.status, refused.value.code) == (429, "unconfirmed_address_limit")
    assert refused.value.details["retry_after"] > 0
    gate.admit_address("cust-2", "one-more@example.org")           # another customer's own count

    # confirming frees a place; a day's new addresses are capped even so
    gate.confirm(token_of(outbox.sent[0][2]))
    gate.admit_address("cust-1", "stranger0@example.org")          # confirmed: always fine
    named = PENDING_ADDRESSES
    with pytest.raises(AddressLimitReached) as refused:
        while True:
            gate.admit_address("cust-1", f"new{named}@example.org")
            policy.request_confirmation("cust-1", address_key(f"new{named}@example.org"), "h", "2031-05-01T10:00:00.000Z",
                                        "2031-05-01T09:30:00.000Z")
            policy.confirm_contact("cust-1", address_key(f"new{named}@example.org"), "h", "2031-05-01T09:31:00.000Z")
            named += 1
    assert refused.value.code == "confirmation_limit_reached" and named == NEW_ADDRESSES_PER_DAY
    clock.now += timedelta(days=1)
    gate.admit_address("cust-1", "next-day@example.org")           # a new day
