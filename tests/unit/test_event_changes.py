"""Issue 18: a change of start time or venue is announced once, in the transaction that makes it,
and each customer holding places hears it once; after a change of time a confirmed booking may be
cancelled with a full refund within the organizer's window. On the in-memory store (the bookings
and the notification log over one table)."""
import pytest

from holdfast.schemas import BookingIn, EventPatchIn
from holdfast.services.event_announcements import announce
from holdfast.services.listing import ListingService
from tests.support.fake_store import FakeNotificationStore


@pytest.fixture
def store():
    return FakeNotificationStore()


def outbox(store, event_id):
    return store.table.query(f"EVENT#{event_id}", prefix="OUTBOX#")


def hold(bookings, event, customer, key):
    return bookings.create_booking(event["event_id"], customer, key, BookingIn(quantity=1)).booking


def test_only_a_real_change_of_time_or_venue_is_announced(store, clock, ga_event):
    listing = ListingService(store, clock)
    event_id = ga_event["event_id"]
    listing.update(event_id, EventPatchIn(name="New name").changes())
    assert outbox(store, event_id) == []
    listing.update(event_id, EventPatchIn(starts_at="2030-02-02T20:00:00Z", change_refund_hours=24).changes())
    listing.update(event_id, EventPatchIn(starts_at="2030-02-02T20:00:00Z").changes())   # the same again
    listing.update(event_id, EventPatchIn(venue="Hall").changes())                        # unchanged venue
    [announcement] = outbox(store, event_id)
    assert announcement["type"] == "event.changed"
    assert announcement["changes"] == {"starts_at": {"before": "2030-02-01T20:00:00.000Z",
                                                     "after": "2030-02-02T20:00:00.000Z"}}
    assert announcement["change_refund_until"] == "2030-01-02T12:00:00.000Z"
    listing.update(event_id, EventPatchIn(venue="Arena").changes())
    assert [a["changes"].keys() for a in outbox(store, event_id)][-1] == {"venue"}


def test_each_customer_holding_places_hears_once(store, clock, bookings, payments, provider, ga_event):
    paid = hold(bookings, ga_event, "paid", "k1")
    payment_id = payments.start_payment(paid.booking_id, "paid", "p").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    hold(bookings, ga_event, "twice", "k2")
    hold(bookings, ga_event, "twice", "k3")
    gone = hold(bookings, ga_event, "gone", "k4")
    bookings.cancel(gone.booking_id, "gone")
    detail = {"type": "event.changed", "event_id": ga_event["event_id"], "version": 1, "name": "Club night",
              "at": "2030-01-01T12:00:00.000Z", "change_refund_until": "2030-01-04T12:00:00.000Z",
              "changes": {"venue": {"before": "Hall", "after": "Arena"}}}
    assert announce(store, detail) == 2
    assert announce(store, detail) == 0   # a redelivery notifies nobody
    heard = {who: [n for n in store.list_notifications(who) if n["type"] == "event.changed"]
             for who in ("paid", "twice", "gone")}
    assert [len(heard[who]) for who in ("paid", "twice", "gone")] == [1, 1, 0]
    assert "Venue: Hall → Arena" in heard["paid"][0]["message"]
    assert "full refund" in heard["paid"][0]["message"] and "full refund" not in heard["twice"][0]["message"]


def test_cancelling_within_the_window_after_a_time_change_is_recorded_as_such(store, clock, bookings, payments,
                                                                             provider, ga_event):
    booking = hold(bookings, ga_event, "alice", "k1")
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    assert "change_refund_until" not in bookings.view(booking.booking_id, "alice")
    moved = EventPatchIn(starts_at="2030-02-03T20:00:00Z").changes()
    ListingService(store, clock).update(ga_event["event_id"], moved)
    assert bookings.view(booking.booking_id, "alice")["change_refund_until"] == "2030-01-04T12:00:00.000Z"
    bookings.cancel(booking.booking_id, "alice", refund=payments.cancel_confirmed)
    view = bookings.view(booking.booking_id, "alice")
    assert view["status"] == "REFUNDED"
    assert "cancelled_after_time_change" in [e["action"] for e in view["journal"]]
    assert len(provider.refunds_for(payment_id)) == 1


def test_a_change_goes_to_the_customers_own_address_not_their_earliest_bookings(store, clock, bookings, ga_event):
    """Issue 42, finding 7: a customer whose earliest booking names an address they have not
    confirmed (a friend's) and whose later one carries their own hears of the change at their own
    address; it went to the earliest booking's, where it became a request to confirm that
    address. Without an own address, the latest address they gave."""
    from datetime import datetime, timezone

    from holdfast.services.mail_policy import MailGate
    from tests.support.fake_mail import FakeMailPolicy

    from dataclasses import replace
    from datetime import timedelta

    from holdfast.domain.commands import HoldPlaces

    def book(customer, key, address, own=False):
        command = replace(HoldPlaces.of(BookingIn(quantity=1, contact_email=address)), contact_own=own)
        clock.now += timedelta(seconds=60)
        return bookings.create_booking(ga_event["event_id"], customer, key, command).booking

    book("ann", "a1", "friend@example.com")
    book("ann", "a2", "ann@example.com", own=True)
    book("bob", "b1", "old@example.com")
    book("bob", "b2", "new@example.com")
    sent = []

    class Sender:
        def send(self, to, message):
            sent.append((to, message.subject))

    gate = MailGate(FakeMailPolicy(), lambda: datetime(2030, 1, 1, 12, tzinfo=timezone.utc), 100,
                    "https://example.com/contacts/confirm")
    detail = {"type": "event.changed", "event_id": ga_event["event_id"], "version": 1, "name": "Club night",
              "at": "2030-01-01T12:00:00.000Z", "changes": {"venue": {"before": "Hall", "after": "Arena"}}}
    assert announce(store, detail, Sender(), gate=gate) == 2
    assert sorted(to for to, _ in sent) == ["ann@example.com", "new@example.com"]


def test_a_customer_whose_booking_was_exchanged_to_another_date_hears_nothing_of_the_old_ones_change(
        store, clock, bookings, payments, provider, catalog):
    """The old event's index keeps an exchanged booking's entry (its doors void the former tickets
    by it); a change of that event's start no longer concerns the booking, now the other date's."""
    from holdfast.domain.commands import HoldPlaces
    from holdfast.services.exchange import ExchangeService
    from tests.unit.conftest import event_request

    first = catalog.create_event(event_request(exchange_until_hours=24))
    second = catalog.create_event(event_request(starts_at="2030-02-08T20:00:00Z", exchange_until_hours=24))
    moved = hold(bookings, first, "moved", "k1")
    payment_id = payments.start_payment(moved.booking_id, "moved", "p").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    ExchangeService(store, clock).exchange(moved.booking_id, "moved", "x-1", second["event_id"], HoldPlaces(quantity=1))
    hold(bookings, first, "stays", "k2")
    detail = {"type": "event.changed", "event_id": first["event_id"], "version": 1, "name": "Club night",
              "at": "2030-01-01T12:00:00.000Z", "changes": {"venue": {"before": "Hall", "after": "Arena"}}}
    assert announce(store, detail) == 1
    assert [n for n in store.list_notifications("moved") if n["type"] == "event.changed"] == []
