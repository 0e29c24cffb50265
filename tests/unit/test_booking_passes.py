"""A booking's pass (GET /bookings/{id}/pass.svg): its kind's signed token, to its own customer,
once there is one; a QR code of exactly that token (decoded from the served picture in
tests/browser/test_pages.py)."""
from __future__ import annotations

import pytest

from holdfast import kinds
from holdfast.domain.errors import Forbidden, NotFound
from holdfast.services.passes import PassService
from tests.unit.test_parking import KEYS, confirm, make_lot, parking, reserve, view_bookings  # noqa: F401


@pytest.fixture
def passes(store):
    return PassService(store, lambda booking: kinds.of_booking(booking).pass_token(booking, lambda: KEYS))


def code_of(call):
    with pytest.raises((NotFound, Forbidden)) as refused:
        call()
    return refused.value.status, refused.value.code


def test_a_paid_reservation_has_a_pass_that_is_its_entry_token(parking, passes, payments, provider):
    booking = reserve(parking, make_lot(parking))
    assert code_of(lambda: passes.token(booking.booking_id, "alice")) == (404, "no_pass")   # held: not yet
    confirm(payments, provider, booking)
    token = passes.token(booking.booking_id, "alice")
    assert token == parking.bookings.view(booking.booking_id, "alice")["entry_token"]
    svg = passes.svg(booking.booking_id, "alice")
    assert svg.startswith("<svg") and "<title>Entry pass</title>" in svg


def test_a_pass_is_only_its_customers(parking, passes, payments, provider):
    booking = reserve(parking, make_lot(parking))
    confirm(payments, provider, booking)
    # answered as GET /bookings/{id} answers another customer and an unknown booking
    assert code_of(lambda: passes.svg(booking.booking_id, "mallory")) == (403, "forbidden")
    assert code_of(lambda: passes.svg("no-such-booking", "alice")) == (404, "booking_not_found")


def test_a_cancelled_reservation_has_no_pass(parking, passes, payments, provider):
    booking = reserve(parking, make_lot(parking))
    confirm(payments, provider, booking)
    parking.bookings.cancel(booking.booking_id, "alice", refund=lambda b: payments.cancel_confirmed(b),
                            void=lambda b: payments.void_after_cancel(b))
    assert code_of(lambda: passes.token(booking.booking_id, "alice")) == (404, "no_pass")


def test_a_kind_without_passes_has_none(passes, store, clock, scheduled):
    from holdfast.domain.commands import HoldPlaces, Price
    from holdfast.products.events.commands import CreateEvent
    from holdfast.services.bookings import BookingService
    from holdfast.services.catalog import CatalogService

    catalog = CatalogService(store, clock, 600, "salt")
    event = catalog.create_event(CreateEvent(name="Gig", venue="Club", city="Moscow", category="music",
                                             starts_at=clock().replace(year=2031), price=Price("100.00", "RUB"),
                                             capacity=5))
    booking = BookingService(store, clock, None).create_booking(event["event_id"], "alice", "k-1",
                                                                HoldPlaces(quantity=1)).booking
    assert code_of(lambda: passes.token(booking.booking_id, "alice")) == (404, "no_pass")
