"""A waitlist cannot be blocked by one customer or one bad entry: the offers' idempotency keys live
in a scope no customer request can write, and an entry whose offer fails for a reason that will
not go away is skipped (visibly) so the next in line is offered the places."""
from __future__ import annotations

import pytest

from holdfast.domain.errors import IdempotencyKeyReused, InvalidRequest
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services.bookings import BookingService
from holdfast.services.waitlist import MAX_OFFER_FAILURES, WaitlistService
from tests.support.fake_store import FakeWaitlistStore
from tests.unit.conftest import event_request


@pytest.fixture
def store():
    return FakeWaitlistStore()


@pytest.fixture
def waitlist(store, bookings, clock):
    return WaitlistService(store, bookings, clock, offer_seconds=900)


@pytest.fixture
def two_events(catalog):
    return catalog.create_event(event_request(capacity=2)), catalog.create_event(event_request(capacity=5))


def line_up(waitlist, bookings, event, clock):
    """Sell the event out, put mallory then ann in line; return mallory's entry id and the owner's hold."""
    owner = bookings.create_booking(event["event_id"], "owner", "k-owner", BookingIn(quantity=2)).booking
    mallory, _ = waitlist.join(event["event_id"], "mallory", 1)
    clock.advance(1)
    waitlist.join(event["event_id"], "ann", 1)
    return mallory["entry_id"], owner


def test_a_customer_key_equal_to_an_offer_key_does_not_block_the_waitlist(waitlist, bookings, store, two_events,
                                                                          clock):
    event, other = two_events
    entry_id, owner = line_up(waitlist, bookings, event, clock)
    # Mallory books elsewhere with the key her offer will use: before the fix, her offer replays this
    # key with another body, raises IdempotencyKeyReused on every relay delivery, and nobody moves up.
    own = bookings.create_booking(other["event_id"], "mallory", f"waitlist-offer-{entry_id}", BookingIn(quantity=1))
    bookings.cancel(owner.booking_id, "owner")

    offered = waitlist.advance(event["event_id"])

    assert len(offered) == 2
    by_customer = {store.get_booking(b).customer_id: store.get_booking(b) for b in offered}
    assert set(by_customer) == {"mallory", "ann"}
    assert by_customer["mallory"].event_id == event["event_id"] and by_customer["mallory"].status is BookingStatus.HELD
    assert store.get_booking(own.booking.booking_id).event_id == other["event_id"]
    # The offer stays idempotent in its own scope: a redelivery makes no second hold.
    assert waitlist.advance(event["event_id"]) == []
    assert len(store.customer_booking_ids("mallory", event["event_id"])) == 1
    # And the customer's own key still replays her own booking.
    again = bookings.create_booking(other["event_id"], "mallory", f"waitlist-offer-{entry_id}", BookingIn(quantity=1))
    assert again.replayed and again.booking.booking_id == own.booking.booking_id


@pytest.mark.parametrize("error", [IdempotencyKeyReused(), InvalidRequest("no", code="invalid_quantity")])
def test_an_offer_that_cannot_be_made_is_skipped_with_a_reason_and_the_next_is_offered(
        waitlist, bookings, store, two_events, clock, monkeypatch, error):
    event, _ = two_events
    entry_id, owner = line_up(waitlist, bookings, event, clock)
    real = BookingService.hold_for_customer

    def failing_for_mallory(self, event_id, customer_id, *args, **kwargs):
        if customer_id == "mallory":
            raise error
        return real(self, event_id, customer_id, *args, **kwargs)

    monkeypatch.setattr(BookingService, "hold_for_customer", failing_for_mallory)
    bookings.cancel(owner.booking_id, "owner")

    offered = waitlist.advance(event["event_id"])

    assert [store.get_booking(b).customer_id for b in offered] == ["ann"]
    mallory = waitlist.status(event["event_id"], "mallory")
    assert mallory["state"] == "SKIPPED" and mallory["reason"] == f"offer_failed:{error.code}"
    assert waitlist.advance(event["event_id"]) == []


def test_an_offer_that_keeps_crashing_is_given_up_after_a_bounded_number_of_tries(
        waitlist, bookings, store, two_events, clock, monkeypatch):
    event, _ = two_events
    entry_id, owner = line_up(waitlist, bookings, event, clock)
    real = BookingService.hold_for_customer

    def crashing_for_mallory(self, event_id, customer_id, *args, **kwargs):
        if customer_id == "mallory":
            raise KeyError("a bug")
        return real(self, event_id, customer_id, *args, **kwargs)

    monkeypatch.setattr(BookingService, "hold_for_customer", crashing_for_mallory)
    bookings.cancel(owner.booking_id, "owner")

    for _ in range(MAX_OFFER_FAILURES - 1):
        # Not known to be permanent yet: the relay's redelivery tries again.
        with pytest.raises(KeyError):
            waitlist.advance(event["event_id"])
    offered = waitlist.advance(event["event_id"])

    assert [store.get_booking(b).customer_id for b in offered] == ["ann"]
    mallory = waitlist.status(event["event_id"], "mallory")
    assert mallory["state"] == "SKIPPED" and mallory["reason"] == "offer_failed:KeyError"
