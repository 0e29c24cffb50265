"""Time in the HTTP suites: the running local stack's clock (devstack/aws/clock.py).

The test process reads the same clock as the engine (`holdfast.clock.system_clock`, which follows
the stack's clock file while a stack runs), so a moment a test computes is one the engine agrees
with however far a test before it moved the clock. Windows that must start in the current half
hour get one with room to spare, at any minute of the hour.
"""
from __future__ import annotations

from datetime import date, datetime, timedelta

from devstack.aws import EmbeddedStack
from holdfast.clock import iso, system_clock

HALF_HOUR = 1800
#: The least time a window from the current half hour leaves before the next half hour turns:
#: setup, payment and the checks take seconds, a loaded machine a minute.
ROOM_SECONDS = 300


def running_stack() -> EmbeddedStack:
    stack = EmbeddedStack._active
    assert stack is not None and stack.time is not None, "no local stack is running in this process"
    return stack


def current_half_hour(room: float = ROOM_SECONDS) -> datetime:
    """The start of the current half hour on the stack's clock, after moving the clock into the
    next one when fewer than `room` seconds of this one are left (a window that starts a half hour
    back is refused as begun, so its start must stay the current half hour until the test ends)."""
    now = system_clock()
    into = now.minute % 30 * 60 + now.second + now.microsecond / 1e6
    if HALF_HOUR - into < room:
        running_stack().advance_clock(HALF_HOUR - into + 1)
        now = system_clock()
    return now.replace(minute=now.minute - now.minute % 30, second=0, microsecond=0)


def window_from_now(hours: float = 2) -> tuple[str, str]:
    """A window from the current half hour, `hours` long, as ISO strings."""
    start = current_half_hour()
    return iso(start).replace(".000Z", "Z"), iso(start + timedelta(hours=hours)).replace(".000Z", "Z")


def days_ahead(days: int) -> str:
    """The calendar day ``days`` after today on the stack's clock (the machine's while no stack
    runs), as YYYY-MM-DD: what a test writes instead of a fixed future date, which would one day
    be past (a date bomb). At a module's import it is read before any test moves the clock; a
    lead of months stays ahead of the moves the package makes (the longest: 91 days)."""
    return (system_clock() + timedelta(days=days)).date().isoformat()


def year_ahead(month_day: str, lead_days: int = 150) -> int:
    """The first year in which ``month_day`` (MM-DD) is at least ``lead_days`` after today on the
    stack's clock: for pages whose fixed dates are shown as text (a month's name and its year), so
    the test writes the month and day it means and the year moves, never into the past."""
    today = system_clock().date()
    year = today.year
    while date.fromisoformat(f"{year}-{month_day}") < today + timedelta(days=lead_days):
        year += 1
    return year
