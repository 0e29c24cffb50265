"""Issue 42, finding 6: a waitlist offer told to an address given at the join (not the customer's
own, not confirmed) was replaced by a request to confirm the address and never sent after the
customer confirmed, so the offer lapsed unseen. A confirmed address now receives the messages held
for it while what they say is still so (``contact.confirmed`` -> ``deliver_held``). In-memory store."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from holdfast.schemas import BookingIn
from holdfast.services.mail_policy import CONFIRM_SUBJECT, MailGate
from holdfast.services.notifications import deliver_held, notify
from holdfast.services.waitlist import OFFER_TYPE, WaitlistService
from tests.support.fake_mail import FakeMailPolicy
from tests.support.fake_store import FakeBookingStore, FakeWaitlist
from tests.support.fakes import FakeNotificationLog
from tests.unit.conftest import event_request

CONFIRM_URL = "https://example.com/contacts/confirm"
FRIEND = "friend@example.org"


class Store(FakeBookingStore, FakeWaitlist, FakeNotificationLog):
    """The bookings, the waitlist and the notification log over one table."""


@pytest.fixture
def store():
    return Store()


class Outbox:
    def __init__(self):
        self.sent: list[tuple[str, str, str]] = []

    def send(self, to, message):
        self.sent.append((to, message.subject, message.text))


@pytest.fixture
def mail():
    policy = FakeMailPolicy()
    return policy, MailGate(policy, lambda: datetime(2030, 1, 1, 12, tzinfo=timezone.utc), 10, CONFIRM_URL), Outbox()


def offer(store, bookings, catalog, clock):
    """Alice joins a sold-out event's line naming her friend's address; a place comes back and
    the relay offers it to her: the offer's hold and its outbox event."""
    event_id = catalog.create_event(event_request(capacity=1))["event_id"]
    taken = bookings.create_booking(event_id, "bob", "k-bob", BookingIn(quantity=1)).booking
    waitlist = WaitlistService(store, bookings, clock)
    waitlist.join(event_id, "alice", 1, contact_email=FRIEND)
    bookings.cancel(taken.booking_id, "bob")
    [booking_id] = waitlist.advance(event_id)
    booking = store.get_booking(booking_id)
    assert booking.contact_email == FRIEND
    image = store.booking_outbox(booking_id, booking.version)
    assert image["type"] == OFFER_TYPE
    return booking, image


def confirmed(policy, gate, outbox):
    """The holder clicks the link of the request to confirm; the announcement it writes."""
    [(to, subject, text)] = outbox.sent
    assert (to, subject) == (FRIEND, CONFIRM_SUBJECT)
    gate.confirm(next(word for word in text.split() if word.startswith(CONFIRM_URL)).split("token=")[1])
    [announcement] = policy.table.query("CUSTOMER#alice", prefix="OUTBOX#CONTACT#")
    assert announcement["type"] == "contact.confirmed" and FRIEND not in repr(announcement)
    return {k: v for k, v in announcement.items() if k not in ("pk", "sk", "ttl")}


def test_a_waitlist_offer_held_for_an_unconfirmed_address_is_sent_once_it_is_confirmed(
        store, bookings, catalog, clock, mail):
    policy, gate, outbox = mail
    booking, image = offer(store, bookings, catalog, clock)
    assert notify(store, image, outbox, gate=gate)
    assert [n["delivery"] for n in store.list_notifications("alice")] == ["unconfirmed"]
    announcement = confirmed(policy, gate, outbox)

    assert deliver_held(store, announcement, outbox, gate=gate) == 1
    to, subject, text = outbox.sent[-1]
    assert to == FRIEND and subject != CONFIRM_SUBJECT and booking.booking_id in text
    assert [n["delivery"] for n in store.list_notifications("alice")] == ["sent_after_confirmation"]
    assert deliver_held(store, announcement, outbox, gate=gate) == 0, "a redelivery sends nothing twice"
    assert len(outbox.sent) == 2


def test_a_held_message_whose_booking_has_moved_on_stays_held(store, bookings, catalog, clock, mail):
    policy, gate, outbox = mail
    booking, image = offer(store, bookings, catalog, clock)
    notify(store, image, outbox, gate=gate)
    bookings.cancel(booking.booking_id, "alice")   # she let the offer go before confirming
    announcement = confirmed(policy, gate, outbox)
    assert deliver_held(store, announcement, outbox, gate=gate) == 0
    assert len(outbox.sent) == 1 and [n["delivery"] for n in store.list_notifications("alice")] == ["unconfirmed"]
