"""Manual review: the bookings an operator must decide, and the three decisions they can take."""
from __future__ import annotations

from typing import Any

from ..adapters.dynamo import BookingStore, PlacesTaken, StaleBooking
from ..clock import Clock
from ..domain.errors import Conflict, InvalidRequest, NotFound
from ..domain.inventory import Move
from ..domain.statuses import BookingStatus
from . import transitions
from .bookings import describe
from .payments import PaymentOutcomeUnknown, PaymentService

ACTIONS = ("refund", "confirm", "close")


class ReviewService:
    def __init__(self, store: BookingStore, payments: PaymentService, clock: Clock) -> None:
        self.store = store
        self.payments = payments
        self.clock = clock

    def open_reviews(self) -> list[dict[str, Any]]:
        return [describe(booking) for booking in self.store.list_reviews()]

    def booking_with_journal(self, booking_id: str) -> dict[str, Any]:
        """Any booking with its whole journal, for operators (no ownership check: organizer only)."""
        booking, journal = self.store.get_booking_with_journal(booking_id)
        if booking is None:
            raise NotFound(f"No booking {booking_id}.", code="booking_not_found")
        return describe(booking) | {"customer_id": booking.customer_id, "journal": [e.as_dict() for e in journal]}

    def resolve(self, booking_id: str, action: str, operator: str, note: str) -> dict[str, Any]:
        """Apply an operator's decision. Repeating a decision already taken returns the booking."""
        if action not in ACTIONS:
            raise InvalidRequest(f"action must be one of {', '.join(ACTIONS)}.", code="invalid_action")
        booking = self.store.get_booking(booking_id)
        if booking is None:
            raise NotFound(f"No booking {booking_id}.", code="booking_not_found")
        done = {"refund": (BookingStatus.REFUND_PENDING, BookingStatus.REFUNDED), "confirm": (BookingStatus.CONFIRMED,),
                "close": (BookingStatus.PAYMENT_FAILED,)}[action]
        if booking.status in done and not booking.review:
            return describe(booking)
        ids = {"operator": operator, "payment_id": (booking.payment.payment_id if booking.payment else None) or ""}
        decision = f"{operator}: {note}"[:500]
        if booking.review and booking.status is not BookingStatus.MANUAL_REVIEW:
            # An open review on a booking that stands (a second payment for a confirmed booking):
            # the operator settles the stray payment at the provider, then closes the review here.
            if action != "close":
                raise Conflict(f"The booking is {booking.status.value} and stands; settle the issue and close "
                               "the review.", code="review_close_only")
            transitions.apply(self.store, booking, self.clock(), actor="operator", action="review_closed",
                              decision=decision, ids=ids, review=None)
            return describe(self.store.get_booking(booking_id) or booking)
        if booking.status is not BookingStatus.MANUAL_REVIEW:
            raise Conflict(f"The booking is {booking.status.value}, not in review.", code="not_in_review")
        try:
            if action == "confirm":
                places = self.payments.replan(booking)
                if places is None:
                    raise Conflict("The places are no longer free; refund instead.", code="places_unavailable")
                transitions.apply(self.store, booking, self.clock(), status=BookingStatus.CONFIRMED, actor="operator",
                                  action="review_confirmed", decision=decision, ids=ids, move=Move.RETAKE, places=places,
                                  review=None)
            elif action == "close":
                transitions.apply(self.store, booking, self.clock(), status=BookingStatus.PAYMENT_FAILED,
                                  actor="operator", action="review_closed", decision=decision, ids=ids, review=None)
            else:
                payment = booking.payment
                if payment is None or not payment.payment_id:
                    raise Conflict("There is no payment to refund; close the review instead.", code="nothing_to_refund")
                booking = transitions.apply(
                    self.store, booking, self.clock(), status=BookingStatus.REFUND_PENDING, actor="operator",
                    action="review_refund_started", decision=decision, ids=ids, review=None,
                    payment=self.payments.with_refund(payment, "review"))
                try:
                    self.payments.refund(booking, "operator")
                except PaymentOutcomeUnknown:
                    pass  # REFUND_PENDING is due for reconciliation, which repeats it with the same key
        except PlacesTaken:
            raise Conflict("The places were just taken; refund instead.", code="places_unavailable") from None
        except StaleBooking:
            raise Conflict("The booking changed meanwhile; look again.", code="booking_changed") from None
        return describe(self.store.get_booking(booking_id) or booking)
