"""Payments: create the one provider payment of a booking, and act on what the provider reports.

The provider call is never part of a DynamoDB transaction. The order is always:
store the attempt and its idempotence key -> call the provider (with a timeout) -> store the outcome.
A crash or a lost answer between the steps leaves a record that says so; a repeat uses the same
key, so the provider never creates a second payment (or capture, or refund).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Callable

from ..clock import iso, parse_iso
from ..domain.codes import keep_uses, without_uses
from ..domain.booking import Booking, Payment, PaymentMode, Verdict, judge_payment, paid_before, settled_lines
from ..domain.errors import Busy, Conflict, EventCancelled, PaymentProviderUnavailable, RequestInProgress
from ..domain.inventory import Move, Places
from ..domain.personal_data import with_current_end
from ..domain.statuses import BookingStatus
from ..faults import crash_point
from ..observability import logger
from .. import kinds
from ..kinds import products
from ..ports import (Clock, FiscalReads, PaymentProvider, PaymentStore, PlacesTaken, ProviderNotFound,
                     ProviderRejected, SalesStopped, StaleBooking, TransientStoreError)
from . import transitions
from .bookings import BookingService
from .releases import pause
from .provider_keys import PaymentOutcomeUnknown, capture_key, payment_key, void_key
from .money_at_provider import MoneyAtProvider
from .exchange_differences import BOOKING_KEY as DIFFERENCE_OF, DifferencePayments
from .conflict_cases import DEFAULT_OPERATOR, DEFAULT_WINDOW_SECONDS, ConflictCases
from .payment_records import PaymentRecords
from .receipts import SaleReceipts, payment_receipt
from .refunds import Refunds

ATTEMPTS = 6
CREATE_LEASE_SECONDS = 30


@dataclass(frozen=True)
class JudgeAgain:
    """What a step at the provider (a capture) leaves: the payment as it now is, to be judged again
    against the booking as it now is."""
    payment: dict[str, Any]


class PaymentService:
    """A booking's payment from its creation to its settlement. Its parts: the money at the
    provider (``money``: every provider call and its outcomes), the payment records (``records``:
    notes, reviews), the money going back (``refunds``) and the conflict cases (``cases``); the
    calls other services and the handlers make of those parts are answered here."""

    def __init__(self, store: PaymentStore, provider: PaymentProvider, clock: Clock, bookings: BookingService,
                 return_url: str, first_check_seconds: int = 30,
                 start_reconciliation: Callable[[str, str, float], Any] | None = None,
                 resolution_window_seconds: int | None = None, resolution_operator: str | None = None,
                 fiscal: FiscalReads | None = None) -> None:
        self.first_check_seconds = first_check_seconds
        self.start_reconciliation = start_reconciliation
        self.store = store
        #: the one place that asks the provider about a payment, captures, voids and refunds it
        self.money = MoneyAtProvider(provider)
        self.clock = clock
        self.bookings = bookings
        self.return_url = return_url
        self.records = PaymentRecords(store, clock)
        #: the receipts of organizers with fiscal settings (None: the engine sends none)
        self.receipts = SaleReceipts(store, fiscal)
        self.refunds = Refunds(store, self.money, clock, self.records, self._watch, first_check_seconds)
        #: the part refunds of a booking's payments (an exchange's difference, an order line's) and
        #: the sweeper's one retry of a lost answer (services/part_refunds.py)
        self.part_refunds = self.refunds.part_refunds
        self.cases = ConflictCases(store, clock, resolution_window_seconds or DEFAULT_WINDOW_SECONDS,
                                   resolution_operator or DEFAULT_OPERATOR)
        #: the second payments of exchanges into dearer places (services/exchange_differences.py)
        self.differences = DifferencePayments(store, clock, self.money, return_url, first_check_seconds)
        self.refunds.give_back_differences = self.differences.give_back_paid
        self.refunds.release_differences = self.differences.release_held

    # ------------------------------------------------------------------ answered by the parts

    def open_review(self, booking: Booking, reason: str, actor: str, ids: dict[str, str],
                    payment: Payment | None = None) -> None:
        self.records.open_review(booking, reason, actor, ids, payment)

    def cancel_confirmed(self, booking: Booking, actor: str = "customer", operator_note: str | None = None,
                         ids: dict[str, str] | None = None) -> Booking:
        return self.refunds.cancel_confirmed(booking, actor, operator_note, ids)

    def refund_after_timer(self, booking: Booking) -> bool:
        return self.refunds.refund_after_timer(booking)

    def line_timers(self, booking: Booking, overdue: str) -> str:
        return self.refunds.line_timers(booking, overdue)

    def with_refund(self, payment: Payment, reason: str, attempt: str = "",
                    amount: dict[str, str] | None = None) -> Payment:
        return self.refunds.with_refund(payment, reason, attempt, amount)

    def refund(self, booking: Booking, actor: str, watch: bool = True) -> str:
        return self.refunds.refund(booking, actor, watch)

    def record_refund(self, booking: Booking, refund: dict[str, Any], actor: str) -> str:
        return self.refunds.record_refund(booking, refund, actor)

    def refund_told_apart(self, booking: Booking, actor: str) -> tuple[Booking, dict[str, Any] | None]:
        return self.refunds.tell_apart(booking, actor)

    def apply_provider_refund(self, refund: dict[str, Any], actor: str = "provider") -> str:
        return self.refunds.apply_provider_refund(refund, actor)

    def recheck_refund(self, booking: Booking, actor: str) -> str:
        """The booking's refund as the provider has it now, recorded (one it answered ``pending``)."""
        assert booking.payment is not None and booking.payment.refund is not None
        return self.refunds.record_refund(booking, self.money.refund_of(booking.payment.refund["refund_id"]), actor)

    def void_after_cancel(self, booking: Booking, actor: str = "customer") -> Booking:
        return self.refunds.void_after_cancel(booking, actor)

    # ------------------------------------------------------------------------------------- start

    def start_payment(self, booking_id: str, customer_id: str, request_key: str,
                      contact_email: str | None = None) -> Booking:
        """Create (or return) the booking's provider payment. Amount and currency are the booking's.
        ``contact_email``: the address of a booking made without one (its receipt's, and its
        messages'), stored with the attempt; a booking that has one keeps it."""
        def store_attempt(booking: Booking) -> tuple[Booking, bool]:
            """The booking with its attempt stored (True), or as it stands when it has its payment."""
            now = self.clock()
            payment = booking.payment
            if payment is not None and payment.payment_id:
                return booking, False
            if booking.amount.value == 0:   # a comp: confirmed without a payment (services/bookings.py)
                raise Conflict("Nothing to pay for this booking.", code="nothing_to_pay", status=booking.status.value)
            if booking.status is BookingStatus.HELD:
                if now >= parse_iso(booking.hold_expires_at):
                    raise Conflict("The hold has lapsed; book again.", code="hold_expired")
                if self.store.event_cancelled(booking.event_id):
                    # cancelled while held: the cancellation job releases the hold; nothing is paid for it
                    raise EventCancelled(booking.event_id)
                address = {"contact_email": contact_email} if contact_email and not booking.contact_email else {}
                receipt = self.receipts.sale_record(replace(booking, **address))   # ContactRequired: nothing stored
                return transitions.apply(
                    self.store, booking, now, status=BookingStatus.PAYMENT_PENDING, actor="customer",
                    action="payment_requested", decision="attempt stored before calling the provider",
                    ids={"idempotence_key": payment_key(booking_id), "request_key": request_key},
                    payment=Payment(idempotence_key=payment_key(booking_id), state="CREATING",
                                    lease_until=iso(now + timedelta(seconds=CREATE_LEASE_SECONDS)),
                                    requested_at=iso(now), receipt=receipt,
                                    # its settlement's first look: the start read now, not the hold's copy
                                    settlement=_settlement_hint(self.store, booking, receipt) if receipt else None,
                                    next_check_at=iso(now + timedelta(seconds=self.first_check_seconds))),
                    **address,
                ), True
            if booking.status is BookingStatus.PAYMENT_PENDING and payment is not None:
                if payment.state == "CREATING" and payment.lease_until and now < parse_iso(payment.lease_until):
                    raise RequestInProgress()
                # Outcome of an earlier call unknown (or its caller crashed): ask again, same key.
                return transitions.apply(
                    self.store, booking, now, actor="customer", action="payment_retried",
                    decision="repeating the provider call with the same idempotence key",
                    ids={"idempotence_key": payment.idempotence_key, "request_key": request_key},
                    payment=replace(payment, state="CREATING",
                                    lease_until=iso(now + timedelta(seconds=CREATE_LEASE_SECONDS))),
                ), True
            raise Conflict(f"A {booking.status.value} booking cannot be paid.", code="not_payable",
                           status=booking.status.value)

        # A collision writes nothing (the provider was not called yet): read again and decide.
        booking, stored = transitions.decide_again(
            lambda: self.bookings.owned(booking_id, customer_id), store_attempt, attempts=ATTEMPTS, exhausted=Busy(),
            retry_on=(StaleBooking, TransientStoreError), pause=pause)
        if not stored:
            return booking
        self._watch(booking)
        return self._create_at_provider(booking)

    def _watch(self, booking: Booking, tag: str = "initial") -> None:
        """Start the booking's reconciliation before a provider call whose outcome we may not learn
        (create, refund), so a crash anywhere after the stored attempt is still followed up. The
        execution name carries the tag: a repeat starts nothing new; the sweeper covers a failed start."""
        crash_point("payment.after_storing_attempt")
        if self.start_reconciliation is None:
            return
        wait: float = self.first_check_seconds
        due = booking.payment.next_check_at if booking.payment is not None else None
        if tag == "initial" and due:
            # counted from the check time stored with the attempt, not from now: a write slower than
            # the rest of a 5-second bucket would otherwise start the next bucket's tick, and the
            # stored check's own bucket would be read without it (left to the sweeper's minute)
            wait = (parse_iso(due) - self.clock()).total_seconds()
        try:
            self.start_reconciliation(booking.booking_id, tag, wait)
        except Exception:  # noqa: BLE001 - the due index and the sweeper restart it
            logger.exception("could not start reconciliation", extra={"booking_id": booking.booking_id})

    def request_creation(self, booking: Booking) -> dict[str, Any]:
        """The provider call that creates the booking's payment. Always the same body and key for a
        booking, so any repeat (a retry, reconciliation) returns the one payment."""
        assert booking.payment is not None
        return self.money.create(
            amount=booking.amount.as_dict(),
            description=f"Holdfast booking {booking.booking_id}",
            metadata={"booking_id": booking.booking_id, "event_id": booking.event_id},
            capture=booking.payment_mode is PaymentMode.ONE_STAGE,
            # `{booking_id}` in the configured URL brings the customer back to that booking's page
            return_url=self.return_url.replace("{booking_id}", booking.booking_id),
            idempotence_key=booking.payment.idempotence_key,
            receipt=payment_receipt(booking),
        )

    def _create_at_provider(self, booking: Booking) -> Booking:
        crash_point("payment.before_provider_call")
        try:
            answer = self.request_creation(booking)
        except PaymentOutcomeUnknown as exc:
            self.records.note(booking, action="payment_outcome_unknown", decision=f"{exc}; will retry with the same key",
                       payment_change={"state": "UNKNOWN", "lease_until": None})
            raise PaymentProviderUnavailable(
                "The payment provider did not answer. Retry with the same Idempotency-Key: no second payment will be made.",
                retry_after=2,
            ) from None
        except ProviderRejected as exc:
            self.records.settle(booking, BookingStatus.PAYMENT_FAILED, action="payment_rejected",
                         decision=f"provider refused the payment ({exc.code}); places released", move=Move.RELEASE,
                         payment_change={"state": "REJECTED", "lease_until": None})
            raise Conflict("The payment provider refused this payment.", code="payment_rejected") from None
        crash_point("payment.after_provider_call")
        return self.record_created(booking, answer)

    def record_created(self, booking: Booking, answer: dict[str, Any], action: str = "payment_created",
                       decision: str = "provider payment created", actor: str = "system") -> Booking:
        change = {
            "state": "CREATED", "payment_id": answer["id"], "provider_status": answer.get("status"),
            "confirmation_url": (answer.get("confirmation") or {}).get("confirmation_url"), "lease_until": None,
        }
        return self.records.note(booking, action=action, decision=decision, ids={"payment_id": answer["id"]},
                          payment_change=change, actor=actor)

    # ------------------------------------------------------------------------------------- apply

    def apply_provider_payment(self, provider_payment: dict[str, Any], actor: str = "provider") -> str:
        """Act on a payment as fetched from the provider (never on a notification body).

        Returns what was done, for logs and tests. Raises PaymentOutcomeUnknown when a provider call
        it needed (capture, cancel, refund) has an unknown outcome; a repeat is safe.
        """
        metadata = provider_payment.get("metadata") or {}
        booking_id = metadata.get("booking_id")
        if not booking_id and metadata.get(DIFFERENCE_OF):
            # a dearer exchange's difference: the booking's second payment, acted on by its own rules
            return self.differences.apply(provider_payment, actor)
        if not booking_id:
            purpose = products.purpose_of(metadata)
            if purpose is not None:
                # not a booking's payment: the product whose purpose it carries records it
                return products.resolve(purpose)(self.store, self.clock, provider_payment)
        payment_id = provider_payment.get("id", "")

        def unknown() -> str:
            logger.warning("payment for an unknown booking", extra={"payment_id": payment_id})
            return "unknown_booking"

        def judged(paid: dict[str, Any]) -> str | JudgeAgain:
            def act(booking: Booking) -> str | JudgeAgain:
                verdict = judge_payment(booking, paid, booking.payment_mode,
                                        event_cancelled=self._offering_cancelled(booking))
                return self._act(booking, paid, verdict.verdict, verdict.reason, actor)

            # SalesStopped: the event was cancelled after it was judged; judged again, the payment
            # is given back.
            return transitions.decide_again(
                lambda: self.store.get_booking(booking_id) if booking_id else None, act, attempts=ATTEMPTS,
                gone=unknown, exhausted=PaymentOutcomeUnknown(f"booking {booking_id} kept changing"),
                retry_on=(StaleBooking, SalesStopped))

        # A capture is a step: what the provider answers is judged again, against the booking as it
        # is then (someone may have confirmed or released it while the capture was in flight).
        outcome = judged(provider_payment)
        while isinstance(outcome, JudgeAgain):
            outcome = judged(outcome.payment)
        return outcome

    def apply_at_provider(self, payment_id: str, actor: str = "provider") -> str:
        """Fetch a payment from the provider and act on it (``apply_provider_payment``)."""
        return self.apply_provider_payment(self.money.payment(payment_id), actor)

    def apply_notified(self, event: str, object_id: str, actor: str = "provider") -> str:
        """A provider notification, by its event name and the object it names: the object is
        fetched from the provider (the notification's body is never believed) and applied, a
        refund as a refund, anything else as a payment. An object the provider does not know (a
        forged or foreign notification) is ``not_found_at_provider``."""
        try:
            if event.startswith("refund."):
                return self.apply_provider_refund(self.money.refund_of(object_id), actor)
            return self.apply_at_provider(object_id, actor)
        except ProviderNotFound:
            return "not_found_at_provider"

    def capture(self, booking: Booking, actor: str) -> str:
        """Capture the authorisation of a booking whose places are pinned (a conflict case's
        alternative, a repeat of it), then act on what the provider reports."""
        assert booking.payment is not None and booking.payment.payment_id
        return self.apply_provider_payment(self._capture(booking, {"id": booking.payment.payment_id}).payment, actor)

    def _act(self, booking: Booking, paid: dict[str, Any], verdict: Verdict, reason: str,
             actor: str) -> str | JudgeAgain:
        now = self.clock()
        ids = {"payment_id": paid["id"]}
        seen = self._payment_seen(booking, paid)
        if verdict is Verdict.IGNORE:
            return reason
        if verdict is Verdict.REVIEW:
            self.records.open_review(booking, reason, actor, ids, booking.payment or seen)
            return reason
        if verdict is Verdict.CONFIRM:
            action, decision = (("payment_captured", "captured after the places were secured; places sold")
                                if booking.places_secured else ("payment_succeeded", "paid while held; places sold"))
            transitions.apply(self.store, booking, now, status=BookingStatus.CONFIRMED, actor=actor, action=action,
                              decision=decision, ids=ids, move=Move.SELL, payment=seen, places_secured=False)
            return "confirmed"
        if verdict is Verdict.RELEASE_FAILED:
            detail = (paid.get("cancellation_details") or {}).get("reason", "unknown")
            transitions.apply(self.store, booking, now, status=BookingStatus.PAYMENT_FAILED, actor=actor,
                              action="payment_canceled", decision=f"provider cancelled the payment ({detail}); places released",
                              ids=ids, move=Move.RELEASE, payment=seen, places_secured=False)
            return "payment_failed"
        if verdict is Verdict.RECORD_CANCELED:
            # Only the payment record changes: the booking's status is not this payment's to move.
            transitions.apply(self.store, booking, now, actor=actor, action="payment_cancel_recorded",
                              decision=f"provider reports the payment cancelled; booking stays {booking.status.value}",
                              ids=ids, payment=replace(seen, next_check_at=None))
            return reason
        if verdict is Verdict.SECURE_AND_CAPTURE:
            if not booking.places_secured:
                booking = transitions.apply(self.store, booking, now, actor=actor, action="places_secured_for_capture",
                                            decision="authorised while held; places pinned, capturing", ids=ids,
                                            payment=replace(seen, capture_key=capture_key(booking.booking_id)),
                                            places_secured=True)
            return self._capture(booking, paid)
        if verdict is Verdict.LATE_RETAKE:
            return self._late_payment(booking, paid, actor, seen)
        if verdict is Verdict.GIVE_BACK:
            reason = "event_cancelled" if reason == "paid_after_event_cancelled" or booking.event_cancelled else "cancelled"
            return self.refunds.give_back(booking, paid, actor, seen, reason)
        if verdict is Verdict.RELEASE_AND_GIVE_BACK:
            released = self.release_for_cancelled_event(booking, actor, ids, seen)
            return self.refunds.give_back(released, paid, actor, replace(seen, capture_key=released.payment.capture_key
                                                                 if released.payment else None), "event_cancelled")
        raise AssertionError(verdict)

    def release_for_cancelled_event(self, booking: Booking, actor: str, ids: dict[str, str] | None = None,
                                    payment: Payment | None = None, reason: str = "") -> Booking:
        """A hold of a cancelled event ends CANCELLED with its places back. Its payment, if any ever
        succeeds, is given back (``give_back``), never taken (StaleBooking: decide again)."""
        decision = "event cancelled" + (f" ({reason})" if reason else "") + "; places released"
        return transitions.apply(self.store, booking, self.clock(), status=BookingStatus.CANCELLED, actor=actor,
                                 action="event_cancelled_hold_released", decision=decision, ids=ids,
                                 move=Move.RELEASE, payment=payment or booking.payment, places_secured=False,
                                 event_cancelled=True)

    def _offering_cancelled(self, booking: Booking) -> bool:
        """Whether an offering the booking takes places of was cancelled (any line of an order)."""
        return transitions.offering_cancelled(self.store, booking)

    def _payment_seen(self, booking: Booking, paid: dict[str, Any]) -> Payment:
        base = booking.payment or Payment(idempotence_key=payment_key(booking.booking_id), state="CREATED")
        return replace(base, payment_id=paid["id"], provider_status=paid.get("status"), state="CREATED",
                       lease_until=None, paid_at=paid.get("captured_at") or base.paid_at,
                       confirmation_url=base.confirmation_url or (paid.get("confirmation") or {}).get("confirmation_url"))

    def _capture(self, booking: Booking, paid: dict[str, Any]) -> JudgeAgain:
        """Capture the authorisation; what the provider now reports is judged again against the
        booking as it is then: someone (reconciliation, a duplicate notification) may have
        confirmed or released it while the capture was in flight, and its move must not be made twice.

        Places pinned before the event was cancelled are not paid for: the cancellation job waits
        for them (CaptureInFlight), and the authorisation as it stands, judged again, is voided."""
        if self._offering_cancelled(booking):
            return JudgeAgain(self.money.payment(paid["id"]))
        captured = self.money.capture(paid["id"], booking.amount.as_dict(), capture_key(booking.booking_id))
        if captured.get("status") not in ("succeeded", "canceled"):
            raise PaymentOutcomeUnknown(f"capture of {paid['id']} left it {captured.get('status')}")
        return JudgeAgain(captured)

    def _end_as_it_is_now(self, booking: Booking) -> Booking:
        """The booking with the end its offering (an order: each line's) gives it now (domain
        ``with_current_end``): the organizer may have moved the event since it was sold; a late payment, an operator's
        confirm, are judged by the start as it is, and the outcome is written with that end."""
        return with_current_end(booking, lambda offering_id: str((self.store.get_event(offering_id) or {})
                                                                 .get("starts_at") or ""))

    def _late_payment(self, booking: Booking, paid: dict[str, Any], actor: str, seen: Payment) -> str | JudgeAgain:
        """A payment that succeeded (or was authorised) after the booking's places were released."""
        now = self.clock()
        booking = self._end_as_it_is_now(booking)
        ids = {"payment_id": paid["id"]}
        two_stage = paid.get("status") == "waiting_for_capture"
        kind = kinds.of_booking(booking)
        places = kind.replan(self.store, replace(booking, places=without_uses(booking.places)), now=now)
        if places is not None:
            places = keep_uses(places, booking.places)
            try:
                if two_stage:
                    secured = transitions.apply(
                        self.store, booking, now, status=BookingStatus.PAYMENT_PENDING, actor=actor,
                        action="late_authorisation_places_retaken", decision="places still free; pinned for capture",
                        ids=ids, move=Move.HOLD, places=places, payment=replace(seen, capture_key=capture_key(booking.booking_id)),
                        places_secured=True)
                    return self._capture(secured, paid)
                transitions.apply(self.store, booking, now, status=BookingStatus.CONFIRMED, actor=actor,
                                  action="late_payment_places_retaken", decision="paid after release; places still free, sold",
                                  ids=ids, move=Move.RETAKE, places=places, payment=seen)
                return "confirmed_late"
            except PlacesTaken:
                pass
        # Gone: a kind that can offer other places opens a case for the customer to choose.
        opened = self.cases.offer_alternatives(booking, paid, actor, seen)
        if opened:
            return opened
        ended = kind.ended(booking, now)
        why = "its time has passed" if ended else "places resold"
        if two_stage:
            voided = self.money.void(paid["id"], void_key(booking.booking_id))
            if voided.get("status") != "canceled":
                # Captured elsewhere meanwhile: judged again as the money it now is.
                raise PaymentOutcomeUnknown(f"cancel of {paid['id']} left it {voided.get('status')}")
            # The void is recorded: the booking is settled, and reconciliation stops (no second void).
            transitions.apply(self.store, booking, now, actor=actor, action="late_authorisation_cancelled",
                              decision=f"{why}; authorisation cancelled, no money moved", ids=ids,
                              payment=replace(seen, provider_status="canceled", next_check_at=None))
            return "authorisation_cancelled"
        if not ended and paid_before(paid, parse_iso(booking.hold_expires_at)):
            self.records.open_review(booking, "paid_in_time_places_resold", actor, ids, seen)
            return "manual_review"
        booking = transitions.apply(self.store, booking, now, status=BookingStatus.REFUND_PENDING, actor=actor,
                                    action="late_payment_refund_started", decision=f"paid after release; {why}",
                                    ids=ids, payment=self.refunds.with_refund(seen, "late"))
        return self.refunds.refund(booking, actor)

    def replan(self, booking: Booking) -> Places | None:
        """Places for a late payment, as the booking's inventory kind re-plans them now (or None:
        gone, or their time has passed)."""
        current = self._end_as_it_is_now(booking)
        places = kinds.of_booking(booking).replan(self.store, replace(current, places=without_uses(booking.places)),
                                                  now=self.clock())
        return keep_uses(places, booking.places) if places is not None else None


def _settlement_hint(store: Any, booking: Booking, receipt: dict[str, Any]) -> dict[str, Any] | None:
    """The settlement's first look: when the service is rendered as the offering says it now. An
    order settled line by line gets one look per line, each read from the line's own offering (the
    line's ``ends_at`` is the start it was sold for, and the start may have moved since)."""
    from .settlements import line_renders_at, renders_at

    lines = settled_lines(replace(booking, payment=Payment(idempotence_key="", receipt=receipt)))
    if lines:
        looks = {line.line_id: {"next_at": at} for line in lines if (at := line_renders_at(store, line))}
        return {"lines": looks} if looks else None
    at = renders_at(store, booking)
    return {"next_at": at} if at else None
