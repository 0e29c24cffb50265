"""Holds: take places for a customer atomically, and the booking as its customer sees it; the
release paths (a cancellation, an expiry) are a ``Releases`` (releases.py) the service holds."""
from __future__ import annotations

import hashlib
import json
import random
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable, Sequence

from ..clock import iso
from ..domain.booking import DEFAULT_HOLDS_PER_CUSTOMER, Booking, JournalEntry, PaymentMode
from ..domain.event_changes import change_refund_until
from ..domain import transfers
from ..domain.errors import (
    BookingError,
    Conflict,
    EventCancelled,
    Forbidden,
    IdempotencyKeyReused,
    NotFound,
    RequestInProgress,
    TooBusy,
    TooManyHolds,
)
from ..domain.journal import customer_view
from ..domain.personal_data import places_end
from ..domain.holder_address import address_limit
from ..domain.statuses import BookingStatus
from ..domain.texts import DEFAULT_LANGUAGE
from ..observability import logger
from ..domain.commands import HoldPlaces
from ..domain.offering import Offering
from .. import kinds
from ..ports import (Change, Clock, DuplicateRequest, HoldLimitReached, HoldsFromAddressReached, HoldStore,
                     IdempotencyRecord, PlacesTaken, SalesStopped, StaleBooking, TransientStoreError)
from .booking_views import cancel_terms, describe
from .challenges import Challenges
from .codes import CodeService, apply_code
from . import transitions
from ..domain.codes import InvalidCode, comp_mark, is_code_pool
from ..domain.inventory import Move, Places
from ..domain.money import Money
from .hold_reads import SNAPSHOT_SECONDS, HoldReads, Snapshots
from .releases import BUCKET_WORKERS, HOLD_ATTEMPTS, Releases

OFFERINGS_KEPT = 500

__all__ = ["BookingService", "HoldResult", "hold_limit"]



@dataclass(frozen=True)
class Seen:
    """What a hold attempt looks for besides inventory: its own idempotency record, and a shard
    of the event's sale gate."""

    record_key: dict[str, str]
    gate: dict[str, str]
    fingerprint: str


@dataclass(frozen=True)
class HoldResult:
    booking: Booking
    replayed: bool


