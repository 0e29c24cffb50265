"""Money going back: refunds of confirmed or late payments, and payments the customer no longer wants.

PaymentService holds one, on its store, its money at the provider and clock; the payment records
(a note, a review) and the service's watch (the reconciliation started before a refund call) are
handed in.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, Callable

from ..clock import iso
from ..domain.booking import Booking, Payment
from ..domain.errors import Conflict
from ..domain.event_changes import change_refund_until
from ..domain.money import Money
from ..domain.refund_policy import refund_by_policy
from ..domain.inventory import Move
from ..domain.statuses import BookingStatus
from ..faults import crash_point
from ..observability import logger
from ..ports import Clock, PaymentStore, ProviderNotFound, ProviderRejected
from . import transitions
from .exchange_differences import BOOKING_KEY as DIFFERENCE_OF
from .money_at_provider import MoneyAtProvider
from .part_refunds import PartRefunds, part_refund_of, refunded_payment
from .payment_records import PaymentRecords
from .receipts import refund_receipt
from .provider_keys import PaymentOutcomeUnknown, refund_key, void_key

ATTEMPTS = 6
#: Refund states in which money may still be on its way back: no second refund may be sent.
IN_FLIGHT = ("requested", "pending")


def refund_mismatch(payment: Payment | None, refund: dict[str, Any]) -> str | None:
    """Why ``refund`` is not the refund this payment record asked for (None: it is).

    A booking may see refunds of a stray second payment, or one made in the provider's dashboard;
    only the refund of our payment, and the one we stored once we learned its id, settles it."""
    if payment is None or not payment.payment_id or refund.get("payment_id") != payment.payment_id:
        return "refund_of_another_payment"
    stored = (payment.refund or {}).get("refund_id")
    if stored and stored != refund.get("id"):
        return "refund_not_ours"
    return None


def others_unanswered(booking: Booking) -> bool:
    """Whether a part refund of the booking's own payment (a cheaper exchange's difference, an
    order line's own: services/part_refunds.py) was asked for and its answer never came. The
    provider's list of that payment's refunds, or a refund's notification, then shows a refund
    whose id the booking knows nowhere, which may be that one: only the answer to our own refund's
    key tells ours apart."""
    payment = booking.payment
    return payment is not None and bool(payment.payment_id) and any(
        entry.get("status") == "requested" and not entry.get("refund_id")
        and refunded_payment(booking, entry) == payment.payment_id for entry in payment.exchange_refunds or ())


def refund_amount(booking: Booking) -> dict[str, str]:
    """What the booking's refund gives back: the amount stored with the refund, else what its first
    payment holds of its price (``Booking.first_payment_share``: what dearer exchanges' difference
    payments hold goes back from them, services/exchange_differences.py)."""
    stored = ((booking.payment.refund if booking.payment else None) or {}).get("amount")
    if stored:
        return dict(stored)
    return booking.first_payment_share.as_dict() if booking.paid_by_differences.value else booking.amount.as_dict()


def _same_amount(seen: Any, wanted: dict[str, str]) -> bool:
    try:
        return Money(Decimal(str(wanted["value"])), wanted["currency"]).matches(seen or {})
    except (KeyError, InvalidOperation):
        return False


class Refunds:
    def __init__(self, store: PaymentStore, money: MoneyAtProvider, clock: Clock, records: PaymentRecords,
                 watch: Callable[[Booking, str], None], first_check_seconds: int) -> None:
        self.store = store
        self.money = money
        #: asks for a part of a payment back (an order line's refunded no-show), and the sweeper's
        #: retry of a lost answer (services/part_refunds.py)
        self.part_refunds = PartRefunds(store, money, clock)
        self.clock = clock
        self.records = records
        #: Starts the booking's reconciliation under a tag before a provider call (PaymentService._watch).
        self.watch = watch
        self.first_check_seconds = first_check_seconds
        #: gives back, from a booking's paid exchange differences, what its cancel's refund returns
        #: beyond its first payment (services/exchange_differences.py ``give_back_paid``)
        self.give_back_differences: Callable[[str, Money, str], None] | None = None
        #: releases the places a dearer exchange holds for a booking cancelled meanwhile
        self.release_differences: Callable[[str, str], None] | None = None

    def cancel_confirmed(self, booking: Booking, actor: str = "customer", operator_note: str | None = None,
                         ids: dict[str, str] | None = None) -> Booking:
        """A confirmed booking given up: places back at once, then the money back (unless the
        offering's policy keeps it: the booking's kind names the state it enters then).

        ``operator_note``: the organizer cancels it (POST /admin/bookings/{id}/cancel), which a
        customer may not do once someone came in on it; the organizer's decision gives the money
        back whatever the policy keeps from a customer's cancel, and the journal records the note,
        who decided (``ids``) and how many had already come in."""
        if booking.comp:   # nothing was paid: the places go back, with nothing to return
            return transitions.apply(self.store, booking, self.clock(), status=BookingStatus.CANCELLED, actor=actor,
                                     action="comp_cancelled", decision="nothing was paid; places released",
                                     move=Move.UNSELL, ids=ids, cancelled_by_customer=operator_note is None)
        payment = booking.payment
        assert payment is not None and payment.payment_id
        from .. import kinds   # only the kinds' policy hooks: read once the booking is in hand

        kind = kinds.of_booking(booking)
        event = self.store.get_event(booking.event_id)
        kept = kind.cancel_without_refund(event, booking, self.clock()) if event and operator_note is None else None
        if kept is not None:
            return transitions.advance(self.store, booking, self.clock(), kept, actor=actor,
                                       action="cancelled_without_refund",
                                       decision="places released; the policy gives no refund now")
        inside = kind.admitted(booking) if operator_note is not None else 0
        action, decision, reason = self._cancel_step(event, inside, operator_note)
        # parts whose own policy keeps their money (an order's lines): the refund is the rest
        parts = kind.kept_on_cancel(self.store.get_event, booking, self.clock()) if operator_note is None else []
        amount = None
        # the offering's cancellation policy with fees: a customer's cancel (not the organizer's,
        # nor one in the window after a change of the start) gives back its tier's share
        policy = refund_by_policy(event, booking.amount, self.clock(), kind.starts_at(event, booking)) \
            if operator_note is None and reason == "cancel" and not parts else None
        if policy is not None and policy.value < booking.amount.value:
            if policy.value == 0:
                raise Conflict("The cancellation policy gives nothing back this close to the start.",
                               code="no_refund_now")
            amount = policy.as_dict()
            decision = f"{decision}; the cancellation policy gives back {policy.text} of {booking.amount.text}"
        if parts:
            kept = sum((money.value for _, money in parts), Decimal("0"))
            if kept >= booking.amount.value:
                raise Conflict("Every part of this booking keeps its money if cancelled now; nothing would come back.",
                               code="nothing_to_refund")
            amount = Money(booking.amount.value - kept, booking.amount.currency).as_dict()
            decision = (f"{decision}; kept by their own policy: "
                        + ", ".join(f"{part} {money.text}" for part, money in parts))[:500]
        # after a dearer exchange the booking's price was paid by two payments or more: the first
        # gives back at most what it took, the rest comes from the difference payments
        excess, first_left = None, booking.first_payment_share.value
        asked = Money.parse(**amount) if amount else booking.amount
        if asked.value > first_left and self.give_back_differences is not None:
            excess = Money(asked.value - first_left, asked.currency)
            amount = Money(first_left, asked.currency).as_dict()
            decision = f"{decision}; {excess.text} of it from the exchange's difference payment"
        booking = transitions.apply(
            self.store, booking, self.clock(), status=BookingStatus.REFUND_PENDING, actor=actor,
            action=action, decision=decision, move=Move.UNSELL,
            ids={"payment_id": payment.payment_id} | (ids or {}),
            payment=self.with_refund(payment, reason, amount=amount), cancelled_by_customer=True,
        )
        try:
            self.refund(booking, actor)
        except PaymentOutcomeUnknown:
            logger.warning("refund outcome unknown; reconciliation will settle it", extra={"booking_id": booking.booking_id})
        if excess is not None and self.give_back_differences is not None:
            self.give_back_differences(booking.booking_id, excess, actor)
        if booking.held_difference is not None and self.release_differences is not None:
            self.release_differences(booking.booking_id, actor)
        return self.store.get_booking(booking.booking_id) or booking

    def _cancel_step(self, event: Any, inside: int, operator_note: str | None) -> tuple[str, str, str]:
        """(journal action, decision, refund reason) of a confirmed booking given up: by its
        organizer (the note, and how many had come in), or by its customer (within the window after
        a change of the event's start time, the journal says why)."""
        if operator_note is not None:
            checked_in = f" ({inside} already checked in)" if inside else ""
            return ("cancelled_by_organizer", f"{operator_note}; places released, full refund to follow{checked_in}"[:500],
                    "organizer_cancel")
        changed = change_refund_until(event, self.clock())
        if changed:
            return ("cancelled_after_time_change", f"the start time changed; cancelled within the refund window "
                                                   f"(until {changed}): places released, full refund to follow",
                    "time_changed")
        return ("cancelled_after_payment", "places released; refund to follow", "cancel")

    def refund_after_timer(self, booking: Booking) -> bool:
        """A kind's timer came due on a confirmed booking: when the offering's policy gives the
        money back then (parking: a refunded no-show), places back and the refund, as a cancel
        gives it; False when the timer should enter the kind's state instead, as for a booking
        given free (a 100 % code): nothing was paid, so nothing goes back."""
        from .. import kinds

        event = self.store.get_event(booking.event_id)
        if event is None or booking.timer is None or booking.comp \
                or not kinds.of_booking(booking).refund_on_timer(event, booking):
            return False
        payment = booking.payment
        assert payment is not None and payment.payment_id
        booking = transitions.apply(
            self.store, booking, self.clock(), status=BookingStatus.REFUND_PENDING, actor="timer",
            action=f"{booking.timer[1].lower()}_refund", decision=f"not entered by {booking.timer[0]}; the policy "
                                                                    "refunds it: places released, refund to follow",
            move=Move.UNSELL, ids={"payment_id": payment.payment_id},
            payment=self.with_refund(payment, booking.timer[1].lower()))
        try:
            self.refund(booking, "timer")
        except PaymentOutcomeUnknown:
            logger.warning("refund outcome unknown; reconciliation will settle it", extra={"booking_id": booking.booking_id})
        return True

    def line_timers(self, booking: Booking, overdue: str) -> str:
        """A confirmed order whose lines' kind timers came due before ``overdue``
        (``Booking.line_timers``), each line as its own offering's policy says, as a single
        booking's timer is (``refund_after_timer``, else the sweeper's advance): a lot that
        refunds no-shows gives the line's amount back of the order's payment (a part refund, with
        its refund receipt where receipts are on: services/part_refunds.py, whose retry asks again
        for an answer that never came) and the line is REFUNDED, the order standing for its other
        lines; otherwise the line enters the timer's state (parking: NO_SHOW, its money kept, its
        settlement receipt due). Returns "timers" or "skipped"; StaleBooking when someone else
        wrote first (the next sweep decides again)."""
        done = "skipped"
        for at, line_id, state in booking.line_timers:
            if at >= overdue:
                break
            booking = self._line_timer(booking, line_id, at, state)
            done = "timers"
        return done

    def _line_timer(self, booking: Booking, line_id: str, at: str, state: str) -> Booking:
        from .. import kinds
        from ..domain.exchange import difference_refund

        stored = next(line for line in (booking.kind_details or {}).get("lines") or () if line["line_id"] == line_id)
        order = kinds.of_booking(booking)
        part = order.part(booking, str(stored["offering_id"]))
        assert part is not None
        event = self.store.get_event(part.event_id)
        payment, now = booking.payment, self.clock()
        if event is None or payment is None or not payment.payment_id or booking.comp or not part.amount.value \
                or not kinds.named(str(stored["kind"])).refund_on_timer(event, part):
            return transitions.advance_part(self.store, booking, part, now, state, actor="timer", action="timer_fired",
                                            decision=f"line {line_id} not entered by {at}", ids={"line_id": line_id})
        entry = {**difference_refund(payment.payment_id, f"line-{line_id}", part.amount, now), "line_id": line_id,
                 "offering_id": part.event_id}
        # the line's places go back in the write that records its refund (transitions.apply_part)
        booking = transitions.apply_part(
            self.store, booking, replace(part, status=BookingStatus.REFUNDED), now, actor="timer",
            action=f"line_{state.lower()}_refund",
            decision=f"line {line_id} not entered by {at}; its offering's policy refunds it: "
                     f"{part.amount.text} of {booking.amount.text} to go back, its places released",
            ids={"payment_id": payment.payment_id, "line_id": line_id},
            amount=Money(booking.amount.value - part.amount.value, booking.amount.currency),
            payment=replace(payment, exchange_refunds=[*(payment.exchange_refunds or []), entry]))
        try:
            return self.part_refunds.ask(booking, str(entry["key"]), "timer")
        except PaymentOutcomeUnknown:   # its next try is recorded: the sweeper asks again (part_refunds.retry)
            return self.store.get_booking(booking.booking_id) or booking

    def with_refund(self, payment: Payment, reason: str, attempt: str = "",
                    amount: dict[str, str] | None = None) -> Payment:
        """The payment record with a refund requested: its key (derived from the payment, the
        reason and, for an operator's retry after a refused refund, the attempt) is stored before
        the provider is called, with the moment of the request, from which reconciliation's limit runs.
        ``amount``: what to give back when it is not the booking's price (a payment whose amount
        did not match the booking is refunded what the provider took); stored, so every repeat of
        the call sends the same body under the same key."""
        assert payment.payment_id
        now = self.clock()
        refund = {"reason": reason, "key": refund_key(payment.payment_id, reason + attempt), "status": "requested",
                  "requested_at": iso(now)}
        if amount is not None:
            refund["amount"] = {"value": str(amount["value"]), "currency": str(amount["currency"])}
        return replace(payment, refund=refund, next_check_at=iso(now + timedelta(seconds=self.first_check_seconds)))

    def refund(self, booking: Booking, actor: str, watch: bool = True) -> str:
        """Ask the provider for the booking's refund with its stored key; record what it answered.
        ``watch=False``: the caller retries itself and starts reconciliation only for a lost answer
        (the bulk refunds of a cancelled event, which would otherwise start one execution each)."""
        payment = booking.payment
        assert payment is not None and payment.refund is not None and payment.payment_id
        if watch:
            self.watch(booking, f"refund-{payment.refund['reason']}")
        try:
            answer = self._ask(booking, payment)
        except ProviderRejected as exc:
            # Marked refused, so that an operator may send a new one (under a new key).
            refused = replace(payment, refund={**payment.refund, "status": "rejected"})
            self.records.open_review(booking, f"refund_rejected_{exc.code}", actor, {"payment_id": payment.payment_id}, refused)
            return "manual_review"
        crash_point("refund.after_provider_call")   # the money went back; nothing recorded yet
        if not payment.refund.get("amount") and booking.paid_by_differences.value \
                and self.give_back_differences is not None:
            # the whole price back (an event cancelled, a review, a late payment): the part the
            # dearer exchanges' difference payments took goes back from them, each once
            self.give_back_differences(booking.booking_id, booking.paid_by_differences, actor)
        return self.record_refund(booking, answer, actor)

    def _ask(self, booking: Booking, payment: Payment) -> dict[str, Any]:
        """The provider call of the booking's refund: its stored key and the same body every time."""
        assert payment.payment_id and payment.refund is not None
        amount = refund_amount(booking)
        return self.money.refund(payment.payment_id, amount,
                                 f"Holdfast booking {booking.booking_id}: {payment.refund['reason']}",
                                 payment.refund["key"], refund_receipt(booking, amount))

    def asked_again(self, booking: Booking) -> dict[str, Any] | None:
        """The booking's own refund whose answer never came, asked for again under its key with the
        same body: the provider answers a repeat with the refund that key made (one that never
        arrived is made now, as reconciliation's retry would make it). None: no refund of ours
        waits for its answer, or the provider refused it (so none of its refunds is ours).
        ``PaymentOutcomeUnknown``: no answer again."""
        payment = booking.payment
        if payment is None or not payment.payment_id or not payment.refund or payment.refund.get("refund_id") \
                or payment.refund.get("status") != "requested":
            return None
        try:
            return self._ask(booking, payment)
        except ProviderRejected:
            return None

    def tell_apart(self, booking: Booking, actor: str) -> tuple[Booking, dict[str, Any] | None]:
        """Before a refund of the booking's own payment that the booking knows by no id is taken for
        anything (a refund's notification, an operator's close), while a part refund of that
        payment has no answer (``others_unanswered``: an order line's, a cheaper exchange's
        difference): each such part refund asked again under its own key, its answer recorded, so
        its id is known (the provider answers a repeat with the refund the key made: a line's
        refund is never taken for the order's own, proof seed 20261421), and the booking's own
        refund, if its answer never came either, asked again under its key (``asked_again``), the
        one answer that names ours. Returns the booking as now stored and that answer (None: not
        asked, none waits, or refused). PaymentOutcomeUnknown: our own key got no answer."""
        payment = booking.payment
        if payment is None or not payment.payment_id or not others_unanswered(booking):
            return booking, None
        booking = self.part_refunds.ask_unanswered(booking, payment.payment_id, actor)
        return booking, self.asked_again(booking)

    def record_refund(self, booking: Booking, refund: dict[str, Any], actor: str) -> str:
        def record(current: Booking) -> str:
            payment = current.payment
            assert payment is not None
            mismatch = refund_mismatch(payment, refund)
            if mismatch:
                logger.warning("refund does not match the booking's refund", extra={
                    "booking_id": current.booking_id, "refund_id": refund.get("id"), "reason": mismatch})
                return mismatch
            state = dict(payment.refund or {}) | {"refund_id": refund["id"], "status": refund.get("status")}
            ids = {"payment_id": payment.payment_id or "", "refund_id": refund["id"]}
            # In review too: the money went back, whoever was waiting for it.
            if refund.get("status") == "succeeded" and _same_amount(refund.get("amount"), refund_amount(current)) \
                    and current.status in (BookingStatus.REFUND_PENDING, BookingStatus.MANUAL_REVIEW):
                transitions.apply(self.store, current, self.clock(), status=BookingStatus.REFUNDED, actor=actor,
                                  action="refund_succeeded", decision="money returned", ids=ids,
                                  payment=replace(payment, refund=state, next_check_at=None), review=None)
                return "refunded"
            if payment.refund == state:
                return f"refund_{refund.get('status')}"
            transitions.apply(self.store, current, self.clock(), actor=actor, action=f"refund_{refund.get('status')}",
                              decision="refund recorded", ids=ids, payment=replace(payment, refund=state))
            return f"refund_{refund.get('status')}"

        # A booking that vanished cannot be written: as unknown as one that kept changing.
        kept_changing = PaymentOutcomeUnknown("booking kept changing while recording its refund")
        return transitions.decide_again(lambda: self.store.get_booking(booking.booking_id), record, first=booking,
                                        attempts=ATTEMPTS, gone=kept_changing, exhausted=kept_changing)

    def apply_provider_refund(self, refund: dict[str, Any], actor: str = "provider") -> str:
        try:
            paid = self.money.payment(refund["payment_id"])
        except ProviderNotFound:
            return "unknown_payment"
        # a difference payment names its booking under its own key (exchange_differences.py)
        booking_id = (paid.get("metadata") or {}).get("booking_id") or (paid.get("metadata") or {}).get(DIFFERENCE_OF)
        booking = self.store.get_booking(booking_id) if booking_id else None
        if booking is None:
            logger.warning("refund for a booking without a refund record", extra={"refund_id": refund.get("id")})
            return "unknown_refund"
        ours: dict[str, Any] | None = None
        part = part_refund_of(booking, str(refund.get("id")))
        if part is None and booking.payment is not None and refund.get("payment_id") == booking.payment.payment_id \
                and others_unanswered(booking):
            # a part refund of this payment whose answer was lost (a line's, a difference's) is known
            # by no id yet, and may be this one: told apart before it is matched (``tell_apart``)
            booking, ours = self.tell_apart(booking, actor)
            part = part_refund_of(booking, str(refund.get("id")))
        if part is not None:   # a part refund: an exchange's difference, a line's
            self.part_refunds.record(booking.booking_id, part, {"status": refund.get("status")}, actor)
            if ours is not None:   # the booking's own refund, answered again: recorded too
                self.record_refund(self.store.get_booking(booking.booking_id) or booking, ours, actor)
            return f"exchange_refund_{refund.get('status')}"
        if booking.payment is None or not booking.payment.refund:
            logger.warning("refund for a booking without a refund record", extra={"refund_id": refund.get("id")})
            return "unknown_refund"
        if refund.get("payment_id") == booking.payment.payment_id and not booking.payment.refund.get("refund_id") \
                and others_unanswered(booking):
            # a part refund still without an answer: only the answer to our own key says which
            # refund is ours (proof seeds 20261214471, 20261217091)
            if ours is None or ours.get("id") != refund.get("id"):
                if ours is not None:
                    self.record_refund(booking, ours, actor)
                logger.warning("refund is not the booking's own", extra={
                    "booking_id": booking.booking_id, "refund_id": refund.get("id"), "reason": "refund_not_ours"})
                return "refund_not_ours"
        return self.record_refund(booking, refund, actor)

    # ---------------------------------------------------------------------- the customer cancelled

    def void_after_cancel(self, booking: Booking, actor: str = "customer") -> Booking:
        """Right after a customer cancelled a booking with an open payment: cancel an authorisation
        at the provider. A pending payment cannot be cancelled through the API (the customer may
        still pay on the open page); the booking's CANCELLED status remembers the customer's wish,
        and a payment that arrives later is given back (``give_back``)."""
        payment = booking.payment
        if payment is None or not payment.payment_id:
            return booking
        try:
            paid = self.money.payment(payment.payment_id)
            if paid.get("status") != "waiting_for_capture":
                return booking
            voided = self.money.void(payment.payment_id, void_key(booking.booking_id), look_when_refused=False)
        except (PaymentOutcomeUnknown, ProviderRejected) as exc:
            # The notification or reconciliation that follows judges it against CANCELLED: give_back.
            logger.warning("could not void the payment of a cancelled booking", extra={
                "booking_id": booking.booking_id, "reason": str(exc)[:120]})
            return booking
        who = "the customer" if actor == "customer" else "the event's cancellation"
        return self.records.note(booking, action="authorisation_voided", actor=actor, ids={"payment_id": voided["id"]},
                          decision=f"cancelled by {who}; authorisation cancelled, no money moved",
                          payment_change={"provider_status": voided.get("status")})

    def give_back(self, booking: Booking, paid: dict[str, Any], actor: str, seen: Payment,
                  reason: str = "cancelled") -> str:
        """Money arrived for a booking the customer (or the organizer, with the event) cancelled:
        never sell it again; void an authorisation, refund a payment."""
        ids = {"payment_id": paid["id"]}
        if paid.get("status") == "waiting_for_capture":
            voided = self.money.void(paid["id"], void_key(booking.booking_id))
            if voided.get("status") != "canceled":
                raise PaymentOutcomeUnknown(f"cancel of {paid['id']} left it {voided.get('status')}")
            transitions.apply(self.store, booking, self.clock(), actor=actor, action="authorisation_voided",
                              decision="authorised after the customer cancelled; authorisation cancelled, no money moved",
                              ids=ids, payment=replace(seen, provider_status="canceled", next_check_at=None))
            return "authorisation_cancelled"
        who = "the event was cancelled" if reason == "event_cancelled" else "the customer cancelled"
        booking = transitions.apply(self.store, booking, self.clock(), status=BookingStatus.REFUND_PENDING, actor=actor,
                                    action="payment_after_cancel_refund_started",
                                    decision=f"paid after {who}; money goes back", ids=ids,
                                    payment=self.with_refund(seen, reason))
        return self.refund(booking, actor)
