"""Pure rules: allocation, money, the transition table and the payment verdicts."""
import random

import pytest

from holdfast.domain.booking import Booking, Payment, PaymentMode, Verdict, judge_payment
from holdfast.domain.errors import InvalidRequest
from holdfast.domain.inventory import InventoryKind, Places, Pool, plan_counted, pool_sizes
from holdfast.domain.money import Money
from holdfast.domain.statuses import HOLDING, RELEASED, TRANSITIONS, BookingStatus, can_move


def test_pool_sizes_split_capacity_exactly():
    for capacity in (1, 7, 24, 25, 26, 499, 500, 1001, 100_000):
        sizes = pool_sizes(capacity)
        assert sum(sizes) == capacity
        assert max(sizes) - min(sizes) <= 1
        assert len(sizes) <= 40
    assert len(pool_sizes(500)) == 20


def test_plan_counted_prefers_one_pool_and_combines_when_fragmented():
    pools = [Pool("POOL#000", 5, 1, 4, 0), Pool("POOL#001", 5, 2, 3, 0), Pool("POOL#002", 5, 0, 0, 5)]
    assert plan_counted(pools, 2, random.Random(1)) == (("POOL#001", 2),)
    assert plan_counted(pools, 3, random.Random(1)) == (("POOL#001", 2), ("POOL#000", 1))
    assert plan_counted(pools, 4, random.Random(1)) is None


def test_money_parses_provider_amounts_strictly():
    assert Money.parse("1500", "RUB").text == "1500.00"
    assert Money.parse("10.5", "RUB").times(3).as_dict() == {"value": "31.50", "currency": "RUB"}
    for bad in ("0", "-1", "1.001", "abc", "NaN", "Infinity"):
        with pytest.raises(InvalidRequest):
            Money.parse(bad, "RUB")
    with pytest.raises(InvalidRequest):
        Money.parse("1", "XXX")
    assert Money.parse("100", "RUB").matches({"value": "100.00", "currency": "RUB"})
    assert not Money.parse("100", "RUB").matches({"value": "100.00", "currency": "USD"})


def test_released_statuses_are_exactly_those_not_holding_or_sold():
    assert RELEASED.isdisjoint(HOLDING)
    assert BookingStatus.CONFIRMED not in RELEASED
    assert set(TRANSITIONS) == set(BookingStatus)
    assert not can_move(BookingStatus.REFUNDED, BookingStatus.CONFIRMED)
    assert not can_move(BookingStatus.CONFIRMED, BookingStatus.EXPIRED)


def _booking(status, mode=PaymentMode.ONE_STAGE, payment_id=None):
    return Booking(
        booking_id="b1", event_id="e1", customer_id="c1", status=status,
        places=Places(InventoryKind.COUNTED, 2, pools=(("POOL#000", 2),)), amount=Money.parse("200", "RUB"),
        payment_mode=mode, hold_expires_at="2030-01-01T12:10:00.000Z", created_at="x", updated_at="x", version=3,
        payment=Payment(idempotence_key="k", payment_id=payment_id) if payment_id else None,
    )


