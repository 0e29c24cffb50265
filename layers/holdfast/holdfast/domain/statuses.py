"""Booking statuses, which of them hold places, and the only transitions allowed between them."""
from __future__ import annotations

from enum import StrEnum


class BookingStatus(StrEnum):
    HELD = "HELD"                        # places taken for the customer until hold_expires_at
    PAYMENT_PENDING = "PAYMENT_PENDING"  # a provider payment exists or its creation is in flight
    CONFIRMED = "CONFIRMED"              # paid; places sold
    EXPIRED = "EXPIRED"                  # hold lapsed unpaid; places released
    CANCELLED = "CANCELLED"              # given up before paying: by the customer, or with its cancelled event
    PAYMENT_FAILED = "PAYMENT_FAILED"    # the provider cancelled the payment; places released
    REFUND_PENDING = "REFUND_PENDING"    # money must go back; places are not held
    REFUNDED = "REFUNDED"                # money went back; places are not held
    MANUAL_REVIEW = "MANUAL_REVIEW"      # an operator decides; places are not held


#: Statuses whose places count against capacity while the booking is in them.
HOLDING = frozenset({BookingStatus.HELD, BookingStatus.PAYMENT_PENDING})
SOLD = frozenset({BookingStatus.CONFIRMED})
OCCUPYING = HOLDING | SOLD
#: Statuses whose places are back in the pool (a late payment may still move some of them on).
RELEASED = frozenset(BookingStatus) - OCCUPYING

_S = BookingStatus
TRANSITIONS: dict[BookingStatus, frozenset[BookingStatus]] = {
    _S.HELD: frozenset({_S.PAYMENT_PENDING, _S.CONFIRMED, _S.EXPIRED, _S.CANCELLED}),
    _S.PAYMENT_PENDING: frozenset({_S.CONFIRMED, _S.EXPIRED, _S.CANCELLED, _S.PAYMENT_FAILED, _S.MANUAL_REVIEW}),
    # CANCELLED: a comp (nothing was paid) given up: its places go back with nothing to return.
    _S.CONFIRMED: frozenset({_S.REFUND_PENDING, _S.CANCELLED}),
    # A payment reported after the places were released: taken again (one-stage: CONFIRMED;
    # two-stage: PAYMENT_PENDING with the places pinned until the capture), refunded, or reviewed.
    _S.EXPIRED: frozenset({_S.CONFIRMED, _S.PAYMENT_PENDING, _S.REFUND_PENDING, _S.MANUAL_REVIEW}),
    # The customer gave the booking up: a payment that arrives anyway is given back, never resold.
    _S.CANCELLED: frozenset({_S.REFUND_PENDING, _S.MANUAL_REVIEW}),
    _S.PAYMENT_FAILED: frozenset({_S.CONFIRMED, _S.PAYMENT_PENDING, _S.REFUND_PENDING, _S.MANUAL_REVIEW}),
    _S.REFUND_PENDING: frozenset({_S.REFUNDED, _S.MANUAL_REVIEW}),
    _S.REFUNDED: frozenset(),
    # REFUNDED: a refund asked for before the review succeeded after all (the money went back).
    # PAYMENT_PENDING: a conflict case's chosen alternative, paid two-stage: its places are pinned
    # until the one authorisation is captured (services/resolutions.py).
    _S.MANUAL_REVIEW: frozenset({_S.CONFIRMED, _S.PAYMENT_PENDING, _S.REFUND_PENDING, _S.REFUNDED,
                                 _S.PAYMENT_FAILED}),
}


def can_move(source: BookingStatus, target: BookingStatus) -> bool:
    return target in TRANSITIONS.get(source, frozenset())
