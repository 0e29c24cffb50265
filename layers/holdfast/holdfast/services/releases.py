"""Release paths of a hold: the customer cancels, or the timer expires it.

Both end a booking that holds places through the same status table and move
(``transitions.apply`` with ``Move.RELEASE``), and decide again from a fresh read after every
collision. ``BookingService`` (services/bookings.py, where holds are made) builds one ``Releases``
on its own store, clock, jitter, availability snapshots and ownership check, and answers
``cancel``, ``expire`` and ``expire_bucket`` through it.
"""
from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable

from ..clock import EARLY_WAKE_SECONDS, iso, parse_iso
from ..domain.booking import Booking, HoldVerdict, judge_hold
from ..domain.errors import Busy, Conflict
from ..domain.lifecycle import given_up_into_kind_state
from ..domain.inventory import Move
from ..domain.statuses import BookingStatus
from ..observability import logger
from ..ports import Clock, HoldStore, StaleBooking, TransientStoreError
from . import transitions

if TYPE_CHECKING:  # pragma: no cover
    from .hold_reads import Snapshots

#: Decisions a release (and a hold) makes again after a collision before answering "busy".
HOLD_ATTEMPTS = 6
#: Holds of one bucket expired at once by its task (each one GetItem and one transaction): 15,000
#: holds (a 5 s bucket at 3,000/s) take ~6 s at ~12 ms each.
BUCKET_WORKERS = 32


