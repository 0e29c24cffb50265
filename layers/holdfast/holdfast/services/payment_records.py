"""What a payment step writes on the booking besides a verdict's move: a note on the payment
record, a rejected payment settled, a review opened for an operator.

PaymentService holds one (as do its ``Refunds``), on the service's store and clock. Every write
goes through ``transitions.apply`` (one item and version check, journal and outbox).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..domain.booking import Booking, Payment
from ..domain.errors import TooBusy
from ..domain.inventory import Move
from ..domain.review_steps import next_step
from ..domain.statuses import BookingStatus, can_move
from ..observability import logger
from ..ports import Clock, PaymentStore, StaleBooking
from . import transitions

ATTEMPTS = 6


class PaymentRecords:
    def __init__(self, store: PaymentStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def open_review(self, booking: Booking, reason: str, actor: str, ids: dict[str, str],
                    payment: Payment | None = None) -> None:
        payment = payment or booking.payment
        if booking.status is BookingStatus.MANUAL_REVIEW:
            return
        review = {"reason": reason,
                  "next_step": next_step(reason)}
        if not can_move(booking.status, BookingStatus.MANUAL_REVIEW):
            # e.g. a second payment for a confirmed booking: the booking stands, and carries the open
            # review, which puts it on the operators' list (GET /admin/reviews).
            if booking.review != review:
                transitions.apply(self.store, booking, self.clock(), actor=actor, action="manual_review_opened",
                                  decision=reason, ids=ids, review=review)
            return
        move = Move.RELEASE if booking.holds_places else None
        transitions.apply(self.store, booking, self.clock(), status=BookingStatus.MANUAL_REVIEW, actor=actor,
                          action="manual_review_opened", decision=reason, ids=ids, move=move, payment=payment,
                          places_secured=False, review=review)

    def note(self, booking: Booking, *, action: str, decision: str, ids: dict[str, str] | None = None,
              payment_change: dict[str, Any], actor: str = "system") -> Booking:
        """Record a change to the payment record that does not move the booking's status."""
        def note(current: Booking) -> Booking:
            assert current.payment is not None
            if current.payment.payment_id and payment_change.get("payment_id") == current.payment.payment_id \
                    and current.payment.state == "CREATED":
                return current  # someone (a notification) recorded it first
            return transitions.apply(self.store, current, self.clock(), actor=actor, action=action,
                                     decision=decision, ids=ids, payment=replace(current.payment, **payment_change))

        # A booking that vanished cannot be written: as busy as one that kept changing.
        return transitions.decide_again(lambda: self.store.get_booking(booking.booking_id), note, first=booking,
                                        attempts=ATTEMPTS, gone=TooBusy(), exhausted=TooBusy())

    def settle(self, booking: Booking, status: BookingStatus, *, action: str, decision: str, move: Move,
                payment_change: dict[str, Any]) -> None:
        assert booking.payment is not None
        try:
            transitions.apply(self.store, booking, self.clock(), status=status, actor="provider", action=action,
                              decision=decision, move=move, payment=replace(booking.payment, **payment_change))
        except StaleBooking:
            logger.warning("booking changed while recording a rejected payment", extra={"booking_id": booking.booking_id})
