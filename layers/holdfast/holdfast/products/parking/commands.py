"""What a caller asks the parking services to do (the request models turn into these)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class CreateLot:
    """A parking lot. ``settings`` are the ``parking`` kind's, already validated (its hourly rate
    as a bare amount, in ``currency``)."""

    name: str
    settings: Any
    currency: str
    hold_ttl_seconds: int | None = None
    #: Where the lot is, for the public listing's ``?city=`` (none: listed without a city).
    city: str | None = None
    #: Every reservation must carry a solved challenge (issue 42, finding 13).
    captcha_required: bool = False


@dataclass(frozen=True)
class CreateSubscription:
    """A plate let in and out of a lot, whatever the reservations, from ``valid_from`` until ``valid_to``."""

    plate: str
    valid_from: datetime
    valid_to: datetime
