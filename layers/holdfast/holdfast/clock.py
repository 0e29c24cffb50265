"""Time in one place: UTC, millisecond precision, ISO-8601 with a trailing Z.

Everything the engine reads of the time comes from here: `system_clock()` for a moment (services
take it as their `Clock`), `epoch_seconds()` where an attribute is seconds since the epoch (a
DynamoDB TTL). On AWS both are the machine's time. A local stack that turns its clock
(devstack/aws/clock.py, docs/local-stack.md) names a file in the environment variable
HOLDFAST_CLOCK_FILE that holds how many seconds its time is ahead of the machine's (replaced
whole by each move, read by each reading). That variable is configuration like
AWS_ENDPOINT_URL: the deployed code has no other idea of where it runs.
"""
from __future__ import annotations

import os
import time
from datetime import datetime, timedelta, timezone
from typing import Callable

Clock = Callable[[], datetime]

#: The environment variable naming the local stack's clock file (absent on AWS).
CLOCK_FILE_VARIABLE = "HOLDFAST_CLOCK_FILE"

#: How far ahead of this clock a timer's moment may still be when its wait ends, and be waited out
#: by the task itself (the expiry tick has no state to wait again): clocks differ by milliseconds
#: on AWS, and the local emulator's wait drops the fraction of a second. One expiry bucket.
EARLY_WAKE_SECONDS = 5.0

def offset_seconds() -> float:
    """Seconds the configured clock is ahead of the machine's (0 unless a local stack turned it)."""
    path = os.environ.get(CLOCK_FILE_VARIABLE)
    if not path:
        return 0.0
    # read on every call (a few microseconds): a cache keyed on the file's stat could miss a change
    # made within the file system's timestamp granularity
    try:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            text = os.read(descriptor, 64)
        finally:
            os.close(descriptor)
        return float(text.strip() or 0)
    except (OSError, ValueError):
        return 0.0


def system_clock() -> datetime:
    """Now, as an aware UTC datetime: the machine's time plus the configured offset (none on AWS)."""
    return datetime.now(timezone.utc) + timedelta(seconds=offset_seconds())


def epoch_seconds() -> float:
    """Now, in seconds since the epoch, on the same clock as `system_clock` (for TTL attributes)."""
    return time.time() + offset_seconds()


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)
