"""Part refunds: money given back of a booking's payments while the booking stands (issues 44, 45).

Two things give a part back: an exchange into cheaper places (its difference, services/exchange.py)
and an order line refunded on its own (a lot that refunds no-shows, services/refunds.py
``line_timers``). Both store their record in ``Payment.exchange_refunds`` in the write that decides
them (domain/exchange.py ``difference_refund``: the key, the amount, the payment it gives back from,
``next_check_at``), and both are asked for here, by ``ask``, with the record's key, so the provider
makes each once. An answer that does not come is recorded (``tries``, and ``next_check_at``
moved on: 30 s, then three times longer each time, domain/exchange.py ``retry_wait``), and the
sweeper asks again once it is due (``retry``, the only retry; ``Booking.part_refunds_due`` is its
due test and the due index's). Before a refund of the payment that the booking knows by no id is
matched (a notification, an operator's close), the ones without an answer are asked again at once
(``ask_unanswered``, services/refunds.py ``tell_apart``). A refusal is recorded (``rejected``): a
difference's for the organizer to settle; a line's opens a review on the order in the same write
(``line_refund_rejected_<code>``, kept until an operator closes it: ``settled``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..clock import iso
from ..domain.booking import Booking, part_refund_due
from ..domain.errors import TooBusy
from ..domain.exchange import retry_wait
from ..domain.money import Money
from ..faults import crash_point
from ..observability import logger
from ..ports import Clock, HoldStore, ProviderRejected
from . import transitions
from .exchange_differences import difference_receipt
from .money_at_provider import MoneyAtProvider
from .provider_keys import PaymentOutcomeUnknown
from .receipts import refund_receipt

ATTEMPTS = 4
#: The journal action recording what the provider answered to a difference's refund.
DIFFERENCE_REFUND = "exchange_refund"
#: The same for an order line's own refund (a refunded no-show).
LINE_REFUND = "line_refund"


def part_refund(booking: Booking, key: str) -> dict[str, Any] | None:
    """The booking's part refund stored under ``key`` (its idempotence key), or None."""
    payment = booking.payment
    return next((entry for entry in (payment.exchange_refunds if payment else None) or ()
                 if entry.get("key") == key), None)


def part_refund_of(booking: Booking, refund_id: str) -> str | None:
    """The key of the booking's part refund whose provider refund is ``refund_id`` (None: not one)."""
    payment = booking.payment
    return next((str(entry["key"]) for entry in (payment.exchange_refunds if payment else None) or ()
                 if entry.get("refund_id") == refund_id), None)


def refunded_payment(booking: Booking, entry: dict[str, Any]) -> str:
    """The provider payment the part refund ``entry`` gives back from: the one it names, else the
    booking's own (a record from before a booking could have several)."""
    assert booking.payment is not None and booking.payment.payment_id
    return str(entry.get("payment_id") or booking.payment.payment_id)


