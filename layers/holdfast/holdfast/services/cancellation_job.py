"""The steps of an event's cancellation job, each a task of ``statemachines/cancel_event.asl.json``:

- ``list``: one page of the event's bookings (the Map's items) after a cursor;
- ``settle``: one booking (a Map iteration): a hold is released and its open payment voided where
  the provider allows; a paid booking is moved to REFUND_PENDING with the reason in its journal and
  refunded under the key stored before the call; a refund in flight is asked again with its key;
  an open conflict case (a late payment waiting for its customer's choice) is closed with its
  money given back (services/resolutions.py); any other review stays on the operators' list,
  marked as the cancelled event's, where only a refund or a close is accepted;
- ``finish``: while open bookings remain, another pass; then the summary, stored once.

Every step reads the booking and decides from what it finds, so a retried step, a page listed
twice or a whole execution started again does nothing twice: the provider sees one refund key per
payment, and the booking's version guards every write.
"""
from __future__ import annotations

from typing import Any

from ..clock import iso
from ..domain.booking import Booking
from ..domain.cancellation import is_open, of_event, tally
from ..domain.claims import offerings_of
from ..domain.errors import Conflict, PaymentProviderUnavailable
from ..domain.inventory import Move
from ..domain.statuses import HOLDING, BookingStatus
from ..faults import crash_point
from ..ports import CancellationStore, Clock, StaleBooking, TransientStoreError
from . import transitions
from .payments import PaymentService
from .provider_keys import PaymentOutcomeUnknown
from .resolutions import ResolutionService

PAGE_SIZE = 100
MAX_PASSES = 3
ATTEMPTS = 6
REFUND_REASON = "event_cancelled"


class CaptureInFlight(TransientStoreError):
    """A two-stage payment of this hold is being captured: nothing was written, and the step is
    retried (the state machine's Retry names this class) once the capture has settled it."""


