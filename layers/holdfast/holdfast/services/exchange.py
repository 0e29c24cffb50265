"""Exchange (issue 45): a customer moves a confirmed booking to other places of the same organizer
(another seat, date or slot) in one write: the new places taken and the old given back in one
transaction (``ports.Change.swap``), or nothing changes.

The target is planned by its kind exactly as a hold on it would be (``validate``, ``check_time``,
``plan``, ``hold_price``), from fresh reads; the write is the status-keeping change of
``transitions.apply`` with the swap, conditioned on the booking's version. The old tickets are
voided and new ones issued in the same write (``Kind.reissue``); the journal keeps the exchange,
with the request's key, so a repeat is answered from it. Into cheaper places the difference is
refunded from the booking's payments: the latest difference payment of a dearer exchange first,
each at most what it holds, the first payment the rest (domain/exchange.py
``difference_refunds``). The refunds' records (a key per payment) are stored in the swap's own
write, then each is asked for (services/part_refunds.py: through the money-at-provider service,
with its fiscal receipt where the organizer has receipts on) and its answer recorded. A repeat of
the request sends a refund whose answer was lost again under the same key (the provider makes it
once); if nobody repeats it, the sweeper does. Into dearer places, for a
booking paid at the provider: the new places are held for the difference's payment and the old
stay the booking's (services/exchange_differences.py makes the swap once it is paid); any other
booking: ``exchange_price_differs`` (domain/exchange.py ``given_back``).
The settlement receipts' stored looks (the first payment's, each difference payment's) move to
the new service's moment in the same write (domain/exchange.py ``looks_follow``).
"""
from __future__ import annotations

import hashlib
import json
import random
from dataclasses import replace
from typing import Any

from .. import kinds
from ..domain.booking import Booking, JournalEntry
from ..domain.commands import HoldPlaces
from ..domain.errors import (Conflict, EventCancelled, Forbidden, IdempotencyKeyReused, InvalidRequest,
                             NotFound, PaymentProviderUnavailable, TooBusy)
from ..domain import fiscal, lifecycle, transfers
from ..domain.exchange import (DIFFERENCE_HELD, EXCHANGED, check_open, check_price, dearer_by, difference_hold,
                               difference_refunds, given_back, held_claims, looks_follow, swap)
from ..domain.money import Money
from ..domain.personal_data import places_end
from ..domain.statuses import BookingStatus
from ..faults import crash_point
from ..ports import Clock, HoldStore, PlacesTaken, SalesStopped, StaleBooking
from . import transitions
from .exchange_differences import DifferencePayments
from .money_at_provider import MoneyAtProvider
from .part_refunds import PartRefunds
from .provider_keys import PaymentOutcomeUnknown
from .receipts import ContactRequired

#: Reads and plans at most this many times when another write lands first (the booking changed,
#: the places chosen went, the offering's terms moved).
ATTEMPTS = 4
#: The outbox event of an exchange: the customer's message ("booking.changed") and no webhook.
EXCHANGED_EVENT = "booking.exchanged"


