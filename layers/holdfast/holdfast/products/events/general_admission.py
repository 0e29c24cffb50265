"""General admission: interchangeable places counted in pool shards.

Capacity is split over several pool items so that many holds a second do not all write one item;
a hold claims ``n`` from one pool (or, near sold-out, from several), see domain/inventory.py.
"""
from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from holdfast.domain.booking import Booking
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import InvalidRequest, SoldOut
from holdfast.domain.inventory import InventoryKind, Places, plan_counted, pool_sizes
from holdfast.domain.money import Money
from holdfast.domain.offering import Offering
from holdfast.domain import pricing
from holdfast.ports import InventoryReads
from holdfast.kinds.base import Inventory, Kind, checked_quantity
from . import start, tickets
from .commands import CreateEvent


class GeneralAdmission(Kind):
    name = InventoryKind.COUNTED.value
    label = "general_admission"

    # sold until it starts (start.py)
    check_time, ended = start.check_time, start.ended

    def accepts(self, request: Any) -> bool:
        return isinstance(request, CreateEvent) and request.seat_map is None

    def inventory(self, request: Any) -> Inventory:
        if request.zones:   # each zone its own pools, one zone after another (domain/pricing.py)
            sizes = pricing.zone_layout(request.zones)[1]
            return Inventory(capacity=sum(sizes), pool_sizes=sizes)
        capacity = int(request.capacity or 0)
        return Inventory(capacity=capacity, pool_sizes=pool_sizes(capacity))

    def validate(self, event: Offering, request: HoldPlaces) -> dict[str, Any]:
        if request.seats is not None:
            raise InvalidRequest("This event has no seat map; ask for a quantity.", code="seats_not_supported")
        wanted: dict[str, Any] = {"quantity": checked_quantity(event, request.quantity)}
        zone = pricing.zone_of(event, request.details.get("zone"))
        ticket_type = pricing.ticket_type_for(event, zone.price_category if zone else None,
                                              request.details.get("ticket_type"))
        # an event of one price and one capacity keeps the request (and its fingerprint) it had
        if zone is not None:
            wanted["zone"] = zone.zone_id
        if ticket_type is not None:
            wanted["ticket_type"] = ticket_type
        return wanted

    def plan(self, store: InventoryReads, event: Offering, wanted: dict[str, Any], rng: random.Random,
             attempt: int, *, now: datetime) -> Places:
        pools = _in_zone(store.read_pools(event.event_id), event, wanted.get("zone"))
        plan = plan_counted(pools, wanted["quantity"], rng)
        if plan is None:
            raise SoldOut(available=sum(pool.available for pool in pools))
        return Places(self.name, wanted["quantity"], pools=plan)

    def replan(self, store: InventoryReads, booking: Booking, rng: random.Random | None = None, *,
               now: datetime) -> Places | None:
        """The same quantity from wherever it is available now in its zone (the customer paid the
        zone's price), until the event starts."""
        if self.ended(booking, now):
            return None
        pools = store.read_pools(booking.event_id)
        zone_pools = (booking.kind_details or {}).get("zone_pools")
        if zone_pools:
            pools = [pool for pool in pools if pool.pool_id in zone_pools]
        plan = plan_counted(pools, booking.places.quantity, rng)
        return Places(self.name, booking.places.quantity, pools=plan) if plan else None

    def hold_price(self, event: Offering, places: Places, wanted: dict[str, Any]) -> Money:
        if not pricing.has_price_list(event):
            return self.price(event, places)
        lines = self._priced(event, wanted)
        return pricing.total(lines, event.currency)

    def booking_details(self, event: Offering, wanted: dict[str, Any], places: Places) -> dict[str, Any] | None:
        if "zone" not in wanted and "ticket_type" not in wanted:
            return None
        details: dict[str, Any] = {key: wanted[key] for key in ("zone", "ticket_type") if key in wanted}
        zone = pricing.zone_of(event, wanted.get("zone"))
        details["zone_pools"] = sorted(zone.pool_ids) if zone else []
        if pricing.has_price_list(event):
            details["priced"] = [line.stored() for line in self._priced(event, wanted)]
        return details

    @staticmethod
    def _priced(event: Offering, wanted: dict[str, Any]) -> tuple[pricing.PriceLine, ...]:
        zone = pricing.zone_of(event, wanted.get("zone"))
        category = zone.price_category if zone else None
        return pricing.priced(event, [(category, wanted.get("ticket_type"))] * wanted["quantity"])

    # a confirmed booking's tickets, one per place (tickets.py)
    view_extras, passes, admitted = tickets.view_extras, tickets.passes, tickets.admitted
    # a confirmed booking may move to another date or seat (services/exchange.py): new tickets
    exchangeable, reissue = True, tickets.reissue
    # a booking given to someone else gets new tickets, its old ones void (issue 45)
    transferable, credential_ids = True, tickets.credential_ids

    def counts(self, store: InventoryReads, event_id: str, consistent: bool = True) -> dict[str, int]:
        return _counts(store.read_pools(event_id))

    def zone_counts(self, store: InventoryReads, event: Any) -> dict[str, dict[str, int]]:
        """Each zone's available / held / sold (empty for an event without zones)."""
        zones = pricing.zones_of(event)
        if not zones:
            return {}
        pools = store.read_pools(event["event_id"])
        return {zone.zone_id: _counts([pool for pool in pools if pool.pool_id in zone.pool_ids]) for zone in zones}


def _counts(pools: list) -> dict[str, int]:
    counts = {
        "available": sum(pool.available for pool in pools),
        "held": sum(pool.held for pool in pools),
        "sold": sum(pool.sold for pool in pools),
    }
    blocked = sum(pool.blocked for pool in pools)
    return counts | {"blocked": blocked} if blocked else counts   # only an offering with a block says so


def _in_zone(pools: list, event: Any, zone_id: str | None) -> list:
    zone = pricing.zone_of(event, zone_id) if zone_id is not None else None
    return pools if zone is None else [pool for pool in pools if pool.pool_id in zone.pool_ids]
