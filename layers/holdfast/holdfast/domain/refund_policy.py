"""An offering's cancellation policy with fees (issue 45): how much of a confirmed booking's
price a customer's cancel gives back, by how long before the offering's start it comes.

``cancellation`` on the offering is a list of tiers ``{"until_hours", "refund_percent"}``: a
cancel at least ``until_hours`` before the start gives back ``refund_percent`` of the price (the
tier with the largest ``until_hours`` that still applies); later than every tier, nothing. The
start is read from the offering itself (an event's), or for an offering sold by the slot (an
appointment service) from the booking's own slot, never from a copy. Pure: no I/O.
"""
from __future__ import annotations

from datetime import datetime
from decimal import ROUND_DOWN, Decimal
from typing import Any, Iterable, Mapping

from ..clock import parse_iso
from .money import Money

CENT = Decimal("0.01")


def stored_policy(tiers: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The tiers as an offering keeps them: the earliest (largest ``until_hours``) first, one per
    ``until_hours``."""
    seen: dict[int, int] = {}
    for tier in tiers:
        seen[int(tier["until_hours"])] = int(tier["refund_percent"])
    return [{"until_hours": hours, "refund_percent": seen[hours]} for hours in sorted(seen, reverse=True)]


def refund_percent(offering: Mapping[str, Any] | None, now: datetime, starts_at: str | None = None) -> int | None:
    """The percent a cancel now gives back under the offering's policy, counted back from
    ``starts_at`` (the booking's own start; else the offering's); None without a policy (the price
    in full, as before policies)."""
    tiers = (offering or {}).get("cancellation")
    start = starts_at or (offering or {}).get("starts_at")
    if not tiers or not start:
        return None
    hours_left = (parse_iso(str(start)) - now).total_seconds() / 3600
    for tier in tiers:   # the earliest tier first
        if hours_left >= int(tier["until_hours"]):
            return int(tier["refund_percent"])
    return 0


def refund_by_policy(offering: Mapping[str, Any] | None, amount: Money, now: datetime,
                     starts_at: str | None = None) -> Money | None:
    """What a cancel now gives back of ``amount`` (cents rounded down), or None without a policy."""
    percent = refund_percent(offering, now, starts_at)
    if percent is None:
        return None
    return Money((amount.value * percent / Decimal(100)).quantize(CENT, rounding=ROUND_DOWN), amount.currency)
