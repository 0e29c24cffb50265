"""Manual review: the bookings an operator must decide, and the three decisions they can take."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..domain.booking import Booking, line_refunds_settled
from ..domain.errors import (Busy, Conflict, EventCancelled, IdempotencyKeyReused, InvalidRequest, NotFound,
                             PaymentProviderUnavailable)
from ..domain.inventory import Move
from ..domain.organizers import Caller, owned_by
from ..domain.statuses import BookingStatus
from ..ports import Clock, PaymentStore, PlacesTaken, SalesStopped, StaleBooking, TransientStoreError
from . import transitions
from .booking_views import describe
from .listing import page_limit
from .refunds import others_unanswered
from .resolutions import ResolutionService
from .payments import PaymentService
from .provider_keys import PaymentOutcomeUnknown, operator_key
from .review_money import RETRY_AFTER, ProviderMoney, look_up

ACTIONS = ("refund", "confirm", "close", "alternative")
#: The most bookings one GET /admin/reviews answers (BatchGetItem reads a hundred at a time).
PAGE_SIZE = 100


class ReviewService:
    #: a page's default length, for the admin's lists answered beside the reviews
    page_size = PAGE_SIZE

    def __init__(self, store: PaymentStore, payments: PaymentService, clock: Clock) -> None:
        self.store = store
        self.payments = payments
        #: the payment at the provider: looked at, captured and voided through the payments' one place
        self.money = payments.money
        self.clock = clock
        self.resolutions = ResolutionService(store, payments, clock)

    def open_reviews(self, caller: Caller | None = None) -> list[dict[str, Any]]:
        """Bookings in review; an organizer sees only those of its own events."""
        mine = self._owned(caller)
        return [describe(booking) for booking in self.store.list_reviews() if mine(booking)]

    def _owned(self, caller: Caller | None):
        """Whether a booking is of the caller's events (each event read once); the engine (no
        caller) sees every booking."""
        owners: dict[str, bool] = {}

        def mine(booking: Booking) -> bool:
            if caller is None:
                return True
            if booking.event_id not in owners:
                owners[booking.event_id] = owned_by(self.store.get_event(booking.event_id), caller)
            return owners[booking.event_id]

        return mine

    def review_page(self, limit: int | str = PAGE_SIZE, cursor: str | None = None,
                    caller: Caller | None = None) -> dict[str, Any]:
        """One page of the bookings in review (oldest first) and the cursor of the next page;
        ``limit`` as the query string gives it. An organizer sees only those of its own events:
        a page is the queue's next ``limit`` entries with the others' left out, so it may hold
        fewer (even none) while ``next_cursor`` still leads on."""
        limit = page_limit(limit, PAGE_SIZE, required=True)
        try:
            bookings, following = self.store.review_page(limit, cursor)
        except ValueError:
            raise InvalidRequest("cursor is not one this list gave.", code="invalid_cursor") from None
        mine = self._owned(caller)
        return {"reviews": [describe(booking) for booking in bookings if mine(booking)],
                "next_cursor": following}

    def _booking(self, booking_id: str, caller: Caller | None) -> Booking:
        """The booking, when it is of one of the caller's events; another organizer's is answered
        like a booking that does not exist."""
        booking = self.store.get_booking(booking_id)
        if booking is None or (caller is not None and not owned_by(self.store.get_event(booking.event_id), caller)):
            raise NotFound(f"No booking {booking_id}.", code="booking_not_found")
        return booking

    def booking_with_journal(self, booking_id: str, caller: Caller | None = None) -> dict[str, Any]:
        """A booking of the caller's with its whole journal, for operators."""
        self._booking(booking_id, caller)
        booking, journal = self.store.get_booking_with_journal(booking_id)
        if booking is None:
            raise NotFound(f"No booking {booking_id}.", code="booking_not_found")
        return describe(booking) | {"customer_id": booking.customer_id, "journal": [e.as_dict() for e in journal]}

    def cancel(self, booking_id: str, operator: str, note: str, caller: Caller | None = None) -> dict[str, Any]:
        """The organizer cancels a confirmed booking of its own, with the money back: also one a
        customer may no longer cancel because someone came in on it (their tickets are void from
        then on; nobody already inside is put out). Repeating it returns the booking as it is."""
        who = caller.journal_ids() if caller else {}

        def give_up(booking: Booking) -> dict[str, Any]:
            if booking.customer_gave_up or booking.status in (BookingStatus.REFUND_PENDING, BookingStatus.REFUNDED):
                return describe(booking)
            if booking.status is not BookingStatus.CONFIRMED:
                raise Conflict(f"A {booking.status.value} booking is not cancelled by its organizer: only a confirmed "
                               "one is (a hold runs out by itself; a review is resolved).",
                               code="not_cancellable", status=booking.status.value)
            if booking.review:
                raise Conflict("This booking has an open review; resolve it first.", code="review_open")
            return describe(self.payments.cancel_confirmed(booking, actor="operator", operator_note=f"{operator}: {note}",
                                                           ids={"operator": operator} | who))

        return transitions.decide_again(lambda: self._booking(booking_id, caller), give_up, attempts=6,
                                        exhausted=Busy(), retry_on=(StaleBooking, TransientStoreError))

    def resolve(self, booking_id: str, action: str, operator: str, note: str,
                choice: dict[str, Any] | None = None, caller: Caller | None = None) -> dict[str, Any]:
        """Apply an operator's decision. Repeating a decision already taken returns the booking.
        The journal records who decided: the operator's name and, for an organizer, which
        organizer and which of its keys."""
        if action not in ACTIONS:
            raise InvalidRequest(f"action must be one of {', '.join(ACTIONS)}.", code="invalid_action")
        booking = self._booking(booking_id, caller)
        who = caller.journal_ids() if caller else {}
        if action == "alternative" or (action == "refund" and booking.resolution):
            # A conflict case: the operator decides it as its customer would (one decision wins).
            try:
                return self.resolutions.decide(booking, action, choice or {}, actor="operator",
                                               key="operator", note=f"{operator}: {note}", who=who)
            except IdempotencyKeyReused:
                raise Conflict("This case was already decided otherwise.", code="resolution_closed") from None
            except EventCancelled:
                if action != "refund":
                    raise
                # The cancellation gave the money back: what the operator asked for is done.
                return describe(self.store.get_booking(booking_id) or booking)
        done = {"refund": (BookingStatus.REFUND_PENDING, BookingStatus.REFUNDED), "confirm": (BookingStatus.CONFIRMED,),
                "close": (BookingStatus.PAYMENT_FAILED, BookingStatus.REFUNDED)}[action]
        if booking.status in done and not booking.review:
            return describe(booking)
        ids = {"operator": operator, "payment_id": (booking.payment.payment_id if booking.payment else None) or ""} | who
        decision = f"{operator}: {note}"[:500]
        if booking.review and booking.status is not BookingStatus.MANUAL_REVIEW:
            # An open review on a booking that stands (a second payment for a confirmed booking):
            # the operator settles the stray payment at the provider, then closes the review here.
            if action != "close":
                raise Conflict(f"The booking is {booking.status.value} and stands; settle the issue and close "
                               "the review.", code="review_close_only")
            # (a line's refused refund the operator settled by hand is marked so: the review may go)
            transitions.apply(self.store, booking, self.clock(), actor="operator", action="review_closed",
                              decision=decision, ids=ids, review=None, payment=line_refunds_settled(booking.payment))
            return describe(self.store.get_booking(booking_id) or booking)
        if action == "confirm" and (booking.event_cancelled or transitions.offering_cancelled(self.store, booking)):
            self._unpin_for_cancelled_event(booking)
            raise EventCancelled(booking.event_id)
        if action == "confirm" and self._pinned_by_operator(booking):
            # A confirm whose capture went unanswered: the same capture again, same key.
            self._capture_pinned(booking, ids, decision, dict(booking.review or {}))
            return describe(self.store.get_booking(booking_id) or booking)
        if booking.status is not BookingStatus.MANUAL_REVIEW:
            raise Conflict(f"The booking is {booking.status.value}, not in review.", code="not_in_review")
        money = look_up(self.money, booking)
        try:
            if action == "confirm":
                self._confirm(booking, money, ids, decision)
            elif action == "close":
                self._close(booking, money, ids, decision)
            else:
                self._refund(booking, money, ids, decision)
        except PlacesTaken:
            raise Conflict("The places were just taken; refund instead.", code="places_unavailable") from None
        except SalesStopped:
            raise EventCancelled(booking.event_id) from None   # the pin or retake wrote nothing
        except StaleBooking:
            raise Conflict("The booking changed meanwhile; look again.", code="booking_changed") from None
        return describe(self.store.get_booking(booking_id) or booking)

    # ------------------------------------------------------------- decisions against the money

    def _confirm(self, booking: Booking, money: ProviderMoney, ids: dict[str, str], decision: str) -> None:
        if money.refund_pending:
            raise Conflict("A refund of this payment is under way; the booking cannot be confirmed.",
                           code="refund_in_flight")
        if money.status == "succeeded" and not money.captured:
            raise Conflict("The payment was refunded; the booking cannot be confirmed.", code="payment_refunded")
        if booking.customer_gave_up:
            raise Conflict("The customer cancelled this booking; refund the payment or close the review.",
                           code="customer_cancelled")
        if money.status not in ("succeeded", "waiting_for_capture"):
            raise Conflict("No money was captured for this booking; close the review instead.",
                           code="payment_not_captured", payment_status=money.status or "none")
        places = self.payments.replan(booking)
        if places is None:
            raise Conflict("The places are no longer free; refund instead.", code="places_unavailable")
        paid = money.payment
        assert paid is not None
        if money.status == "waiting_for_capture":
            # Places first, then the money: pinned by a conditional move (PlacesTaken: 409 and
            # nothing captured), captured, then sold. A capture is never made for places we lack.
            review = dict(booking.review or {})
            pinned = transitions.apply(
                self.store, booking, self.clock(), status=BookingStatus.PAYMENT_PENDING, actor="operator",
                action="review_places_pinned", decision=f"{decision}; places pinned, capturing",
                ids=ids | {"payment_id": paid["id"]}, move=Move.HOLD, places=places, places_secured=True,
                review=None, payment=replace(self.payments._payment_seen(booking, paid),
                                             capture_key=operator_key("cap", booking.booking_id)))
            # Reconciliation follows a capture whose answer is lost (or a crash right here).
            self.payments._watch(pinned, "review")
            self._capture_pinned(pinned, ids, decision, review, paid.get("amount"))
            return
        transitions.apply(self.store, booking, self.clock(), status=BookingStatus.CONFIRMED, actor="operator",
                          action="review_confirmed", decision=decision, ids=ids | {"payment_id": paid["id"]},
                          move=Move.RETAKE, places=places, review=None,
                          payment=self.payments._payment_seen(booking, paid))

    def _unpin_for_cancelled_event(self, booking: Booking) -> None:
        """Places an operator pinned before the event was cancelled: the payment as it stands is
        judged again, which gives it back (void, or refund if it was captured) and frees them."""
        if not self._pinned_by_operator(booking):
            return
        assert booking.payment is not None and booking.payment.payment_id
        try:
            self.payments.apply_at_provider(booking.payment.payment_id, actor="operator")
        except PaymentOutcomeUnknown:
            raise PaymentProviderUnavailable("The payment provider did not answer; try again shortly.",
                                             retry_after=RETRY_AFTER) from None

    @staticmethod
    def _pinned_by_operator(booking: Booking) -> bool:
        return booking.status is BookingStatus.PAYMENT_PENDING and booking.places_secured \
            and booking.payment is not None and booking.payment.capture_key == operator_key("cap", booking.booking_id)

    def _capture_pinned(self, pinned: Booking, ids: dict[str, str], decision: str, review: dict[str, Any],
                        amount: dict[str, str] | None = None) -> None:
        """Capture the authorisation of places an operator pinned, then sell them; an authorisation
        that can no longer be captured gives the places back and reopens the review."""
        payment = pinned.payment
        assert payment is not None and payment.payment_id
        payment_id = payment.payment_id
        if amount is None:
            amount = self.money.payment(payment_id).get("amount") or pinned.amount.as_dict()
        paid = self._provider_call(lambda: self.money.capture(payment_id, amount, operator_key("cap", pinned.booking_id)))
        ids = ids | {"payment_id": payment_id}
        try:
            if paid.get("status") == "succeeded":
                transitions.apply(self.store, pinned, self.clock(), status=BookingStatus.CONFIRMED, actor="operator",
                                  action="review_confirmed", decision=decision, ids=ids, move=Move.SELL,
                                  places_secured=False, review=None, payment=self.payments._payment_seen(pinned, paid))
                return
            if paid.get("status") != "canceled":
                raise PaymentProviderUnavailable("The capture has not finished; try again shortly.",
                                                 retry_after=RETRY_AFTER)
            transitions.apply(self.store, pinned, self.clock(), status=BookingStatus.MANUAL_REVIEW, actor="operator",
                              action="review_capture_failed", decision=f"{decision}; authorisation {paid.get('status')}, "
                              "places released", ids=ids, move=Move.RELEASE, places_secured=False,
                              review=review or None, payment=self.payments._payment_seen(pinned, paid))
        except StaleBooking:
            # A notification or reconciliation applied the capture first: confirmed is confirmed.
            now = self.store.get_booking(pinned.booking_id)
            if now is not None and now.status is BookingStatus.CONFIRMED:
                return
            raise
        raise Conflict("The authorisation could not be captured; close the review instead.",
                       code="payment_not_captured", payment_status=paid.get("status"))

    def _close(self, booking: Booking, money: ProviderMoney, ids: dict[str, str], decision: str) -> None:
        if money.fully_refunded:
            recorded = (self.payments._payment_seen(booking, money.payment).refund or {}).get("refund_id")
            booking, back = self._own_refund(booking, money, recorded)
            seen = self.payments._payment_seen(booking, money.payment)
            if back is None:   # the amount says refunded, the list has no finished refund yet
                raise Conflict("A refund of this payment is under way; wait for it.", code="refund_in_flight")
            refund = dict(seen.refund or {}) | {"refund_id": back["id"], "status": "succeeded"}
            transitions.apply(self.store, booking, self.clock(), status=BookingStatus.REFUNDED, actor="operator",
                              action="review_closed", decision=decision, ids=ids | {"refund_id": back["id"]},
                              review=None, payment=line_refunds_settled(replace(seen, refund=refund, next_check_at=None)))
            return
        if money.refund_pending:
            raise Conflict("A refund of this payment is under way; wait for it.", code="refund_in_flight")
        if money.status == "succeeded":
            raise Conflict("The customer paid and was not refunded; refund or confirm instead.", code="payment_owed")
        payment = booking.payment
        if money.status == "waiting_for_capture":
            paid = money.payment
            assert paid is not None
            voided = self._provider_call(lambda: self.money.void(paid["id"], operator_key("void", booking.booking_id)))
            if voided.get("status") != "canceled":
                raise Conflict("The authorisation could not be cancelled; look again.", code="payment_owed",
                               payment_status=voided.get("status"))
            # The void is recorded with the close: a record still showing the authorisation held
            # would be polled to the limit and voided a second time.
            payment = replace(self.payments._payment_seen(booking, voided), next_check_at=None)
        elif money.status == "canceled" and payment is not None and money.payment \
                and money.payment.get("id") == payment.payment_id:
            payment = replace(self.payments._payment_seen(booking, money.payment), next_check_at=None)
        transitions.apply(self.store, booking, self.clock(), status=BookingStatus.PAYMENT_FAILED, actor="operator",
                          action="review_closed", decision=decision, ids=ids, review=None,
                          payment=line_refunds_settled(payment))

    def _own_refund(self, booking: Booking, money: ProviderMoney, recorded: str | None
                    ) -> tuple[Booking, dict[str, Any] | None]:
        """The finished refund that gave the booking's money back: the one it recorded; while a
        part refund of the same payment (a difference's, a line's) has no answer yet (its id
        unknown: the list cannot tell the two apart, proof seeds 20261214471, 20261217091), what
        the notification path does too (``Refunds.tell_apart``): those part refunds asked again
        under their keys, their answers recorded, and the answer to our own refund's key, asked
        again when it has none; else one that is none of the booking's part refunds. Returns the booking as now
        stored (asking again may record a part refund's answer) and that refund; None: not
        finished, or not told apart yet."""
        named = money.succeeded_refund(recorded) if recorded else None
        if named is not None and named.get("id") == recorded:
            return booking, named
        if others_unanswered(booking):
            booking, ours = self._provider_call(lambda: self.payments.refund_told_apart(booking, "operator"))
            if ours is not None or others_unanswered(booking):
                return booking, (ours if ours and ours.get("status") == "succeeded" else None)
        payment = booking.payment
        others = frozenset(str(entry["refund_id"]) for entry in (payment.exchange_refunds if payment else None) or ()
                           if entry.get("refund_id"))
        return booking, money.succeeded_refund(recorded, others)

    def _refund(self, booking: Booking, money: ProviderMoney, ids: dict[str, str], decision: str) -> None:
        if money.status != "succeeded":
            raise Conflict("There is no captured payment to refund; close the review instead.",
                           code="nothing_to_refund", payment_status=money.status or "none")
        if money.refunded > 0:
            raise Conflict("Money already went back for this payment; close the review.", code="refund_exists")
        if money.refund_pending:
            raise Conflict("A refund of this payment is under way; wait for it.", code="refund_in_flight")
        seen = self.payments._payment_seen(booking, money.payment)
        booking = transitions.apply(
            self.store, booking, self.clock(), status=BookingStatus.REFUND_PENDING, actor="operator",
            action="review_refund_started", decision=decision, ids=ids, review=None,
            payment=self.payments.with_refund(seen, "review", attempt=str(booking.version),
                                              amount=(money.payment or {}).get("amount")))
        try:
            self.payments.refund(booking, "operator")
        except PaymentOutcomeUnknown:
            pass  # REFUND_PENDING is due for reconciliation, which repeats it with the same key

    @staticmethod
    def _provider_call(call) -> Any:  # noqa: ANN001
        """A capture or void for an operator, answered by what the payment now is (a refusal too:
        it may have been captured or cancelled meanwhile); no answer at all is a 503 to retry."""
        try:
            return call()
        except PaymentOutcomeUnknown:
            raise PaymentProviderUnavailable("The payment provider did not answer; try again shortly.",
                                             retry_after=RETRY_AFTER) from None
