"""Reconciliation: find out what happened to payments and refunds whose outcome we do not know.

Two different losses, two paths:

- lost response: we stored the attempt but never learned the payment id (timeout, 500, dropped
  connection, a crash after the call). While the provider still keeps idempotence keys the create
  call is repeated with the same key and body, which returns the one payment; after that window the
  payment is looked up by its metadata (booking id) in a created_at range around the attempt.
- lost notification: the payment id is known but no final notification came. It is fetched with
  GET and applied by the very code the webhook consumer uses (PaymentService.apply_provider_payment).

Each check answers when to look again; the state machine waits that long. At the limit (24 hours
after the attempt by default, the provider's notification window) an authorised payment is
cancelled at the provider, an unpaid booking ends PAYMENT_FAILED, and a booking whose provider
could not be reached at all goes to MANUAL_REVIEW.
"""
from __future__ import annotations

import math
import time
from dataclasses import replace
from datetime import timedelta
from typing import Any, Callable

from ..clock import EARLY_WAKE_SECONDS, iso, parse_iso
from ..domain.booking import Booking
from ..domain.inventory import Move
from ..domain.statuses import BookingStatus
from ..faults import crash_point
from ..observability import logger
from ..ports import Clock, PaymentProvider, PaymentStore, ProviderOutcomeUnknown, ProviderRejected
from . import transitions
from .money_at_provider import MoneyAtProvider
from .payments import PaymentService
from .provider_keys import PaymentOutcomeUnknown, void_key

DEFAULT_SCHEDULE = (30, 60, 120, 300, 900, 1800, 3600)
ATTEMPTS = 5


