"""Exchange (issue 45): a customer moves a confirmed booking to other places of the same organizer
(another seat, date or slot) in one write: the new places taken and the old given back in one
transaction (``ports.Change.swap``), or nothing changes.

The target is planned by its kind exactly as a hold on it would be (``validate``, ``check_time``,
``plan``, ``hold_price``), from fresh reads; the write is the status-keeping change of
``transitions.apply`` with the swap, conditioned on the booking's version. The old tickets are
voided and new ones issued in the same write (``Kind.reissue``); the journal keeps the exchange,
with the request's key, so a repeat is answered from it. Only an exchange at the same price is
made (domain/exchange.py ``check_price``).
"""
from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from .. import kinds
from ..domain.booking import Booking, JournalEntry
from ..domain.commands import HoldPlaces
from ..domain.errors import (Conflict, EventCancelled, Forbidden, IdempotencyKeyReused, InvalidRequest,
                             NotFound, TooBusy)
from ..domain.exchange import EXCHANGED, check_open, check_price, swap
from ..domain import transfers
from ..domain.personal_data import places_end
from ..domain.statuses import BookingStatus
from ..ports import Clock, HoldStore, PlacesTaken, SalesStopped, StaleBooking
from . import transitions

#: Reads and plans at most this many times when another write lands first (the booking changed,
#: the places chosen went, the offering's terms moved).
ATTEMPTS = 4
#: The outbox event of an exchange: the customer's message ("booking.changed") and no webhook.
EXCHANGED_EVENT = "booking.exchanged"


class ExchangeService:
    def __init__(self, store: HoldStore, clock: Clock, rng: random.Random | None = None) -> None:
        self.store = store
        self.clock = clock
        self.rng = rng or random.Random()

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
                return booking
            try:
                return self._move(booking, idempotency_key, fingerprint, target_id or booking.event_id, request,
                                  attempt)
            except StaleBooking:
                continue   # the booking changed meanwhile (or its places did): read and decide again
            except PlacesTaken:
                continue   # the places went between the plan and the write: plan again from a fresh read
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
        check_price(booking.amount, target_kind.hold_price(target, places, wanted))
        moved = swap(booking.event_id, booking.places, target_id, places)
        if not moved.given.quantity and not moved.taken.quantity:
            raise Conflict("The booking already has these places.", code="exchange_same_places")
        details = transfers.carried(booking, kind.reissue(booking, target_kind.booking_details(target, wanted, places)))
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
                event_id=target_id, kind_details=details, ends_at=places_end(places, target.starts_at))
        except SalesStopped:
            for offering in dict.fromkeys((booking.event_id, target_id)):
                if self.store.event_cancelled(offering):
                    raise EventCancelled(offering) from None
            raise StaleBooking(booking.booking_id) from None   # its terms moved: decide again on them

    def _offering(self, offering_id: str) -> Any:
        item = self.store.get_event(offering_id, consistent=True)
        if item is None:
            raise NotFound(f"No event {offering_id}.", code="event_not_found")
        return kinds.offering(item)


def _replayed(journal: list[JournalEntry], key: str, fingerprint: str) -> bool:
    """Whether this request (its key) was carried out already; the same key with another body is
    refused (IdempotencyKeyReused)."""
    for entry in journal:
        if entry.action == EXCHANGED and entry.ids.get("idempotency_key") == key:
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
