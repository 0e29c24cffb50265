"""A toy inventory kind with alternatives: timed entry windows (written in a test).

An offering created with category ``windowed`` has three entry windows, 12:00, 12:30 and 13:00,
each one counter of ``capacity`` places (``POOL#000``..``POOL#002``), all at the offering's price.
A hold takes the earliest window with room. It is paid two-stage unless the offering says
otherwise, like appointments. When a late payment finds its window taken, the kind offers the
other windows with room, nearest first, and a chosen one is claimed from a fresh read: the same
hooks an appointment kind implements with times and resources (docs/inventory-kinds.md).
"""
from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from holdfast import kinds
from holdfast.domain.booking import Booking
from holdfast.domain.errors import InvalidRequest, SoldOut
from holdfast.domain.inventory import Places
from holdfast.kinds.base import Inventory, Kind, checked_quantity
from holdfast.ports import InventoryReads

WINDOWS = {"POOL#000": "12:00", "POOL#001": "12:30", "POOL#002": "13:00"}
ORDER = list(WINDOWS)


class EntryWindows(Kind):
    name = "toy_windows"
    label = "entry_windows"
    payment_mode = "two_stage"

    def accepts(self, request: Any) -> bool:
        return getattr(request, "seat_map", None) is None and getattr(request, "category", "") == "windowed"

    def inventory(self, request: Any) -> Inventory:
        per_window = int(request.capacity or 0)
        return Inventory(capacity=per_window * len(WINDOWS), pool_sizes=[per_window] * len(WINDOWS))

    def validate(self, event: dict[str, Any], request: Any) -> dict[str, Any]:
        return {"quantity": checked_quantity(event, request.quantity)}

    def _free(self, store: InventoryReads, event_id: str) -> dict[str, int]:
        return {pool.pool_id: pool.available for pool in store.read_pools(event_id)}

    def plan(self, store: InventoryReads, event: dict[str, Any], wanted: dict[str, Any], rng: random.Random,
             attempt: int, *, now: datetime) -> Places:
        free = self._free(store, event["event_id"])
        for window in ORDER:
            if free[window] >= wanted["quantity"]:
                return Places(self.name, wanted["quantity"], pools=((window, wanted["quantity"]),))
        raise SoldOut(available=max(free.values()))

    def replan(self, store: InventoryReads, booking: Booking, rng: random.Random | None = None, *,
               now: datetime) -> Places | None:
        [(window, count)] = booking.places.pools
        return booking.places if self._free(store, booking.event_id)[window] >= count else None

    def alternatives(self, store: InventoryReads, event: dict[str, Any], booking: Booking, *,
                     now: datetime) -> list[dict[str, Any]]:
        [(window, count)] = booking.places.pools
        free = self._free(store, booking.event_id)
        others = [w for w in ORDER if w != window and free[w] >= count]
        others.sort(key=lambda w: abs(ORDER.index(w) - ORDER.index(window)))
        return [{"window": WINDOWS[w], "available": free[w]} for w in others]

    def plan_choice(self, store: InventoryReads, event: dict[str, Any], booking: Booking,
                    choice: dict[str, Any], *, now: datetime) -> Places:
        by_label = {label: pool for pool, label in WINDOWS.items()}
        window = by_label.get(choice.get("window"))
        if window is None:
            raise InvalidRequest(f"window must be one of {', '.join(WINDOWS.values())}.", code="invalid_window")
        count = booking.places.quantity
        free = self._free(store, booking.event_id)[window]
        if free < count:
            raise SoldOut(available=free)
        return Places(self.name, count, pools=((window, count),))

    def counts(self, store: InventoryReads, event_id: str, consistent: bool = True) -> dict[str, int]:
        pools = store.read_pools(event_id)
        return {state: sum(getattr(pool, state) for pool in pools) for state in ("available", "held", "sold")}

    def describe_places(self, places: Places) -> dict[str, Any]:
        return {**super().describe_places(places), "window": WINDOWS[places.pools[0][0]]}


def register() -> EntryWindows:
    """Register the toy kind (idempotent; it stays registered for the session, like toy_kind)."""
    return kinds.register(EntryWindows())  # type: ignore[return-value]
