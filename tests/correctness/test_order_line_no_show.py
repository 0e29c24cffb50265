"""An order's parking line on a lot that refunds no-shows (issue 44's leftover): the model's rules
over the whole path, on the model's own services as the functions wire them. The money rule counts
the line's refund as a part given back while the order stands (M1-M5, S1-S3, XC2), the receipts
rule its refund receipt (F2-F4), and a later cancel of the order gives back what is left, once."""
from __future__ import annotations

from datetime import timedelta

from holdfast.clock import parse_iso
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.statuses import BookingStatus
from holdfast.products.orders.services import OrderLine, PlaceOrder
from holdfast.products.parking.schemas import LotIn, ReservationIn
from holdfast.products.parking.services.lots import ParkingService
from holdfast.products.parking.tokens import LotKeys
from tests.correctness.kind_cases import MODEL_CASES, PARKING_WINDOW
from tests.correctness.model import ORGANIZER, BookingModel, fake_storage


def _refunding_lot(model: BookingModel) -> str:
    parking = ParkingService(model.store, model.clock, model.bookings, 600,
                             lambda: LotKeys(b"kind-case-parking-master-seed"), id_salt="tests-deployment-salt")
    body = {"name": "Refunding lot", "spaces": [{"space_id": "L1", "type": "LARGE"}], "hold_ttl_seconds": 600,
            "tariff": {"hourly": {"value": "1500.00", "currency": "RUB"}}, "policy": {"refund_no_show": True}}
    return parking.create_lot(LotIn.model_validate(body).command(), caller=ORGANIZER)["lot_id"]


def test_an_orders_refunded_no_show_line_keeps_the_models_money_and_receipt_rules():
    model = BookingModel(fake_storage(), 2, kind=MODEL_CASES[0])   # an even seed: the organizer's receipts on
    lot_id = _refunding_lot(model)
    reservation = ReservationIn.model_validate({"vehicle_type": "LARGE", "plate": "A123BC77", **PARKING_WINDOW})
    lines = (OrderLine(model.events["seats"], HoldPlaces.of(model._request_body("seats", ("A-1",)))),
             OrderLine(lot_id, reservation.command()))
    placed = model.orders.place("ann", "order-lot", PlaceOrder(lines, contact_email="ann@example.com",
                                                              contact_own=True))
    order_id = placed.booking.booking_id
    model._remember(order_id, "ann")
    started = model.payments.start_payment(order_id, "ann", "pay-lot")
    payment_id = started.payment.payment_id
    model.provider.pay(payment_id)
    model.payments.apply_provider_payment(model.provider.get_payment(payment_id))
    paid = model.store.get_booking(order_id)
    assert paid.status is BookingStatus.CONFIRMED and paid.payment.receipt
    line_amount = paid.kind_details["lines"][1]["amount"]
    model.check()

    no_show = parse_iso(PARKING_WINDOW["from"]) + timedelta(seconds=900)   # the lot's default grace
    model.clock.advance((no_show - model.clock()).total_seconds() + 61)
    model.provider.fail("create_refund", "after")                          # refunded; the answer lost
    assert model.run_sweep().get("timers") == 1
    model.check()
    model.clock.advance(91)                                                # its next try, past the sweep's grace
    assert model.run_sweep().get("line_refunds") == 1                      # asked again, the same key
    [refund] = model.provider.refunds_for(payment_id)
    assert refund["amount"]["value"] == line_amount and refund["status"] == "succeeded"
    order = model.store.get_booking(order_id)
    assert order.status is BookingStatus.CONFIRMED and order.charged == paid.amount
    assert [line.get("status") for line in order.kind_details["lines"]] == [None, "REFUNDED"]
    model.settle()                                                         # S1-S3, XC2 and the receipts settled

    model.customer_cancel(order_id, "ann")                                 # what is left goes back, once
    model.settle()
    cancelled = model.store.get_booking(order_id)
    assert cancelled.status is BookingStatus.REFUNDED
    given = sum(float(r["amount"]["value"]) for r in model.provider.refunds_for(payment_id) if r["status"] == "succeeded")
    assert given == float(paid.amount.value)
