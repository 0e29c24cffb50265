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
from typing import Any

from ..clock import iso, parse_iso
from ..domain import fiscal, lifecycle
from ..domain.booking import Booking, Payment, SettledLine, settled_lines
from ..domain.money import Money
from ..faults import crash_point
from ..observability import logger
from ..ports import Clock, PaymentProvider, PaymentStore, ProviderOutcomeUnknown, ProviderRejected, StaleBooking
from . import transitions

FAILED_REASON = "settlement_receipt_failed"
#: Waits before the next attempt after a provider error; after the last one it fails for good.
RETRY_SECONDS = (60, 300, 1800, 7200, 21600)


#: Times a settlement receipt the provider's register canceled is sent again before it is a case.
MAX_RESENDS = 2


def settlement_key(booking_id: str, resend: int = 0, line_id: str | None = None) -> str:
    """One settlement receipt per booking's payment (per line of an order's): the key is the
    booking's (the line's), whatever retries it; a receipt the register canceled is sent again as a
    new one, under the next key."""
    return f"hf-settle-{booking_id}" + (f"-{line_id}" if line_id else "") + (f"-{resend}" if resend else "")


def _state(payment: Payment, line: SettledLine | None) -> dict[str, Any]:
    """The settlement record of the whole payment, or of one order line's part of it."""
    return line.settlement(payment) if line is not None else dict(payment.settlement or {})


def _with(payment: Payment, line: SettledLine | None, state: dict[str, Any]) -> Payment:
    if line is None:
        return replace(payment, settlement=state)
    whole = dict(payment.settlement or {})
    return replace(payment, settlement={**whole, "lines": {**(whole.get("lines") or {}), line.line_id: state}})


def _named(line: SettledLine | None, text: str) -> str:
    return f"line {line.line_id} ({line.offering_id}): {text}" if line is not None else text


def first_payment_share(booking: Booking) -> Money:
    """What the booking's first payment prepaid of the service as it now stands, which its
    settlement receipt closes: the booking's price less what dearer exchanges' difference
    payments took (``Booking.paid_by_differences``; each of those is its own prepayment)."""
    return Money(booking.amount.value - booking.paid_by_differences.value, booking.amount.currency)


