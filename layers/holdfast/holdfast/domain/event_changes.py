"""What a change of an event means for the people holding its places (pure).

A change of start time or venue is announced to every customer with a confirmed booking or an
open hold, once per change. After a change of start time a customer who cannot come may cancel a
confirmed booking with a full refund until the window the organizer sets runs out (the booking
shows until when)."""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ..clock import iso, parse_iso

#: The fields whose change customers are told about.
ANNOUNCED = ("starts_at", "venue")
DEFAULT_CHANGE_REFUND_HOURS = 72


def announced_changes(event: dict[str, Any], changes: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{field: {"before", "after"}} for the announced fields that really change."""
    return {field: {"before": event.get(field), "after": changes[field]}
            for field in ANNOUNCED if field in changes and event.get(field) != changes[field]}


def refund_window(event: dict[str, Any], changes: dict[str, Any], now: datetime) -> dict[str, Any]:
    """The event fields a change of start time sets: when it changed and until when a customer
    may cancel with a full refund (nothing when the organizer set the window to 0 hours)."""
    if "starts_at" not in announced_changes(event, changes):
        return {}
    hours = int(changes.get("change_refund_hours", event.get("change_refund_hours", DEFAULT_CHANGE_REFUND_HOURS)))
    if hours <= 0:
        return {}
    return {"time_changed_at": iso(now), "change_refund_until": iso(now + timedelta(hours=hours))}


def change_refund_until(event: dict[str, Any] | None, now: datetime) -> str | None:
    """Until when a confirmed booking of the event may be cancelled with a full refund because its
    start time changed; None when no such window is open."""
    until = (event or {}).get("change_refund_until")
    return until if until and now < parse_iso(until) else None

