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

import hashlib
from dataclasses import replace
from datetime import timedelta
from typing import Any

from ..clock import iso, parse_iso
from ..domain import fiscal, lifecycle
from ..domain.booking import Booking, SettledDifference, SettledLine, settled_lines
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


#: What one settlement receipt closes: the first payment's prepayment (None), one order line's
#: part of it, or a dearer exchange's difference payment's own prepayment.
Part = SettledLine | SettledDifference | None


def settlement_key(booking_id: str, resend: int = 0, line_id: str | None = None, difference: str | None = None) -> str:
    """One settlement receipt per booking's payment (per line of an order's; per difference payment
    of a dearer exchange, ``difference`` its exchange key): the key is the booking's (the line's, the
    difference's), whatever retries it; a receipt the register canceled is sent again as a new one,
    under the next key."""
    tag = f"-x{hashlib.sha256(difference.encode()).hexdigest()[:8]}" if difference else ""
    return f"hf-settle-{booking_id}" + (f"-{line_id}" if line_id else "") + tag + (f"-{resend}" if resend else "")


def _key(booking: Booking, part: Part, resend: int = 0) -> str:
    return settlement_key(booking.booking_id, resend, line_id=part.line_id if isinstance(part, SettledLine) else None,
                          difference=part.exchange_key if isinstance(part, SettledDifference) else None)


def _state(booking: Booking, part: Part) -> dict[str, Any]:
    """The settlement record of the whole payment, of one order line's part of it, or of a
    difference payment."""
    payment = booking.payment
    assert payment is not None
    if isinstance(part, SettledDifference):
        return part.settlement(booking)
    return part.settlement(payment) if part is not None else dict(payment.settlement or {})


def _with(booking: Booking, part: Part, state: dict[str, Any]) -> dict[str, Any]:
    """The change that stores ``state`` as ``part``'s settlement record (transitions.apply's keywords)."""
    payment = booking.payment
    assert payment is not None
    if isinstance(part, SettledDifference):
        return {"differences": [{**entry, "settlement": state} if entry.get("exchange_key") == part.exchange_key
                                else entry for entry in booking.differences or ()]}
    if part is None:
        return {"payment": replace(payment, settlement=state)}
    whole = dict(payment.settlement or {})
    return {"payment": replace(payment, settlement={**whole, "lines": {**(whole.get("lines") or {}),
                                                                        part.line_id: state}})}


def _due(booking: Booking, part: Part) -> str | None:
    if isinstance(part, SettledDifference):
        return booking.difference_settlement_due(part)
    return booking.line_settlement_due(part) if part is not None else booking.first_settlement_due


def _paid_by(booking: Booking, part: Part) -> str:
    """The provider payment whose prepayment ``part``'s receipt closes."""
    if isinstance(part, SettledDifference):
        return part.payment_id
    return (booking.payment.payment_id if booking.payment else None) or ""


def _named(line: Part, text: str) -> str:
    if isinstance(line, SettledDifference):
        return f"difference payment {line.payment_id}: {text}"
    return f"line {line.line_id} ({line.offering_id}): {text}" if line is not None else text


def first_payment_share(booking: Booking) -> Money:
    """What the booking's first payment prepaid of the service as it now stands, which its
    settlement receipt closes (``Booking.first_payment_share``: each difference payment's share is
    its own prepayment, closed by a receipt of its own)."""
    return booking.first_payment_share


