"""Orders (issue 43): every line held in one transaction or none, one payment for the sum that
confirms every line at once, expiry and cancellation of every line at once, and a late payment
that retakes every line or none. On moto's DynamoDB (single-threaded here, so exact); the race
against a really atomic store is tests/correctness/test_orders_race.py."""
from __future__ import annotations

import functools

import pytest

from holdfast.domain import pricing
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import BookingError, Conflict, InvalidRequest, SoldOut
from holdfast.domain.holder_address import holder_key
from holdfast.domain.organizers import Caller
from holdfast.domain.statuses import BookingStatus
from holdfast.products.orders.services import OrderLine, OrderService, PlaceOrder
from holdfast.products.parking.schemas import LotIn, ReservationIn
from holdfast.products.parking.services.lots import ParkingService
from holdfast.products.parking.tokens import LotKeys
from holdfast.schemas import BookingIn

from .conftest import event_request

ORGANIZER = Caller(organizer_id="org-1", key_id="key-1")
RUB = "RUB"
DAY = "2030-02-01"


@pytest.fixture
def orders(bookings):
    return OrderService(bookings)


@pytest.fixture
def parking(store, clock, bookings):
    return ParkingService(store, clock, bookings, 600, lambda: LotKeys(b"unit-test-orders"), id_salt="tests-salt")


@pytest.fixture
def concert(catalog):
    return catalog.create_event(event_request(
        capacity=None, seat_map={"rows": [{"name": "A", "seats": 4}]}, starts_at=f"{DAY}T17:00:00Z"), caller=ORGANIZER)


@pytest.fixture
def lot(parking):
    return parking.create_lot(LotIn.model_validate({
        "name": "Venue parking", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "100.00", "currency": RUB}, "daily_cap": {"value": "1000.00", "currency": RUB},
                   "grace_minutes": 10}}).command(), caller=ORGANIZER)


def seats(event_id, *names, **more):
    return OrderLine(event_id, HoldPlaces.of(BookingIn.model_validate({"seats": list(names), **more}).model_dump()))


def parking_line(lot_id, start="16:00", end="20:00", plate="A123BC77"):
    body = {"vehicle_type": "REGULAR", "plate": plate, "from": f"{DAY}T{start}:00Z", "to": f"{DAY}T{end}:00Z"}
    return OrderLine(lot_id, ReservationIn.model_validate(body).command())


def place(orders, *lines, customer="alice", key="order-1"):
    return orders.place(customer, key, PlaceOrder(tuple(lines))).booking


def test_a_ticket_and_its_parking_are_held_in_one_booking_priced_by_their_lines(orders, concert, lot, store):
    order = place(orders, seats(concert["event_id"], "A-1", "A-2"), parking_line(lot["lot_id"]))
    assert order.status is BookingStatus.HELD
    assert order.amount.text == "3400.00"   # two seats at 1500 + four hours at 100
    assert [line["amount"] for line in order.kind_details["lines"]] == ["3000.00", "400.00"]
    assert store.seat_states(concert["event_id"])["A-1"] == "held"
    items = pricing.line_items(order)
    assert [(item.description, item.quantity, item.unit.text) for item in items] == [
        ("Club night", 2, "1500.00"), ("Venue parking", 1, "400.00")]
    assert sum(item.amount.value for item in items) == order.amount.value


def test_one_line_that_cannot_be_held_holds_nothing_and_says_which(orders, concert, lot, store, bookings):
    bookings.create_booking(lot["lot_id"], "bob", "bob-1",
                            parking_line(lot["lot_id"], "17:00", "18:00", plate="B777BB77").request)
    with pytest.raises(BookingError) as refused:
        place(orders, seats(concert["event_id"], "A-1"), parking_line(lot["lot_id"]))
    assert refused.value.status == 409 and refused.value.code == "no_space_available"
    assert refused.value.details["line"] == 1
    assert set(store.seat_states(concert["event_id"]).values()) == {"available"}   # the seat line took nothing


def test_a_line_taken_between_the_plan_and_the_write_rolls_back_every_line(orders, concert, lot, store, monkeypatch):
    """The transaction fails on the second line's claim: the first line's seat is not held."""
    from holdfast.products.parking.kind import Parking

    real = Parking.plan
    raced = []

    def racing(self, reads, event, wanted, rng, attempt, *, now):
        places = real(self, reads, event, wanted, rng, attempt, now=now)
        if not raced:   # someone takes the space after our read, once
            raced.append(True)
            orders.bookings.create_booking(event.event_id, "carol", "carol-1",
                                           parking_line(event.event_id, "17:00", "18:00", plate="C1").request)
        return places

    monkeypatch.setattr(Parking, "plan", racing)
    with pytest.raises(BookingError) as refused:
        place(orders, seats(concert["event_id"], "A-1"), parking_line(lot["lot_id"]))
    assert refused.value.code == "no_space_available" and refused.value.details["line"] == 1
    assert store.seat_states(concert["event_id"])["A-1"] == "available"