class BookingService:
    def __init__(self, store: HoldStore, clock: Clock,
                 schedule_expiry: Callable[[str, str], Any] | None = None,   # (event id, hold_expires_at)
                 rng: random.Random | None = None, event_cache_seconds: float | None = None,
                 snapshot_seconds: float = SNAPSHOT_SECONDS,
                 view_extras: Callable[[Booking], dict[str, Any]] | None = None,
                 codes: CodeService | None = None, payments: Callable[[], Any] | None = None,
                 holds_per_address: int = 0, challenges: Challenges | None = None,
                 address_key: Callable[[str], str | None] | None = None) -> None:
        self.store = store
        #: Whether a hold must carry a solved challenge, and its check (services/challenges.py).
        self.challenges = challenges
        #: The cap on one network address's live holds of an offering that sets none
        #: (``HOLDS_PER_ADDRESS``; 0: none). The offering's ``max_holds_per_address`` overrides it.
        self.holds_per_address = holds_per_address
        #: The stored key of a hold's network address (wiring.holder_address: an HMAC under the
        #: deployment's holder key secret), asked only for a hold of an offering with a cap, so the
        #: secret is read on the first such hold; None: no address is counted (none is ever stored).
        self.address_key = address_key
        #: The payment service, built on first use (a cancel that gives money back): the hold path
        #: never loads it. Its ``cancel_confirmed`` and ``void_after_cancel`` follow a customer's cancel.
        self.payments = payments
        #: The offerings' discount and access codes a hold may name (services/codes.py).
        self.codes = codes
        #: More of a booking's view its kind adds with a credential (a parking entry token).
        self.view_extras = view_extras
        self.clock = clock
        self.schedule_expiry = schedule_expiry
        self.rng = rng or random.Random()
        self._events: dict[str, tuple[float, Offering]] = {}
        self._event_cache_seconds = event_cache_seconds
        self._snapshots = Snapshots(snapshot_seconds)
        self.releases = Releases(store, clock, self.rng, self._snapshots, self.owned)

    # ----------------------------------------------------------------------------------- release

    def cancel(self, booking_id: str, customer_id: str, refund: Callable[[Booking], Booking] | None = None,
               void: Callable[[Booking], Booking] | None = None) -> Booking:
        """The customer gives the places up (Releases.cancel). Without ``refund`` and ``void``, the
        payment service's (``payments``): a confirmed booking's money back, an open payment voided."""
        if refund is None and void is None and self.payments is not None:
            refund, void = self._refund_on_cancel, self._void_on_cancel
        return self.releases.cancel(booking_id, customer_id, refund, void)

    def _refund_on_cancel(self, booking: Booking) -> Booking:
        assert self.payments is not None
        return self.payments().cancel_confirmed(booking)

    def _void_on_cancel(self, booking: Booking) -> Booking:
        assert self.payments is not None
        return self.payments().void_after_cancel(booking)

    def expire(self, booking_id: str) -> dict[str, str]:
        """Timer: end an unpaid hold whose time is up (Releases.expire)."""
        return self.releases.expire(booking_id)

    def expire_bucket(self, bucket: str, event_id: str | None = None, workers: int = BUCKET_WORKERS,
                      indexed: bool = False) -> dict[str, Any]:
        """Timer of an expiry bucket: every unpaid hold of it (Releases.expire_bucket)."""
        return self.releases.expire_bucket(bucket, event_id, workers, indexed=indexed)

    # ------------------------------------------------------------------------------------ create

    def create_booking(self, event_id: str, customer_id: str, idempotency_key: str, request: HoldPlaces | Any
                       ) -> HoldResult:
        """Hold places for a customer. ``request`` is a ``HoldPlaces`` command (an API model is
        still converted here, for callers that have not moved over)."""
        return self._hold(event_id, customer_id, idempotency_key, HoldPlaces.of(request))

    def hold_for_customer(self, event_id: str, customer_id: str, idempotency_key: str, request: HoldPlaces, *,
                          hold_seconds: int, outbox_type: str, actor: str, extra: dict[str, str] | None = None
                          ) -> HoldResult:
        """A hold made on a customer's behalf (a waitlist offer): the same conditional moves and
        one transaction as ``create_booking``, with its own window and outbox event type. The
        caller's deterministic ``idempotency_key`` makes a repeat return the same booking."""
        return self._hold(event_id, customer_id, idempotency_key, HoldPlaces.of(request), hold_seconds=hold_seconds,
                          outbox_type=outbox_type, actor=actor, extra=extra, system_key=True)

    def planning_reads(self, fresh: bool) -> HoldReads:
        """What another hold path (an order's lines) plans through: this container's availability
        snapshots and one ``BatchGetItem`` when they are old (services/hold_reads.py); ``fresh``
        after a collision. What it took goes back with ``took``; a collision drops with ``forget``."""
        return HoldReads(self.store, self._snapshots, [], fresh=fresh)

    def took(self, event_id: str, places: Places) -> None:
        self._snapshots.took(event_id, places)

    def forget(self, event_id: str) -> None:
        self._snapshots.drop(event_id)

    def _hold(self, event_id: str, customer_id: str, idempotency_key: str, request: HoldPlaces, *,
              hold_seconds: int | None = None, outbox_type: str = "booking.held", actor: str = "customer",
              extra: dict[str, str] | None = None, system_key: bool = False) -> HoldResult:
        """At most one read, the transaction and at most one call that schedules the expiry on
        the normal path (services/hold_reads.py says which read and why)."""
        event = self._event(event_id)
        kind = kinds.of_event(event)
        wanted = kind.validate(event, request)
        # The address is part of the request: the same key with another address is another request.
        contact = {"contact_email": request.contact_email} if request.contact_email else {}
        named = request.details.get("code")
        asked_code = {"code": str(named).strip().upper()} if named else {}
        fingerprint = _fingerprint({"event_id": event_id, **wanted, **contact, **asked_code})
        ttl = int(hold_seconds if hold_seconds is not None else event.hold_ttl_seconds)
        # A waitlist offer is a hold like any other for the cap: joining a line is no way round it.
        limit = hold_limit(event)
        # and for the cap per network address, which a new account does not reset (a hold the
        # system makes for a customer comes from no address and is not counted toward one)
        address_key = self.counted_address([event], request.holder_address)
        address_cap = self.address_cap(event) if address_key else None
        seen = Seen(self.store.idempotency_key(customer_id, idempotency_key, "booking", system_key),
                    self.store.sale_gate_key(event_id, self.rng), fingerprint)

        if not system_key:
            replay = self.challenge([event], request.captcha_token,
                                    lambda: self._replay(customer_id, idempotency_key, fingerprint, system_key))
            if replay is not None:
                return replay

        code = None
        if named:
            if self.codes is None:
                raise InvalidCode()
            code = self.codes.code_for(event_id, event.currency, named, customer_id)

        for attempt in range(HOLD_ATTEMPTS):
            # A hold the system makes for a customer (a waitlist offer of places just released)
            # never plans from a snapshot.
            reads = HoldReads(self.store, self._snapshots, [seen.record_key, seen.gate],
                              fresh=attempt > 0 or hold_seconds is not None)
            try:
                if event_id in self._snapshots.cancelled:
                    raise EventCancelled(event_id)
                kind.check_time(event, wanted, self.clock())
                places = kind.plan(reads, event, wanted, self.rng, attempt, now=self.clock())
            except BookingError:
                if reads.planned_on_old:   # refused on an older snapshot: only a fresh read may refuse
                    continue
                # A repeat is answered from its first result even when the places are gone now
                # (perhaps to that very request), the event was cancelled meanwhile or the time
                # has begun; a cancelled event says so rather than "sold out".
                replay = self._seen_replay(reads, seen)
                if replay is not None:
                    return replay
                gate = reads.extra(seen.gate) or {}
                if "cancelled_at" in gate:
                    self._snapshots.cancelled.add(event_id)
                    raise EventCancelled(event_id) from None
                if int(gate.get("terms_version") or 0) > event.version:
                    # refused on terms the organizer has changed since (a start moved later):
                    # the shard read with the refusal says so; decide again on the offering as it is
                    event = self._event(event_id, fresh=True)
                    continue
                raise
            if reads.extras_read():   # the kind's read brought them: a repeat needs no transaction
                replay = self._seen_replay(reads, seen)
                if replay is not None:
                    return replay
            now = self.clock()
            amount = kind.hold_price(event, places, wanted)
            details = kind.booking_details(event, wanted, places)
            counted = places
            # The code's uses are claims of this very transaction; the places alone are what
            # this container's snapshot took.
            places, amount, details = apply_code(event, wanted, places, amount, details, code, customer_id)
            places = self.comped(event_id, places, amount)
            booking = Booking(
                booking_id=str(uuid.uuid4()), event_id=event_id, customer_id=customer_id, status=BookingStatus.HELD,
                places=places,
                amount=amount,
                payment_mode=PaymentMode(event.payment_mode),
                hold_expires_at=iso(now + timedelta(seconds=ttl)),
                created_at=iso(now), updated_at=iso(now), version=1, contact_email=request.contact_email,
                contact_own=request.contact_own and bool(request.contact_email),
                language=request.language,
                counted_hold=True, kind_details=details,
                counted_address=address_key,
                ends_at=places_end(places, event.starts_at),
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
                self.store.commit(Change(after=booking, journal=journal, outbox={
                    "type": outbox_type, "at": iso(now), "hold_expires_at": booking.hold_expires_at, **(extra or {}),
                    **comp_mark(booking)}, idempotency=record, hold_limit=limit, offering_version=event.version,
                    address_limit=address_cap))
            except HoldLimitReached:
                raise Conflict(f"You already hold places in {limit} booking(s) for this event; pay for or cancel "
                               "one first.", code="hold_limit_reached", limit=limit) from None
            except HoldsFromAddressReached:
                # (a repeat of a request that held fails on its idempotency record first: a replay)
                raise TooManyHolds(address_cap or 0, ttl) from None
            except DuplicateRequest:
                replay = self._replay(customer_id, idempotency_key, fingerprint, system_key)
                if replay is None:
                    raise RequestInProgress() from None
                return replay
            except SalesStopped:
                fresh = self._event(event_id, fresh=True)
                if fresh.version > event.version:
                    # the organizer changed what a hold decides on (its start) since this copy was
                    # read: decide again on the offering as it is now
                    event = fresh
                    continue
                self._snapshots.cancelled.add(event_id)
                replay = self._replay(customer_id, idempotency_key, fingerprint, system_key)
                if replay is not None:
                    return replay
                raise EventCancelled(event_id) from None
            except PlacesTaken as taken:
                if any(is_code_pool(label) for label in taken.failed):
                    raise InvalidCode() from None   # the code is used up (or the customer's share of it)
                # The places went between our read (or our snapshot) and our write: plan again
                # from a fresh read.
                self._snapshots.drop(event_id)
                continue
            except TransientStoreError:
                replay = self._replay(customer_id, idempotency_key, fingerprint, system_key)
                if replay is not None:
                    return replay
                if attempt == HOLD_ATTEMPTS - 1:
                    raise RequestInProgress() from None
                time.sleep(self.rng.uniform(0.005, 0.02 * (attempt + 1)))
                continue
            self._snapshots.took(event_id, counted)
            if booking.amount.is_zero:
                return HoldResult(self.confirm_comp(booking, actor), replayed=False)
            self._schedule(booking)
            return HoldResult(booking, replayed=False)
        raise TooBusy()

    # ------------------------------------------------------------------------------------ comps

    def comped(self, offering_id: str, places: Places, amount: Money) -> Places:
        """The places with their offering's comps counted among their claims when they cost
        nothing (domain/codes.py ``COMPS_POOL``), so a comp is counted in the hold's own write."""
        if not amount.is_zero:
            return places
        if self.codes is None:
            raise InvalidCode()   # only a code (or the organizer, through an order) makes a comp
        return self.codes.comped(offering_id, places)

    def confirm_comp(self, booking: Booking, actor: str = "customer") -> Booking:
        """A hold that costs nothing (a comp: a 100 % code, an organizer's order) is confirmed at
        once without a payment: its places and comps count sold, its tickets and the confirmation
        message follow from CONFIRMED as a paid booking's do. A hold left HELD by a crash between
        its write and this one is confirmed by the request's repeat (``_comp_replay``) or lapses
        like any hold."""
        def confirm(current: Booking) -> Booking:
            if current.status is not BookingStatus.HELD or not current.amount.is_zero:
                return current
            return transitions.apply(self.store, current, self.clock(), status=BookingStatus.CONFIRMED, actor=actor,
                                     action="comp_confirmed", decision="nothing to pay; confirmed without a payment",
                                     move=Move.SELL)

        def unsure() -> Booking:
            self._schedule(booking)   # not confirmed now: it lapses like any unpaid hold
            return self.store.get_booking(booking.booking_id) or booking

        return transitions.decide_again(lambda: self.store.get_booking(booking.booking_id), confirm,
                                        attempts=HOLD_ATTEMPTS, first=booking, exhausted=unsure, gone=unsure,
                                        retry_on=(StaleBooking, TransientStoreError))

    def _comp_replay(self, result: HoldResult | None) -> HoldResult | None:
        """A repeated request answered from its first result: a comp its first try left HELD is
        confirmed now."""
        if result is not None and result.booking.status is BookingStatus.HELD and result.booking.amount.is_zero:
            return HoldResult(self.confirm_comp(result.booking), replayed=True)
        return result

    def _seen_replay(self, reads: HoldReads, seen: "Seen") -> HoldResult | None:
        record = reads.extra(seen.record_key)
        if record is None:
            return None
        if record["fingerprint"] != seen.fingerprint:
            raise IdempotencyKeyReused()
        booking = self.store.get_booking(record["result_id"])
        if booking is None:  # the record is written with the booking, so this cannot happen
            raise RequestInProgress()
        return self._comp_replay(HoldResult(booking, replayed=True))

    def _replay(self, customer_id: str, key: str, fingerprint: str, system: bool = False) -> HoldResult | None:
        record = self.store.get_idempotency(customer_id, key, "booking", system)
        if record is None:
            return None
        if record["fingerprint"] != fingerprint:
            raise IdempotencyKeyReused()
        booking = self.store.get_booking(record["result_id"])
        if booking is None:  # the record is written with the booking, so this cannot happen
            raise RequestInProgress()
        return self._comp_replay(HoldResult(booking, replayed=True))

    def schedule(self, booking: Booking) -> None:
        """Start the expiry of a hold written elsewhere (an order: products/orders)."""
        self._schedule(booking)

    def offering(self, event_id: str, fresh: bool = False) -> Offering:
        """The offering as a hold reads it (cached like the hold path's own read; ``fresh`` reads it
        again, after a gate refused a hold decided on an older copy of its terms)."""
        return self._event(event_id, fresh=fresh)

    def _schedule(self, booking: Booking) -> None:
        if self.schedule_expiry is None:
            return
        try:
            self.schedule_expiry(booking.event_id, booking.hold_expires_at)
        except Exception:  # noqa: BLE001 - the hold stands; the due-hold sweeper expires it instead
            logger.exception("could not start the hold's expiry bucket", extra={"booking_id": booking.booking_id})

    def _event(self, event_id: str, fresh: bool = False) -> Offering:
        """The offering as a hold needs it, kept by the container. What a hold reads of it that an
        organizer may change (its start: domain/offering.py ``HOLD_TERMS``) is not trusted from
        here: the hold's transaction checks the copy's version at the sale gate, as it checks the
        cancellation, and a refused hold reads it again (``fresh``)."""
        cached = self._events.get(event_id)
        now = time.monotonic()
        if cached and not fresh and (self._event_cache_seconds is None or now - cached[0] < self._event_cache_seconds):
            return cached[1]
        # refused at the sale gate: read what refused it (a strongly consistent read, rare)
        item = self.store.get_event(event_id, consistent=True) if fresh else self.store.get_event(event_id)
        if item is None:
            raise NotFound(f"No event {event_id}.", code="event_not_found")
        event = kinds.offering(item)
        if len(self._events) >= OFFERINGS_KEPT:
            self._events.clear()
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

    def view(self, booking_id: str, customer_id: str, language: str = DEFAULT_LANGUAGE) -> dict[str, Any]:
        booking, journal = self.store.get_booking_with_journal(booking_id)
        if booking is None:
            raise NotFound(f"No booking {booking_id}.", code="booking_not_found")
        if booking.customer_id != customer_id:
            raise Forbidden("This booking belongs to another customer.")
        # Operators' notes and internal checks stay out of the customer's view (domain/journal.py).
        view = describe(booking, language) | {"journal": customer_view(journal)}
        if self.view_extras is not None:
            view |= self.view_extras(booking)
        if booking.status is BookingStatus.CONFIRMED:
            event = self.store.get_event(booking.event_id)
            until = change_refund_until(event, self.clock())
            if until:   # the start time changed: cancelling now refunds in full
                view["change_refund_until"] = until
            view |= cancel_terms(booking, event, self.clock(), language)
            view |= transfers.view(booking, self.clock())
        return view


    def challenge(self, offerings: list[Any], token: str | None, replay: Callable[[], Any]) -> Any:
        """A hold of ``offerings`` that must carry a solved challenge: checked, or refused. A repeat
        of a request that held is answered from its first result (``replay``: a token is good once)."""
        if self.challenges is None or not self.challenges.required(offerings):
            return None
        try:
            self.challenges.check(token)
        except BookingError:
            found = replay()
            if found is not None:
                return found
            raise
        return None

    def challenge_view(self, offering: Offering | dict[str, Any]) -> dict[str, Any]:
        """What an offering's view says of challenges, by the rule ``challenge`` applies."""
        return self.challenges.view(offering) if self.challenges is not None else {}

    def address_cap(self, event: Offering | dict[str, Any]) -> int | None:
        """The cap on one network address's live holds of ``event`` (domain/holder_address.py)."""
        return address_limit(event.get("max_holds_per_address"), self.holds_per_address)

    def counted_address(self, offerings: Sequence[Offering | dict[str, Any]], address: str | None) -> str | None:
        """The stored key a hold of ``offerings`` from the network ``address`` counts under, or None
        when it is not counted: no address (a hold the system makes), none of the offerings capped,
        or no key (no keyer, or something that is no address). The key is made only when some
        offering is capped: the holder key secret is read on the first such hold, never before."""
        if not address or self.address_key is None or not any(self.address_cap(o) for o in offerings):
            return None
        return self.address_key(address)


def hold_limit(event: Offering | dict[str, Any]) -> int:
    return int(event.get("max_holds_per_customer") or DEFAULT_HOLDS_PER_CUSTOMER)


def _fingerprint(value: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