class CancellationJob:
    def __init__(self, store: CancellationStore, payments: PaymentService, clock: Clock, page_size: int = PAGE_SIZE) -> None:
        self.store = store
        self.payments = payments
        self.clock = clock
        self.page_size = page_size
        self._cancelled_by: dict[str, dict[str, str]] = {}

    def _who(self, event_id: str) -> dict[str, str]:
        """Which organizer and key cancelled the event: every entry the job journals names them
        (read once per event and container; it never changes once the event is cancelled)."""
        if event_id not in self._cancelled_by:
            event = self.store.get_event(event_id) or {}
            self._cancelled_by[event_id] = {k: str(v) for k, v in (event.get("cancelled_by") or {}).items()}
        return self._cancelled_by[event_id]

    def list_page(self, event_id: str, after: str = "") -> dict[str, Any]:
        keys = sorted(self.store.event_booking_ids(event_id))
        page = [key for key in keys if key > after][:self.page_size]
        more = bool(page) and page[-1] != keys[-1]
        return {"bookings": page, "after": page[-1] if page else after, "more": more}

    def settle(self, event_id: str, booking_id: str, reason: str) -> str:
        # A notification or the customer moved it meanwhile: decide again on what stands.
        return transitions.decide_again(
            lambda: self.store.get_booking(booking_id),
            lambda booking: self._settle(booking, reason, self._who(event_id))
            if event_id in offerings_of(booking.event_id, booking.places) else "not_found",
            attempts=ATTEMPTS, gone=lambda: "not_found",
            exhausted=TransientStoreError(f"booking {booking_id} kept changing"))

    def _settle(self, booking: Booking, reason: str, who: dict[str, str]) -> str:
        if booking.status in HOLDING:
            if booking.places_secured:
                raise CaptureInFlight(booking.booking_id)
            released = self.payments.release_for_cancelled_event(booking, "organizer", ids=dict(who) or None,
                                                                 reason=reason)
            if released.payment is not None and released.payment.payment_id:
                self.payments.void_after_cancel(released, actor="organizer")
            return "hold_released"
        if booking.status is BookingStatus.CONFIRMED and booking.comp:
            transitions.apply(self.store, booking, self.clock(), status=BookingStatus.CANCELLED, actor="organizer",
                              action="event_cancelled_comp_released", move=Move.UNSELL, ids=who or None,
                              decision=f"event cancelled ({reason}); nothing was paid; places released"
                              + _admitted_note(booking), event_cancelled=True)
            return "comp_released"
        if booking.status is BookingStatus.CONFIRMED and booking.payment is not None and booking.payment.payment_id:
            payment = booking.payment
            booking = transitions.apply(
                self.store, booking, self.clock(), status=BookingStatus.REFUND_PENDING, actor="organizer",
                action="event_cancelled_refund_started", move=Move.UNSELL,
                decision=f"event cancelled ({reason}); places released, money goes back" + _admitted_note(booking),
                ids={"payment_id": payment.payment_id} | who,
                payment=self.payments.with_refund(payment, REFUND_REASON),
                event_cancelled=True)
            return self._refund(booking)
        if booking.status is BookingStatus.REFUND_PENDING and booking.payment is not None and booking.payment.refund:
            return self._refund(booking)
        if booking.status is BookingStatus.MANUAL_REVIEW:
            return self._review(booking, reason, who)
        return f"nothing_{str(booking.status).lower()}"

    def _review(self, booking: Booking, reason: str, who: dict[str, str]) -> str:
        if booking.resolution_open:
            try:
                return ResolutionService(self.store, self.payments, self.clock).close_for_cancelled_event(booking)
            except PaymentProviderUnavailable as exc:
                raise PaymentOutcomeUnknown(str(exc)) from None   # the step is retried, same void key
            except Conflict as exc:
                if exc.code == "booking_changed":
                    raise StaleBooking(booking.booking_id) from None
                # The authorisation could not be voided (captured meanwhile): the review stays open.
                self._mark(booking, reason, f"its conflict case could not be closed ({exc.code})", who)
                return "left_in_review"
        self._mark(booking, reason, "the review stays open for an operator to refund or close", who)
        return "left_in_review"

    def _mark(self, booking: Booking, reason: str, why: str, who: dict[str, str]) -> None:
        """A review the job cannot settle by itself: flagged as the cancelled event's (so its
        booking is never confirmed) and journalled, once; it stays on the operators' list."""
        if booking.event_cancelled:
            return
        transitions.apply(self.store, booking, self.clock(), actor="organizer", action="event_cancelled_review_kept",
                          decision=f"event cancelled ({reason}); {why}", ids=dict(who), event_cancelled=True)

    def _refund(self, booking: Booking) -> str:
        """The stored key goes to the provider again until an answer is recorded: a lost answer
        (500 after the effect, a dropped connection) is retried by the state machine with backoff,
        and reconciliation is started so it is settled even if the job gives up on it."""
        payment = booking.payment
        assert payment is not None and payment.refund is not None
        crash_point("event_cancel.before_refund")
        try:
            if payment.refund.get("refund_id") and payment.refund.get("status") == "pending":
                outcome = self.payments.recheck_refund(booking, "organizer")
            else:
                outcome = self.payments.refund(booking, "organizer", watch=False)
        except PaymentOutcomeUnknown:
            self.payments._watch(booking, f"refund-{payment.refund['reason']}")
            raise
        if outcome not in ("refunded", "manual_review"):
            self.payments._watch(booking, f"refund-{payment.refund['reason']}")
        return outcome

    def finish(self, event_id: str, passes: int) -> dict[str, Any]:
        """Another pass while bookings are still open (a hold written as the sale stopped, a refund
        whose answer was lost beyond the step's retries); then the summary, stored once."""
        bookings = of_event(self.store.get_bookings(self.store.event_booking_ids(event_id)), event_id)
        if any(is_open(booking) for booking in bookings) and passes < MAX_PASSES:
            return {"done": False, "pass": passes + 1}
        summary = tally(bookings)
        summary["passes"] = passes
        self.store.finish_cancellation(event_id, summary, iso(self.clock()))
        return {"done": True, "pass": passes, "open": summary["open"]}


def _admitted_note(booking: Booking) -> str:
    """The organizer cancels a booking whose holders came in too: the journal says so."""
    from .. import kinds

    admitted = kinds.of_booking(booking).admitted(booking)
    return f"; {admitted} already checked in" if admitted else ""
