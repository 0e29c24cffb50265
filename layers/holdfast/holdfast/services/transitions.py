"""The one way a booking changes: a new version, its journal entry and outbox event, the places
moved, all written in one conditional transaction (see BookingStore.save); and the one way a
writer that lost the version race reads again and decides again (``decide_again``)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, TypeVar

from ..clock import iso
from ..domain import lifecycle
from ..domain.booking import Booking, IllegalTransition, JournalEntry, check_transition, implied_move
from ..domain.claims import offerings_of
from ..domain.inventory import Move, Places, Swap, without
from ..domain.review_steps import line_refund_review
from ..domain.statuses import BookingStatus
from ..ports import BookingSaves, Change, StaleBooking

#: Status changes that customers hear about; each becomes an outbox event.
NOTIFIED = {
    BookingStatus.HELD: "booking.held",
    BookingStatus.CONFIRMED: "booking.confirmed",
    BookingStatus.EXPIRED: "booking.expired",
    BookingStatus.CANCELLED: "booking.cancelled",
    BookingStatus.PAYMENT_FAILED: "booking.payment_failed",
    BookingStatus.REFUND_PENDING: "booking.refund_pending",
    BookingStatus.REFUNDED: "booking.refunded",
    BookingStatus.MANUAL_REVIEW: "booking.manual_review",
}

R = TypeVar("R")
T = TypeVar("T")


def apply(store: BookingSaves, booking: Booking, now, *, status: BookingStatus | None = None, actor: str,
          action: str, decision: str, ids: dict[str, str] | None = None, move: Move | None = None,
          places: Places | None = None, extra: list | None = None, notice: dict[str, Any] | None = None,
          publish: str | None = None, swap: Swap | None = None, offering_version: int | None = None,
          release: Places | None = None, **changes: Any) -> Booking:
    """Save ``booking`` moved to ``status`` (or kept in its status, for a journalled change).
    ``notice``: what the customer's message says besides the booking (a parking exit's receipt),
    carried in the outbox event. ``publish``: the outbox event of a change that keeps the status
    (a ticket checked in), a fact for the organizer's systems (webhooks), not a customer's message.
    Without either, a write that opens the review of an order line's refused refund publishes
    ``booking.manual_review``: the customer's message a whole booking's refused refund gets.
    ``swap``: places given back and others taken in the same write (an exchange), through the
    taken offering's sale gate at ``offering_version``; ``places`` is then what the booking keeps.
    ``release``: a part of a sold booking's places given back while it keeps its status (an order's
    line refunded or ended on its own, ``apply_part``): moved sold -> available in this write, the
    booking keeping the rest.

    Raises StaleBooking when someone else wrote the booking first, PlacesTaken when the
    inventory move's condition failed, and SalesStopped when a move that takes places again
    (HOLD or RETAKE) meets the closed sale gate of a cancelled event; nothing is written then.
    """
    target = status or booking.status
    check_transition(booking, target, move)
    at = iso(now)
    after = replace(booking, status=target, version=booking.version + 1, updated_at=at, **changes)
    if places is not None:
        after = replace(after, places=places)
    if release is not None:
        if move is not None or places is not None or swap is not None or target is not booking.status \
                or not lifecycle.occupies(str(target)):
            raise ValueError("a release gives back part of a sold booking's places, and moves nothing else")
        after = replace(after, places=without(booking.places, release))
        move, places = Move.UNSELL, release
    if target is BookingStatus.CONFIRMED and booking.status is not BookingStatus.CONFIRMED:
        after = after.confirmed(now)
    opened = False
    if after.review is None and after.refused_line_refunds:
        # a line's refund refused for good stays an operator's case until one settles it (O6),
        # whatever else this write decides about the booking
        after = replace(after, review=line_refund_review(str(after.refused_line_refunds[0].get("rejected_code"))))
        # the write that opens it tells the customer, as a whole booking's refused refund does by
        # its move to MANUAL_REVIEW (the order stays CONFIRMED: no status change tells them)
        opened = (booking.review or {}).get("reason") != after.review["reason"]
    entry = JournalEntry(
        at=at, action=action, actor=actor, from_status=booking.status.value, to_status=target.value,
        decision=decision, ids={"booking_id": booking.booking_id, **(ids or {})},
    )
    outbox = None
    notify = NOTIFIED.get(target) or getattr(lifecycle.declared(target), "notify", None)
    if target != booking.status and notify:
        outbox = {"type": notify, "at": at, "reason": decision, **(notice or {})}
    elif publish:
        outbox = {"type": publish, "at": at, "reason": decision, **(notice or {})}
    elif opened:
        outbox = {"type": NOTIFIED[BookingStatus.MANUAL_REVIEW], "at": at, "reason": decision, **(notice or {})}
    store.commit(Change(before=booking, after=after, journal=entry, outbox=outbox, move=move, places=places,
                        items=tuple(extra or ()), swap=swap, offering_version=offering_version))
    return after


def advance(store: BookingSaves, booking: Booking, now, target: str, *, actor: str, action: str,
            decision: str, ids: dict[str, str] | None = None, extra: list | None = None,
            notice: dict[str, Any] | None = None, **changes: Any) -> Booking:
    """Move a booking into a state its inventory kind declared (domain/lifecycle.py), if the kind
    lets ``actor`` do so from the booking's status; its places follow the state (kept sold, or
    released). Same version check, journal and outbox as every other change."""
    if not lifecycle.allows(str(booking.places.kind), booking.status, target, actor):
        raise IllegalTransition(booking.status, target, f" by {actor}")
    status = lifecycle.status_of(str(target))
    return apply(store, booking, now, status=status, actor=actor, action=action, decision=decision, ids=ids,
                 move=implied_move(booking.status, status), extra=extra, notice=notice, **changes)


def advance_part(store: BookingSaves, booking: Booking, part: Booking, now, target: str, *, actor: str,
                 action: str, decision: str, ids: dict[str, str] | None = None, extra: list | None = None,
                 notice: dict[str, Any] | None = None) -> Booking:
    """``advance`` for one offering's part of a booking (kinds/base.py ``part``): the booking
    itself is advanced; an order's line enters the state on its own, as its kind lets ``actor``
    move it, while the order stays as it is; a line whose new state gives its places back gives
    them back in the same write (``apply_part``)."""
    if part is booking:
        return advance(store, booking, now, target, actor=actor, action=action, decision=decision, ids=ids,
                       extra=extra, notice=notice)
    if not lifecycle.allows(str(part.places.kind), part.status, target, actor):
        raise IllegalTransition(part.status, target, f" by {actor}")
    return apply_part(store, booking, replace(part, status=lifecycle.status_of(str(target))), now, actor=actor,
                      action=action, decision=f"{part.event_id}: {decision}", ids=ids, extra=extra)


def apply_part(store: BookingSaves, booking: Booking, part: Booking, now, **kwargs: Any) -> Booking:
    """Save ``booking`` with one offering's ``part`` of it changed (kinds/base.py ``with_part``:
    an order's line in a state of its own), keeping the booking's status. A part that no longer
    keeps its places sold (a line refunded, its car gone, a no-show) gives them back in the same
    write (``release``); the booking keeps the others'. ``kwargs`` as ``apply`` takes them."""
    from .. import kinds

    moved = kinds.of_booking(booking).with_part(booking, part)
    released = without(booking.places, moved.places)
    claims = released.pools or released.units or released.granules
    return apply(store, booking, now, kind_details=moved.kind_details, release=released if claims else None,
                 **kwargs)


