"""The files a message carries: a booking's calendar entry (iCalendar) and a pass as a QR image.

One calendar entry per booking, always under the same UID: the confirmation publishes it, a
change of the event publishes it again with a higher SEQUENCE (calendars replace the entry they
hold), and the end of the booking's places (event cancelled, refund, no-show) withdraws it with
METHOD:CANCEL. Imported only when a message needs a file (icalendar and segno stay off the
notifier's cold start)."""
from __future__ import annotations

import io
from dataclasses import dataclass

from ..clock import parse_iso


@dataclass(frozen=True)
class CalendarEntry:
    """One VEVENT: a booking's, or one part's of a booking of several (an order's line)."""

    uid: str
    summary: str
    start: str
    end: str | None = None
    location: str = ""


def calendar(*, uid: str, method: str, sequence: int, summary: str, start: str, end: str | None, location: str,
             url: str, stamp: str, organizer: str, attendee: str | None) -> bytes:
    """An iCalendar object with one VEVENT; ``method`` PUBLISH or CANCEL (RFC 5546)."""
    return calendar_of([CalendarEntry(uid, summary, start, end, location)], method=method, sequence=sequence,
                       url=url, stamp=stamp, organizer=organizer, attendee=attendee)


def calendar_of(entries: list[CalendarEntry], *, method: str, sequence: int, url: str, stamp: str, organizer: str,
                attendee: str | None) -> bytes:
    """An iCalendar object with a VEVENT per entry, each under its own UID (a calendar keeps,
    replaces and withdraws each by it); ``method`` PUBLISH or CANCEL (RFC 5546)."""
    from icalendar import Calendar, Event, vCalAddress

    cal = Calendar()
    cal.add("prodid", "-//Holdfast//bookings//EN")
    cal.add("version", "2.0")
    cal.add("method", method)
    for entry in entries:
        event = Event()
        event.add("uid", entry.uid)
        event.add("sequence", sequence)
        event.add("dtstamp", parse_iso(stamp))
        event.add("dtstart", parse_iso(entry.start))
        if entry.end:
            event.add("dtend", parse_iso(entry.end))
        event.add("summary", entry.summary)
        event.add("status", "CANCELLED" if method == "CANCEL" else "CONFIRMED")
        if entry.location:
            event.add("location", entry.location)
        if url:
            event.add("url", url)
        if organizer:
            event.add("organizer", vCalAddress(f"mailto:{organizer}"))
        if attendee:
            event.add("attendee", vCalAddress(f"mailto:{attendee}"))
        cal.add_component(event)
    return cal.to_ical()


def qr_png(text: str) -> bytes:
    """``text`` as the passes' QR code (services/passes.py), as a PNG a mail program shows inline."""
    from .passes import QUIET_ZONE, qr_code

    out = io.BytesIO()
    qr_code(text).save(out, kind="png", scale=5, border=QUIET_ZONE)
    return out.getvalue()
