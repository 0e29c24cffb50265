"""Settlement receipts (54-FZ): when a prepaid service is rendered, a second receipt closes the
prepayment (``POST /v3/receipts``, ``settlements: [{"type": "prepayment"}]``, items ``full_payment``).

A confirmed booking whose payment carried a receipt sits in the due index until its settlement
receipt is sent (``Booking.settlement_due``); the sweeper hands it here when that moment is due.
Each look reads when the service is rendered from where it lives (the offering's start as it is
now, after any postponement; a slot's first granule) and moves the look later if it moved later.

Exactly once, across crashes: the receipt's idempotence key is stored on the payment record before
the provider is called, and every repeat (the next sweep after a crash or a lost answer) sends the
same body under that key, so the provider registers one receipt. A provider error is retried on a
growing schedule; a refusal, or errors past the last attempt, fail for good: the booking carries an
open review (``settlement_receipt_failed``), the operator's case, and leaves the due index.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from ..clock import iso, parse_iso
from ..domain import fiscal, lifecycle
from ..domain.booking import Booking
from ..faults import crash_point
from ..observability import logger
from ..ports import Clock, PaymentProvider, PaymentStore, ProviderOutcomeUnknown, ProviderRejected, StaleBooking
from . import transitions

FAILED_REASON = "settlement_receipt_failed"
#: Waits before the next attempt after a provider error; after the last one it fails for good.
RETRY_SECONDS = (60, 300, 1800, 7200, 21600)


#: Times a settlement receipt the provider's register canceled is sent again before it is a case.
MAX_RESENDS = 2


def settlement_key(booking_id: str, resend: int = 0) -> str:
    """One settlement receipt per booking's payment: the key is the booking's, whatever retries it;
    a receipt the register canceled is sent again as a new one, under the next key."""
    return f"hf-settle-{booking_id}" + (f"-{resend}" if resend else "")


class Settlements:
    def __init__(self, store: PaymentStore, provider: PaymentProvider, clock: Clock,
                 retry_seconds: tuple[int, ...] = RETRY_SECONDS) -> None:
        self.store = store
        self.provider = provider
        self.clock = clock
        self.retry_seconds = tuple(retry_seconds) or RETRY_SECONDS

    def settle(self, booking: Booking) -> str:
        """Send the booking's settlement receipt if its service is rendered. Returns what was done:
        ``rescheduled``, ``sent``, ``retrying``, ``failed`` or ``skipped`` (nothing owed, or the
        booking changed meanwhile: the next sweep looks again)."""
        payment = booking.payment
        if booking.settlement_due is None or payment is None or not payment.payment_id:
            return "skipped"
        if (payment.settlement or {}).get("state") == "sent":
            return self._read_back(booking)   # sent, the register's answer still pending
        if lifecycle.renders_by_state(str(booking.places.kind)):
            # rendered when it entered that state (parking: the car left, a no-show kept): due now
            rendered = booking.settlement_due if lifecycle.renders(str(booking.status)) else None
        else:
            offering = self.store.get_event(booking.event_id) or {}
            rendered = fiscal.rendered_at([granule.at for granule in booking.places.granules],
                                          offering.get("starts_at"))
        now = self.clock()
        settlement = dict(payment.settlement or {})
        try:
            if rendered is None or parse_iso(rendered) > now:
                if rendered is not None and settlement.get("next_at") != rendered:
                    transitions.apply(self.store, booking, now, actor="timer", action="settlement_rescheduled",
                                      decision=f"the service is rendered at {rendered}; the settlement receipt waits",
                                      payment=replace(payment, settlement={**settlement, "next_at": rendered}))
                return "rescheduled"
            if settlement.get("state") != "requested":
                settlement = {**settlement, "state": "requested", "key": settlement_key(booking.booking_id), "attempts": 0,
                              "rendered_at": rendered, "next_at": iso(now + timedelta(seconds=self.retry_seconds[0]))}
                booking = transitions.apply(
                    self.store, booking, now, actor="timer", action="settlement_requested",
                    decision=f"service rendered at {rendered}; settlement receipt key stored before the call",
                    payment=replace(payment, settlement=settlement))
                payment = booking.payment
                assert payment is not None
        except StaleBooking:
            return "skipped"
        if not booking.contact_email:   # erased or never given: the receipt has nowhere to go
            return self._fail(booking, "no contact address")
        body = fiscal.settlement_receipt(booking.contact_email, payment.receipt or {}, booking.amount,
                                         payment.payment_id or "")
        crash_point("settlement.before_provider_call")
        try:
            answer = self.provider.create_receipt(body, str(settlement["key"]))
        except ProviderOutcomeUnknown as exc:
            return self._retry(booking, str(exc))
        except ProviderRejected as exc:
            return self._fail(booking, f"provider refused it ({exc.code})")
        crash_point("settlement.after_provider_call")   # registered; nothing recorded yet
        try:
            transitions.apply(self.store, booking, self.clock(), actor="timer", action="settlement_receipt_sent",
                              decision=f"settlement receipt of the prepayment sent to the customer's address "
                                       f"({answer.get('status')})",
                              ids={"payment_id": payment.payment_id or "", "receipt_id": str(answer.get("id"))},
                              payment=replace(payment, settlement={
                                  **settlement, "state": "sent", "receipt_id": answer.get("id"),
                                  "status": answer.get("status"), "sent_at": iso(self.clock()), "checks": 0,
                                  # the register's answer is read back while it is pending
                                  "next_at": iso(self.clock() + timedelta(seconds=self.retry_seconds[0]))
                                  if answer.get("status") == "pending" else None}))
        except StaleBooking:
            return "skipped"   # the next sweep sends it again under the same key: the same receipt
        return "sent"

    def _read_back(self, booking: Booking) -> str:
        """A settlement receipt sent while the register had not answered: its status read back from
        the provider. ``registered`` (succeeded); ``pending`` (looked at again later, on the retry
        schedule); a receipt the register ``canceled`` is sent again as a new receipt under the
        next key (at most MAX_RESENDS times), then the failure is the organizer's case, as is a
        receipt still not registered after the last look."""
        payment = booking.payment
        assert payment is not None
        settlement = dict(payment.settlement or {})
        receipt_id = str(settlement.get("receipt_id") or "")
        try:
            status = str(self.provider.get_receipt(receipt_id).get("status")) if receipt_id else "unknown"
        except (ProviderOutcomeUnknown, ProviderRejected) as exc:
            status = f"unreadable ({exc})"[:120]
        now = self.clock()
        try:
            if status == "succeeded":
                transitions.apply(self.store, booking, now, actor="timer", action="settlement_receipt_registered",
                                  decision=f"the provider registered settlement receipt {receipt_id}",
                                  ids={"receipt_id": receipt_id},
                                  payment=replace(payment, settlement={**settlement, "status": "succeeded",
                                                                       "next_at": None}))
                return "registered"
            if status == "canceled":
                resends = int(settlement.get("resends") or 0) + 1
                canceled = [*settlement.get("canceled", ()), receipt_id]
                if resends > MAX_RESENDS:
                    return self._fail(booking, f"the provider canceled the settlement receipt {resends} times",
                                      status="canceled", canceled=canceled)
                again = {"state": "requested", "key": settlement_key(booking.booking_id, resends), "attempts": 0,
                         "resends": resends, "canceled": canceled, "rendered_at": settlement.get("rendered_at"),
                         "next_at": iso(now + timedelta(seconds=self.retry_seconds[0]))}
                booking = transitions.apply(
                    self.store, booking, now, actor="timer", action="settlement_receipt_canceled",
                    decision=f"the provider canceled settlement receipt {receipt_id}; sent again as a new receipt",
                    ids={"receipt_id": receipt_id}, payment=replace(payment, settlement=again))
                return self.settle(booking)
            checks = int(settlement.get("checks") or 0) + 1
            if checks >= len(self.retry_seconds):
                return self._fail(booking, f"settlement receipt {receipt_id} still {status} after {checks} looks")
            transitions.apply(self.store, booking, now, actor="timer", action="settlement_receipt_pending",
                              decision=f"settlement receipt {receipt_id} is {status} at the provider; looked at "
                                       f"again in {self.retry_seconds[checks]} s",
                              payment=replace(payment, settlement={
                                  **settlement, "checks": checks,
                                  "next_at": iso(now + timedelta(seconds=self.retry_seconds[checks]))}))
        except StaleBooking:
            return "skipped"
        return "pending"

    def _retry(self, booking: Booking, why: str) -> str:
        payment = booking.payment
        assert payment is not None
        settlement = dict(payment.settlement or {})
        attempts = int(settlement.get("attempts") or 0) + 1
        if attempts >= len(self.retry_seconds):
            return self._fail(booking, f"provider errors on {attempts} attempts ({why})")
        wait = self.retry_seconds[attempts]
        try:
            transitions.apply(self.store, booking, self.clock(), actor="timer", action="settlement_retry_scheduled",
                              decision=f"{why}; retried in {wait} s with the same key",
                              payment=replace(payment, settlement={**settlement, "attempts": attempts,
                                                                   "next_at": iso(self.clock() + timedelta(seconds=wait))}))
        except StaleBooking:
            return "skipped"
        return "retrying"

    def _fail(self, booking: Booking, why: str, **known: object) -> str:
        """Failed for good: the booking stands and carries the operator's case (``known``: what the
        settlement record learned on the way, the provider's last word)."""
        payment = booking.payment
        assert payment is not None
        logger.warning("settlement receipt failed", extra={"booking_id": booking.booking_id, "reason": why[:120]})
        try:
            transitions.apply(self.store, booking, self.clock(), actor="timer", action="settlement_receipt_failed",
                              decision=why[:500], ids={"payment_id": payment.payment_id or ""},
                              payment=replace(payment, settlement={**(payment.settlement or {}), **known,
                                                                   "state": "failed", "next_at": None}),
                              review={"reason": FAILED_REASON,
                                      "next_step": "Issue the settlement receipt in the provider's dashboard, "
                                                   "then close this case."})
        except StaleBooking:
            return "skipped"
        return "failed"