class PartRefunds:
    def __init__(self, store: HoldStore, money: MoneyAtProvider, clock: Clock) -> None:
        self.store = store
        self.money = money
        self.clock = clock

    def ask(self, booking: Booking, key: str, actor: str) -> Booking:
        """Ask the provider for the part refund ``key`` if it has no answer yet, and record the
        answer. A lost answer is recorded (its next try) and raises PaymentOutcomeUnknown; a
        refusal is recorded ``rejected``."""
        entry = part_refund(booking, key)
        if entry is None or entry.get("status") != "requested":
            return booking
        payment_id = refunded_payment(booking, entry)
        try:
            answer = self.money.refund(payment_id, entry["amount"], _description(booking, entry), key,
                                       _receipt(booking, entry, payment_id))
        except ProviderRejected as exc:
            # recorded ``rejected``: a difference's is left to the organizer; a line's is an
            # operator's case, its review opened on the order in this same write
            # (``Booking.refused_line_refunds``, transitions.apply; invariant O6)
            logger.warning("a part refund was refused", extra={"booking_id": booking.booking_id, "code": exc.code})
            return self.record(booking.booking_id, key, {"status": "rejected", "rejected_code": exc.code,
                                                         "next_check_at": None, "next_at": None}, actor) or booking
        except PaymentOutcomeUnknown:
            tries = int(entry.get("tries") or entry.get("attempts") or 0) + 1
            self.record(booking.booking_id, key, {"tries": tries, "attempts": None, "next_at": None,
                                                  "next_check_at": iso(self.clock() + retry_wait(tries))},
                        actor, force=True)
            raise
        crash_point("refund.after_part_refund_call")   # the money went back; nothing recorded yet
        return self.record(booking.booking_id, key, {"status": answer.get("status"), "refund_id": answer.get("id"),
                                                     "next_check_at": None, "next_at": None}, actor) or booking

    def retry(self, booking: Booking, overdue: str) -> str:
        """The sweeper's: each part refund of the booking still ``requested`` past its
        ``next_check_at`` (its answer lost, nobody repeated the request) asked again under its own
        key. Returns what the last one came to: ``line_refunds`` for an order line's,
        ``exchange_refund_<status>`` for a difference's (``unknown``: no answer again)."""
        outcome = "skipped"
        for entry in list((booking.payment.exchange_refunds if booking.payment else None) or ()):
            due = part_refund_due(entry)
            if due is None or due >= overdue:
                continue
            key = str(entry["key"])
            try:
                done = self.ask(self.store.get_booking(booking.booking_id) or booking, key, "reconciler")
                status = (part_refund(done, key) or {}).get("status")
            except PaymentOutcomeUnknown:
                status = "unknown"
            outcome = "line_refunds" if entry.get("line_id") else f"exchange_refund_{status}"
        return outcome

    def ask_unanswered(self, booking: Booking, payment_id: str, actor: str) -> Booking:
        """Each part refund of the payment ``payment_id`` asked for whose answer never came (no
        refund id recorded) asked again under its own key, now, whatever its ``next_check_at``: the
        answer recorded names its refund (services/refunds.py ``tell_apart``). One that gets no
        answer again keeps waiting (its next try recorded). Returns the booking as now stored."""
        for entry in list((booking.payment.exchange_refunds if booking.payment else None) or ()):
            if entry.get("status") != "requested" or entry.get("refund_id") \
                    or refunded_payment(booking, entry) != payment_id:
                continue
            try:
                booking = self.ask(self.store.get_booking(booking.booking_id) or booking, str(entry["key"]), actor)
            except PaymentOutcomeUnknown:
                booking = self.store.get_booking(booking.booking_id) or booking
        return booking

    def record(self, booking_id: str, key: str, change: dict[str, Any], actor: str,
               force: bool = False) -> Booking | None:
        """Record what the provider said of the part refund ``key`` (its status, its id) on the
        booking's payment record, journalled; a status already recorded, or a succeeded one told
        again, writes nothing (``force``: a lost answer's next try is written though the status
        stays). None when the booking or the record is not found. A ``None`` in ``change`` removes
        that field (``next_check_at`` once an answer came)."""
        def write(booking: Booking) -> Booking | None:
            entry = part_refund(booking, key)
            if entry is None or booking.payment is None:
                return None
            if entry.get("status") == "succeeded" and change.get("status") != "succeeded" \
                    or (not force and entry.get("status") == change.get("status")
                        and all(entry.get(k) == v for k, v in change.items()
                                if k not in ("next_check_at", "next_at") and v is not None)):
                return booking
            updated = {k: v for k, v in {**entry, **change}.items() if v is not None}
            refunds = [updated if item is entry else item for item in booking.payment.exchange_refunds or []]
            what, action = (f"line {entry['line_id']}", LINE_REFUND) if entry.get("line_id") \
                else ("the exchange's difference", DIFFERENCE_REFUND)
            return transitions.apply(self.store, booking, self.clock(), actor=actor,
                                     action=f"{action}_{updated['status']}",
                                     decision=f"refund of {what} {Money.parse(**updated['amount']).text}: "
                                              f"{updated['status']}" + (f" (answer lost {updated['tries']} time(s); "
                                                                        f"asked again at {updated['next_check_at']})"
                                                                        if change.get("tries") else ""),
                                     ids={"exchange_key": str(entry["exchange_key"]),
                                          "refund_id": str(updated.get("refund_id") or "")},
                                     payment=replace(booking.payment, exchange_refunds=refunds))

        return transitions.decide_again(lambda: self.store.get_booking(booking_id), write, attempts=ATTEMPTS,
                                        gone=lambda: None, exhausted=TooBusy())


def _description(booking: Booking, entry: dict[str, Any]) -> str:
    if entry.get("line_id"):
        return f"Holdfast booking {booking.booking_id}: line {entry['line_id']} refunded"
    return f"Holdfast booking {booking.booking_id}: exchange difference"


def _receipt(booking: Booking, entry: dict[str, Any], payment_id: str) -> dict[str, Any] | None:
    """The refund's fiscal receipt: of the line's items alone (a line's), of the part of the
    difference payment's own item (a difference payment's), else of the part of the sale's items."""
    assert booking.payment is not None
    if payment_id != booking.payment.payment_id:
        paid = next((d for d in booking.differences or () if (d.get("payment") or {}).get("payment_id") == payment_id),
                    None)
        return difference_receipt(booking, paid, dict(entry["amount"])) if paid is not None else None
    if entry.get("line_id"):
        return refund_receipt(booking, entry["amount"], offering_id=str(entry["offering_id"]))
    return refund_receipt(booking, entry["amount"])


__all__ = ["PartRefunds", "part_refund", "part_refund_of", "refunded_payment", "DIFFERENCE_REFUND", "LINE_REFUND"]
