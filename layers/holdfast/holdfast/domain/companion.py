"""An event's companion offering (issue 43): another offering of its organizer that its page sells
with its tickets for a window around the event's start (a car park at the venue, linked with
``POST /events/{id}/parking``). Read from the event as it is now, so an event moved later offers
the window around its new start."""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Mapping

from ..clock import iso, parse_iso


def window(event: Mapping[str, Any]) -> dict[str, Any] | None:
    """``{offering_id, before_minutes, after_minutes, from, to}`` of the event's companion, or None."""
    link = event.get("companion")
    if not link or not event.get("starts_at"):
        return None
    start = parse_iso(str(event["starts_at"]))
    before, after = int(link["before_minutes"]), int(link["after_minutes"])
    return {"offering_id": str(link["offering_id"]), "before_minutes": before, "after_minutes": after,
            "from": iso(start - timedelta(minutes=before)), "to": iso(start + timedelta(minutes=after))}