def renders_at(store: PaymentStore, booking: Booking) -> str | None:
    """When the booking's service is rendered as its offering's start says it now (an event); None
    for one rendered by its own granules (a slot: they move with the booking, an alternative
    taken) or by a state of its own (parking: the car leaves). A payment with a receipt keeps it
    as its settlement's first look."""
    if lifecycle.renders_by_state(str(booking.places.kind)) or booking.places.granules:
        return None   # (a slot's granules are the booking's own: its due moment reads them as they are)
    offering = store.get_event(booking.event_id) or {}
    return fiscal.rendered_at([], offering.get("starts_at"))


def follow_start(store: PaymentStore, clock: Clock, event_id: str) -> int:
    """An event's start moved (its ``event.changed``): each of its bookings whose payment carries
    a receipt whose settlement is still owed (paid, or being paid) is looked at by when the
    service is rendered now, read from the event. A start moved later needs nothing (the look at the old start reads the new one and
    waits); a start moved earlier would be missed until the old one, so the look moves to it.
    Returns how many looks moved, each journalled. A booking changed meanwhile raises
    StaleBooking once the others are done: the announcement is delivered again, and what
    moved already is not moved twice (its look is no longer later than the start)."""
    offering = store.get_event(event_id, consistent=True) or {}
    moved, stale = 0, None
    for booking in store.get_bookings(store.event_booking_ids(event_id)):
        payment = booking.payment
        if payment is None or not payment.receipt or booking.event_id != event_id \
                or lifecycle.renders_by_state(str(booking.places.kind)) or booking.places.granules:
            continue   # (rendered by its own granules or state: the event's start is not its moment)
        settlement = payment.settlement or {}
        # the look it has or will have once confirmed (a payment still pending confirms later)
        due = settlement.get("next_at") or booking.ends_at
        if settlement.get("state") in ("sent", "failed") or not due:
            continue
        rendered = fiscal.rendered_at([], offering.get("starts_at"))
        if rendered is None or parse_iso(rendered) >= parse_iso(str(due)):
            continue
        try:
            transitions.apply(store, booking, clock(), actor="timer", action="settlement_rescheduled",
                              decision=f"the event now starts at {rendered}; the settlement receipt's look "
                                       "moves earlier with it",
                              payment=replace(payment, settlement={**(payment.settlement or {}),
                                                                   "next_at": rendered}))
        except StaleBooking as exc:
            stale = exc
            continue
        moved += 1
    if stale is not None:
        raise stale
    return moved
