"""A seat map: every seat a named unit, chosen by the customer or best available by the engine."""
from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from holdfast.domain.booking import Booking
from holdfast.domain.commands import CreateEvent, HoldPlaces
from holdfast.domain.errors import InvalidRequest, SeatsUnavailable, SoldOut
from holdfast.domain.inventory import InventoryKind, Places, seat_ids_from_rows
from holdfast.domain.offering import Offering
from holdfast.ports import InventoryReads
from holdfast.kinds.base import Inventory, Kind, checked_quantity
from . import start, tickets
from .seating import choose_best_available

AVAILABLE_SEATS_SHOWN = 50


class SeatMap(Kind):
    name = InventoryKind.NAMED.value
    label = "seated"

    # sold until it starts (start.py)
    check_time, ended = start.check_time, start.ended

    def accepts(self, request: Any) -> bool:
        return isinstance(request, CreateEvent) and request.seat_map is not None

    def inventory(self, request: Any) -> Inventory:
        seat_map = request.seat_map
        if seat_map.rows is not None:
            units = seat_ids_from_rows(list(seat_map.rows))
        else:
            units = list(seat_map.seat_ids or [])
        return Inventory(capacity=len(units), unit_ids=units)

    def validate(self, event: Offering, request: HoldPlaces) -> dict[str, Any]:
        if request.best_available:
            return {"best_available": checked_quantity(event, request.quantity)}
        if request.seats is None:
            raise InvalidRequest("This event has a seat map; name the seats.", code="seats_required")
        limit = event.max_per_booking
        seats = request.seats
        if not seats or len(seats) > limit:
            raise InvalidRequest(f"Between 1 and {limit} seats may be booked at once.", code="invalid_quantity", max=limit)
        if len(set(seats)) != len(seats):
            duplicates = sorted({seat for seat in seats if seats.count(seat) > 1})
            raise InvalidRequest("The same seat is named twice.", code="duplicate_seats", seats=duplicates)
        return {"seats": list(seats)}

    def plan(self, store: InventoryReads, event: Offering, wanted: dict[str, Any], rng: random.Random,
             attempt: int, *, now: datetime) -> Places:
        event_id = event.event_id
        if "best_available" in wanted:
            # Chosen from a consistent read; the hold's conditional seat claims still decide, and a
            # lost race comes back here to choose again, among more candidates.
            states = self._consistent_states(store, event_id)
            chosen = choose_best_available(states, wanted["best_available"], rng, among=4 ** attempt)
            if chosen is None:
                raise SoldOut(available=sum(1 for state in states.values() if state == "available"))
            return Places(self.name, len(chosen), units=chosen)
        seats = wanted["seats"]
        units = store.read_units(event_id, seats)
        unknown = [seat for seat in seats if seat not in units]
        if unknown:
            raise InvalidRequest("These seats do not exist at this event.", code="unknown_seats", seats=unknown)
        taken = [seat for seat in seats if units[seat]["state"] != "available"]
        if taken:
            free = [seat for seat, state in self._consistent_states(store, event_id).items() if state == "available"]
            raise SeatsUnavailable(taken, free[:AVAILABLE_SEATS_SHOWN], len(free))
        return Places(self.name, len(seats), units=tuple(seats))

    def replan(self, store: InventoryReads, booking: Booking, rng: random.Random | None = None, *,
               now: datetime) -> Places | None:
        """The very same seats, if every one of them is free again and the event has not started."""
        if self.ended(booking, now):
            return None
        units = store.read_units(booking.event_id, booking.places.units)
        if all(units.get(unit, {}).get("state") == "available" for unit in booking.places.units):
            return booking.places
        return None

    # a confirmed booking's tickets, one per place (tickets.py)
    view_extras, passes, admitted = tickets.view_extras, tickets.passes, tickets.admitted

    def counts(self, store: InventoryReads, event_id: str, consistent: bool = True) -> dict[str, int]:
        states = self._consistent_states(store, event_id) if consistent else store.seat_states(event_id)
        totals = {"available": 0, "held": 0, "sold": 0}
        for state in states.values():
            totals[state] = totals.get(state, 0) + 1
        return totals

    def unit_states(self, store: InventoryReads, event_id: str) -> dict[str, str] | None:
        return store.seat_states(event_id)

    def describe_places(self, places: Places) -> dict[str, Any]:
        return {**super().describe_places(places), "seats": list(places.units)}

    def waitlist_request(self, quantity: int) -> dict[str, Any]:
        return {"quantity": quantity, "best_available": True}

    @staticmethod
    def _consistent_states(store: InventoryReads, event_id: str) -> dict[str, str]:
        return {unit["unit"]: unit["state"] for unit in store.list_units(event_id)}
