"""What a caller asks the appointments service to do (the request models turn into these)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from holdfast.domain.commands import Price


@dataclass(frozen=True)
class CreateResource:
    """A room, a person or a machine an appointment takes place on, open every day from
    ``opens`` to ``closes`` ("HH:MM") on its time zone's clock."""

    name: str
    timezone: str
    opens: str
    closes: str


@dataclass(frozen=True)
class CreateService:
    """An appointment service. ``settings`` are the ``slots`` kind's, already validated: the
    registry picks the kind by them and the offering stores them."""

    name: str
    price: Price
    settings: Any
    max_holds_per_customer: int | None = None
    #: Where it takes place, for the public listing's ``?city=`` (none: listed without a city).
    city: str | None = None
    #: Exchanges allowed until this many hours before a slot (domain/exchange.py); None: none.
    exchange_until_hours: int | None = None
    #: A cancellation policy with fees (domain/refund_policy.py), counted from each slot's start.
    cancellation: tuple[dict[str, int], ...] | None = None
    #: Whether its confirmed bookings may be given to another customer (issue 45).
    transfers_allowed: bool = True
    #: Every hold must carry a solved challenge (issue 42, finding 13).
    captcha_required: bool = False
