"""An event is sold until it starts: a hold (a customer's, or a waitlist offer's), a place on its
waitlist and a late payment's retake are refused from ``starts_at`` on, and the listing shows
only what has not started. The doors keep admitting: letting ticket holders in after the start is
what they are for (docs/doors.md).

An event names no end, so its start is the moment its places stop being sold. A booking keeps the
start it was sold for as ``ends_at`` (domain/personal_data.places_end); a late payment is judged by
the start as it is when the payment arrives (services/payments.py ``_end_as_it_is_now``; an
order's line by its own event's, domain/personal_data.py ``with_current_end``), so a concert moved
later still sells its places to a payment that came after the old start. Tickets read the start
from the event when they are signed (tickets.py), never this copy.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from holdfast.clock import parse_iso
from holdfast.domain.booking import Booking
from holdfast.domain.errors import Conflict


class EventStarted(Conflict):
    def __init__(self, event_id: str, starts_at: str) -> None:
        super().__init__("This event has started; its places are no longer sold.", code="event_started",
                         event_id=event_id, starts_at=starts_at)


def check_time(self: Any, event: Any, wanted: dict[str, Any], now: datetime) -> None:
    """``Kind.check_time`` of an event's kinds: nothing is held from its start on."""
    starts_at = str(event.get("starts_at") or "")
    if starts_at and parse_iso(starts_at) <= now:
        raise EventStarted(str(event.get("event_id")), starts_at)


def ended(self: Any, booking: Booking, now: datetime) -> bool:
    """``Kind.ended``: a late payment for an event that has started is never sold its places again
    (it is given back). A booking written before ``ends_at`` existed is judged as before."""
    return bool(booking.ends_at) and parse_iso(booking.ends_at) <= now
