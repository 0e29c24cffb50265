"""The inventory kinds the invariant suite runs on, through the same test code: an offering of
each kind with ``n`` places, and a hold request for ``k`` of them that lets the kind choose.

The toy kind (tests/support/toy_kind.py) is registered here, so every parametrised test runs on
a kind the engine has never heard of as well as on the built-in ones.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from holdfast.schemas import BookingIn, EventIn
from tests.support import toy_kind

from .helpers import Snapshot, event_request

toy_kind.register()


@dataclass(frozen=True)
class KindCase:
    name: str
    event_fields: dict[str, Any] = field(default_factory=dict)
    ask_fields: dict[str, Any] = field(default_factory=dict)
    seated: bool = False

    def event(self, places: int, **overrides: Any) -> EventIn:
        inventory = ({"capacity": None, "seat_map": {"seat_ids": [f"S-{n}" for n in range(1, places + 1)]}}
                     if self.seated else {"capacity": places})
        return event_request(**inventory, **self.event_fields, **overrides)

    def ask(self, quantity: int) -> BookingIn:
        return BookingIn(quantity=quantity, **self.ask_fields)

    def __str__(self) -> str:
        return self.name


CASES = [
    KindCase("general_admission"),
    KindCase("seat_map", ask_fields={"best_available": True}, seated=True),
    KindCase("toy_zones", event_fields={"category": "zoned"}),
]


def inventory_total(snap: Snapshot, event_id: str) -> dict[str, int]:
    """available / held / sold from the inventory items, whatever the kind keeps them in."""
    totals: Counter[str] = Counter({"available": 0, "held": 0, "sold": 0})
    for pool in snap.pools.get(event_id, {}).values():
        for state in ("available", "held", "sold"):
            totals[state] += pool[state]
    for unit in snap.units.get(event_id, {}).values():
        totals[unit["state"]] += 1
    return dict(totals)
