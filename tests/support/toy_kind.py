"""A toy inventory kind, written in a test: standing zones with fallback and zone prices.

An offering of this kind (created with category ``zoned``) has two zones, each one counter: the
FRONT (``POOL#000``, two thirds of the capacity rounded up, double price) and the BACK
(``POOL#001``, the rest). A
customer asks for a quantity; the plan takes it all from the FRONT if it has room, else all from
the BACK (the fallback), never split across zones. A late payment is re-planned in the same zone
only, since that is what the customer paid for. It is the worked example of docs/inventory-kinds.md.
"""
from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from holdfast import kinds
from holdfast.domain.booking import Booking
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import SoldOut
from holdfast.domain.inventory import Places, Pool
from holdfast.domain.lifecycle import ExtraState
from holdfast.domain.money import Money
from holdfast.domain.offering import Offering
from holdfast.kinds.base import Inventory, Kind, checked_quantity
from holdfast.ports import InventoryReads

FRONT, BACK = "POOL#000", "POOL#001"


class ZoneSettings(BaseModel):
    """The kind's own offering settings: stored with the offering, parsed back by the kind."""

    front_price_factor: int = Field(default=2, ge=1)


class StandingZones(Kind):
    name = "toy_zones"
    label = "standing_zones"
    settings_model = ZoneSettings
    # After CONFIRMED: a gate admits the holder (places stay sold) and sees them leave; the timer
    # marks a no-show, whose places go back on sale.
    extra_states = (
        ExtraState("ADMITTED", after=frozenset({"CONFIRMED"}), actors=frozenset({"gate"}),
                   notify="booking.admitted"),
        ExtraState("LEFT", after=frozenset({"ADMITTED"}), actors=frozenset({"gate"})),
        ExtraState("MISSED", after=frozenset({"CONFIRMED"}), actors=frozenset({"timer"}), places="available",
                   notify="booking.no_show"),
    )

    def accepts(self, request: Any) -> bool:
        return getattr(request, "seat_map", None) is None and getattr(request, "category", "") == "zoned"

    def inventory(self, request: Any) -> Inventory:
        capacity = int(request.capacity or 0)
        front = capacity - capacity // 3
        return Inventory(capacity=capacity, pool_sizes=[front, capacity - front])

    def validate(self, event: Offering, request: HoldPlaces) -> dict[str, Any]:
        return {"quantity": checked_quantity(event, request.quantity)}

    def plan(self, store: InventoryReads, event: Offering, wanted: dict[str, Any], rng: random.Random,
             attempt: int, *, now: datetime) -> Places:
        zones = {pool.pool_id: pool for pool in store.read_pools(event.event_id)}
        for zone in (FRONT, BACK):                       # best first, then the fallback
            if zones[zone].available >= wanted["quantity"]:
                return Places(self.name, wanted["quantity"], pools=((zone, wanted["quantity"]),))
        raise SoldOut(available=sum(pool.available for pool in zones.values()))

    def replan(self, store: InventoryReads, booking: Booking, rng: random.Random | None = None, *,
               now: datetime) -> Places | None:
        [(zone, count)] = booking.places.pools
        pools: dict[str, Pool] = {pool.pool_id: pool for pool in store.read_pools(booking.event_id)}
        return booking.places if pools[zone].available >= count else None

    def price(self, event: Offering, places: Places) -> Money:
        [(zone, count)] = places.pools                   # a plan never splits across zones
        factor = event.settings.front_price_factor if zone == FRONT else 1
        return Money.parse(event.price, event.currency).times(count * factor)

    def counts(self, store: InventoryReads, event_id: str, consistent: bool = True) -> dict[str, int]:
        pools = store.read_pools(event_id)
        return {state: sum(getattr(pool, state) for pool in pools) for state in ("available", "held", "sold")}

    def largest_hold(self, store: InventoryReads, event_id: str) -> int:
        return max((pool.available for pool in store.read_pools(event_id)), default=0)  # never split

    def describe_places(self, places: Places) -> dict[str, Any]:
        return {**super().describe_places(places), "zone": "front" if places.pools[0][0] == FRONT else "back"}


def register() -> StandingZones:
    """Register the toy kind (idempotent; it stays registered for the session)."""
    return kinds.register(StandingZones())  # type: ignore[return-value]
