"""Opening a conflict case: a payment arrived after the booking's places were released and taken
by someone else, and the booking's inventory kind can offer other places instead.

The seed's example: the hold ended at 12:10, another customer confirmed the slot at 12:11, the
first payment's success arrives at 12:12. The first booking is never restored over the second.
The money is kept as it is (captured, or for two-stage still only authorised: nothing is taken
yet), the booking goes to MANUAL_REVIEW with a ``resolution`` listing the kind's alternatives,
a deadline and the operator responsible, and the customer is told. services/resolutions.py
carries out the choice (an alternative, or the money back), by the customer, an operator or,
past the deadline, the sweeper.

PaymentService holds one, on its store and clock, with the configured window and operator.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..clock import iso, parse_iso
from ..domain.booking import Booking, Payment
from ..domain.review_steps import next_step
from ..domain.statuses import BookingStatus
from .. import kinds
from ..ports import Clock, PaymentStore
from . import transitions

CASE_REASON = "places_taken_alternatives_offered"
#: The most alternatives a case lists; a kind returns them nearest first.
MAX_ALTERNATIVES = 5
#: How long the customer has to choose unless configured (RESOLUTION_WINDOW_SECONDS). It must end
#: well before the provider lets an authorisation lapse by itself (days, for bank cards).
DEFAULT_WINDOW_SECONDS = 24 * 3600
DEFAULT_OPERATOR = "on-call"
#: How long before the provider would let an authorisation lapse a case's deadline falls at the latest.
AUTHORISATION_MARGIN = timedelta(hours=1)


class ConflictCases:
    def __init__(self, store: PaymentStore, clock: Clock, window_seconds: int = DEFAULT_WINDOW_SECONDS,
                 operator: str = DEFAULT_OPERATOR) -> None:
        self.store = store
        self.clock = clock
        self.window_seconds = window_seconds
        self.operator = operator

    def offer_alternatives(self, booking: Booking, paid: dict[str, Any], actor: str, seen: Payment) -> str | None:
        """Open the case if the booking's kind offers alternatives; None when it offers none (the
        caller then gives the money back, as for any kind without alternatives). A booking gets one
        case: a stale copy of the payment arriving after its case was decided is not a new case."""
        if booking.resolution:
            return None
        event = self.store.get_event(booking.event_id)
        if event is None:
            return None
        options = kinds.of_booking(booking).alternatives(self.store, kinds.offering(event), booking,
                                                         now=self.clock())[:MAX_ALTERNATIVES]
        if not options:
            return None
        now = self.clock()
        authorised = paid.get("status") == "waiting_for_capture"
        deadline = now + timedelta(seconds=self.window_seconds)
        if authorised and paid.get("expires_at"):
            # The choice must come while the authorisation can still be captured.
            deadline = min(deadline, parse_iso(paid["expires_at"]) - AUTHORISATION_MARGIN)
        respond_by = iso(max(deadline, now))
        money = "authorisation kept, nothing captured" if authorised else "payment kept"
        transitions.apply(
            self.store, booking, now, status=BookingStatus.MANUAL_REVIEW, actor=actor, action="conflict_case_opened",
            decision=f"places taken after the hold ended; {len(options)} alternative(s) offered until {respond_by}; "
                     f"{money}; owner {self.operator}",
            ids={"payment_id": paid["id"], "provider_event": f"payment.{paid.get('status')}",
                 "hold_expires_at": booking.hold_expires_at},
            payment=seen, places_secured=False, review={"reason": CASE_REASON, "next_step": next_step(CASE_REASON)},
            resolution={"reason": CASE_REASON, "alternatives": options, "respond_by": respond_by,
                        "operator": self.operator},
        )
        return "conflict_case_opened"
