"""General admission: interchangeable places counted in pool shards.

Capacity is split over several pool items so that many holds a second do not all write one item;
a hold claims ``n`` from one pool (or, near sold-out, from several), see domain/inventory.py.
"""
from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from holdfast.domain.booking import Booking
from holdfast.domain.commands import CreateEvent, HoldPlaces
from holdfast.domain.errors import InvalidRequest, SoldOut
from holdfast.domain.inventory import InventoryKind, Places, plan_counted, pool_sizes
from holdfast.domain.offering import Offering
from holdfast.ports import InventoryReads
from holdfast.kinds.base import Inventory, Kind, checked_quantity
from . import start, tickets


class GeneralAdmission(Kind):
    name = InventoryKind.COUNTED.value
    label = "general_admission"

    # sold until it starts (start.py)
    check_time, ended = start.check_time, start.ended

    def accepts(self, request: Any) -> bool:
        return isinstance(request, CreateEvent) and request.seat_map is None

    def inventory(self, request: Any) -> Inventory:
        capacity = int(request.capacity or 0)
        return Inventory(capacity=capacity, pool_sizes=pool_sizes(capacity))

    def validate(self, event: Offering, request: HoldPlaces) -> dict[str, Any]:
        if request.seats is not None:
            raise InvalidRequest("This event has no seat map; ask for a quantity.", code="seats_not_supported")
        return {"quantity": checked_quantity(event, request.quantity)}

    def plan(self, store: InventoryReads, event: Offering, wanted: dict[str, Any], rng: random.Random,
             attempt: int, *, now: datetime) -> Places:
        pools = store.read_pools(event.event_id)
        plan = plan_counted(pools, wanted["quantity"], rng)
        if plan is None:
            raise SoldOut(available=sum(pool.available for pool in pools))
        return Places(self.name, wanted["quantity"], pools=plan)

    def replan(self, store: InventoryReads, booking: Booking, rng: random.Random | None = None, *,
               now: datetime) -> Places | None:
        """The same quantity from wherever it is available now, until the event starts."""
        if self.ended(booking, now):
            return None
        plan = plan_counted(store.read_pools(booking.event_id), booking.places.quantity, rng)
        return Places(self.name, booking.places.quantity, pools=plan) if plan else None

    # a confirmed booking's tickets, one per place (tickets.py)
    view_extras, passes, admitted = tickets.view_extras, tickets.passes, tickets.admitted

    def counts(self, store: InventoryReads, event_id: str, consistent: bool = True) -> dict[str, int]:
        pools = store.read_pools(event_id)
        return {
            "available": sum(pool.available for pool in pools),
            "held": sum(pool.held for pool in pools),
            "sold": sum(pool.sold for pool in pools),
        }