class Settlements:
    def __init__(self, store: PaymentStore, provider: PaymentProvider, clock: Clock,
                 retry_seconds: tuple[int, ...] = RETRY_SECONDS) -> None:
        self.store = store
        self.provider = provider
        self.clock = clock
        self.retry_seconds = tuple(retry_seconds) or RETRY_SECONDS

    def settle(self, booking: Booking) -> str:
        """Send the booking's settlement receipt if its service is rendered; an order's, each line's
        whose own service is rendered (issue 44: one settlement receipt per line). Returns what
        was done (the first due line's, for an order): ``rescheduled``, ``sent``, ``retrying``,
        ``failed`` or ``skipped`` (nothing owed, or the booking changed meanwhile: the next sweep
        looks again)."""
        lines = settled_lines(booking)
        if not lines:
            return self._settle(booking, None)
        now = self.clock()
        done: list[str] = []
        for wanted in lines:
            current = booking if not done else self.store.get_booking(booking.booking_id)
            if current is None:
                break
            line = next((line for line in settled_lines(current) if line.line_id == wanted.line_id), None)
            due = current.line_settlement_due(line) if line is not None else None
            if line is None or due is None or parse_iso(due) > now:
                continue
            done.append(self._settle(current, line))
        return done[0] if done else "skipped"

    def _settle(self, booking: Booking, line: SettledLine | None) -> str:
        payment = booking.payment
        if booking.settlement_due is None or payment is None or not payment.payment_id:
            return "skipped"
        settlement = _state(payment, line)
        if settlement.get("state") == "sent":
            return self._read_back(booking, line)   # sent, the register's answer still pending
        kind = line.kind if line is not None else str(booking.places.kind)
        if lifecycle.renders_by_state(kind):
            # rendered when it entered that state (parking: the car left, a no-show kept): due now
            if line is not None:
                # (or, a line left unused, at its window's end: SettledLine.unused_until)
                rendered = booking.line_settlement_due(line) \
                    if lifecycle.renders(line.status) or line.unused_until else None
            else:
                rendered = booking.settlement_due if lifecycle.renders(str(booking.status)) else None
        else:
            offering = self.store.get_event(line.offering_id if line is not None else booking.event_id) or {}
            starts = line.granule_starts if line is not None else [granule.at for granule in booking.places.granules]
            rendered = fiscal.rendered_at(starts, offering.get("starts_at"))
        now = self.clock()
        try:
            if rendered is None or parse_iso(rendered) > now:
                if rendered is not None and settlement.get("next_at") != rendered:
                    transitions.apply(self.store, booking, now, actor="timer", action="settlement_rescheduled",
                                      decision=_named(line, f"the service is rendered at {rendered}; the "
                                                            "settlement receipt waits"),
                                      payment=_with(payment, line, {**settlement, "next_at": rendered}))
                return "rescheduled"
            if settlement.get("state") != "requested":
                settlement = {**settlement, "state": "requested",
                              "key": settlement_key(booking.booking_id, line_id=line.line_id if line else None),
                              "attempts": 0, "rendered_at": rendered,
                              "next_at": iso(now + timedelta(seconds=self.retry_seconds[0]))}
                booking = transitions.apply(
                    self.store, booking, now, actor="timer", action="settlement_requested",
                    decision=_named(line, f"service rendered at {rendered}; settlement receipt key stored "
                                          "before the call"),
                    payment=_with(payment, line, settlement))
                payment = booking.payment
                assert payment is not None
        except StaleBooking:
            return "skipped"
        if not booking.contact_email:   # erased or never given: the receipt has nowhere to go
            return self._fail(booking, line, "no contact address")
        record = payment.receipt or {}
        if line is not None:
            amount = fiscal.line_amount(record, line.offering_id, booking.amount.currency)
            body = fiscal.settlement_receipt(booking.contact_email, record, amount, payment.payment_id or "",
                                             offering_id=line.offering_id)
        else:
            body = fiscal.settlement_receipt(booking.contact_email, record, first_payment_share(booking),
                                             payment.payment_id or "", places=booking.places.quantity)
        crash_point("settlement.before_provider_call")
        try:
            answer = self.provider.create_receipt(body, str(settlement["key"]))
        except ProviderOutcomeUnknown as exc:
            return self._retry(booking, line, str(exc))
        except ProviderRejected as exc:
            return self._fail(booking, line, f"provider refused it ({exc.code})")
        crash_point("settlement.after_provider_call")   # registered; nothing recorded yet
        try:
            transitions.apply(self.store, booking, self.clock(), actor="timer", action="settlement_receipt_sent",
                              decision=_named(line, f"settlement receipt of the prepayment sent to the customer's "
                                                    f"address ({answer.get('status')})"),
                              ids={"payment_id": payment.payment_id or "", "receipt_id": str(answer.get("id"))},
                              payment=_with(payment, line, {
                                  **settlement, "state": "sent", "receipt_id": answer.get("id"),
                                  "status": answer.get("status"), "sent_at": iso(self.clock()), "checks": 0,
                                  # the register's answer is read back while it is pending
                                  "next_at": iso(self.clock() + timedelta(seconds=self.retry_seconds[0]))
                                  if answer.get("status") == "pending" else None}))
        except StaleBooking:
            return "skipped"   # the next sweep sends it again under the same key: the same receipt
        return "sent"

    def _read_back(self, booking: Booking, line: SettledLine | None) -> str:
        """A settlement receipt sent while the register had not answered: its status read back from
        the provider. ``registered`` (succeeded); ``pending`` (looked at again later, on the retry
        schedule); a receipt the register ``canceled`` is sent again as a new receipt under the
        next key (at most MAX_RESENDS times), then the failure is the organizer's case, as is a
        receipt still not registered after the last look."""
        payment = booking.payment
        assert payment is not None
        settlement = _state(payment, line)
        receipt_id = str(settlement.get("receipt_id") or "")
        try:
            status = str(self.provider.get_receipt(receipt_id).get("status")) if receipt_id else "unknown"
        except (ProviderOutcomeUnknown, ProviderRejected) as exc:
            status = f"unreadable ({exc})"[:120]
        now = self.clock()
        try:
            if status == "succeeded":
                transitions.apply(self.store, booking, now, actor="timer", action="settlement_receipt_registered",
                                  decision=_named(line, f"the provider registered settlement receipt {receipt_id}"),
                                  ids={"receipt_id": receipt_id},
                                  payment=_with(payment, line, {**settlement, "status": "succeeded",
                                                                "next_at": None}))
                return "registered"
            if status == "canceled":
                resends = int(settlement.get("resends") or 0) + 1
                canceled = [*settlement.get("canceled", ()), receipt_id]
                if resends > MAX_RESENDS:
                    return self._fail(booking, line,
                                      f"the provider canceled the settlement receipt {resends} times",
                                      status="canceled", canceled=canceled)
                again = {"state": "requested",
                         "key": settlement_key(booking.booking_id, resends, line.line_id if line else None),
                         "attempts": 0, "resends": resends, "canceled": canceled,
                         "rendered_at": settlement.get("rendered_at"),
                         "next_at": iso(now + timedelta(seconds=self.retry_seconds[0]))}
                booking = transitions.apply(
                    self.store, booking, now, actor="timer", action="settlement_receipt_canceled",
                    decision=_named(line, f"the provider canceled settlement receipt {receipt_id}; sent again "
                                          "as a new receipt"),
                    ids={"receipt_id": receipt_id}, payment=_with(payment, line, again))
                if line is not None:
                    line = next(own for own in settled_lines(booking) if own.line_id == line.line_id)
                return self._settle(booking, line)
            checks = int(settlement.get("checks") or 0) + 1
            if checks >= len(self.retry_seconds):
                return self._fail(booking, line,
                                  f"settlement receipt {receipt_id} still {status} after {checks} looks")
            transitions.apply(self.store, booking, now, actor="timer", action="settlement_receipt_pending",
                              decision=_named(line, f"settlement receipt {receipt_id} is {status} at the provider; "
                                                    f"looked at again in {self.retry_seconds[checks]} s"),
                              payment=_with(payment, line, {
                                  **settlement, "checks": checks,
                                  "next_at": iso(now + timedelta(seconds=self.retry_seconds[checks]))}))
        except StaleBooking:
            return "skipped"
        return "pending"

    def _retry(self, booking: Booking, line: SettledLine | None, why: str) -> str:
        payment = booking.payment
        assert payment is not None
        settlement = _state(payment, line)
        attempts = int(settlement.get("attempts") or 0) + 1
        if attempts >= len(self.retry_seconds):
            return self._fail(booking, line, f"provider errors on {attempts} attempts ({why})")
        wait = self.retry_seconds[attempts]
        try:
            transitions.apply(self.store, booking, self.clock(), actor="timer", action="settlement_retry_scheduled",
                              decision=_named(line, f"{why}; retried in {wait} s with the same key"),
                              payment=_with(payment, line, {**settlement, "attempts": attempts,
                                                            "next_at": iso(self.clock() + timedelta(seconds=wait))}))
        except StaleBooking:
            return "skipped"
        return "retrying"

    def _fail(self, booking: Booking, line: SettledLine | None, why: str, **known: object) -> str:
        """Failed for good: the booking stands and carries the operator's case (``known``: what the
        settlement record learned on the way, the provider's last word)."""
        payment = booking.payment
        assert payment is not None
        logger.warning("settlement receipt failed", extra={"booking_id": booking.booking_id, "reason": why[:120]})
        try:
            transitions.apply(self.store, booking, self.clock(), actor="timer", action="settlement_receipt_failed",
                              decision=_named(line, why)[:500], ids={"payment_id": payment.payment_id or ""},
                              payment=_with(payment, line, {**_state(payment, line), **known,
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


def line_renders_at(store: PaymentStore, line: SettledLine) -> str | None:
    """``renders_at`` of one order line: its offering's start as it is now, for a line rendered at
    its event's start (None for one rendered by its granules or a state of its own)."""
    if line.granule_starts or lifecycle.renders_by_state(line.kind):
        return None
    offering = store.get_event(line.offering_id) or {}
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
        if payment is None or not payment.receipt:
            continue
        lines = settled_lines(booking)
        line = next((line for line in lines if line.offering_id == event_id), None)
        if lines and (line is None or line.granule_starts or lifecycle.renders_by_state(line.kind)):
            continue   # an order settled line by line: only its line of this event follows its start
        if not lines and (booking.event_id != event_id or lifecycle.renders_by_state(str(booking.places.kind))
                          or booking.places.granules):
            continue   # (rendered by its own granules or state: the event's start is not its moment)
        settlement = _state(payment, line)
        # the look it has or will have once confirmed (a payment still pending confirms later)
        due = settlement.get("next_at") or (line.ends_at if line is not None else booking.ends_at)
        if settlement.get("state") in ("sent", "failed") or not due:
            continue
        rendered = fiscal.rendered_at([], offering.get("starts_at"))
        if rendered is None or parse_iso(rendered) >= parse_iso(str(due)):
            continue
        try:
            transitions.apply(store, booking, clock(), actor="timer", action="settlement_rescheduled",
                              decision=_named(line, f"the event now starts at {rendered}; the settlement "
                                                    "receipt's look moves earlier with it"),
                              payment=_with(payment, line, {**settlement, "next_at": rendered}))
        except StaleBooking as exc:
            stale = exc
            continue
        moved += 1
    if stale is not None:
        raise stale
    return moved
