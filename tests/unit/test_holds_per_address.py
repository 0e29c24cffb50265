"""A cap on the live holds of one network address (issue 42, finding 13), whatever accounts make
them: a counter item in the hold's own transaction, given back in the write that ends the hold."""
import pytest

from holdfast.domain.errors import TooManyHolds
from holdfast.domain.holder_address import address_limit, holder_key, network_of
from holdfast.products.orders.services import OrderLine, OrderService, PlaceOrder
from holdfast.domain.commands import HoldPlaces

from .conftest import event_request

HOME = holder_key("unit-salt-0123456789", "203.0.113.7")
OTHER = holder_key("unit-salt-0123456789", "198.51.100.1")


@pytest.fixture
def store(fake_store):
    return fake_store


def live_holds(store, address, event_id):
    item = store.table.get(f"HOLDS#ADDR#{address}", f"EVENT#{event_id}")
    return int(item["live_holds"]) if item else 0


def hold(bookings, event_id, customer, key, address=HOME):
    return bookings.create_booking(event_id, customer, key, HoldPlaces(quantity=1, holder_address=address)).booking


def test_the_network_key():
    assert network_of("203.0.113.7") == "203.0.113.7"
    assert network_of("2001:db8:1:2:3:4:5:6") == network_of("2001:db8:1:2:ffff::1") == "2001:db8:1:2::/64"
    assert network_of("::ffff:203.0.113.7") == "203.0.113.7"
    assert network_of("not an address") is None and holder_key("salt-0123456789ab", "") is None
    key = holder_key("unit-salt-0123456789", "203.0.113.7")
    assert key == HOME and "203" not in key and key != holder_key("another-salt-012345", "203.0.113.7")
    assert address_limit(None, 0) is None and address_limit(None, 20) == 20 and address_limit(3, 20) == 3


def test_new_accounts_do_not_reset_the_cap_and_every_end_frees_a_slot(catalog, bookings, payments, provider, store,
                                                                      clock):
    event_id = catalog.create_event(event_request(capacity=50, max_holds_per_address=2))["event_id"]
    assert catalog.get_event(event_id)["max_holds_per_address"] == 2
    first, second = hold(bookings, event_id, "acct-1", "k"), hold(bookings, event_id, "acct-2", "k")
    with pytest.raises(TooManyHolds) as refused:
        hold(bookings, event_id, "acct-3", "k")                       # a new account, the same network
    assert refused.value.code == "too_many_holds" and refused.value.status == 429
    assert refused.value.details == {"limit": 2, "per": "address", "retry_after": 600}
    assert catalog.get_event(event_id)["counts"]["held"] == 2          # the refused hold took nothing
    assert hold(bookings, event_id, "acct-1", "k").booking_id == first.booking_id   # a repeat is a replay
    hold(bookings, event_id, "acct-3", "k", address=OTHER)             # another network
    assert live_holds(store, HOME, event_id) == 2

    bookings.cancel(first.booking_id, "acct-1")                        # cancelled: a slot frees
    third = hold(bookings, event_id, "acct-3", "k2")
    assert store.get_booking(first.booking_id).counted_address is None  # the ended hold keeps no key
    payment_id = payments.start_payment(second.booking_id, "acct-2", "p").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))  # confirmed: no longer a live hold
    assert live_holds(store, HOME, event_id) == 1
    fourth = hold(bookings, event_id, "acct-4", "k")
    clock.advance(601)
    for booking in (third, fourth):
        bookings.expire(booking.booking_id)                            # lapsed: the slots free
    assert live_holds(store, HOME, event_id) == 0


def test_the_deployment_default_and_no_cap(catalog, store, clock, scheduled):
    from holdfast.services.bookings import BookingService

    capped = BookingService(store, clock, lambda *_: None, holds_per_address=1)
    event_id = catalog.create_event(event_request(capacity=10))["event_id"]
    hold(capped, event_id, "a", "k")
    with pytest.raises(TooManyHolds):
        hold(capped, event_id, "b", "k")
    uncapped = BookingService(store, clock, lambda *_: None)        # HOLDS_PER_ADDRESS 0: not counted
    booking = hold(uncapped, event_id, "c", "k")
    assert booking.counted_address is None and live_holds(store, HOME, event_id) == 1


def test_an_order_counts_once_toward_each_offering(catalog, bookings, store):
    first = catalog.create_event(event_request(capacity=10, max_holds_per_address=1))["event_id"]
    second = catalog.create_event(event_request(capacity=10, max_holds_per_address=3))["event_id"]
    orders = OrderService(bookings)
    order = orders.place("a", "k", PlaceOrder((OrderLine(first, HoldPlaces(quantity=2)),
                                               OrderLine(second, HoldPlaces(quantity=1))), holder_address=HOME)).booking
    assert (live_holds(store, HOME, first), live_holds(store, HOME, second)) == (1, 1)
    with pytest.raises(TooManyHolds) as refused:                       # the first offering's cap of 1
        orders.place("b", "k", PlaceOrder((OrderLine(second, HoldPlaces(quantity=1)),
                                           OrderLine(first, HoldPlaces(quantity=1))), holder_address=HOME))
    assert refused.value.details["line"] == 1 and refused.value.details["event_id"] == first
    bookings.cancel(order.booking_id, "a")
    assert (live_holds(store, HOME, first), live_holds(store, HOME, second)) == (0, 0)
