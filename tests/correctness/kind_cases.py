"""The inventory kinds the invariant suite runs on, through the same test code: an offering of
each kind with ``n`` places, and a hold request for ``k`` of them that lets the kind choose.

The toy kind (tests/support/toy_kind.py) is registered here, so every parametrised test runs on
a kind the engine has never heard of as well as on the built-in ones.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from holdfast.schemas import BookingIn, EventIn
from tests.support import toy_kind

from .helpers import Snapshot, event_request

toy_kind.register()


def _largest_pool(snap: Snapshot, event_id: str) -> int:
    return max((pool["available"] for pool in snap.pools.get(event_id, {}).values()), default=0)


@dataclass(frozen=True)
class KindCase:
    name: str
    event_fields: dict[str, Any] = field(default_factory=dict)
    ask_fields: dict[str, Any] = field(default_factory=dict)
    seated: bool = False
    #: The most places one hold can take now, from the table (None: every available place, as
    #: when a plan may combine counters or scattered seats). The waitlist rule W2 uses it.
    largest: Callable[[Snapshot, str], int] | None = None

    def body(self, places: int, **overrides: Any) -> dict[str, Any]:
        """The fields of an offering of this kind with ``places`` places (event_request's input)."""
        inventory = ({"capacity": None, "seat_map": {"seat_ids": [f"S-{n}" for n in range(1, places + 1)]}}
                     if self.seated else {"capacity": places})
        return {**inventory, **self.event_fields, **overrides}

    def event(self, places: int, **overrides: Any) -> EventIn:
        return event_request(**self.body(places, **overrides))

    def ask(self, quantity: int) -> BookingIn:
        return BookingIn(quantity=quantity, **self.ask_fields)

    def largest_holdable(self, snap: Snapshot, event_id: str) -> int:
        if self.largest is not None:
            return self.largest(snap, event_id)
        return inventory_total(snap, event_id)["available"]

    def __str__(self) -> str:
        return self.name


CASES = [
    KindCase("general_admission"),
    KindCase("seat_map", ask_fields={"best_available": True}, seated=True),
    # A hold takes its whole quantity from one zone: the largest zone's room is all one hold can get.
    KindCase("toy_zones", event_fields={"category": "zoned"}, largest=_largest_pool),
]
BY_NAME = {case.name: case for case in CASES}


def inventory_total(snap: Snapshot, event_id: str) -> dict[str, int]:
    """available / held / sold from the inventory items, whatever the kind keeps them in."""
    totals: Counter[str] = Counter({"available": 0, "held": 0, "sold": 0})
    for pool in snap.pools.get(event_id, {}).values():
        for state in ("available", "held", "sold"):
            totals[state] += pool[state]
    for unit in snap.units.get(event_id, {}).values():
        totals[unit["state"]] += 1
    return dict(totals)
