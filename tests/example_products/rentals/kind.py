"""The ``bikes`` kind: a day's bikes, interchangeable, counted in pool shards like general admission,
at most ``max_bikes`` per booking, priced per bike."""
from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from holdfast.domain.booking import Booking
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import InvalidRequest, SoldOut
from holdfast.domain.inventory import Places, plan_counted, pool_sizes
from holdfast.domain.offering import Offering
from holdfast.kinds.base import Inventory, Kind
from holdfast.ports import InventoryReads


class ShopSettings(BaseModel):
    """A shop's day: how many bikes it lends and how many one customer may take."""

    bikes: int = Field(ge=1, le=500)
    max_bikes: int = Field(default=4, ge=1, le=10)


class Bikes(Kind):
    name = "bikes"
    label = "bike_rental"
    settings_model = ShopSettings

    def accepts(self, request: Any) -> bool:
        return isinstance(request, ShopSettings)

    def inventory(self, request: ShopSettings) -> Inventory:
        return Inventory(capacity=request.bikes, pool_sizes=pool_sizes(request.bikes))

    def validate(self, event: Offering, request: HoldPlaces) -> dict[str, Any]:
        wanted = request.quantity or 0
        if not 1 <= wanted <= event.settings.max_bikes:
            raise InvalidRequest(f"Ask for 1 to {event.settings.max_bikes} bikes.", code="invalid_bike_count")
        return {"quantity": wanted}

    def plan(self, store: InventoryReads, event: Offering, wanted: dict[str, Any], rng: random.Random,
             attempt: int, *, now: datetime) -> Places:
        pools = store.read_pools(event.event_id)
        plan = plan_counted(pools, wanted["quantity"], rng)
        if plan is None:
            raise SoldOut(available=sum(pool.available for pool in pools))
        return Places(self.name, wanted["quantity"], pools=plan)

    def replan(self, store: InventoryReads, booking: Booking, rng: random.Random | None = None, *,
               now: datetime) -> Places | None:
        plan = plan_counted(store.read_pools(booking.event_id), booking.places.quantity, rng)
        return Places(self.name, booking.places.quantity, pools=plan) if plan else None

    def counts(self, store: InventoryReads, event_id: str, consistent: bool = True) -> dict[str, int]:
        pools = store.read_pools(event_id)
        return {state: sum(getattr(pool, state) for pool in pools) for state in ("available", "held", "sold")}