def test_one_payment_confirms_every_line_and_a_cancel_refunds_the_sum(orders, concert, lot, store, payments, provider,
                                                                     bookings):
    order = place(orders, seats(concert["event_id"], "A-1"), parking_line(lot["lot_id"]))
    paying = payments.start_payment(order.booking_id, "alice", "pay-1")
    assert provider.payments[paying.payment.payment_id]["amount"] == {"value": "1900.00", "currency": RUB}
    provider.pay(paying.payment.payment_id)
    assert payments.apply_provider_payment(provider.get_payment(paying.payment.payment_id)) == "confirmed"
    assert store.seat_states(concert["event_id"])["A-1"] == "sold"
    assert store.get_booking(order.booking_id).status is BookingStatus.CONFIRMED
    cancelled = bookings.cancel(order.booking_id, "alice", refund=payments.cancel_confirmed)
    assert cancelled.status in (BookingStatus.REFUND_PENDING, BookingStatus.REFUNDED)
    assert [r["amount"] for r in provider.refunds.values()] == [{"value": "1900.00", "currency": RUB}]
    assert store.seat_states(concert["event_id"])["A-1"] == "available"


def test_expiry_releases_every_line_and_a_late_payment_retakes_all_or_nothing(orders, concert, lot, store, payments,
                                                                              provider, bookings, clock):
    order = place(orders, seats(concert["event_id"], "A-1"), parking_line(lot["lot_id"]))
    paying = payments.start_payment(order.booking_id, "alice", "pay-1")
    clock.advance(3600)
    assert bookings.expire(order.booking_id)["outcome"] == "expired"
    assert store.seat_states(concert["event_id"])["A-1"] == "available"
    # the parking space went to someone else meanwhile: the seat is not retaken alone
    bookings.create_booking(lot["lot_id"], "bob", "bob-1", parking_line(lot["lot_id"], "18:00", "19:00", "B1").request)
    provider.pay(paying.payment.payment_id)
    outcome = payments.apply_provider_payment(provider.get_payment(paying.payment.payment_id))
    assert outcome in ("refund_pending", "refunded", "manual_review"), outcome
    assert store.seat_states(concert["event_id"])["A-1"] == "available"
    assert store.get_booking(order.booking_id).status is not BookingStatus.CONFIRMED


def test_a_late_payment_with_every_line_still_free_retakes_them_all(orders, concert, lot, store, payments, provider,
                                                                     bookings, clock):
    order = place(orders, seats(concert["event_id"], "A-1"), parking_line(lot["lot_id"]))
    paying = payments.start_payment(order.booking_id, "alice", "pay-1")
    clock.advance(3600)
    bookings.expire(order.booking_id)
    provider.pay(paying.payment.payment_id)
    assert payments.apply_provider_payment(provider.get_payment(paying.payment.payment_id)) == "confirmed_late"
    assert store.seat_states(concert["event_id"])["A-1"] == "sold"


@pytest.mark.parametrize("make, code", [
    (lambda c, l: [seats(c, "A-1"), seats(c, "A-2")], "duplicate_offering"),
    (lambda c, l: [seats(c, "A-1")] * 6, "invalid_lines"),
    (lambda c, l: [seats(c, "A-1"), OrderLine("no-such-event", HoldPlaces(quantity=1))], "event_not_found"),
])
def test_an_order_that_cannot_be_one_is_refused_with_its_code(orders, concert, lot, make, code):
    with pytest.raises(BookingError) as refused:
        place(orders, *make(concert["event_id"], lot["lot_id"]))
    assert refused.value.code == code


def test_lines_of_two_organizers_are_refused(orders, concert, catalog):
    other = catalog.create_event(event_request(), caller=Caller(organizer_id="org-2", key_id="k"))
    with pytest.raises(InvalidRequest) as refused:
        place(orders, seats(concert["event_id"], "A-1"), OrderLine(other["event_id"], HoldPlaces(quantity=1)))
    assert refused.value.code == "mixed_organizers"


