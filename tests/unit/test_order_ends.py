"""An order ends with its last line, each line's end read from its own offering as it is now
(issue 42, "one fact, one place"). Before, erasure and a late payment read an order's end from its
first line's event alone (``booking.event_id``), or its latest granule when a line had any, and a
line's own end was the start copied at hold time: ``DELETE /customers/me`` erased an order whose
second event was a month ahead, and a late payment after a postponed line's old start was given
back though its places were free and its event still to come."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import Conflict
from holdfast.domain.statuses import BookingStatus
from holdfast.products.orders.services import OrderLine, OrderService, PlaceOrder
from holdfast.schemas import BookingIn
from holdfast.services.listing import ListingService
from holdfast.services.personal_data import PersonalDataService

from .conftest import event_request

FEBRUARY, MARCH = "2030-02-01T20:00:00Z", "2030-03-01T20:00:00Z"


def line(event_id):
    return OrderLine(event_id, HoldPlaces.of(BookingIn.model_validate({"quantity": 1}).model_dump()))


def pay(payments, provider, booking_id):
    paying = payments.start_payment(booking_id, "ann", f"pay-{booking_id}")
    provider.pay(paying.payment.payment_id)
    return payments.apply_provider_payment(provider.get_payment(paying.payment.payment_id))


def test_an_order_whose_second_event_is_ahead_is_not_erased_after_the_first(store, clock, catalog, bookings,
                                                                               payments, provider):
    first = catalog.create_event(event_request(starts_at=FEBRUARY))["event_id"]
    second = catalog.create_event(event_request(starts_at=MARCH))["event_id"]
    order = OrderService(bookings).place("ann", "o-1", PlaceOrder((line(first), line(second)))).booking
    assert pay(payments, provider, order.booking_id) == "confirmed"
    clock.now = datetime(2030, 2, 3, 12, 0, tzinfo=timezone.utc)
    service = PersonalDataService(store, clock, b"unit-order-ends-pseudonym-key-01", 0)
    with pytest.raises(Conflict) as refused:
        service.forget("ann")
    assert refused.value.code == "bookings_active"
    assert service.erase_ended()["erased"] == 0
    assert store.get_booking(order.booking_id).erased_at is None


def test_a_late_payment_after_a_postponed_lines_old_start_retakes_the_order(store, clock, catalog, bookings,
                                                                              payments, provider):
    moved = catalog.create_event(event_request(starts_at=FEBRUARY))["event_id"]
    other = catalog.create_event(event_request(starts_at=MARCH))["event_id"]
    order = OrderService(bookings).place("ann", "o-2", PlaceOrder((line(moved), line(other)))).booking
    paying = payments.start_payment(order.booking_id, "ann", "pay-late")
    clock.advance(3600)
    assert bookings.expire(order.booking_id)["outcome"] == "expired"
    ListingService(store, clock).update(moved, {"starts_at": datetime(2030, 2, 20, 20, 0, tzinfo=timezone.utc)})
    clock.now = datetime(2030, 2, 3, 12, 0, tzinfo=timezone.utc)   # past the old start, before the new
    provider.pay(paying.payment.payment_id)
    assert payments.apply_provider_payment(provider.get_payment(paying.payment.payment_id)) == "confirmed_late"
    after = store.get_booking(order.booking_id)
    assert after.status is BookingStatus.CONFIRMED
    # the write that retook it keeps each line's end and the order's as they are now
    assert {stored["offering_id"]: stored["ends_at"] for stored in after.kind_details["lines"]} == \
        {moved: "2030-02-20T20:00:00.000Z", other: "2030-03-01T20:00:00.000Z"}
    assert after.ends_at == "2030-03-01T20:00:00.000Z"
