"""A transferred booking's refund carries its fiscal receipt (F2, issue 45; make proof seed
20261207614): the taker's address becomes the booking's, and the receipts of its refunds go to it,
so a taker without a verified address cannot accept a booking whose payment carried a receipt
(400 ``contact_required``, nothing changes) and one with an address gets the refund's receipt."""
from __future__ import annotations

import random

import pytest

from holdfast.domain.errors import BookingError
from tests.correctness.kind_cases import MODEL_CASES
from tests.correctness.model import BookingModel, RandomDraw, fake_storage


def test_a_taker_without_an_address_cannot_take_a_receipted_booking_and_its_refund_keeps_a_receipt():
    model = BookingModel(fake_storage(), 2, kind=MODEL_CASES[0])   # an even seed: the organizer's receipts on
    model._paid_seats(RandomDraw(random.Random(3)))
    [(booking_id, holder)] = model.known
    paid = model.store.get_booking(booking_id)
    assert paid.payment.receipt, "the payment carried a receipt"
    taker = next(c for c in ("ann", "bob", "cat") if c != holder)
    offer = model.transfers.offer(booking_id, holder, "friend@example.org")
    token = offer["accept_url"].split("token=", 1)[1]
    waiting = model.store.get_booking(booking_id)

    with pytest.raises(BookingError) as refused:
        model.transfers.accept(booking_id, token, taker, None)
    assert refused.value.code == "contact_required" and refused.value.status == 400
    assert model.store.get_booking(booking_id).version == waiting.version   # nothing changed

    taken = model.transfers.accept(booking_id, token, taker, f"{taker}@example.com")
    assert taken.customer_id == taker and taken.contact_email == f"{taker}@example.com"
    model.customer_cancel(booking_id, taker)
    [refund] = [r for r in model.provider.refunds.values() if r["payment_id"] == paid.payment.payment_id]
    assert refund["receipt"]["customer"] == {"email": f"{taker}@example.com"}
    model.check()


def test_an_exchanged_given_booking_is_still_the_one_its_taker_accepted():
    # make proof seed 20261209186: the exchange's new kind details dropped the accepted transfer, so
    # the booking's receipts (its payer's) looked misaddressed and a repeat press of the link failed
    from holdfast.domain import transfers
    from holdfast.domain.commands import HoldPlaces

    model = BookingModel(fake_storage(), 2, kind=MODEL_CASES[0])
    model._paid_seats(RandomDraw(random.Random(3)))
    [(booking_id, holder)] = model.known
    taker = next(c for c in ("ann", "bob", "cat") if c != holder)
    token = model.transfers.offer(booking_id, holder, "friend@example.org")["accept_url"].split("token=", 1)[1]
    model.transfers.accept(booking_id, token, taker, f"{taker}@example.com")
    seats = model.store.get_booking(booking_id).places.units
    model.exchanges.exchange(booking_id, taker, "x1", model.events["later"], HoldPlaces(seats=tuple(seats)))
    moved = model.store.get_booking(booking_id)
    assert moved.event_id == model.events["later"]
    assert (moved.kind_details or {}).get(transfers.ACCEPTED, {}).get("to") == taker
    again = model.transfers.accept(booking_id, token, taker, f"{taker}@example.com")   # the same press, answered
    assert again.version == moved.version
    model.check()
