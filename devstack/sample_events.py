"""The sample events of events/ read as of today.

The files are plain JSON for `sam local invoke -e` and `make invoke`, written on one sample day
(SAMPLE_DAY): an event starts that evening, a hold made that morning expires ten minutes later, a
parking reservation is a year on. Read as written they would be a date bomb: once the machine's
clock passes the sample day, the event has started and every hold is refused. So every reader in
the project (the handler and parity tests, `make invoke`, the cold-start model check) loads them
through `load`/`text`, which moves every date in the file by the same whole number of days, so
that the sample day is LEAD_DAYS ahead of today on `holdfast.clock` (the local stack's clock where
one runs). The intervals inside a file, the times of day and the offsets stay as written; only
the calendar moves. `moved` gives a test the same move for a date it compares with a sample's.
"""
from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any

#: The day the sample files were written for.
SAMPLE_DAY = date(2030, 5, 1)
#: How far ahead of today the sample day is put when the files are read.
LEAD_DAYS = 30

EVENTS_DIR = Path(__file__).resolve().parents[1] / "events"

_DATE = re.compile(r"(?<![0-9])(20[0-9]{2})-([01][0-9])-([0-3][0-9])(?![0-9])")


def shift(today: date | None = None) -> timedelta:
    """How far the files' dates move: the sample day to LEAD_DAYS after ``today``."""
    if today is None:
        from holdfast.clock import system_clock

        today = system_clock().date()
    return today + timedelta(days=LEAD_DAYS) - SAMPLE_DAY


def moved(text: str, today: date | None = None) -> str:
    """``text`` with every calendar date in it (YYYY-MM-DD, alone or in a timestamp) moved."""
    by = shift(today)

    def move(match: re.Match[str]) -> str:
        try:
            day = date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return match[0]   # digits that only look like a date
        return (day + by).isoformat()

    return _DATE.sub(move, text)


def text(name: str | Path, today: date | None = None) -> str:
    """A sample file's text as of today: a name in events/ or a path."""
    path = Path(name)
    if not path.is_file():
        path = EVENTS_DIR / name
    return moved(path.read_text(), today)


def load(name: str | Path, today: date | None = None) -> Any:
    return json.loads(text(name, today))


def days_ahead(days: int, hour: int = 20) -> str:
    """A moment ``days`` days from today at ``hour``:00 UTC on `holdfast.clock` (the local stack's
    clock where one runs), for the demo and benchmark events: a fixed date would start one day."""
    from holdfast.clock import iso, system_clock

    moment = (system_clock() + timedelta(days=days)).replace(hour=hour, minute=0, second=0, microsecond=0)
    return iso(moment).replace(".000Z", "Z")
