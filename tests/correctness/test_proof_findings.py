"""What this round's 10,000-history `make proof` found, each held by the smallest history that
shows it (docs/invariants.md, "The model and `make proof`")."""
from __future__ import annotations

import random

from holdfast.domain.commands import HoldPlaces
from holdfast.clock import parse_iso
from holdfast.domain.statuses import BookingStatus
from holdfast.products.orders.services import OrderLine, PlaceOrder
from holdfast.services.settlements import MAX_RESENDS
from tests.correctness.kind_cases import MODEL_CASES
from tests.correctness.model import BookingModel, RandomDraw, fake_storage


def _paid_order(model: BookingModel, customer: str) -> str:
    """An order of two seats of "seats" (its first line, so the order's offering) and three places
    of "ga", paid and its notification applied: five places in all, more than "seats" has."""
    lines = (OrderLine(model.events["seats"], HoldPlaces.of(model._request_body("seats", ("A-1", "A-2")))),
             OrderLine(model.events["ga"], HoldPlaces.of(model._request_body("ga", 3))))
    placed = model.orders.place(customer, "order-five", PlaceOrder(lines, contact_email=f"{customer}@example.com"))
    booking_id = placed.booking.booking_id
    model._remember(booking_id, customer)
    started = model.payments.start_payment(booking_id, customer, "pay-five")
    model.provider.pay(started.payment.payment_id)
    model.payments.apply_provider_payment(model.provider.get_payment(started.payment.payment_id))
    return booking_id


def test_exchange_for_less_leaves_an_order_of_seats_alone_and_exchanges_a_booking_of_seats():
    # make proof seed 542659796: a paid order whose first line is of "seats" (so its offering is
    # "seats") was taken for a booking of seats, and the model drew as many seats as the order's
    # five places out of the map's four (X0: the model itself failed)
    model = BookingModel(fake_storage(), 1, kind=MODEL_CASES[0])
    order_id = _paid_order(model, "cat")
    order = model.store.get_booking(order_id)
    assert order.status is BookingStatus.CONFIRMED and order.event_id == model.events["seats"]
    assert order.places.quantity == 5
    for seed in range(6):
        model.exchange_for_less(RandomDraw(random.Random(seed)))
    assert model.store.get_booking(order_id).version == order.version   # never exchanged
    assert model.log["exchanged_for_less"] >= 1                         # a booking of seats was
    model.check()


def test_a_difference_payment_s_settlement_failed_after_the_register_canceled_it_is_no_f3():
    # make proof seed 20261260006: a dearer exchange's difference payment's settlement receipt was
    # canceled by the register on every try; the settlement failed for good naming the last
    # (canceled) receipt, and the model's F3 counted that canceled receipt as one still standing
    model = BookingModel(fake_storage(), 2, kind=MODEL_CASES[0])   # (an even seed: receipts on)
    created = model._book("cheaper", "cat", "k-cheap", model._request_body("cheaper", ("A-1",)))
    booking_id = created.booking.booking_id
    model._remember(booking_id, "cat")
    started = model.payments.start_payment(booking_id, "cat", "pay-cheap")
    model.provider.pay(started.payment.payment_id)
    model.payments.apply_provider_payment(model.provider.get_payment(started.payment.payment_id))
    held = model.dearer_exchanges.exchange(booking_id, "cat", "for-more-1", model.events["seats"],
                                           HoldPlaces(seats=["A-2"]))
    difference_id = held.held_difference["payment"]["payment_id"]
    model.provider.pay(difference_id)
    model.payments.apply_provider_payment(model.provider.get_payment(difference_id))
    moved = model.store.get_booking(booking_id)
    assert moved.event_id == model.events["seats"] and len(moved.settled_differences) == 1
    # the start passes; the register cancels every receipt of both payments, each sent three times
    starts = parse_iso(model.store.get_event(model.events["seats"])["starts_at"])
    model.clock.advance((starts - model.clock()).total_seconds() + 61)
    model.provider.fail("register_receipt", *["canceled"] * 2 * (MAX_RESENDS + 1))
    for _ in range(4 * (MAX_RESENDS + 1)):
        model.run_sweep()
        model.clock.advance(model.settlements.retry_seconds[0] + 61)
    failed = model.store.get_booking(booking_id)
    [difference] = [entry for entry in failed.differences if entry.get("settlement")]
    assert difference["settlement"]["state"] == "failed" and difference["settlement"]["status"] == "canceled"
    assert difference["settlement"]["receipt_id"] in difference["settlement"]["canceled"]
    assert failed.review and failed.review["reason"] == "settlement_receipt_failed"
    model.check()