def offering_cancelled(store: Any, booking: Booking) -> bool:
    """Whether an offering the booking takes places of was cancelled: its own, or any line's of an
    order (a strongly consistent look at each one's flag, ``EventReads.event_cancelled``)."""
    return any(store.event_cancelled(offering) for offering in offerings_of(booking.event_id, booking.places))


def decide_again(read: Callable[[], R | None], decide: Callable[[R], T], *, attempts: int,
                 exhausted: BaseException | Callable[[], T], gone: BaseException | Callable[[], T] | None = None,
                 first: R | None = None, retry_on: tuple[type[BaseException], ...] = (StaleBooking,),
                 pause: Callable[[int], None] | None = None) -> T:
    """Decide on a record as it stands and carry the decision out; when someone else wrote first
    (``retry_on``, StaleBooking by default: nothing of ours was written), read it again and decide
    again, at most ``attempts`` times. The one place the read-decide-retry loop is written.

    ``decide`` takes the record and returns the answer; "nothing to do" is just an answer it gives.
    ``first`` is a copy the caller already holds: the first decision is made on it without a read.
    ``gone`` is what a read that finds nothing answers; without it ``decide`` is handed ``None``
    too (a gate pass not recorded yet is the usual case, not a vanished one).
    ``exhausted`` is the answer once every attempt collided. For both, an exception is raised and
    a callable is called. ``pause(attempt)`` runs after each collision (the attempt's index).
    """
    current = first
    for attempt in range(attempts):
        if attempt or current is None:
            current = read()
        if current is None and gone is not None:
            return _answer(gone)
        try:
            return decide(current)  # type: ignore[arg-type]  # None only when gone is not given
        except retry_on:
            if pause is not None:
                pause(attempt)
    return _answer(exhausted)


def _answer(outcome: BaseException | Callable[[], T]) -> T:
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome()