class ReconciliationService:
    def __init__(self, store: PaymentStore, provider: PaymentProvider, payments: PaymentService, clock: Clock,
                 schedule_seconds: tuple[int, ...] = DEFAULT_SCHEDULE, limit_seconds: int = 24 * 3600,
                 key_retention_seconds: int = 24 * 3600) -> None:
        self.store = store
        self.money = MoneyAtProvider(provider)
        self.payments = payments
        self.clock = clock
        self.schedule = schedule_seconds
        self.limit = limit_seconds
        self.key_retention = key_retention_seconds

    def check(self, booking_id: str, booking: Booking | None = None) -> dict[str, Any]:
        """One look at a booking's payment. Returns ``outcome`` (settled | pending) and
        ``wait_seconds`` until the next look. ``booking`` is the copy a caller has just read
        (the bucket's check), so it is not read twice; it is read again after the provider's
        answer is applied either way."""
        if booking is None:
            booking = self.store.get_booking(booking_id)
        if booking is None or booking.settled:
            return self._answer(booking_id, "settled", 0, booking)
        reachable = True
        try:
            self._learn(booking)
        except (ProviderOutcomeUnknown, PaymentOutcomeUnknown) as exc:
            reachable = False
            logger.warning("reconciliation could not settle the payment yet", extra={"booking_id": booking_id,
                                                                                       "reason": str(exc)[:120]})
        booking = self.store.get_booking(booking_id)
        assert booking is not None
        if booking.settled:
            return self._answer(booking_id, "settled", 0, booking)
        started = parse_iso(_requested_at(booking))
        if self.clock() - started >= timedelta(seconds=self.limit):
            self._give_up(booking, reachable)
            return self._answer(booking_id, "settled", 0, self.store.get_booking(booking_id))
        return self._schedule_next(booking)

    def check_bucket(self, bucket: str, follow_up: Callable[[str, str, int], Any] | None,
                     wait_up_to: float = EARLY_WAKE_SECONDS, indexed: bool = False) -> dict[str, Any]:
        """The first check of every payment due in a bucket (adapters/aws.py ReconciliationBuckets):
        each one checked as ``check`` does; one still unsettled gets its own execution for the later
        checks (``follow_up``). Holds in the bucket are the expiry's, not looked at here. A booking
        that fails is left to the sweeper, whose due index still holds it. ``indexed`` (a tick
        started since the bucket markers, adapters/expiry_buckets.py): the due index is read only
        when a write put a payment check in the bucket."""
        end = parse_iso(bucket)
        now = self.clock()
        if timedelta(0) < end - now <= timedelta(seconds=wait_up_to):
            # woken a moment early (the expiry tick has no state to wait again): wait it out here
            time.sleep((end - now).total_seconds() + 0.01)
            now = self.clock()
        if now < end:   # the wait woke early: wait the rest
            return {"booking_id": "", "bucket": bucket, "outcome": "pending", "status": "",
                    "wait_seconds": max(1, math.ceil((end - now).total_seconds()))}
        checked = followed = 0
        for booking_id in self.store.due_in_bucket(bucket, indexed=indexed):
            booking = self.store.get_booking(booking_id)
            payment = booking.payment if booking else None
            if payment is None or booking.settled or not payment.next_check_at or payment.next_check_at > bucket:
                continue
            try:
                crash_point("reconcile.before_check")   # the same fault as the one-booking task's
                result = self.check(booking_id, booking)
                checked += 1
                if result["outcome"] != "settled" and follow_up is not None:
                    follow_up(booking_id, "initial", int(result["wait_seconds"]))
                    followed += 1
            except Exception:  # noqa: BLE001 - one payment must not stop the bucket; the sweeper has it
                logger.exception("bucket check failed for a booking", extra={"booking_id": booking_id})
        return {"booking_id": "", "bucket": bucket, "outcome": "settled", "status": "", "wait_seconds": 0,
                "checked": checked, "followed_up": followed}

    # ---------------------------------------------------------------------------------- learning

    def _learn(self, booking: Booking) -> None:
        payment = booking.payment
        if payment is None:
            return
        if booking.status is BookingStatus.REFUND_PENDING and payment.refund:
            refund_id = payment.refund.get("refund_id")
            if refund_id and payment.refund.get("status") == "pending":
                self.payments.recheck_refund(booking, "reconciler")
            else:
                self.payments.refund(booking, "reconciler")
            return
        if not payment.payment_id:
            found = self._find_lost_payment(booking)
            if found is None:
                return
            answer, how = found
            booking = self.payments.record_created(booking, answer, action=f"payment_found_{how}",
                                                   decision="lost create response settled by reconciliation",
                                                   actor="reconciler")
            payment = booking.payment
            assert payment is not None and payment.payment_id
        self.payments.apply_at_provider(payment.payment_id, actor="reconciler")

    def _find_lost_payment(self, booking: Booking) -> tuple[dict[str, Any], str] | None:
        payment = booking.payment
        assert payment is not None
        requested = parse_iso(payment.requested_at or booking.created_at)
        if booking.holds_places and self.clock() - requested < timedelta(seconds=self.key_retention):
            # The provider still knows the key: the same request returns the payment, or creates it
            # now if the first call never got through (the customer can still pay: the hold stands).
            try:
                return self.payments.request_creation(booking), "by_same_key"
            except ProviderRejected:
                return None
        found = self.money.found_by_booking(booking.booking_id, requested)
        if found is None:
            self._note(booking, "payment_not_found_at_provider", "no payment exists for this attempt",
                       replace(payment, state="NOT_CREATED", next_check_at=None, lease_until=None))
            return None
        return found, "by_metadata"

    # ----------------------------------------------------------------------------------- the end

    def _give_up(self, booking: Booking, reachable: bool) -> None:
        payment = booking.payment
        assert payment is not None
        now = self.clock()
        ids = {"payment_id": payment.payment_id or ""}
        if booking.status is BookingStatus.REFUND_PENDING or not reachable:
            reason = "refund_not_confirmed" if booking.status is BookingStatus.REFUND_PENDING else "provider_unreachable"
            self.payments.open_review(booking, reason, "reconciler", ids)
            return
        if payment.provider_status == "waiting_for_capture" and payment.payment_id:
            try:
                self.money.void(payment.payment_id, void_key(booking.booking_id), look_when_refused=False)
            except (ProviderRejected, PaymentOutcomeUnknown):
                self.payments.open_review(booking, "authorisation_not_cancelled", "reconciler", ids)
                return
        def stop(current: Booking) -> None:
            if current.settled:   # settled meanwhile: that ends the follow-up (``check`` passes none settled)
                return
            assert current.payment is not None
            done = replace(current.payment, next_check_at=None)
            if current.holds_places:
                transitions.apply(self.store, current, now, status=BookingStatus.PAYMENT_FAILED, actor="reconciler",
                                  action="reconciliation_limit_reached", ids=ids, move=Move.RELEASE,
                                  decision="no final payment within the limit; places released", payment=done,
                                  places_secured=False)
            else:
                transitions.apply(self.store, current, now, actor="reconciler", action="reconciliation_limit_reached",
                                  ids=ids, decision="no final payment within the limit; stopped checking", payment=done)

        transitions.decide_again(lambda: self.store.get_booking(booking.booking_id), stop, first=booking,
                                 attempts=ATTEMPTS, gone=lambda: None, exhausted=lambda: None)

    def _schedule_next(self, booking: Booking) -> dict[str, Any]:
        payment = booking.payment
        assert payment is not None
        wait = self.schedule[min(payment.checks, len(self.schedule) - 1)]
        # never past the limit: the last look is at the limit itself, which gives up (an hourly
        # schedule would otherwise stop up to an hour after it)
        until_limit = parse_iso(_requested_at(booking)) + timedelta(seconds=self.limit) - self.clock()
        wait = max(1, min(wait, math.ceil(until_limit.total_seconds())))
        next_at = iso(self.clock() + timedelta(seconds=wait))
        self._note(booking, "reconciliation_check", f"outcome still unknown; next check in {wait}s",
                   replace(payment, next_check_at=next_at, checks=payment.checks + 1, restarts=0))
        return self._answer(booking.booking_id, "pending", wait, booking)

    def _note(self, booking: Booking, action: str, decision: str, payment) -> None:  # noqa: ANN001
        def note(current: Booking) -> None:
            if current.settled:   # settled meanwhile: nothing left to note (``check`` passes none settled)
                return
            change = payment
            if current is not booking:
                # Read again after a collision: what the other writer recorded about the payment stands.
                change = replace(payment, **{k: getattr(current.payment, k) for k in ("payment_id", "provider_status",
                                                                                        "refund", "state")})
            transitions.apply(self.store, current, self.clock(), actor="reconciler", action=action,
                              decision=decision, payment=change)

        transitions.decide_again(lambda: self.store.get_booking(booking.booking_id), note, first=booking,
                                 attempts=ATTEMPTS, gone=lambda: None, exhausted=lambda: None)

    @staticmethod
    def _answer(booking_id: str, outcome: str, wait: int, booking: Booking | None) -> dict[str, Any]:
        return {"booking_id": booking_id, "outcome": outcome, "wait_seconds": wait,
                "status": booking.status.value if booking else "missing"}


def _requested_at(booking: Booking) -> str:
    """When the money question reconciliation is following was asked: a refund's own request
    (it may come days after the payment), else the payment attempt."""
    payment = booking.payment
    if payment is not None and booking.status is BookingStatus.REFUND_PENDING and (payment.refund or {}).get("requested_at"):
        return payment.refund["requested_at"]
    return (payment.requested_at if payment else None) or booking.created_at

