"""A per-event cap on one customer's active holds (finding 13 of issue 11), enforced by a
counter item written in the hold's own transaction and released in the same transaction as the
booking leaves HELD/PAYMENT_PENDING (expiry, cancellation, failure, confirmation, review)."""
import pytest

from holdfast.domain.booking import DEFAULT_HOLDS_PER_CUSTOMER
from holdfast.domain.errors import Conflict
from holdfast.schemas import BookingIn

from .conftest import event_request


@pytest.fixture
def store(fake_store):
    return fake_store


def active_holds(store, customer, event_id):
    item = store.table.get(f"CUSTOMER#{customer}", f"HOLDS#EVENT#{event_id}")
    return int(item["active"]) if item else 0


def hold(bookings, event_id, key, customer="alice", **body):
    return bookings.create_booking(event_id, customer, key, BookingIn(**(body or {"quantity": 1}))).booking


def test_the_cap_refuses_one_hold_more_and_frees_on_every_release(catalog, bookings, payments, provider, store, clock):
    event_id = catalog.create_event(event_request(capacity=50, max_holds_per_customer=3))["event_id"]
    held = [hold(bookings, event_id, f"k{n}") for n in range(3)]
    with pytest.raises(Conflict) as err:
        hold(bookings, event_id, "k3")
    assert err.value.code == "hold_limit_reached" and err.value.details["limit"] == 3
    assert catalog.get_event(event_id)["counts"]["held"] == 3          # the refused hold took nothing
    hold(bookings, event_id, "k0")                                      # a replay is not a new hold
    hold(bookings, event_id, "other", customer="bob")                  # the cap is per customer

    bookings.cancel(held[0].booking_id, "alice")                        # cancelled: a slot is free
    fourth = hold(bookings, event_id, "k3")
    with pytest.raises(Conflict):
        hold(bookings, event_id, "k4")
    payment_id = payments.start_payment(held[1].booking_id, "alice", "p1").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))  # confirmed: no longer a hold
    assert active_holds(store, "alice", event_id) == 2
    fifth = hold(bookings, event_id, "k4")
    clock.advance(601)
    for booking in (held[2], fourth, fifth):
        bookings.expire(booking.booking_id)                             # expired: all slots free
    assert active_holds(store, "alice", event_id) == 0
    assert [hold(bookings, event_id, f"again-{n}").status.value for n in range(3)] == ["HELD"] * 3


def test_the_default_cap_and_the_event_view(catalog, bookings, ga_event):
    assert ga_event["max_holds_per_customer"] == DEFAULT_HOLDS_PER_CUSTOMER
    for n in range(DEFAULT_HOLDS_PER_CUSTOMER):
        hold(bookings, ga_event["event_id"], f"k{n}")
    with pytest.raises(Conflict) as err:
        hold(bookings, ga_event["event_id"], "one-more")
    assert err.value.code == "hold_limit_reached"


def test_a_failed_payment_frees_its_slot(catalog, bookings, payments, provider, store):
    event_id = catalog.create_event(event_request(capacity=10, max_holds_per_customer=1))["event_id"]
    booking = hold(bookings, event_id, "k")
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.decline(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    assert store.get_booking(booking.booking_id).status.value == "PAYMENT_FAILED"
    assert active_holds(store, "alice", event_id) == 0
    hold(bookings, event_id, "k2")


def test_a_waitlist_offer_counts_and_is_refused_at_the_cap(catalog, bookings, store, clock):
    # Queueing is no way round the cap (issue 28, finding 5): an offer is a hold like any other.
    event_id = catalog.create_event(event_request(capacity=10, max_holds_per_customer=1))["event_id"]
    own = hold(bookings, event_id, "k")
    with pytest.raises(Conflict) as refused:
        bookings.hold_for_customer(event_id, "alice", "waitlist-offer-e1", BookingIn(quantity=1), hold_seconds=300,
                                   outbox_type="waitlist.offered", actor="waitlist")
    assert refused.value.code == "hold_limit_reached"
    assert active_holds(store, "alice", event_id) == 1
    bookings.cancel(own.booking_id, "alice")
    offer = bookings.hold_for_customer(event_id, "alice", "waitlist-offer-e1", BookingIn(quantity=1), hold_seconds=300,
                                       outbox_type="waitlist.offered", actor="waitlist").booking
    assert active_holds(store, "alice", event_id) == 1
    with pytest.raises(Conflict):
        hold(bookings, event_id, "k2")
    clock.advance(301)
    bookings.expire(offer.booking_id)
    assert active_holds(store, "alice", event_id) == 0