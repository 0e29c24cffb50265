"""The one way a booking changes: a new version, its journal entry and outbox event, the places
moved, all written in one conditional transaction (see BookingStore.save)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..adapters.dynamo import BookingStore
from ..clock import iso
from ..domain.booking import Booking, JournalEntry, check_transition
from ..domain.inventory import Move, Places
from ..domain.statuses import BookingStatus

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


def apply(store: BookingStore, booking: Booking, now, *, status: BookingStatus | None = None, actor: str,
          action: str, decision: str, ids: dict[str, str] | None = None, move: Move | None = None,
          places: Places | None = None, **changes: Any) -> Booking:
    """Save ``booking`` moved to ``status`` (or kept in its status, for a journalled change).

    Raises StaleBooking when someone else wrote the booking first, and PlacesTaken when the
    inventory move's condition failed; nothing is written in either case.
    """
    target = status or booking.status
    check_transition(booking, target, move)
    at = iso(now)
    after = replace(booking, status=target, version=booking.version + 1, updated_at=at, **changes)
    if places is not None:
        after = replace(after, places=places)
    entry = JournalEntry(
        at=at, action=action, actor=actor, from_status=booking.status.value, to_status=target.value,
        decision=decision, ids={"booking_id": booking.booking_id, **(ids or {})},
    )
    outbox = None
    if target != booking.status and target in NOTIFIED:
        outbox = {"type": NOTIFIED[target], "at": at, "reason": decision}
    store.save(booking, after, entry, outbox=outbox, move=move, places=places)
    return after
