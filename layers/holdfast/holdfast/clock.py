"""Time in one place: UTC, millisecond precision, ISO-8601 with a trailing Z."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

Clock = Callable[[], datetime]

#: How far ahead of this clock a timer's moment may still be when its wait ends, and be waited out
#: by the task itself (the expiry tick has no state to wait again): clocks differ by milliseconds
#: on AWS, and the local emulator's wait drops the fraction of a second. One expiry bucket.
EARLY_WAKE_SECONDS = 5.0


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)
