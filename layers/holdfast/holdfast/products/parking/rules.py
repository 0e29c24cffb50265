"""Parking rules without I/O: vehicle types and their fallback order, the time granules a window
claims, and the tariff (hourly rate, daily cap, grace minutes) in exact decimal money.

Time is cut into 30-minute granules on the UTC clock (``GRANULE``). A reservation's window is
any pair of whole minutes (a driver arriving at 10:10 says so); it claims every granule the window
touches, so a granule partly used is taken, and windows that share a granule exclude each other
even when the windows themselves do not overlap (10:00-10:10 and 10:20-11:00 both need 10:00).
The price is the window's own minutes (``window_minutes``), never the granules'. The longest
window is 24 hours (at most 49 granules when it starts and ends inside one): with the booking's
own items it stays far below DynamoDB's 100 items per transaction.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from holdfast.domain.money import Money

GRANULE = timedelta(minutes=30)
MAX_WINDOW = timedelta(hours=24)
TYPES = ("COMPACT", "REGULAR", "LARGE", "HANDICAP")

#: The space types a vehicle fits, best first (a permit puts HANDICAP in front: see ``fallback``).
FITS = {"COMPACT": ("COMPACT", "REGULAR", "LARGE"), "REGULAR": ("REGULAR", "LARGE"), "LARGE": ("LARGE",)}
_CENT = Decimal("0.01")


def lot_id_of(lot: Any) -> str:
    """A lot's id. A lot is stored as the core's offering, whose id the stored item and the public
    API call ``event_id``; parking's code calls it the lot's id, read here only."""
    return str(lot["event_id"])


def fallback(vehicle_type: str, permit: bool) -> tuple[str, ...]:
    """The space types a vehicle may take, in the order they are tried."""
    order = FITS[vehicle_type]
    return ("HANDICAP", *order) if permit else order


def on_minute(moment: datetime) -> bool:
    return moment.second == 0 and moment.microsecond == 0


def floor_granule(moment: datetime) -> datetime:
    moment = moment.astimezone(timezone.utc)
    return moment.replace(minute=moment.minute - moment.minute % 30, second=0, microsecond=0)


def ceil_granule(moment: datetime) -> datetime:
    floor = floor_granule(moment)
    return floor if floor == moment.astimezone(timezone.utc) else floor + GRANULE


def granule_key(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M")


def parse_granule(key: str) -> datetime:
    return datetime.strptime(key, "%Y-%m-%dT%H:%M").replace(tzinfo=timezone.utc)


def window_granules(start: datetime, end: datetime) -> list[str]:
    """The keys of every granule [start, end) touches, the first one's start at or before ``start``."""
    keys, moment = [], floor_granule(start)
    while moment < end:
        keys.append(granule_key(moment))
        moment += GRANULE
    return keys


def window_minutes(start: datetime, end: datetime) -> int:
    """The minutes a window lasts, every started one counted (what a reservation is billed for)."""
    return math.ceil((end - start).total_seconds() / 60)


def utc_days(start: datetime, end: datetime) -> list[str]:
    days, day = [], start.astimezone(timezone.utc).date()
    last = (end - timedelta(microseconds=1)).astimezone(timezone.utc).date()
    while day <= last:
        days.append(day.isoformat())
        day += timedelta(days=1)
    return days


def tariff(hourly: Money, daily_cap: Money | None, minutes: int) -> Decimal:
    """What ``minutes`` of parking cost: every started hour at the hourly rate, each started
    24-hour period at most the daily cap. 0 minutes cost nothing."""
    if minutes <= 0:
        return Decimal("0.00")
    days, rest = divmod(minutes, 24 * 60)
    full_day = hourly.value * 24
    if daily_cap is not None:
        full_day = min(full_day, daily_cap.value)
    partial = hourly.value * -(-rest // 60)
    if daily_cap is not None:
        partial = min(partial, daily_cap.value)
    return (full_day * days + partial).quantize(_CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Tariff:
    """A lot's tariff as one value, read from its settings in its currency: what a reservation's
    window costs (the kind's price) and what a stay costs at the exit gate are both this value's
    ``charge``. A new element of the tariff is a field here, in the lot's settings schema
    (schemas.ParkingSettings) and on its page."""
    hourly: Money
    daily_cap: Money | None = None
    grace_minutes: int = 0

    @classmethod
    def of(cls, settings: Any, currency: str) -> Tariff:
        """The tariff of a lot's settings (``ParkingSettings``: ``hourly``, ``daily_cap``, ``grace_minutes``)."""
        return cls(Money.parse(settings.hourly, currency),
                   Money.parse(settings.daily_cap, currency) if settings.daily_cap else None,
                   settings.grace_minutes)

    @property
    def currency(self) -> str:
        return self.hourly.currency

    def charge(self, minutes: int) -> Money:
        """What ``minutes`` of parking cost (``tariff``)."""
        return Money(tariff(self.hourly, self.daily_cap, minutes), self.currency)

    def stay_minutes(self, entered: datetime, left: datetime) -> int:
        """A stay's billable minutes: the lot's grace minutes are free."""
        return stay_minutes(entered, left, self.grace_minutes)


def stay_minutes(entered: datetime, left: datetime, grace_minutes: int) -> int:
    """Billable minutes of a stay, every started minute counted, less the lot's grace minutes (a
    stay within them is free)."""
    minutes = math.ceil((left - entered).total_seconds() / 60)
    return max(0, minutes - grace_minutes)


def amount_due(charge: Decimal, prepaid: Decimal) -> Decimal:
    return max(Decimal("0.00"), (charge - prepaid).quantize(_CENT))


def normalise_plate(plate: str) -> str:
    return "".join(plate.split()).upper()


