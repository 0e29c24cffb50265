"""A cap on the live holds of one network address (issue 42, finding 13), whatever accounts make
them: a counter item in the hold's own transaction, given back in the write that ends the hold."""
import functools
import random

import pytest

from holdfast.domain.errors import TooManyHolds
from holdfast.domain.holder_address import address_limit, holder_key, network_of
from holdfast.products.orders.services import OrderLine, OrderService, PlaceOrder
from holdfast.domain.commands import HoldPlaces

from .conftest import event_request

#: The holder key secret's value here (wiring.HOLDER_KEY_SECRET in a deployment), and the keyer
#: the bookings service is given (wiring.holder_address).
HOLDER_KEY = "unit-holder-key-0123456789"
KEYED = functools.partial(holder_key, HOLDER_KEY)
HOME_IP, OTHER_IP = "203.0.113.7", "198.51.100.1"
HOME, OTHER = KEYED(HOME_IP), KEYED(OTHER_IP)


@pytest.fixture
def store(fake_store):
    return fake_store


@pytest.fixture
def bookings(store, clock, scheduled):
    from holdfast.services.bookings import BookingService

    return BookingService(store, clock, lambda booking_id, at: scheduled.append((booking_id, at)),
                          rng=random.Random(7), address_key=KEYED)


def live_holds(store, address, event_id):
    item = store.table.get(f"HOLDS#ADDR#{address}", f"EVENT#{event_id}")
    return int(item["live_holds"]) if item else 0


def hold(bookings, event_id, customer, key, address=HOME_IP):
    return bookings.create_booking(event_id, customer, key, HoldPlaces(quantity=1, holder_address=address)).booking


def test_the_network_key():
    assert network_of("203.0.113.7") == "203.0.113.7"
    assert network_of("2001:db8:1:2:3:4:5:6") == network_of("2001:db8:1:2:ffff::1") == "2001:db8:1:2::/64"
    assert network_of("::ffff:203.0.113.7") == "203.0.113.7"
    assert network_of("not an address") is None and holder_key(HOLDER_KEY, "") is None
    key = holder_key(HOLDER_KEY, "203.0.113.7")
    assert key == HOME and "203" not in key and key != holder_key("another-key-0123456", "203.0.113.7")
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
    hold(bookings, event_id, "acct-3", "k", address=OTHER_IP)          # another network
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

    capped = BookingService(store, clock, lambda *_: None, holds_per_address=1, address_key=KEYED)
    event_id = catalog.create_event(event_request(capacity=10))["event_id"]
    hold(capped, event_id, "a", "k")
    with pytest.raises(TooManyHolds):
        hold(capped, event_id, "b", "k")
    uncapped = BookingService(store, clock, lambda *_: None, address_key=KEYED)   # HOLDS_PER_ADDRESS 0: not counted
    booking = hold(uncapped, event_id, "c", "k")
    assert booking.counted_address is None and live_holds(store, HOME, event_id) == 1


def test_an_order_counts_once_toward_each_offering(catalog, bookings, store):
    first = catalog.create_event(event_request(capacity=10, max_holds_per_address=1))["event_id"]
    second = catalog.create_event(event_request(capacity=10, max_holds_per_address=3))["event_id"]
    orders = OrderService(bookings)
    order = orders.place("a", "k", PlaceOrder((OrderLine(first, HoldPlaces(quantity=2)),
                                               OrderLine(second, HoldPlaces(quantity=1))), holder_address=HOME_IP)).booking
    assert (live_holds(store, HOME, first), live_holds(store, HOME, second)) == (1, 1)
    with pytest.raises(TooManyHolds) as refused:                       # the first offering's cap of 1
        orders.place("b", "k", PlaceOrder((OrderLine(second, HoldPlaces(quantity=1)),
                                           OrderLine(first, HoldPlaces(quantity=1))), holder_address=HOME_IP))
    assert refused.value.details["line"] == 1 and refused.value.details["event_id"] == first
    bookings.cancel(order.booking_id, "a")
    assert (live_holds(store, HOME, first), live_holds(store, HOME, second)) == (0, 0)