def test_a_repeat_returns_the_order_and_another_body_under_the_key_is_refused(orders, concert, lot):
    first = place(orders, seats(concert["event_id"], "A-1"), parking_line(lot["lot_id"]))
    again = orders.place("alice", "order-1", PlaceOrder((seats(concert["event_id"], "A-1"), parking_line(lot["lot_id"]))))
    assert again.replayed and again.booking.booking_id == first.booking_id
    with pytest.raises(BookingError) as refused:
        place(orders, seats(concert["event_id"], "A-2"))
    assert refused.value.code == "idempotency_key_reused"


def test_an_events_linked_lot_offers_the_window_around_its_start_as_it_is_now(catalog, store, clock, concert, lot):
    from holdfast.domain.errors import NotFound
    from holdfast.services.listing import ListingService

    listing = ListingService(store, clock)
    listing.link_companion(concert["event_id"], lot["lot_id"], 60, 240, ORGANIZER, missing="lot_not_found")
    shown = catalog.get_event(concert["event_id"])["companion"]
    assert shown == {"offering_id": lot["lot_id"], "before_minutes": 60, "after_minutes": 240,
                     "from": f"{DAY}T16:00:00.000Z", "to": f"{DAY}T21:00:00.000Z"}
    listing.update(concert["event_id"], {"starts_at": pricing_time(f"{DAY}T19:00:00Z")}, ORGANIZER)
    assert catalog.get_event(concert["event_id"])["companion"]["from"] == f"{DAY}T18:00:00.000Z"
    with pytest.raises(NotFound) as refused:   # another organizer's lot is no lot of theirs
        listing.link_companion(concert["event_id"], lot["lot_id"], 60, 240, Caller(organizer_id="org-2", key_id="k"),
                               missing="lot_not_found")
    assert refused.value.code in ("event_not_found", "lot_not_found")


def test_a_postponed_events_order_is_told_once_and_cancelled_with_every_line_refunded(
        orders, concert, lot, store, payments, provider, bookings, clock):
    from holdfast.services.listing import ListingService

    order = place(orders, seats(concert["event_id"], "A-1"), parking_line(lot["lot_id"]))
    paying = payments.start_payment(order.booking_id, "alice", "pay-1")
    provider.pay(paying.payment.payment_id)
    payments.apply_provider_payment(provider.get_payment(paying.payment.payment_id))
    ListingService(store, clock).update(concert["event_id"], {"starts_at": pricing_time(f"{DAY}T20:00:00Z")},
                                        ORGANIZER)
    # the order is one booking in the event's index: its holder is told once, not once per line
    assert store.event_booking_ids(concert["event_id"]).count(order.booking_id) == 1
    view = orders.view(order.booking_id, "alice")
    assert view["change_refund_until"] and view["cancel_refund"] is True
    cancelled = bookings.cancel(order.booking_id, "alice", refund=payments.cancel_confirmed)
    assert cancelled.status in (BookingStatus.REFUND_PENDING, BookingStatus.REFUNDED)
    assert [r["amount"] for r in provider.refunds.values()] == [{"value": "1900.00", "currency": RUB}]


def pricing_time(text):
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_an_order_is_one_message_naming_every_line_and_what_it_costs(orders, concert, lot, store, catalog):
    from holdfast.services.messages import Site, compose

    order = place(orders, seats(concert["event_id"], "A-1", "A-2"), parking_line(lot["lot_id"]))
    message = compose(store, {"type": "booking.held", "booking_id": order.booking_id, "at": order.created_at,
                              "hold_expires_at": order.hold_expires_at}, Site(), html=False)
    assert "Club night: 2 × " in message.text and "Venue parking: 1 × " in message.text, message.text
    assert "1,500.00" in message.text and "400.00" in message.text


def test_a_cancel_refunds_each_line_by_its_own_policy_in_one_refund(orders, concert, parking, store, payments, provider,
                                                                    bookings):
    """A lot that keeps the money keeps its line's part; the seats' part comes back, in one provider
    refund, and the journal says which line kept what."""
    strict = parking.create_lot(LotIn.model_validate({
        "name": "Strict parking", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "100.00", "currency": RUB}}, "policy": {"cancel_refund": "none"}}).command(),
        caller=ORGANIZER)
    order = place(orders, seats(concert["event_id"], "A-1"), parking_line(strict["lot_id"]))
    paying = payments.start_payment(order.booking_id, "alice", "pay-1")
    provider.pay(paying.payment.payment_id)
    payments.apply_provider_payment(provider.get_payment(paying.payment.payment_id))
    cancelled = bookings.cancel(order.booking_id, "alice", refund=payments.cancel_confirmed)
    assert [r["amount"] for r in provider.refunds.values()] == [{"value": "1500.00", "currency": RUB}]
    _, journal = store.get_booking_with_journal(order.booking_id)
    assert any("kept by their own policy: L2 400.00" in entry.decision for entry in journal)
    assert cancelled.status in (BookingStatus.REFUND_PENDING, BookingStatus.REFUNDED)
    # an order of lines that all keep their money cannot be cancelled for nothing
    only = place(orders, parking_line(strict["lot_id"], "08:00", "09:00"), customer="bob", key="order-2")
    paying = payments.start_payment(only.booking_id, "bob", "pay-2")
    provider.pay(paying.payment.payment_id)
    payments.apply_provider_payment(provider.get_payment(paying.payment.payment_id))
    with pytest.raises(Conflict) as refused:
        bookings.cancel(only.booking_id, "bob", refund=payments.cancel_confirmed)
    assert refused.value.code == "nothing_to_refund"
    assert store.get_booking(only.booking_id).status is BookingStatus.CONFIRMED


