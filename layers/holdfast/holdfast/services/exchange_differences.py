"""The second payment of an exchange into dearer places (issue 45): the difference between what the
booking paid and what its new places cost, paid through the same path as a hold's payment.

The exchange's first write (services/exchange.py) holds the new places for the booking (available
-> held, the target's hold time to live) and stores the difference's record on the booking
(``Booking.differences``, domain/exchange.py ``difference_hold``), its payment's idempotence key
with it; the old places stay the booking's. Then:

- ``start`` creates the payment at the provider (stored attempt -> call -> stored outcome, as a
  hold's payment is made): its ``confirmation_url`` is where the customer pays. A lost answer is
  503 and recorded ``UNKNOWN``; the same request again, or the check below, asks again under the
  same key, so the provider makes one payment.
- ``apply`` acts on the payment as the provider reports it (its metadata names the booking and the
  exchange): paid while held, the swap is made in one write (the held places sold, the old ones
  given back, the booking's places, offering, amount and tickets new: the same write as an
  exchange's at the same price); cancelled while held, the held places are released and the booking
  stays as it was; paid after the hold lapsed, the places are taken again if they are still free,
  else the difference is refunded (the late-payment path of a hold); paid for a booking that is no
  longer as the exchange found it (cancelled meanwhile), the difference is refunded.
- ``sweep`` is the sweeper's: a held difference past its expiry lapses (its payment looked at
  first: one paid whose notification has not come is applied instead), and a difference payment
  whose outcome is unknown (no answer to its creation, a refund in flight) is checked at the
  provider on the payment's ``next_check_at``, at growing intervals, until it is final.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from .. import kinds
from ..clock import iso
from ..domain import fiscal, lifecycle, transfers
from ..domain.booking import Booking
from ..domain.errors import Conflict, PaymentProviderUnavailable, TooBusy
from ..domain.exchange import EXCHANGED, looks_follow, paid_claims, released_claims, restored, stored
from ..domain.money import Money
from ..domain.statuses import BookingStatus
from ..faults import crash_point
from ..observability import logger
from ..ports import Clock, PlacesTaken, ProviderNotFound, ProviderRejected, SalesStopped, StaleBooking
from . import transitions
from .money_at_provider import MoneyAtProvider
from .provider_keys import PaymentOutcomeUnknown

ATTEMPTS = 6
#: The provider payment metadata that names a difference payment: the booking and the exchange key.
BOOKING_KEY, EXCHANGE_KEY = "exchange_of", "exchange_key"
#: The outbox event of the swap (the customer's "booking changed" message), as an exchange's.
EXCHANGED_EVENT = "booking.exchanged"
#: Checks of a difference payment whose outcome is unknown, after the first one: at most this many.
MAX_CHECKS = 6


def difference_of(booking: Booking, key: str) -> dict[str, Any] | None:
    """The booking's dearer exchange ``key``'s record, or None."""
    return next((entry for entry in booking.differences or () if entry.get("exchange_key") == key), None)


def _with(booking: Booking, key: str, **change: Any) -> list[dict[str, Any]]:
    """The booking's difference records with exchange ``key``'s changed (``payment``: merged)."""
    out = []
    for entry in booking.differences or ():
        if entry.get("exchange_key") == key:
            payment = {**(entry.get("payment") or {}), **(change.pop("payment", None) or {})}
            entry = {**entry, **change, "payment": {k: v for k, v in payment.items() if v is not None}}
        out.append(entry)
    return out


def difference_receipt(booking: Booking, entry: dict[str, Any], given: dict[str, Any] | None = None
                       ) -> dict[str, Any] | None:
    """The 54-FZ receipt of a difference payment (or of ``given`` back of it), where the booking's
    first payment carried one: one item of the amount, taxed and described as the sale's first line."""
    record = booking.payment.receipt if booking.payment else None
    if not record or not booking.contact_email:
        return None
    amount = Money.parse(**(given or entry["amount"]))
    return fiscal.receipt(booking.contact_email, record, amount,
                          lines=[fiscal.difference_line(record, amount, str(entry["to_event_id"]))])