class ExchangeService:
    def __init__(self, store: HoldStore, clock: Clock, rng: random.Random | None = None,
                 money: MoneyAtProvider | None = None, differences: DifferencePayments | None = None) -> None:
        self.store = store
        self.clock = clock
        self.rng = rng or random.Random()
        #: gives a cheaper exchange's difference back (None: only exchanges at the same price)
        self.money = money
        #: asks for those refunds, and the sweeper's retry of a lost answer (services/part_refunds.py)
        self.part_refunds = PartRefunds(store, money, clock) if money is not None else None
        #: takes a dearer exchange's difference by a second payment (None: dearer ones are refused)
        self.differences = differences

    def exchange(self, booking_id: str, customer_id: str, idempotency_key: str, target_id: str | None,
                 request: HoldPlaces) -> Booking:
        """Move the customer's confirmed booking to the places ``request`` asks of the offering
        ``target_id`` (its own when None). Answers the booking as it now is; a repeat with the
        same key and body answers the booking again without a second move."""
        if request.details.get("code"):
            raise InvalidRequest("An exchange takes no code.", code="invalid_request")
        fingerprint = _fingerprint(target_id, request)
        for attempt in range(ATTEMPTS):
            booking, journal = self.store.get_booking_with_journal(booking_id)
            if booking is None:
                raise NotFound(f"No booking {booking_id}.", code="booking_not_found")
            if booking.customer_id != customer_id:
                raise Forbidden("This booking belongs to another customer.")
            if _replayed(journal, idempotency_key, fingerprint):
                # a refund whose answer was lost, or a difference payment not yet created: again
                return self._pay(self._give_back(booking, idempotency_key), idempotency_key)
            try:
                moved = self._move(booking, idempotency_key, fingerprint, target_id or booking.event_id, request,
                                   attempt)
            except StaleBooking:
                continue   # the booking changed meanwhile (or its places did): read and decide again
            except PlacesTaken:
                continue   # the places went between the plan and the write: plan again from a fresh read
            crash_point("exchange.after_swap")   # moved, the difference's refund stored and not yet asked for
            return self._pay(self._give_back(moved, idempotency_key), idempotency_key)
        raise TooBusy()

    def _move(self, booking: Booking, key: str, fingerprint: str, target_id: str, request: HoldPlaces,
              attempt: int) -> Booking:
        if booking.status is not BookingStatus.CONFIRMED:
            raise Conflict("Only a confirmed booking can be exchanged.", code="booking_not_exchangeable",
                           status=booking.status.value)
        kind = kinds.of_booking(booking)
        if not kind.exchangeable:
            raise Conflict("These places are changed by cancelling the booking and booking again.",
                           code="exchange_not_supported")
        if kind.admitted(booking):
            raise Conflict("A ticket of this booking was checked in; it can no longer be exchanged.",
                           code="ticket_checked_in")
        pending = booking.held_difference
        if pending is not None:
            raise Conflict("An exchange of this booking is waiting for its difference to be paid.",
                           code="exchange_pending", expires_at=str(pending["expires_at"]))
        current = self._offering(booking.event_id)
        target = current if target_id == booking.event_id else self._offering(target_id)
        if str(target.get("organizer_id") or "") != str(current.get("organizer_id") or ""):
            # another organizer's offering is answered as one that does not exist
            raise NotFound(f"No event {target_id}.", code="event_not_found")
        for offering in dict.fromkeys((booking.event_id, target_id)):
            if self.store.event_cancelled(offering):
                raise EventCancelled(offering)
        target_kind = kinds.of_event(target)
        if not target_kind.exchangeable:
            raise Conflict("These places are changed by cancelling the booking and booking again.",
                           code="exchange_not_supported")
        now = self.clock()
        check_open(current, booking.places, now, "from")
        wanted = target_kind.validate(target, request)
        target_kind.check_time(target, wanted, now)
        places = target_kind.plan(self.store, target, wanted, self.rng, attempt, now=now)
        check_open(target, places, now, "to")
        price = target_kind.hold_price(target, places, wanted)
        moved = swap(booking.event_id, booking.places, target_id, places)
        if not moved.given.quantity and not moved.taken.quantity:
            raise Conflict("The booking already has these places.", code="exchange_same_places")
        dearer = self._dearer(booking, price)
        if dearer is not None:
            return self._hold_difference(booking, key, fingerprint, target, moved, places, price, dearer,
                                         target_kind.booking_details(target, wanted, places), now)
        back = self._difference(booking, price)
        details = {**(kind.reissue(booking, target_kind.booking_details(target, wanted, places)) or {}),
                   **transfers.kept_on_exchange(booking)}
        money: dict[str, Any] = {}
        if back is not None:
            assert booking.payment is not None and booking.payment.payment_id
            # the latest difference payment first, each at most what it holds; the first payment the rest
            shares = [(str(entry["payment"]["payment_id"]), held) for entry, held in reversed(booking.difference_shares)]
            refunds = difference_refunds(key, back, [*shares, (booking.payment.payment_id, booking.first_payment_share)],
                                         now)
            money = {"amount": price, "payment": replace(
                booking.payment, exchange_refunds=[*(booking.payment.exchange_refunds or []), *refunds])}
        # the settlement receipts' looks follow the service to its new date, in the same write
        paid = money.get("payment", booking.payment)
        payment, differences = looks_follow(
            paid, booking.differences, None if lifecycle.renders_by_state(str(places.kind))
            else fiscal.rendered_at([granule.at for granule in places.granules], target.starts_at))
        if payment is not paid:
            money["payment"] = payment
        if differences is not booking.differences:
            money["differences"] = differences
        try:
            return transitions.apply(
                self.store, booking, now, actor="customer", action=EXCHANGED,
                decision=f"{booking.places.quantity} place(s) of {booking.event_id} exchanged for "
                         f"{places.quantity} of {target_id}",
                ids={"idempotency_key": key, "fingerprint": fingerprint, "from_event_id": booking.event_id,
                     "to_event_id": target_id},
                places=places, swap=moved, offering_version=target.version, publish=EXCHANGED_EVENT,
                # the offering whose places it gave back: its waitlist is offered them (outbox relay)
                notice={"released_event_id": booking.event_id},
                event_id=target_id, kind_details=details, ends_at=places_end(places, target.starts_at), **money)
        except SalesStopped:
            raise self._why_stopped(booking, target_id) from None

    def _dearer(self, booking: Booking, price: Money) -> Money | None:
        """What a dearer exchange's second payment takes (None: the places cost no more, or the
        booking cannot pay a difference, and is answered as before)."""
        payment = booking.payment
        if self.differences is None or booking.comp or payment is None or not payment.payment_id \
                or payment.provider_status != "succeeded" or payment.refund:
            return None
        dearer = dearer_by(booking.amount, price)
        if dearer is not None and payment.receipt and not booking.contact_email:
            raise ContactRequired()   # its receipt is e-mailed to the booking's address (as a refund's)
        return dearer

    def _hold_difference(self, booking: Booking, key: str, fingerprint: str, target: Any, moved: Any,
                         places: Any, price: Money, amount: Money, details: Any, now: Any) -> Booking:
        """The first write of a dearer exchange: the new places held for the booking (through the
        target's sale gate, at the target's hold time to live) and the difference's record stored,
        the booking's own places and status untouched."""
        entry = difference_hold(booking.booking_id, key, fingerprint, booking.places, moved, places, price, amount,
                                details, places_end(places, target.starts_at), now, int(target.hold_ttl_seconds))
        try:
            return transitions.apply(
                self.store, booking, now, actor="customer", action=DIFFERENCE_HELD,
                decision=f"{places.quantity} place(s) of {moved.taken_from} held for {booking.places.quantity} of "
                         f"{booking.event_id}; difference {amount.text} to pay by {entry['expires_at']}",
                ids={"idempotency_key": key, "fingerprint": fingerprint, "from_event_id": booking.event_id,
                     "to_event_id": moved.taken_from},
                swap=held_claims(entry), offering_version=target.version,
                differences=[*(booking.differences or []), entry])
        except SalesStopped:
            raise self._why_stopped(booking, moved.taken_from) from None

    def _why_stopped(self, booking: Booking, target_id: str) -> Exception:
        """What a swap refused by a sale gate answers: the cancelled offering of the two, else a
        stale booking (its terms moved: decide again on them)."""
        for offering in dict.fromkeys((booking.event_id, target_id)):
            if self.store.event_cancelled(offering):
                return EventCancelled(offering)
        return StaleBooking(booking.booking_id)

    def _pay(self, booking: Booking, key: str) -> Booking:
        """The difference payment of the dearer exchange ``key``, created at the provider if it has
        none yet (the booking as it is otherwise)."""
        return self.differences.start(booking, key) if self.differences is not None else booking

    def _difference(self, booking: Booking, price: Money) -> Money | None:
        """What the exchange into places of ``price`` gives back (None: the same price). Only a
        booking paid at the provider, with nothing refunded of it, gets a difference back; any
        other (a comp, one whose money is on its way back) is exchanged at the same price only.
        Into places that cost nothing it is never made: the booking would keep no payment to
        cancel against."""
        payment = booking.payment
        if self.money is None or booking.comp or payment is None or not payment.payment_id \
                or payment.provider_status != "succeeded" or payment.refund or not price.value:
            check_price(booking.amount, price)
            return None
        back = given_back(booking.amount, price)
        if back is not None and payment.receipt and not booking.contact_email:
            # its refund carries a receipt, e-mailed to the booking's address: none (a booking taken
            # by a customer without one), none is sent, and a shop with receipts on refuses the refund
            raise ContactRequired()
        return back

    def _give_back(self, booking: Booking, key: str, actor: str = "customer") -> Booking:
        """Ask the provider for each refund of the difference that the exchange ``key`` stored (one
        per payment it gives back from) that has no answer yet, and record the answers. An answer
        that did not come: 503 (the exchange is made; the same request again asks once more under
        the same key, and the sweeper does if nobody repeats it)."""
        payment = booking.payment
        if payment is None or self.part_refunds is None:
            return booking
        lost = False
        for entry in [e for e in payment.exchange_refunds or () if e.get("exchange_key") == key and not e.get("line_id")]:
            try:
                booking = self.part_refunds.ask(booking, str(entry["key"]), actor)
            except PaymentOutcomeUnknown:
                lost = True
                booking = self.store.get_booking(booking.booking_id) or booking
        if lost:
            raise PaymentProviderUnavailable(
                "The booking was exchanged; the payment provider did not answer about the refund of the difference. "
                "Repeat the request with the same Idempotency-Key: the refund is made once.", retry_after=2)
        return booking

    def _offering(self, offering_id: str) -> Any:
        item = self.store.get_event(offering_id, consistent=True)
        if item is None:
            raise NotFound(f"No event {offering_id}.", code="event_not_found")
        return kinds.offering(item)


def _replayed(journal: list[JournalEntry], key: str, fingerprint: str) -> bool:
    """Whether this request (its key) was carried out already; the same key with another body is
    refused (IdempotencyKeyReused)."""
    for entry in journal:
        if entry.action in (EXCHANGED, DIFFERENCE_HELD) and entry.ids.get("idempotency_key") == key:
            if entry.ids.get("fingerprint") != fingerprint:
                raise IdempotencyKeyReused()
            return True
    return False


def _fingerprint(target_id: str | None, request: HoldPlaces) -> str:
    asked: dict[str, Any] = {"target": target_id, "quantity": request.quantity,
                             "seats": list(request.seats) if request.seats is not None else None,
                             "best_available": request.best_available, **dict(request.details)}
    return hashlib.sha256(json.dumps(asked, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


__all__ = ["ExchangeService"]
