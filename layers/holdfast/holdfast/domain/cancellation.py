"""What an event's cancellation has done so far, read from its bookings alone (pure).

Counting the bookings themselves, rather than counters the job keeps, means the progress cannot
drift from the truth however often a step is retried, a page listed twice or an execution restarted.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from .booking import Booking
from .statuses import HOLDING, BookingStatus

#: Where a booking of a cancelled event may still need the job: it holds or sold places, or its
#: money is on its way back.
OPEN = frozenset(HOLDING | {BookingStatus.CONFIRMED, BookingStatus.REFUND_PENDING})
FAILURE_SAMPLES = 50


def tally(bookings: Iterable[Booking]) -> dict[str, Any]:
    counts = Counter()
    failures: list[dict[str, str]] = []
    reasons: Counter[str] = Counter()
    for booking in bookings:
        counts["bookings"] += 1
        status = booking.status
        paid = booking.payment is not None and (booking.payment.paid_at or booking.payment.refund)
        if status in HOLDING:
            counts["holds_open"] += 1
        elif status is BookingStatus.CANCELLED and booking.event_cancelled:
            counts["holds_released"] += 1
        elif status is BookingStatus.CONFIRMED:
            counts["to_refund"] += 1
        elif status is BookingStatus.REFUND_PENDING:
            counts["refunding"] += 1
        elif status is BookingStatus.REFUNDED:
            counts["refunded"] += 1
        elif status is BookingStatus.MANUAL_REVIEW:
            counts["in_review"] += 1
            reason = (booking.review or {}).get("reason", "unknown")
            if reason.startswith("refund_"):
                counts["failed"] += 1
                reasons[reason] += 1
                if len(failures) < FAILURE_SAMPLES:
                    failures.append({"booking_id": booking.booking_id, "why": reason})
        else:
            counts["closed_unpaid" if not paid else "other"] += 1
    keys = ("bookings", "holds_open", "holds_released", "to_refund", "refunding", "refunded", "failed",
            "in_review", "closed_unpaid", "other")
    view: dict[str, Any] = {key: counts.get(key, 0) for key in keys}
    view["failed_reasons"] = dict(reasons)
    view["failures"] = failures
    view["open"] = view["holds_open"] + view["to_refund"] + view["refunding"]
    return view


def of_event(bookings: Iterable[Booking], event_id: str) -> list[Booking]:
    """Those of the event's index's ``bookings`` that are the event's now: a booking exchanged to
    another offering keeps its entry in the index of the one it left (that offering's doors void
    its former tickets by it), but that offering's cancellation, progress and announcements no
    longer concern it."""
    return [booking for booking in bookings if event_id in booking.offerings]


def is_open(booking: Booking) -> bool:
    return booking.status in OPEN