class DifferencePayments:
    def __init__(self, store: Any, clock: Clock, money: MoneyAtProvider, return_url: str = "",
                 first_check_seconds: int = 30) -> None:
        self.store = store
        self.clock = clock
        self.money = money
        self.return_url = return_url
        self.first_check_seconds = first_check_seconds

    # ----------------------------------------------------------------------------- the payment

    def start(self, booking: Booking, key: str) -> Booking:
        """Create the difference payment of the exchange ``key`` at the provider, unless it has
        one; answers the booking with its ``confirmation_url``. 503 when the provider's answer is
        lost (the same request again asks once more, under the same key)."""
        entry = difference_of(booking, key)
        if entry is None or entry.get("state") != "held" or entry["payment"].get("payment_id"):
            return booking
        crash_point("exchange.before_difference_payment")
        try:
            answer = self._create(booking, entry)
        except PaymentOutcomeUnknown:
            self._record(booking.booking_id, key, "exchange_difference_unknown",
                         "the provider did not answer the difference payment's creation; checked again",
                         payment={"state": "UNKNOWN", "next_check_at": iso(self.clock() + timedelta(
                             seconds=self.first_check_seconds))})
            raise PaymentProviderUnavailable(
                "The payment provider did not answer. Retry with the same Idempotency-Key: no second payment "
                "will be made.", retry_after=2) from None
        except ProviderRejected as exc:
            self._release(booking.booking_id, key, "failed", "the provider refused the difference payment "
                          f"({exc.code}); the new places released, the booking as it was")
            raise Conflict("The payment provider refused this payment.", code="payment_rejected") from None
        return self._created(booking.booking_id, key, answer) or booking

    def _create(self, booking: Booking, entry: dict[str, Any]) -> dict[str, Any]:
        return self.money.create(
            amount=dict(entry["amount"]),
            description=f"Holdfast booking {booking.booking_id}: exchange difference",
            metadata={BOOKING_KEY: booking.booking_id, EXCHANGE_KEY: entry["exchange_key"],
                      "event_id": str(entry["to_event_id"])},
            capture=True,
            return_url=self.return_url.replace("{booking_id}", booking.booking_id),
            idempotence_key=entry["payment"]["idempotence_key"],
            receipt=difference_receipt(booking, entry),
        )

    def _created(self, booking_id: str, key: str, answer: dict[str, Any]) -> Booking | None:
        return self._record(booking_id, key, "exchange_difference_payment_created",
                            "the difference payment created at the provider", payment={
                                "state": "CREATED", "payment_id": answer["id"], "provider_status": answer.get("status"),
                                "confirmation_url": (answer.get("confirmation") or {}).get("confirmation_url"),
                                "next_check_at": iso(self.clock() + timedelta(seconds=self.first_check_seconds))})

    # ------------------------------------------------------------------------------ the answers

    def apply(self, provider_payment: dict[str, Any], actor: str = "provider") -> str:
        """Act on a difference payment as fetched from the provider (``payments.PaymentService``
        hands over every payment whose metadata names an exchange)."""
        metadata = provider_payment.get("metadata") or {}
        booking_id, key = str(metadata.get(BOOKING_KEY) or ""), str(metadata.get(EXCHANGE_KEY) or "")

        def act(booking: Booking | None) -> str:
            entry = difference_of(booking, key) if booking is not None else None
            if booking is None or entry is None:
                logger.warning("a difference payment of no known exchange", extra={"payment_id": provider_payment.get("id")})
                return "unknown_booking"
            return self._act(booking, entry, provider_payment, actor)

        return transitions.decide_again(lambda: self.store.get_booking(booking_id), act, attempts=ATTEMPTS,
                                        exhausted=PaymentOutcomeUnknown(f"booking {booking_id} kept changing"),
                                        retry_on=(StaleBooking, SalesStopped))

    def _act(self, booking: Booking, entry: dict[str, Any], paid: dict[str, Any], actor: str) -> str:
        status, state, key = paid.get("status"), entry.get("state"), str(entry["exchange_key"])
        final = status in ("succeeded", "canceled")
        seen = {"payment_id": paid.get("id"), "provider_status": status, "state": "CREATED",
                "paid_at": paid.get("captured_at") or (iso(self.clock()) if status == "succeeded" else None),
                "next_check_at": None if final else entry["payment"].get("next_check_at")}
        if status == "succeeded" and state in ("held", "lapsed", "failed"):
            if not self._as_found(booking, entry):
                return self._give_back(booking, entry, seen, actor, "the booking changed since the exchange")
            try:
                self._swap(booking, entry, seen, actor, late=state != "held")
            except (PlacesTaken, SalesStopped):
                return self._give_back(self.store.get_booking(booking.booking_id) or booking, entry, seen, actor,
                                       "the places went after the hold lapsed")
            return "exchanged" if state == "held" else "exchanged_late"
        if status == "succeeded" and state == "refunding":
            return self._give_back(booking, entry, seen, actor, str(entry.get("refund_reason") or "given back"))
        if status == "canceled" and state == "held":
            self._release(booking.booking_id, key, "failed", "the provider cancelled the difference payment; the new "
                          "places released, the booking as it was", payment=seen, actor=actor)
            return "difference_failed"
        if any(entry["payment"].get(k) != seen[k] for k in ("payment_id", "provider_status")):
            self._record(booking.booking_id, key, "exchange_difference_seen",
                         f"the provider reports the difference payment {status}", payment=seen, actor=actor)
        return f"difference_{status}"

    @staticmethod
    def _as_found(booking: Booking, entry: dict[str, Any]) -> bool:
        """Whether the booking is still confirmed on the places the exchange was decided from."""
        return booking.status is BookingStatus.CONFIRMED and booking.event_id == entry["from_event_id"] \
            and stored(booking.places) == stored(restored(entry["from_places"])) and not booking.customer_gave_up

    def _swap(self, booking: Booking, entry: dict[str, Any], seen: dict[str, Any], actor: str, late: bool) -> Booking:
        """The exchange made: the held places sold (taken again, ``late``), the old ones given back,
        the booking's places, offering, amount, tickets and end new, in one write."""
        kind = kinds.of_booking(booking)
        key = str(entry["exchange_key"])
        details = {**(kind.reissue(booking, dict(entry.get("details") or {})) or {}), **transfers.kept_on_exchange(booking)}
        price = Money.parse(entry["price"]["value"], entry["price"]["currency"])
        places = restored(entry["places"])
        offering = self.store.get_event(str(entry["to_event_id"])) or {}
        # the settlement receipts' looks (the first payment's, each earlier difference payment's)
        # follow the service to its new date, read from the offering now (an earlier one too)
        payment, others = looks_follow(
            booking.payment, _with(booking, key, state="paid", moved=True, payment=seen),
            None if lifecycle.renders_by_state(str(places.kind))
            else fiscal.rendered_at([granule.at for granule in places.granules],
                                    offering.get("starts_at") or entry.get("ends_at")))
        moved = transitions.apply(
            self.store, booking, self.clock(), actor=actor, action=EXCHANGED,
            decision=f"{booking.places.quantity} place(s) of {booking.event_id} exchanged for "
                     f"{int(entry['places']['quantity'])} of {entry['to_event_id']}; difference "
                     f"{Money.parse(**entry['amount']).text} paid" + (" after its hold lapsed" if late else ""),
            ids={"idempotency_key": key, "fingerprint": str(entry["fingerprint"]),
                 "from_event_id": booking.event_id, "to_event_id": str(entry["to_event_id"]),
                 "payment_id": str(seen.get("payment_id") or "")},
            places=places, swap=paid_claims(entry, late=late), publish=EXCHANGED_EVENT,
            notice={"released_event_id": booking.event_id}, event_id=str(entry["to_event_id"]),
            kind_details=details, ends_at=entry.get("ends_at"), amount=price, payment=payment,
            differences=others)
        crash_point("exchange.after_difference_swap")
        return moved

    def release_held(self, booking_id: str, actor: str) -> None:
        """A booking cancelled while a dearer exchange waits for its difference: the places held for
        it go back now (state ``failed``); a difference paid after all is then refunded (``_act``)."""
        booking = self.store.get_booking(booking_id)
        entry = booking.held_difference if booking is not None else None
        if entry is not None:
            self._release(booking_id, str(entry["exchange_key"]), "failed",
                          "the booking was cancelled; the places held for its exchange released", actor=actor)

    def give_back_paid(self, booking_id: str, excess: Money, actor: str) -> None:
        """A cancel of a booking whose dearer exchanges were paid: what its refund gives back beyond
        what is left of its first payment (``excess``) comes back from the difference payments, in
        order, each refunded once of what it still holds (services/refunds.py asks it after the
        first payment's refund)."""
        booking = self.store.get_booking(booking_id)
        left = excess.value
        # each at most what it still holds: a cheaper exchange since may have given a part of it back
        for entry, held in (booking.difference_shares if booking is not None else None) or ():
            if left <= 0 or entry.get("state") != "paid" or held.value <= 0:
                continue
            part = min(left, held.value)
            left -= part
            try:
                self._give_back(self.store.get_booking(booking_id) or booking, entry, dict(entry["payment"]), actor,
                                "the booking was cancelled", Money(part, excess.currency).as_dict())
            except PaymentOutcomeUnknown:
                logger.warning("a difference's refund outcome unknown; its check asks again",
                               extra={"booking_id": booking_id})

    def _give_back(self, booking: Booking, entry: dict[str, Any], seen: dict[str, Any], actor: str,
                   reason: str, amount: dict[str, Any] | None = None) -> str:
        """Refund a difference that bought nothing (its places went, or the booking changed): the
        refund's key stored first (state ``refunding``, its held places released in that write when
        they are still held), then asked for; a lost answer is asked again by the check."""
        key = str(entry["exchange_key"])
        payment_id = str(seen.get("payment_id") or entry["payment"].get("payment_id"))
        if entry.get("state") != "refunding":
            booking = self._release(booking.booking_id, key, "refunding", f"difference paid, but {reason}: refunded",
                                    payment={**seen, "next_check_at": iso(self.clock() + timedelta(
                                        seconds=self.first_check_seconds))},
                                    actor=actor, refund_key=f"rf-{payment_id}-xd"[:64], refund_reason=reason,
                                    refund_amount=dict(amount or entry["amount"])) or booking
            entry = difference_of(booking, key) or entry
        given = dict(entry.get("refund_amount") or entry["amount"])
        try:
            answer = self.money.refund(payment_id, given,
                                       f"Holdfast booking {booking.booking_id}: exchange difference given back",
                                       str(entry.get("refund_key") or f"rf-{payment_id}-xd"[:64]),
                                       difference_receipt(booking, entry, given))
        except ProviderRejected as exc:
            logger.warning("the refund of a difference payment was refused", extra={"booking_id": booking.booking_id,
                                                                                  "code": exc.code})
            self._record(booking.booking_id, key, "exchange_difference_refund_rejected",
                         f"the provider refused the difference's refund ({exc.code}): for the organizer to settle",
                         actor=actor, state="refund_rejected", payment={"next_check_at": None})
            return "difference_refund_rejected"
        crash_point("exchange.after_difference_refund")
        self._record(booking.booking_id, key, "exchange_difference_refunded",
                     f"the difference given back ({reason})", actor=actor, state="refunded",
                     refund_id=answer.get("id"), refund_status=answer.get("status"), payment={"next_check_at": None})
        return "difference_refunded"

    # ---------------------------------------------------------------------------- the sweeper's

    def due(self, booking: Booking, overdue: str) -> bool:
        """Whether the sweeper has something of the booking's differences to do by ``overdue``."""
        return any((entry.get("state") == "held" and str(entry["expires_at"]) < overdue)
                   or (entry.get("payment") or {}).get("next_check_at", "~") < overdue
                   for entry in booking.differences or ())

    def sweep(self, booking: Booking, overdue: str) -> str:
        """Lapse a held difference past its expiry and check a difference payment whose check is
        due (see the module's docstring)."""
        outcome = "skipped"
        for entry in list(booking.differences or ()):
            current = self.store.get_booking(booking.booking_id) or booking
            entry = difference_of(current, str(entry["exchange_key"])) or entry
            check = (entry.get("payment") or {}).get("next_check_at")
            if entry.get("state") == "held" and str(entry["expires_at"]) < overdue:
                outcome = self._lapse(current, entry)
            elif check and check < overdue:
                outcome = self.check(current, entry)
        return outcome

    def _lapse(self, booking: Booking, entry: dict[str, Any]) -> str:
        payment_id = entry["payment"].get("payment_id")
        if payment_id:
            try:
                paid = self.money.payment(payment_id)
            except (PaymentOutcomeUnknown, ProviderNotFound):
                paid = None
            if paid is not None and paid.get("status") in ("succeeded", "canceled"):
                return self.apply(paid, "timer")   # paid (or failed) before its deadline: its notification is late
        self._release(booking.booking_id, str(entry["exchange_key"]), "lapsed",
                      "the difference unpaid at the deadline; the new places released, the booking as it was",
                      actor="timer")
        return "difference_lapsed"

    def check(self, booking: Booking, entry: dict[str, Any]) -> str:
        """Learn a difference payment's outcome at the provider and act on it; checked again later
        while it is not final."""
        key = str(entry["exchange_key"])
        payment = entry.get("payment") or {}
        try:
            if not payment.get("payment_id"):
                # its creation's answer was lost: the same call, the same key, the one payment
                created = self._created(booking.booking_id, key, self._create(booking, entry))
                payment = (difference_of(created, key) or entry)["payment"] if created else payment
            outcome = self.apply(self.money.payment(str(payment["payment_id"])), "reconciler")
        except (PaymentOutcomeUnknown, ProviderRejected, ProviderNotFound, KeyError) as exc:
            outcome = f"unknown:{type(exc).__name__}"
        now = self.clock()
        current = self.store.get_booking(booking.booking_id)
        entry = difference_of(current, key) if current is not None else None
        if entry is not None and (entry.get("payment") or {}).get("next_check_at"):
            checks = int(entry["payment"].get("checks") or 0) + 1
            later = iso(now + timedelta(seconds=self.first_check_seconds * 3 ** min(checks, 6))) \
                if checks < MAX_CHECKS else None
            self._record(current.booking_id, key, "exchange_difference_checked",
                         f"the difference payment checked ({outcome})", actor="reconciler",
                         payment={"checks": checks, "next_check_at": later})
        return f"difference_checked_{outcome}"

    # ---------------------------------------------------------------------------------- writes

    def _record(self, booking_id: str, key: str, action: str, decision: str, actor: str = "system",
                **change: Any) -> Booking | None:
        def record(booking: Booking) -> Booking | None:
            if difference_of(booking, key) is None:
                return None
            return transitions.apply(self.store, booking, self.clock(), actor=actor, action=action, decision=decision,
                                     ids={"exchange_key": key}, differences=_with(booking, key, **dict(change)))

        return transitions.decide_again(lambda: self.store.get_booking(booking_id), record, attempts=ATTEMPTS,
                                        gone=lambda: None, exhausted=TooBusy())

    def _release(self, booking_id: str, key: str, state: str, decision: str, actor: str = "system",
                 **change: Any) -> Booking | None:
        """The held places of the exchange ``key`` released (held -> available) and its record
        moved to ``state``, in one write; a record no longer held only changes its state."""
        def release(booking: Booking) -> Booking | None:
            entry = difference_of(booking, key)
            if entry is None:
                return None
            held = entry.get("state") == "held"
            return transitions.apply(self.store, booking, self.clock(), actor=actor, action=f"exchange_difference_{state}",
                                     decision=decision, ids={"exchange_key": key},
                                     swap=released_claims(entry) if held else None,
                                     differences=_with(booking, key, state=state, **dict(change)))

        return transitions.decide_again(lambda: self.store.get_booking(booking_id), release, attempts=ATTEMPTS,
                                        gone=lambda: None, exhausted=TooBusy())


__all__ = ["DifferencePayments", "difference_of", "difference_receipt", "BOOKING_KEY", "EXCHANGE_KEY"]