def _big_events(catalog, count: int = 5) -> list[dict]:
    """``count`` seat maps of one organizer, each selling up to 50 seats a booking and capping one
    network address's live holds (so an order counts toward each one's address slot too)."""
    return [catalog.create_event(event_request(
        name=f"Hall {n}", capacity=None, max_per_booking=50, max_holds_per_address=3,
        seat_map={"rows": [{"name": "A", "seats": 25}, {"name": "B", "seats": 25}]}, starts_at=f"{DAY}T17:00:00Z"),
        caller=ORGANIZER) for n in range(count)]


def _largest_lines(events: list[dict], claims: int) -> tuple[OrderLine, ...]:
    """One line per event whose seats add up to ``claims`` (every seat is one claim)."""
    shares = [claims // len(events) + (1 if n < claims % len(events) else 0) for n in range(len(events))]
    return tuple(seats(event["event_id"], *[f"{'AB'[k // 25]}-{k % 25 + 1}" for k in range(share)])
                 for event, share in zip(events, shares))


def test_the_largest_order_the_routes_accept_is_one_transaction_of_at_most_100_items(
        orders, bookings, catalog, store, payments, provider, monkeypatch):
    """DynamoDB takes at most 100 items in a TransactWriteItems. The largest order the routes
    accept (five lines, MAX_CLAIMS seats among them, every offering capping an address's holds, the
    first hold of its expiry bucket from this container) is held in one transaction of exactly 100
    items on the store as it runs (moto with the local stack's transactions, which keep the
    limit), then paid and cancelled; one seat more is refused before anything is written, 400
    ``order_too_large``, never a 5xx from the store."""
    from holdfast.adapters.codec import Table
    from holdfast.products.orders.services import MAX_CLAIMS, MAX_LINES

    sizes: list[int] = []
    real = Table._transact

    def counted(self, items):
        sizes.append(len(items))
        return real(self, items)

    monkeypatch.setattr(Table, "_transact", counted)
    # the hold keys its network address as a deployment does (wiring.holder_address)
    monkeypatch.setattr(bookings, "address_key", functools.partial(holder_key, "unit-holder-key-0123456789"))
    address = "203.0.113.9"
    events = _big_events(catalog, MAX_LINES)
    with pytest.raises(InvalidRequest) as refused:
        orders.place("alice", "too-big", PlaceOrder(_largest_lines(events, MAX_CLAIMS + 1), holder_address=address))
    assert refused.value.status == 400 and refused.value.code == "order_too_large"
    assert refused.value.details["max"] == MAX_CLAIMS
    assert all(set(store.seat_states(e["event_id"]).values()) == {"available"} for e in events)

    sizes.clear()
    order = orders.place("alice", "largest", PlaceOrder(_largest_lines(events, MAX_CLAIMS),
                                                        holder_address=address)).booking
    assert order.status is BookingStatus.HELD
    assert order.counted_address == holder_key("unit-holder-key-0123456789", address)
    assert sizes == [100]                                    # the hold: the limit exactly, and it took
    assert sum(list(store.seat_states(e["event_id"]).values()).count("held") for e in events) == MAX_CLAIMS

    sizes.clear()
    started = payments.start_payment(order.booking_id, "alice", "pay-largest")
    provider.pay(started.payment.payment_id)
    payments.apply_provider_payment(provider.get_payment(started.payment.payment_id))
    assert store.get_booking(order.booking_id).status is BookingStatus.CONFIRMED
    cancelled = payments.cancel_confirmed(store.get_booking(order.booking_id))
    assert cancelled.status.value in ("REFUND_PENDING", "REFUNDED")
    assert max(sizes) <= 100 and all(set(store.seat_states(e["event_id"]).values()) == {"available"} for e in events)
