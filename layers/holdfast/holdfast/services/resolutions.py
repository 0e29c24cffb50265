"""Deciding a conflict case (services/conflict_cases.py opens it): the booking moves to a chosen
alternative and is confirmed with the same payment, or its money goes back once.

Who decides: the customer (``POST /bookings/{id}/resolution``), an operator (``/admin/reviews``)
or, once ``respond_by`` has passed, the sweeper (money back). The first decision wins: it is
written with the booking's version check, and a case already decided answers every later request
with what was decided (the same Idempotency-Key and body: the booking; anything else: 409).

Money, never a second payment:
- an alternative, two-stage: its places are pinned (MANUAL_REVIEW -> PAYMENT_PENDING, places
  held and ``places_secured``) before the one authorisation is captured under the booking's
  capture key; the capture's answer confirms it through the usual payment path. A lost answer is
  repeated (same key) by the customer's retry, reconciliation or a notification.
- an alternative, one-stage: the money is already captured; the places are taken (RETAKE) and the
  booking is CONFIRMED in one transaction.
- money back, two-stage: the authorisation is cancelled (nothing was taken) -> PAYMENT_FAILED.
- money back, one-stage: REFUND_PENDING and the refund under a key derived from the payment, so
  it is refunded once (services/refunds.py).

A case of a cancelled offering is never moved: the event cancellation job gives its money back
(``close_for_cancelled_event``), and a choice that comes first or later is answered 409
``event_cancelled`` after the same give-back (same keys: once). The sale gate in the store refuses
the places of an alternative whose choice raced the cancellation.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..clock import iso, parse_iso
from ..domain.booking import Booking
from ..domain.errors import (Conflict, EventCancelled, IdempotencyKeyReused, InvalidRequest,
                             PaymentProviderUnavailable, SeatsUnavailable, SoldOut)
from ..domain.inventory import Move
from ..domain.statuses import BookingStatus
from ..observability import logger
from .. import kinds
from ..ports import Clock, PaymentStore, PlacesTaken, ProviderOutcomeUnknown, SalesStopped, StaleBooking
from . import transitions
from .booking_views import describe
from .payments import PaymentService
from .provider_keys import PaymentOutcomeUnknown, capture_key, void_key

CHOICES = ("alternative", "refund")
RETRY_AFTER = 2
ATTEMPTS = 6


class ResolutionService:
    def __init__(self, store: PaymentStore, payments: PaymentService, clock: Clock) -> None:
        self.store = store
        self.payments = payments
        #: the payment at the provider: voided through the payments' one place
        self.money = payments.money
        self.clock = clock

    # -------------------------------------------------------------------------------- entry points

    def choose(self, booking_id: str, customer_id: str, key: str, choice: str, fields: dict[str, Any]) -> dict[str, Any]:
        """The customer's choice, under their Idempotency-Key."""
        booking = self.payments.bookings.owned(booking_id, customer_id)
        return self.decide(booking, choice, fields, actor="customer", key=key)

    def lapse(self, booking: Booking) -> str:
        """Past ``respond_by`` with nobody having chosen: the money goes back."""
        if not booking.resolution_open or parse_iso(booking.resolution["respond_by"]) > self.clock():
            return "not_due"
        try:
            self.decide(booking, "refund", {}, actor="timer", key=f"timer-{booking.booking_id}")
        except Conflict as exc:   # decided meanwhile by someone else
            return exc.code
        return "lapsed"

    def decide(self, booking: Booking, choice: str, fields: dict[str, Any], *, actor: str, key: str,
               note: str = "", who: dict[str, str] | None = None) -> dict[str, Any]:
        if choice not in CHOICES:
            raise InvalidRequest(f"choice must be one of {', '.join(CHOICES)}.", code="invalid_choice")
        if choice == "refund" and fields:
            raise InvalidRequest("A refund takes no other fields.", code="invalid_choice")
        case = booking.resolution
        if not case:
            raise Conflict("This booking has no conflict case to resolve.", code="no_resolution")
        if choice == "alternative":
            fields = kinds.of_booking(booking).normalise_choice(fields)
        decided = case.get("decision")
        if decided and decided.get("key") == key:
            return self._repeat(booking, decided, choice, fields, key)
        if booking.event_cancelled or transitions.offering_cancelled(self.store, booking):
            self.close_for_cancelled_event(booking)
            raise EventCancelled(booking.event_id)
        if decided:
            return self._repeat(booking, decided, choice, fields, key)
        if booking.status is not BookingStatus.MANUAL_REVIEW:
            raise Conflict(f"The booking is {booking.status.value}; its case was closed.", code="resolution_closed",
                           status=booking.status.value)
        decision = {"choice": choice, "fields": dict(fields), "by": actor, "at": iso(self.clock()), "key": key}
        if note:
            decision["note"] = note[:200]
        if who:
            decision["who"] = dict(who)   # an organizer deciding: which organizer, which of its keys
        try:
            if choice == "alternative":
                self._move(booking, case, decision, actor)
            else:
                self._give_back(booking, case, decision, actor)
        except StaleBooking:
            raise Conflict("The booking changed meanwhile; look again.", code="booking_changed") from None
        return describe(self.store.get_booking(booking.booking_id) or booking)

    def close_for_cancelled_event(self, booking: Booking) -> str:
        """The offering was cancelled while the case was open: its money goes back (void or
        refund), decided by the organizer, whoever asks first (the cancellation job, or the
        customer's or an operator's late choice). A case already decided is left as it is."""
        def close(current: Booking) -> str:
            case = current.resolution
            if not current.resolution_open or not case or current.status is not BookingStatus.MANUAL_REVIEW:
                return "case_closed"
            decision = {"choice": "refund", "fields": {}, "by": "organizer", "at": iso(self.clock()),
                        "key": f"event-cancelled-{current.booking_id}"}
            self._give_back(current, case, decision, "organizer", why="event cancelled")
            return "case_refunded"

        return transitions.decide_again(
            lambda: self.store.get_booking(booking.booking_id), close, first=booking, attempts=ATTEMPTS,
            gone=lambda: "case_closed",
            exhausted=Conflict("The booking changed meanwhile; look again.", code="booking_changed"))

    # ------------------------------------------------------------------------------- the decisions

    def _move(self, booking: Booking, case: dict[str, Any], decision: dict[str, Any], actor: str) -> None:
        fields = decision["fields"]
        kind = kinds.of_booking(booking)
        offered = [kind.normalise_choice(option) for option in case.get("alternatives") or []]
        if not fields or not any(all(option.get(name) == value for name, value in fields.items()) for option in offered):
            raise Conflict("Choose one of the alternatives listed with the booking.", code="not_an_offered_alternative")
        event = self.store.get_event(booking.event_id)
        if event is None:
            raise Conflict("That alternative was just taken; choose another or a refund.", code="alternative_unavailable")
        offering = kinds.offering(event)
        try:
            places = kind.plan_choice(self.store, offering, booking, fields, now=self.clock())
        except (SoldOut, SeatsUnavailable):
            raise Conflict("That alternative was just taken; choose another or a refund.",
                           code="alternative_unavailable") from None
        if kind.price(offering, places) != booking.amount:
            raise Conflict("That alternative costs a different amount; choose another or a refund.",
                           code="alternative_price_differs")
        payment = booking.payment
        assert payment is not None and payment.payment_id
        ids = {"payment_id": payment.payment_id, "choice": "alternative", "by": actor} | decision.get("who", {})
        chosen = dict(case) | {"decision": decision}
        # The journal says where the booking went in words, not as a dict: "starts_at 2026-12-03T06:00:00.000Z".
        moved = ", ".join(f"{name} {value}" for name, value in sorted(fields.items()) if name != "resource_id")
        try:
            if payment.provider_status == "waiting_for_capture":
                pinned = transitions.apply(
                    self.store, booking, self.clock(), status=BookingStatus.PAYMENT_PENDING, actor=actor,
                    action="alternative_chosen", decision=_said(decision, f"moved to {moved or 'the chosen alternative'}; places pinned, capturing the same payment"),
                    ids=ids, move=Move.HOLD, places=places, places_secured=True, review=None, resolution=chosen,
                    payment=replace(payment, capture_key=capture_key(booking.booking_id)))
                self.payments._watch(pinned, "resolution")
                self._capture(pinned, actor)
                return
            transitions.apply(
                self.store, booking, self.clock(), status=BookingStatus.CONFIRMED, actor=actor,
                action="alternative_chosen", decision=_said(decision, f"moved to {moved or 'the chosen alternative'}; confirmed with the same payment"),
                ids=ids, move=Move.RETAKE, places=places, review=None, resolution=chosen)
        except PlacesTaken:
            raise Conflict("That alternative was just taken; choose another or a refund.",
                           code="alternative_unavailable") from None
        except SalesStopped:
            # Cancelled between the check in ``decide`` and this write: nothing was taken.
            self.close_for_cancelled_event(self.store.get_booking(booking.booking_id) or booking)
            raise EventCancelled(booking.event_id) from None

    def _give_back(self, booking: Booking, case: dict[str, Any], decision: dict[str, Any], actor: str,
                   why: str = "") -> None:
        payment = booking.payment
        assert payment is not None and payment.payment_id
        ids = {"payment_id": payment.payment_id, "choice": "refund", "by": actor} | decision.get("who", {})
        chosen = dict(case) | {"decision": decision}
        why = why or ("no choice by the deadline" if actor == "timer" else "money back chosen")
        if payment.provider_status == "waiting_for_capture":
            voided = self._provider(lambda: self.money.void(payment.payment_id, void_key(booking.booking_id)))
            if voided.get("status") != "canceled":
                # Captured meanwhile (it never is by us without pinned places): an operator looks.
                raise Conflict("The payment could not be cancelled; our team will look.", code="payment_owed",
                               payment_status=voided.get("status"))
            transitions.apply(
                self.store, booking, self.clock(), status=BookingStatus.PAYMENT_FAILED, actor=actor,
                action="authorisation_cancelled", decision=_said(decision, f"{why}; authorisation cancelled, no money taken"),
                ids=ids, review=None, resolution=chosen,
                payment=replace(payment, provider_status="canceled", next_check_at=None))
            return
        refunding = transitions.apply(
            self.store, booking, self.clock(), status=BookingStatus.REFUND_PENDING, actor=actor,
            action="resolution_refund_started", decision=_said(decision, f"{why}; the payment is refunded"), ids=ids, review=None,
            resolution=chosen, payment=self.payments.with_refund(payment, "resolution"))
        try:
            self.payments.refund(refunding, actor)
        except PaymentOutcomeUnknown:
            logger.warning("refund outcome unknown; reconciliation will settle it",
                           extra={"booking_id": booking.booking_id})

    # ------------------------------------------------------------------------------------- repeats

    def _repeat(self, booking: Booking, decided: dict[str, Any], choice: str, fields: dict[str, Any],
                key: str) -> dict[str, Any]:
        same = decided.get("choice") == choice and decided.get("fields", {}) == dict(fields)
        if decided.get("key") != key:
            raise Conflict(f"This case was already decided ({decided.get('choice')}).", code="resolution_closed",
                           choice=decided.get("choice"))
        if not same:
            raise IdempotencyKeyReused()
        # The same request again: finish what its first run may have left unanswered.
        if booking.status is BookingStatus.PAYMENT_PENDING and booking.places_secured:
            self._capture(booking, decided.get("by", "customer"))
        elif booking.status is BookingStatus.REFUND_PENDING:
            try:
                self.payments.refund(booking, "customer")
            except PaymentOutcomeUnknown:
                pass
        return describe(self.store.get_booking(booking.booking_id) or booking)

    def _capture(self, booking: Booking, actor: str) -> None:
        payment = booking.payment
        assert payment is not None and payment.payment_id
        try:
            self.payments.capture(booking, actor)
        except (PaymentOutcomeUnknown, ProviderOutcomeUnknown):
            raise PaymentProviderUnavailable(
                "The payment provider did not answer; retry with the same Idempotency-Key (no second capture).",
                retry_after=RETRY_AFTER) from None

    @staticmethod
    def _provider(call) -> dict[str, Any]:  # noqa: ANN001
        """A void for a case, answered by what the payment now is; no answer at all is a 503 to
        retry with the same Idempotency-Key."""
        try:
            return call()
        except PaymentOutcomeUnknown:
            raise PaymentProviderUnavailable("The payment provider did not answer; retry with the same "
                                             "Idempotency-Key.", retry_after=RETRY_AFTER) from None


def _said(decision: dict[str, Any], text: str) -> str:
    """The journal's decision text, with an operator's note (the customer's journal view replaces
    an operator's entries with a fixed sentence, and the booking view leaves the note out)."""
    return f"{text}; {decision['note']}" if decision.get("note") else text
