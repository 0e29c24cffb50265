"""Parking with a ticket (issue 43): the lot an organizer links to an event, and the window around
the event's start a ticket's parking line asks for. Read from the event as it is now, so an event
moved later offers the window around its new start."""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Mapping

from ..clock import iso, parse_iso


def window(event: Mapping[str, Any]) -> dict[str, Any] | None:
    """``{lot_id, before_minutes, after_minutes, from, to}`` of the event's linked lot, or None."""
    link = event.get("parking_link")
    if not link or not event.get("starts_at"):
        return None
    start = parse_iso(str(event["starts_at"]))
    before, after = int(link["before_minutes"]), int(link["after_minutes"])
    return {"lot_id": str(link["lot_id"]), "before_minutes": before, "after_minutes": after,
            "from": iso(start - timedelta(minutes=before)), "to": iso(start + timedelta(minutes=after))}