class Releases:
    def __init__(self, store: HoldStore, clock: Clock, rng: random.Random, snapshots: "Snapshots",
                 owned: Callable[[str, str], Booking]) -> None:
        self.store = store
        self.clock = clock
        self.rng = rng
        #: The holding service's cached availability: what a release frees this container sells again at once.
        self.snapshots = snapshots
        #: The booking as its customer may act on it (BookingService.owned: NotFound, Forbidden).
        self.owned = owned

    def cancel(self, booking_id: str, customer_id: str, refund: Callable[[Booking], Booking] | None = None,
               void: Callable[[Booking], Booking] | None = None) -> Booking:
        """The customer gives the places up. Repeating a cancellation returns the booking as it is.
        ``void`` then cancels an open payment at the provider where it can (see PaymentService)."""
        def give_up(booking: Booking) -> Booking:
            if booking.status in (BookingStatus.CANCELLED, BookingStatus.REFUND_PENDING, BookingStatus.REFUNDED) \
                    or given_up_into_kind_state(booking):
                return booking
            if booking.status is BookingStatus.CONFIRMED and _admitted(booking):
                raise Conflict("Someone already came in on this booking; it can no longer be cancelled.",
                               code="checked_in")
            if booking.status is BookingStatus.CONFIRMED and refund is not None:
                return refund(booking)
            if not booking.holds_places:
                raise Conflict(f"A {booking.status.value} booking cannot be cancelled.", code="not_cancellable",
                               status=booking.status.value)
            if booking.places_secured:
                raise Conflict("The payment is being captured right now; try again in a moment.", code="payment_in_progress")
            cancelled = transitions.apply(
                self.store, booking, self.clock(), status=BookingStatus.CANCELLED, actor="customer",
                action="cancelled_by_customer", decision="places released", move=Move.RELEASE,
                cancelled_by_customer=True,
            )
            self.snapshots.drop(booking.event_id)   # what this container released it sells again at once
            if void is None or cancelled.payment is None:
                return cancelled
            try:
                return void(cancelled)
            except Exception:  # noqa: BLE001 - the cancellation stands; a later payment is given back anyway
                logger.exception("could not void the payment of a cancelled booking", extra={"booking_id": booking_id})
                return cancelled

        # A second click (or a notification) wrote first, or the store stayed busy: read again and
        # decide from what stands; a cancellation that won (ours or the other click's) is answered
        # as done, and its refund is reconciled.
        return transitions.decide_again(
            lambda: self.owned(booking_id, customer_id), give_up, attempts=HOLD_ATTEMPTS, exhausted=Busy(),
            retry_on=(StaleBooking, TransientStoreError), pause=lambda attempt: pause(attempt, self.rng))

    def expire(self, booking_id: str) -> dict[str, str]:
        """Timer: end an unpaid hold whose time is up. Anything else is a no-op."""
        def end(booking: Booking) -> dict[str, str]:
            now = self.clock()
            verdict = judge_hold(booking, now)
            if verdict is HoldVerdict.NOOP:
                return {"booking_id": booking_id, "outcome": f"noop_{booking.status.value.lower()}",
                        "hold_expires_at": booking.hold_expires_at}
            if verdict is HoldVerdict.NOT_YET:
                return {"booking_id": booking_id, "outcome": "not_yet", "hold_expires_at": booking.hold_expires_at}
            if verdict is HoldVerdict.CAPTURE_IN_FLIGHT:
                # A capture is in flight for an authorised payment; look again shortly.
                return {"booking_id": booking_id, "outcome": "not_yet", "hold_expires_at": iso(now + timedelta(seconds=60))}
            transitions.apply(
                self.store, booking, now, status=BookingStatus.EXPIRED, actor="timer", action="hold_expired",
                decision="unpaid at the deadline; places released", move=Move.RELEASE,
            )
            self.snapshots.drop(booking.event_id)
            return {"booking_id": booking_id, "outcome": "expired", "hold_expires_at": booking.hold_expires_at}

        return transitions.decide_again(
            lambda: self.store.get_booking(booking_id), end, attempts=HOLD_ATTEMPTS,
            gone=lambda: {"booking_id": booking_id, "outcome": "missing", "hold_expires_at": ""},
            exhausted=TransientStoreError("booking kept changing while expiring it"))


    def expire_bucket(self, bucket: str, event_id: str | None = None, workers: int = BUCKET_WORKERS,
                      wait_up_to: float = EARLY_WAKE_SECONDS, indexed: bool = False) -> dict[str, Any]:
        """Timer of an expiry bucket (adapters/expiry_buckets.py): every unpaid hold of the bucket,
        whatever its offering (only ``event_id``'s, for an execution started before the buckets were
        shared), is expired, each on its own (``expire`` above, so a paid or cancelled one is left
        alone). A bucket's end at most ``wait_up_to`` seconds ahead of this clock is waited out
        here; ``not_yet`` while it is further ahead; a hold whose capture is in flight is left to
        the sweeper. ``indexed`` (the tick's input says its buckets' shard markers are written):
        only the shards the markers name are read."""
        ahead = (parse_iso(bucket) - self.clock()).total_seconds()
        if 0 < ahead <= wait_up_to:
            time.sleep(ahead + 0.01)
            ahead = (parse_iso(bucket) - self.clock()).total_seconds()
        if ahead > 0:
            return {"event_id": event_id or "", "bucket": bucket, "outcome": "not_yet", "wait_seconds": ahead}
        booking_ids = self.store.bucket_booking_ids(bucket, event_id, indexed=indexed)
        outcomes: dict[str, int] = {}
        failed = 0
        if len(booking_ids) <= workers:   # a quiet bucket needs no threads
            results = [self._expire_isolated(booking_id) for booking_id in booking_ids]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                results = list(pool.map(self._expire_isolated, booking_ids))
        for result in results:
            if result is None:
                failed += 1
            else:
                outcomes[result] = outcomes.get(result, 0) + 1
        if failed:   # retried by the state machine; what was expired stays expired, a repeat is a no-op
            raise TransientStoreError(f"{failed} of {len(booking_ids)} holds of {bucket} could not be expired")
        return {"event_id": event_id or "", "bucket": bucket, "outcome": "done", "holds": len(booking_ids),
                "expired": outcomes.get("expired", 0)}

    def _expire_isolated(self, booking_id: str) -> str | None:
        try:
            return self.expire(booking_id)["outcome"]
        except Exception:  # noqa: BLE001 - one hold must not stop its bucket; reported as failed
            logger.exception("could not expire a hold of its bucket", extra={"booking_id": booking_id})
            return None


def pause(attempt: int, rng: random.Random | None = None) -> None:
    """Jittered, growing pause before deciding again after a collision (bounded by the caller's loop)."""
    time.sleep((rng or random).uniform(0, 0.01 * 2 ** min(attempt, 5)))


def _admitted(booking: Booking) -> int:
    """Holders of the booking already let in (the kind counts them: an event's tickets at its doors)."""
    from .. import kinds

    return kinds.of_booking(booking).admitted(booking)