class Settlements:
    def __init__(self, store: PaymentStore, provider: PaymentProvider, clock: Clock,
                 retry_seconds: tuple[int, ...] = RETRY_SECONDS) -> None:
        self.store = store
        self.provider = provider
        self.clock = clock
        self.retry_seconds = tuple(retry_seconds) or RETRY_SECONDS

    def settle(self, booking: Booking) -> str:
        """Send the booking's settlement receipts if its service is rendered: the first payment's,
        and each dearer exchange's difference payment's own (``Booking.settled_differences``); an
        order's, each line's whose own service is rendered (issue 44: one settlement receipt per
        line). Returns what was done (the first that did something): ``rescheduled``, ``sent``,
        ``retrying``, ``failed`` or ``skipped`` (nothing owed, or the booking changed meanwhile: the
        next sweep looks again)."""
        lines = settled_lines(booking)
        now = self.clock()
        if not lines:
            # the first payment's prepayment, then each difference payment's own (issue 45): its
            # service is the booking's, so each is judged as the first is, by the offering as it
            # is now, not by its stored look (which may still be the booking's copy of an old end)
            done = [self._settle(booking, None)]
            for wanted in booking.settled_differences:
                current = self.store.get_booking(booking.booking_id)
                part = next((part for part in current.settled_differences if part.exchange_key == wanted.exchange_key),
                            None) if current is not None else None
                if current is not None and part is not None:
                    done.append(self._settle(current, part))
            return next((outcome for outcome in done if outcome != "skipped"), "skipped")
        done = []
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

    def _settle(self, booking: Booking, part: Part) -> str:
        payment = booking.payment
        if payment is None or not payment.payment_id or _due(booking, part) is None:
            return "skipped"
        settlement = _state(booking, part)
        if settlement.get("state") == "sent":
            return self._read_back(booking, part)   # sent, the register's answer still pending
        # a difference payment's service is the booking's: rendered as the booking's is
        line = part if isinstance(part, SettledLine) else None
        kind = line.kind if line is not None else str(booking.places.kind)
        if lifecycle.renders_by_state(kind):
            # rendered when it entered that state (parking: the car left, a no-show kept): due now
            if line is not None:
                # (or, a line left unused, at its window's end: SettledLine.unused_until)
                rendered = booking.line_settlement_due(line) \
                    if lifecycle.renders(line.status) or line.unused_until else None
            else:
                rendered = _due(booking, part) if lifecycle.renders(str(booking.status)) else None
        else:
            offering = self.store.get_event(line.offering_id if line is not None else booking.event_id) or {}
            starts = line.granule_starts if line is not None else [granule.at for granule in booking.places.granules]
            rendered = fiscal.rendered_at(starts, offering.get("starts_at"))
        now = self.clock()
        try:
            if rendered is None or parse_iso(rendered) > now:
                if rendered is not None and settlement.get("next_at") != rendered:
                    transitions.apply(self.store, booking, now, actor="timer", action="settlement_rescheduled",
                                      decision=_named(part, f"the service is rendered at {rendered}; the "
                                                            "settlement receipt waits"),
                                      **_with(booking, part, {**settlement, "next_at": rendered}))
                return "rescheduled"
            if settlement.get("state") != "requested":
                settlement = {**settlement, "state": "requested", "key": _key(booking, part),
                              "attempts": 0, "rendered_at": rendered,
                              "next_at": iso(now + timedelta(seconds=self.retry_seconds[0]))}
                booking = transitions.apply(
                    self.store, booking, now, actor="timer", action="settlement_requested",
                    decision=_named(part, f"service rendered at {rendered}; settlement receipt key stored "
                                          "before the call"),
                    **_with(booking, part, settlement))
                payment = booking.payment
                assert payment is not None
        except StaleBooking:
            return "skipped"
        if not booking.contact_email:   # erased or never given: the receipt has nowhere to go
            return self._fail(booking, part, "no contact address")
        record = payment.receipt or {}
        if isinstance(part, SettledDifference):
            # its own item, as its payment's receipt listed it, of what it holds of the price now
            share = next((own.share for own in booking.settled_differences if own.exchange_key == part.exchange_key),
                         part.share)
            body = fiscal.settlement_receipt(booking.contact_email, record, share, part.payment_id,
                                             lines=[fiscal.difference_line(record, share, booking.event_id)])
        elif line is not None:
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
            return self._retry(booking, part, str(exc))
        except ProviderRejected as exc:
            return self._fail(booking, part, f"provider refused it ({exc.code})")
        crash_point("settlement.after_provider_call")   # registered; nothing recorded yet
        try:
            transitions.apply(self.store, booking, self.clock(), actor="timer", action="settlement_receipt_sent",
                              decision=_named(part, f"settlement receipt of the prepayment sent to the customer's "
                                                    f"address ({answer.get('status')})"),
                              ids={"payment_id": _paid_by(booking, part), "receipt_id": str(answer.get("id"))},
                              **_with(booking, part, {
                                  **settlement, "state": "sent", "receipt_id": answer.get("id"),
                                  "status": answer.get("status"), "sent_at": iso(self.clock()), "checks": 0,
                                  # the register's answer is read back while it is pending
                                  "next_at": iso(self.clock() + timedelta(seconds=self.retry_seconds[0]))
                                  if answer.get("status") == "pending" else None}))
        except StaleBooking:
            return "skipped"   # the next sweep sends it again under the same key: the same receipt
        return "sent"

    def _read_back(self, booking: Booking, line: Part) -> str:
        """A settlement receipt sent while the register had not answered: its status read back from
        the provider. ``registered`` (succeeded); ``pending`` (looked at again later, on the retry
        schedule); a receipt the register ``canceled`` is sent again as a new receipt under the
        next key (at most MAX_RESENDS times), then the failure is the organizer's case, as is a
        receipt still not registered after the last look."""
        payment = booking.payment
        assert payment is not None
        settlement = _state(booking, line)
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
                                  **_with(booking, line, {**settlement, "status": "succeeded",
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
                         "key": _key(booking, line, resends),
                         "attempts": 0, "resends": resends, "canceled": canceled,
                         "rendered_at": settlement.get("rendered_at"),
                         "next_at": iso(now + timedelta(seconds=self.retry_seconds[0]))}
                booking = transitions.apply(
                    self.store, booking, now, actor="timer", action="settlement_receipt_canceled",
                    decision=_named(line, f"the provider canceled settlement receipt {receipt_id}; sent again "
                                          "as a new receipt"),
                    ids={"receipt_id": receipt_id}, **_with(booking, line, again))
                if isinstance(line, SettledLine):
                    line = next(own for own in settled_lines(booking) if own.line_id == line.line_id)
                return self._settle(booking, line)
            checks = int(settlement.get("checks") or 0) + 1
            if checks >= len(self.retry_seconds):
                return self._fail(booking, line,
                                  f"settlement receipt {receipt_id} still {status} after {checks} looks")
            transitions.apply(self.store, booking, now, actor="timer", action="settlement_receipt_pending",
                              decision=_named(line, f"settlement receipt {receipt_id} is {status} at the provider; "
                                                    f"looked at again in {self.retry_seconds[checks]} s"),
                              **_with(booking, line, {
                                  **settlement, "checks": checks,
                                  "next_at": iso(now + timedelta(seconds=self.retry_seconds[checks]))}))
        except StaleBooking:
            return "skipped"
        return "pending"

    def _retry(self, booking: Booking, line: Part, why: str) -> str:
        payment = booking.payment
        assert payment is not None
        settlement = _state(booking, line)
        attempts = int(settlement.get("attempts") or 0) + 1
        if attempts >= len(self.retry_seconds):
            return self._fail(booking, line, f"provider errors on {attempts} attempts ({why})")
        wait = self.retry_seconds[attempts]
        try:
            transitions.apply(self.store, booking, self.clock(), actor="timer", action="settlement_retry_scheduled",
                              decision=_named(line, f"{why}; retried in {wait} s with the same key"),
                              **_with(booking, line, {**settlement, "attempts": attempts,
                                                            "next_at": iso(self.clock() + timedelta(seconds=wait))}))
        except StaleBooking:
            return "skipped"
        return "retrying"

    def _fail(self, booking: Booking, line: Part, why: str, **known: object) -> str:
        """Failed for good: the booking stands and carries the operator's case (``known``: what the
        settlement record learned on the way, the provider's last word)."""
        payment = booking.payment
        assert payment is not None
        logger.warning("settlement receipt failed", extra={"booking_id": booking.booking_id, "reason": why[:120]})
        try:
            transitions.apply(self.store, booking, self.clock(), actor="timer", action="settlement_receipt_failed",
                              decision=_named(line, why)[:500], ids={"payment_id": _paid_by(booking, line)},
                              **_with(booking, line, {**_state(booking, line), **known,
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
    a receipt whose settlement is still owed (paid, or being paid; and each of its dearer
    exchanges' difference payments) is looked at by when the service is rendered now, read from
    the event. A start moved later needs nothing (the look at the old start reads the new one and
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
        # the line's receipt; else the first payment's and each difference payment's of a dearer
        # exchange, whose service is the booking's (seed 20261221156: theirs stayed at the old end)
        parts: list[Part] = [line] if lines else [None, *booking.settled_differences]
        for part in parts:
            current = booking if part is parts[0] else store.get_booking(booking.booking_id)
            if current is None:
                break
            if isinstance(part, SettledDifference):
                part = next((own for own in current.settled_differences if own.exchange_key == part.exchange_key), None)
                if part is None:
                    continue
            settlement = _state(current, part)
            # the look it has or will have once confirmed (a payment still pending confirms later)
            due = settlement.get("next_at") or (part.ends_at if isinstance(part, SettledLine) else current.ends_at)
            if settlement.get("state") in ("sent", "failed") or not due:
                continue
            rendered = fiscal.rendered_at([], offering.get("starts_at"))
            if rendered is None or parse_iso(rendered) >= parse_iso(str(due)):
                continue
            try:
                transitions.apply(store, current, clock(), actor="timer", action="settlement_rescheduled",
                                  decision=_named(part, f"the event now starts at {rendered}; the settlement "
                                                        "receipt's look moves earlier with it"),
                                  **_with(current, part, {**settlement, "next_at": rendered}))
            except StaleBooking as exc:
                stale = exc
                break
            moved += 1
    if stale is not None:
        raise stale
    return moved