@pytest.mark.parametrize("status, provider_status, mode, expected", [
    (BookingStatus.PAYMENT_PENDING, "succeeded", PaymentMode.ONE_STAGE, Verdict.CONFIRM),
    (BookingStatus.HELD, "succeeded", PaymentMode.ONE_STAGE, Verdict.CONFIRM),
    (BookingStatus.CONFIRMED, "succeeded", PaymentMode.ONE_STAGE, Verdict.IGNORE),
    (BookingStatus.EXPIRED, "succeeded", PaymentMode.ONE_STAGE, Verdict.LATE_RETAKE),
    (BookingStatus.CANCELLED, "succeeded", PaymentMode.ONE_STAGE, Verdict.GIVE_BACK),
    (BookingStatus.PAYMENT_FAILED, "succeeded", PaymentMode.ONE_STAGE, Verdict.LATE_RETAKE),
    (BookingStatus.CANCELLED, "waiting_for_capture", PaymentMode.TWO_STAGE, Verdict.GIVE_BACK),
    (BookingStatus.PAYMENT_PENDING, "pending", PaymentMode.ONE_STAGE, Verdict.IGNORE),
    (BookingStatus.PAYMENT_PENDING, "canceled", PaymentMode.ONE_STAGE, Verdict.RELEASE_FAILED),
    (BookingStatus.EXPIRED, "canceled", PaymentMode.ONE_STAGE, Verdict.IGNORE),
    (BookingStatus.PAYMENT_PENDING, "waiting_for_capture", PaymentMode.TWO_STAGE, Verdict.SECURE_AND_CAPTURE),
    (BookingStatus.EXPIRED, "waiting_for_capture", PaymentMode.TWO_STAGE, Verdict.LATE_RETAKE),
    (BookingStatus.PAYMENT_PENDING, "waiting_for_capture", PaymentMode.ONE_STAGE, Verdict.REVIEW),
    (BookingStatus.REFUNDED, "succeeded", PaymentMode.ONE_STAGE, Verdict.IGNORE),
])
def test_judge_payment(status, provider_status, mode, expected):
    paid = {"id": "p1", "status": provider_status, "amount": {"value": "200.00", "currency": "RUB"}}
    assert judge_payment(_booking(status, mode), paid, mode).verdict is expected


@pytest.mark.parametrize("stale", ["waiting_for_capture", "pending"])
def test_an_older_copy_of_a_payment_already_known_cancelled_changes_nothing(stale):
    """A voided authorisation is final at the provider: a copy fetched or sent before the void
    (the model's seed 20261286 delivered one after the void was recorded) must not be judged a late
    authorisation and reopen the booking as a conflict case."""
    from dataclasses import replace

    booking = _booking(BookingStatus.EXPIRED, PaymentMode.TWO_STAGE, payment_id="p1")
    booking = replace(booking, payment=replace(booking.payment, provider_status="canceled"))
    copy = {"id": "p1", "status": stale, "amount": {"value": "200.00", "currency": "RUB"}}
    verdict = judge_payment(booking, copy, PaymentMode.TWO_STAGE)
    assert (verdict.verdict, verdict.reason) == (Verdict.IGNORE, "stale_copy_of_cancelled_payment")


def test_judge_payment_sends_mismatches_to_review():
    wrong_amount = {"id": "p1", "status": "succeeded", "amount": {"value": "1.00", "currency": "RUB"}}
    assert judge_payment(_booking(BookingStatus.PAYMENT_PENDING), wrong_amount, PaymentMode.ONE_STAGE).reason == "amount_mismatch"
    other = {"id": "p2", "status": "succeeded", "amount": {"value": "200.00", "currency": "RUB"}}
    verdict = judge_payment(_booking(BookingStatus.PAYMENT_PENDING, payment_id="p1"), other, PaymentMode.ONE_STAGE)
    assert verdict.reason == "second_payment_for_booking"


@pytest.mark.parametrize("status", [BookingStatus.REFUND_PENDING, BookingStatus.REFUNDED, BookingStatus.MANUAL_REVIEW])
def test_a_cancelled_booking_already_on_a_money_path_is_not_given_back_twice(status):
    """The customer's cancellation is remembered past CANCELLED, but a booking whose refund is under
    way (or that an operator owns) must not start a second give-back for the same payment."""
    from dataclasses import replace

    booking = replace(_booking(status), cancelled_by_customer=True)
    for provider_status in ("succeeded", "waiting_for_capture"):
        verdict = judge_payment(booking, {"id": "p1", "status": provider_status,
                                          "amount": {"value": "200.00", "currency": "RUB"}}, PaymentMode.TWO_STAGE)
        assert verdict.verdict is not Verdict.GIVE_BACK, (status, provider_status)


def test_payment_after_a_customer_cancellation_is_given_back_from_payment_failed():
    from dataclasses import replace

    booking = replace(_booking(BookingStatus.PAYMENT_FAILED), cancelled_by_customer=True)
    verdict = judge_payment(booking, {"id": "p1", "status": "succeeded",
                                      "amount": {"value": "200.00", "currency": "RUB"}}, PaymentMode.ONE_STAGE)
    assert verdict.verdict is Verdict.GIVE_BACK