def test_the_address_is_keyed_only_for_a_capped_offering_and_only_its_key_is_stored(catalog, store, clock):
    """The keyer (the holder key secret's HMAC) is asked once per capped hold and never for an
    uncapped offering's, so a deployment reads the secret on its first capped hold; the table and
    the booking keep the key, never the address; a service given no keyer counts no address."""
    from holdfast.services.bookings import BookingService

    asked = []
    keyer = BookingService(store, clock, lambda *_: None, address_key=lambda address: asked.append(address) or KEYED(address))
    plain = catalog.create_event(event_request(capacity=10))["event_id"]
    capped = catalog.create_event(event_request(capacity=10, max_holds_per_address=2))["event_id"]
    assert hold(keyer, plain, "a", "k1").counted_address is None and asked == []
    booking = hold(keyer, capped, "a", "k2")
    assert asked == [HOME_IP] and booking.counted_address == HOME == store.get_booking(booking.booking_id).counted_address
    assert HOME_IP not in repr(store.table.items)                     # the address is nowhere in the table
    assert live_holds(store, HOME, capped) == 1 and live_holds(store, HOME_IP, capped) == 0
    blind = BookingService(store, clock, lambda *_: None)
    assert hold(blind, capped, "b", "k3").counted_address is None and live_holds(store, HOME, capped) == 1


class Verifier:
    """The verifier port: tokens "solved-*" are good once; "down" cannot be checked."""

    def __init__(self):
        self.used = set()

    def verify(self, token, ip=None):
        from holdfast.ports import VerifierUnavailable

        if token == "down":
            raise VerifierUnavailable("unreachable")
        good = token.startswith("solved-") and token not in self.used
        self.used.add(token)
        return good


def test_an_offering_that_asks_for_a_challenge_holds_only_with_a_solved_one(catalog, store, clock):
    from holdfast.domain.errors import ChallengeRefused, ChallengeUnavailable
    from holdfast.services.bookings import BookingService
    from holdfast.services.challenges import Challenges

    bookings = BookingService(store, clock, lambda *_: None, challenges=Challenges(Verifier()))
    asked = catalog.create_event(event_request(capacity=10, captcha_required=True))["event_id"]
    assert catalog.get_event(asked)["captcha_required"] is True
    plain = catalog.create_event(event_request(capacity=10))["event_id"]
    assert "captcha_required" not in catalog.get_event(plain)
    assert bookings.create_booking(plain, "a", "plain", HoldPlaces(quantity=1)).booking   # not asked: no token

    for token, code, status in ((None, "captcha_required", 400), ("wrong", "captcha_invalid", 403)):
        with pytest.raises(ChallengeRefused) as refused:
            bookings.create_booking(asked, "a", "k", HoldPlaces(quantity=1, captcha_token=token))
        assert (refused.value.code, refused.value.status) == (code, status)
    with pytest.raises(ChallengeUnavailable):
        bookings.create_booking(asked, "a", "k", HoldPlaces(quantity=1, captcha_token="down"))
    assert catalog.get_event(asked)["counts"]["held"] == 0
    held = bookings.create_booking(asked, "a", "k", HoldPlaces(quantity=1, captcha_token="solved-1")).booking
    # a repeat of the request that held is its replay, though its token is spent
    again = bookings.create_booking(asked, "a", "k", HoldPlaces(quantity=1, captcha_token="solved-1"))
    assert again.replayed and again.booking.booking_id == held.booking_id
    # the deployment may ask it of every offering
    everywhere = BookingService(store, clock, lambda *_: None, challenges=Challenges(Verifier(), always=True))
    with pytest.raises(ChallengeRefused):
        everywhere.create_booking(plain, "b", "k", HoldPlaces(quantity=1))
    orders = OrderService(everywhere)
    with pytest.raises(ChallengeRefused):
        orders.place("b", "o", PlaceOrder((OrderLine(plain, HoldPlaces(quantity=1)),)))
    assert orders.place("b", "o", PlaceOrder((OrderLine(plain, HoldPlaces(quantity=1)),), captcha_token="solved-2"))


def test_the_smartcaptcha_adapter_against_the_sandbox_stand_in_and_an_unreachable_one():
    from devstack.paysandbox import SandboxServer
    from holdfast.adapters.captcha import SmartCaptchaVerifier
    from holdfast.ports import VerifierUnavailable

    with SandboxServer(host="127.0.0.1", port=0) as sandbox:
        url = f"{sandbox.origin}/smartcaptcha/validate"
        token = sandbox.captcha.issue()
        wrong_key = SmartCaptchaVerifier(url, lambda: "not-the-server-key")
        with pytest.raises(VerifierUnavailable):                        # refused 403: a setup error
            wrong_key.verify(token)
        verifier = SmartCaptchaVerifier(url, lambda: sandbox.captcha.server_key)
        assert verifier.verify(token) is True
        assert verifier.verify(token) is False                          # good once
        assert verifier.verify("made-up") is False
    with pytest.raises(VerifierUnavailable):
        SmartCaptchaVerifier("http://127.0.0.1:9/validate", lambda: "k" * 16, timeout=1).verify("t")
