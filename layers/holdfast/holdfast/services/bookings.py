"""Holds: take places for a customer atomically, let them go on expiry or cancellation."""
from __future__ import annotations

import hashlib
import json
import random
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable

from ..adapters.dynamo import (
    BookingStore,
    DuplicateRequest,
    HoldLimitReached,
    IdempotencyRecord,
    PlacesTaken,
    StaleBooking,
    TransientStoreError,
)
from ..clock import Clock, iso, parse_iso
from ..domain.booking import DEFAULT_HOLDS_PER_CUSTOMER, Booking, JournalEntry, PaymentMode
from ..domain.event_changes import change_refund_until
from ..domain.errors import (
    Busy,
    Conflict,
    EventCancelled,
    Forbidden,
    IdempotencyKeyReused,
    NotFound,
    RequestInProgress,
    SeatsUnavailable,
    SoldOut,
    TooBusy,
)
from ..domain.inventory import Move
from ..domain.journal import customer_view
from ..domain.statuses import BookingStatus
from ..observability import logger
from ..schemas import BookingIn
from .. import kinds
from . import transitions

HOLD_ATTEMPTS = 6


@dataclass(frozen=True)
class HoldResult:
    booking: Booking
    replayed: bool


class BookingService:
    def __init__(self, store: BookingStore, clock: Clock, schedule_expiry: Callable[[str, str], Any] | None = None,
                 rng: random.Random | None = None, event_cache_seconds: float = 30.0) -> None:
        self.store = store
        self.clock = clock
        self.schedule_expiry = schedule_expiry
        self.rng = rng or random.Random()
        self._events: dict[str, tuple[float, dict[str, Any]]] = {}
        self._event_cache_seconds = event_cache_seconds

    # ------------------------------------------------------------------------------------ create

    def create_booking(self, event_id: str, customer_id: str, idempotency_key: str, request: BookingIn) -> HoldResult:
        return self._hold(event_id, customer_id, idempotency_key, request)

    def hold_for_customer(self, event_id: str, customer_id: str, idempotency_key: str, request: BookingIn, *,
                          hold_seconds: int, outbox_type: str, actor: str, extra: dict[str, str] | None = None
                          ) -> HoldResult:
        """A hold made on a customer's behalf (a waitlist offer): the same conditional moves and
        one transaction as ``create_booking``, with its own window and outbox event type. The
        caller's deterministic ``idempotency_key`` makes a repeat return the same booking."""
        return self._hold(event_id, customer_id, idempotency_key, request, hold_seconds=hold_seconds,
                          outbox_type=outbox_type, actor=actor, extra=extra, system_key=True)

    def _hold(self, event_id: str, customer_id: str, idempotency_key: str, request: BookingIn, *,
              hold_seconds: int | None = None, outbox_type: str = "booking.held", actor: str = "customer",
              extra: dict[str, str] | None = None, system_key: bool = False) -> HoldResult:
        event = self._event(event_id)
        kind = kinds.of_event(event)
        wanted = kind.validate(event, request)
        # The address is part of the request: the same key with another address is another request.
        contact = {"contact_email": request.contact_email} if request.contact_email else {}
        fingerprint = _fingerprint({"event_id": event_id, **wanted, **contact})
        ttl = int(hold_seconds if hold_seconds is not None else event["hold_ttl_seconds"])
        # A waitlist offer counts against the customer's holds but is not refused by the cap: the
        # customer queued for exactly this hold.
        limit = None if hold_seconds is not None else hold_limit(event)

        replay = self._replay(customer_id, idempotency_key, fingerprint, system_key)
        if replay is not None:
            return replay
        # Never from the cached event: a cancellation stops sales at once (a repeat of a request
        # made before it is still answered with its booking, above).
        if self.store.event_cancelled(event_id):
            raise EventCancelled(event_id)

        for attempt in range(HOLD_ATTEMPTS):
            try:
                places = kind.plan(self.store, event, wanted, self.rng, attempt)
            except (SoldOut, SeatsUnavailable):
                # A repeat whose original is still in flight may find the places gone because the
                # original took them: look once more before refusing.
                replay = self._replay(customer_id, idempotency_key, fingerprint, system_key)
                if replay is not None:
                    return replay
                raise
            now = self.clock()
            booking = Booking(
                booking_id=str(uuid.uuid4()), event_id=event_id, customer_id=customer_id, status=BookingStatus.HELD,
                places=places,
                amount=kind.price(event, places),
                payment_mode=PaymentMode(event["payment_mode"]),
                hold_expires_at=iso(now + timedelta(seconds=ttl)),
                created_at=iso(now), updated_at=iso(now), version=1, contact_email=request.contact_email,
                counted_hold=True,
            )
            journal = JournalEntry(
                at=iso(now), action="hold_created", actor=actor, from_status=None, to_status="HELD",
                decision=f"{places.quantity} place(s) held until {booking.hold_expires_at}",
                ids={"booking_id": booking.booking_id, "event_id": event_id, "idempotency_key": idempotency_key,
                     **(extra or {})},
            )
            record = IdempotencyRecord(customer_id, idempotency_key, "booking", fingerprint, booking.booking_id,
                                       system=system_key)
            try:
                self.store.create_hold(booking, journal, {"type": outbox_type, "at": iso(now),
                                                          "hold_expires_at": booking.hold_expires_at,
                                                          **(extra or {})}, record, hold_limit=limit)
            except HoldLimitReached:
                raise Conflict(f"You already hold places in {limit} booking(s) for this event; pay for or cancel "
                               "one first.", code="hold_limit_reached", limit=limit) from None
            except DuplicateRequest:
                replay = self._replay(customer_id, idempotency_key, fingerprint, system_key)
                if replay is None:
                    raise RequestInProgress() from None
                return replay
            except PlacesTaken:
                # Someone took these places between our read and our write; read again and re-plan.
                continue
            except TransientStoreError:
                replay = self._replay(customer_id, idempotency_key, fingerprint, system_key)
                if replay is not None:
                    return replay
                if attempt == HOLD_ATTEMPTS - 1:
                    raise RequestInProgress() from None
                time.sleep(self.rng.uniform(0.005, 0.02 * (attempt + 1)))
                continue
            self._schedule(booking)
            return HoldResult(booking, replayed=False)
        raise TooBusy()

    def _replay(self, customer_id: str, key: str, fingerprint: str, system: bool = False) -> HoldResult | None:
        record = self.store.get_idempotency(customer_id, key, "booking", system)
        if record is None:
            return None
        if record["fingerprint"] != fingerprint:
            raise IdempotencyKeyReused()
        booking = self.store.get_booking(record["result_id"])
        if booking is None:  # the record is written with the booking, so this cannot happen
            raise RequestInProgress()
        return HoldResult(booking, replayed=True)

    def _schedule(self, booking: Booking) -> None:
        if self.schedule_expiry is None:
            return
        try:
            self.schedule_expiry(booking.booking_id, booking.hold_expires_at)
        except Exception:  # noqa: BLE001 - the hold stands; the due-hold sweeper expires it instead
            logger.exception("could not start the hold expiry execution", extra={"booking_id": booking.booking_id})

    def _event(self, event_id: str) -> dict[str, Any]:
        cached = self._events.get(event_id)
        now = time.monotonic()
        if cached and now - cached[0] < self._event_cache_seconds:
            return cached[1]
        event = self.store.get_event(event_id)
        if event is None:
            raise NotFound(f"No event {event_id}.", code="event_not_found")
        self._events[event_id] = (now, event)
        return event

    # -------------------------------------------------------------------------------- read/own

    def owned(self, booking_id: str, customer_id: str) -> Booking:
        booking = self.store.get_booking(booking_id)
        if booking is None:
            raise NotFound(f"No booking {booking_id}.", code="booking_not_found")
        if booking.customer_id != customer_id:
            # Same answer as a missing booking would leak existence; 403 is clearer for the owner's
            # support staff and reveals only that the id is taken.
            raise Forbidden("This booking belongs to another customer.")
        return booking

    def view(self, booking_id: str, customer_id: str) -> dict[str, Any]:
        booking, journal = self.store.get_booking_with_journal(booking_id)
        if booking is None:
            raise NotFound(f"No booking {booking_id}.", code="booking_not_found")
        if booking.customer_id != customer_id:
            raise Forbidden("This booking belongs to another customer.")
        # Operators' notes and internal checks stay out of the customer's view (domain/journal.py).
        view = describe(booking) | {"journal": customer_view(journal)}
        if booking.status is BookingStatus.CONFIRMED:
            until = change_refund_until(self.store.get_event(booking.event_id), self.clock())
            if until:   # the start time changed: cancelling now refunds in full
                view["change_refund_until"] = until
        return view

    # ---------------------------------------------------------------------------- release paths

    def cancel(self, booking_id: str, customer_id: str, refund: Callable[[Booking], Booking] | None = None,
               void: Callable[[Booking], Booking] | None = None) -> Booking:
        """The customer gives the places up. Repeating a cancellation returns the booking as it is.
        ``void`` then cancels an open payment at the provider where it can (see PaymentService)."""
        for attempt in range(HOLD_ATTEMPTS):
            booking = self.owned(booking_id, customer_id)
            if booking.status in (BookingStatus.CANCELLED, BookingStatus.REFUND_PENDING, BookingStatus.REFUNDED):
                return booking
            if booking.status is BookingStatus.CONFIRMED and refund is not None:
                try:
                    return refund(booking)
                except (StaleBooking, TransientStoreError):
                    # A second click (or a notification) wrote first, or the store stayed busy:
                    # read again and decide from what stands; a cancellation that won (ours or
                    # the other click's) is answered as done, and its refund is reconciled.
                    pause(attempt, self.rng)
                    continue
            if not booking.holds_places:
                raise Conflict(f"A {booking.status.value} booking cannot be cancelled.", code="not_cancellable",
                               status=booking.status.value)
            if booking.places_secured:
                raise Conflict("The payment is being captured right now; try again in a moment.", code="payment_in_progress")
            try:
                cancelled = transitions.apply(
                    self.store, booking, self.clock(), status=BookingStatus.CANCELLED, actor="customer",
                    action="cancelled_by_customer", decision="places released", move=Move.RELEASE,
                    cancelled_by_customer=True,
                )
            except (StaleBooking, TransientStoreError):
                pause(attempt, self.rng)
                continue
            if void is None or cancelled.payment is None:
                return cancelled
            try:
                return void(cancelled)
            except Exception:  # noqa: BLE001 - the cancellation stands; a later payment is given back anyway
                logger.exception("could not void the payment of a cancelled booking", extra={"booking_id": booking_id})
                return cancelled
        raise Busy()

    def expire(self, booking_id: str) -> dict[str, str]:
        """Timer: end an unpaid hold whose time is up. Anything else is a no-op."""
        for _ in range(HOLD_ATTEMPTS):
            booking = self.store.get_booking(booking_id)
            if booking is None:
                return {"booking_id": booking_id, "outcome": "missing", "hold_expires_at": ""}
            now = self.clock()
            if not booking.holds_places:
                return {"booking_id": booking_id, "outcome": f"noop_{booking.status.value.lower()}",
                        "hold_expires_at": booking.hold_expires_at}
            deadline = parse_iso(booking.hold_expires_at)
            if now < deadline:
                return {"booking_id": booking_id, "outcome": "not_yet", "hold_expires_at": booking.hold_expires_at}
            if booking.places_secured:
                # A capture is in flight for an authorised payment; look again shortly.
                return {"booking_id": booking_id, "outcome": "not_yet", "hold_expires_at": iso(now + timedelta(seconds=60))}
            try:
                transitions.apply(
                    self.store, booking, now, status=BookingStatus.EXPIRED, actor="timer", action="hold_expired",
                    decision="unpaid at the deadline; places released", move=Move.RELEASE,
                )
                return {"booking_id": booking_id, "outcome": "expired", "hold_expires_at": booking.hold_expires_at}
            except StaleBooking:
                continue
        raise TransientStoreError("booking kept changing while expiring it")


