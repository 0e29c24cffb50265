"""Appointment time arithmetic: opening hours in a resource's time zone, slots on a step, and the
time granules a slot occupies.

A resource's time is cut into granules of ``GRANULE_MINUTES`` on the UTC clock. Every time zone in
use today is offset from UTC by a multiple of 15 minutes, so a slot that starts on a quarter hour
of local time starts on a granule boundary, and durations and steps that are multiples of the
granule cover whole granules. Slots are laid out on the local wall clock (09:00, 10:00, ... in
the resource's zone) and only then converted to UTC, so a day across a daylight-saving change
has its slots at the hours the opening hours name; a local time that does not exist that day
(the hour skipped in spring) gives no slot.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # zoneinfo (and the sysconfig it reads its paths from) loads on the first zone asked for
    from zoneinfo import ZoneInfo

GRANULE_MINUTES = 15
#: A session longer than this would need more granule claims than one DynamoDB transaction holds
#: next to the booking's own items (100 items in all).
MAX_DURATION_MINUTES = 12 * 60
GRANULE = timedelta(minutes=GRANULE_MINUTES)


class TimeError(ValueError):
    """A time or time zone that cannot be used; the message says why."""


def zone(name: str) -> ZoneInfo:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise TimeError(f"unknown time zone {name!r} (use an IANA name such as Europe/Moscow)") from None


def clock_minutes(text: str) -> int:
    """Minutes after midnight of an "HH:MM" on a granule boundary ("24:00" is the end of the day)."""
    try:
        hours, minutes = text.split(":")
        if len(hours) != 2 or len(minutes) != 2:
            raise ValueError
        value = int(hours) * 60 + int(minutes)
    except ValueError:
        raise TimeError(f"{text!r} is not a time of day HH:MM") from None
    if not 0 <= int(minutes) < 60 or not 0 <= value <= 24 * 60:
        raise TimeError(f"{text!r} is not a time of day HH:MM")
    if value % GRANULE_MINUTES:
        raise TimeError(f"{text!r} is not on a {GRANULE_MINUTES}-minute boundary")
    return value


@dataclass(frozen=True)
class OpeningHours:
    open_minute: int
    close_minute: int

    @classmethod
    def parse(cls, open_text: str, close_text: str) -> "OpeningHours":
        opens, closes = clock_minutes(open_text), clock_minutes(close_text)
        if opens >= closes:
            raise TimeError("the resource must open before it closes")
        return cls(opens, closes)


@dataclass(frozen=True)
class Slot:
    starts_at: datetime   # UTC
    ends_at: datetime     # UTC

    def granules(self) -> list[datetime]:
        return granules_between(self.starts_at, self.ends_at)


def granules_between(start: datetime, end: datetime) -> list[datetime]:
    """The UTC starts of the granules from ``start`` (a granule boundary) up to ``end``."""
    found = []
    moment = start
    while moment < end:
        found.append(moment)
        moment += GRANULE
    return found


def on_granule(moment: datetime) -> bool:
    utc = moment.astimezone(timezone.utc)
    return utc.second == 0 and utc.microsecond == 0 and utc.minute % GRANULE_MINUTES == 0


def day_slots(day: date, tz: ZoneInfo, hours: OpeningHours, duration_minutes: int, step_minutes: int) -> list[Slot]:
    """Every slot of one local day: starting at opening time and every step after it, ending by
    closing time, on the local wall clock."""
    slots = []
    start = hours.open_minute
    while start + duration_minutes <= hours.close_minute:
        local = _local(day, start, tz)
        if local is not None:
            # The duration is elapsed time: aware arithmetic in one zone would count wall-clock
            # minutes and make a slot across the autumn change an hour longer.
            start_utc = local.astimezone(timezone.utc)
            slots.append(Slot(start_utc, start_utc + timedelta(minutes=duration_minutes)))
        start += step_minutes
    return slots


def _local(day: date, minute: int, tz: ZoneInfo) -> datetime | None:
    """The moment ``minute`` after local midnight of ``day``, or None if that wall time is skipped."""
    moment = datetime.combine(day, time(minute // 60, minute % 60), tzinfo=tz)   # a start is before 24:00
    round_trip = moment.astimezone(timezone.utc).astimezone(tz)
    if round_trip.replace(tzinfo=None) != moment.replace(tzinfo=None):
        return None
    return moment


def local_day(moment: datetime, tz: ZoneInfo) -> date:
    return moment.astimezone(tz).date()


def utc_days(day: date, tz: ZoneInfo) -> list[date]:
    """The UTC dates a local day touches (one or two)."""
    first = datetime.combine(day, time(0), tzinfo=tz).astimezone(timezone.utc).date()
    last = (datetime.combine(day + timedelta(days=1), time(0), tzinfo=tz) - timedelta(seconds=1)) \
        .astimezone(timezone.utc).date()
    return sorted({first, last})


def granule_key(moment: datetime) -> str:
    """A granule's UTC start as stored: "YYYY-MM-DDTHH:MM"."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M")


def parse_granule_key(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M").replace(tzinfo=timezone.utc)