def hold_limit(event: dict[str, Any]) -> int:
    return int(event.get("max_holds_per_customer") or DEFAULT_HOLDS_PER_CUSTOMER)


def describe(booking: Booking) -> dict[str, Any]:
    payment = None
    if booking.payment is not None:
        payment = {
            "payment_id": booking.payment.payment_id,
            "status": booking.payment.provider_status or ("unknown" if booking.payment.state != "CREATED" else None),
            "confirmation_url": booking.payment.confirmation_url,
        }
        if booking.payment.refund:
            payment["refund"] = {key: booking.payment.refund.get(key) for key in ("refund_id", "status", "reason")}
    view: dict[str, Any] = {
        "booking_id": booking.booking_id, "event_id": booking.event_id, "status": booking.status.value,
        "places": kinds.of_booking(booking).describe_places(booking.places), "amount": booking.amount.as_dict(),
        "payment_mode": booking.payment_mode.value, "hold_expires_at": booking.hold_expires_at,
        "created_at": booking.created_at, "updated_at": booking.updated_at, "payment": payment,
    }
    if booking.review:
        view["review"] = dict(booking.review)
    if booking.contact_email:
        view["contact_email"] = booking.contact_email
    return view


def pause(attempt: int, rng: random.Random | None = None) -> None:
    """Jittered, growing pause before deciding again after a collision (bounded by the caller's loop)."""
    time.sleep((rng or random).uniform(0, 0.01 * 2 ** min(attempt, 5)))


def _fingerprint(value: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
