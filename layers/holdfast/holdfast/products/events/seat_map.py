"""A seat map: every seat a named unit, chosen by the customer or best available by the engine."""
from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from holdfast.domain.booking import Booking
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import InvalidRequest, SeatsUnavailable, SoldOut
from holdfast.domain.inventory import InventoryKind, Places, seat_ids_from_rows
from holdfast.domain.money import Money
from holdfast.domain.offering import Offering
from holdfast.domain import pricing
from holdfast.ports import InventoryReads
from holdfast.kinds.base import Inventory, Kind, checked_quantity
from . import start, tickets
from .commands import CreateEvent
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
        return Inventory(capacity=len(units), unit_ids=units, unit_categories=seat_map.categories)

    def validate(self, event: Offering, request: HoldPlaces) -> dict[str, Any]:
        wanted = self._validate(event, request)
        return wanted | self._types(event, request, wanted)

    def _validate(self, event: Offering, request: HoldPlaces) -> dict[str, Any]:
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

    @staticmethod
    def _types(event: Offering, request: HoldPlaces, wanted: dict[str, Any]) -> dict[str, Any]:
        """The ticket types asked for, checked against the seats' price categories (none on an
        event of one price, so its requests and their fingerprints stay as they were)."""
        category = request.details.get("price_category")
        ticket_type = request.details.get("ticket_type")
        per_seat = request.details.get("ticket_types")
        if not pricing.has_price_list(event):
            if category is not None:
                raise InvalidRequest("This event has no price categories.", code="unknown_price_category",
                                     price_category=category)
            pricing.ticket_type_for(event, None, ticket_type or next(iter((per_seat or {}).values()), None))
            return {}
        known = [str(c["id"]) for c in event.get("price_categories") or ()]
        if category is not None and category not in known:
            raise InvalidRequest(f"No price category {category} at this event.", code="unknown_price_category",
                                 price_category=category)
        if "best_available" in wanted:
            if per_seat:
                raise InvalidRequest("ticket_types names seats; with best_available give one ticket_type.",
                                     code="invalid_ticket_types")
            for each in [category] if category else known:   # the type must be sold wherever the seats fall
                pricing.ticket_type_for(event, each, ticket_type)
            return {key: value for key, value in (("price_category", category), ("ticket_type", ticket_type))
                    if value is not None}
        seats = wanted["seats"]
        if per_seat and set(per_seat) - set(seats):
            raise InvalidRequest("ticket_types names seats that are not asked for.", code="invalid_ticket_types",
                                 seats=sorted(set(per_seat) - set(seats)))
        categories = pricing.seat_category_map(event)
        types = {}
        for seat in seats:
            if seat in categories:   # an unknown seat is refused by the plan, as before
                types[seat] = pricing.ticket_type_for(event, categories[seat],
                                                      (per_seat or {}).get(seat) or ticket_type)
        return {"ticket_types": types}

    def plan(self, store: InventoryReads, event: Offering, wanted: dict[str, Any], rng: random.Random,
             attempt: int, *, now: datetime) -> Places:
        event_id = event.event_id
        if "best_available" in wanted:
            # Chosen from a consistent read; the hold's conditional seat claims still decide, and a
            # lost race comes back here to choose again, among more candidates.
            states = self._consistent_states(store, event_id)
            if wanted.get("price_category"):
                mine = set((event.get("seat_categories") or {}).get(wanted["price_category"], ()))
                states = {seat: state for seat, state in states.items() if seat in mine}
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

    def hold_price(self, event: Offering, places: Places, wanted: dict[str, Any]) -> Money:
        if not pricing.has_price_list(event):
            return self.price(event, places)
        return pricing.total(self._priced(event, places, wanted), event.currency)

    def booking_details(self, event: Offering, wanted: dict[str, Any], places: Places) -> dict[str, Any] | None:
        if not pricing.has_price_list(event):
            return None
        lines = self._priced(event, places, wanted)
        categories = pricing.seat_category_map(event)
        return {"ticket_types": {seat: self._type_of(event, categories, seat, wanted) for seat in places.units},
                "priced": [line.stored() for line in lines]}

    def _priced(self, event: Offering, places: Places, wanted: dict[str, Any]) -> tuple[pricing.PriceLine, ...]:
        categories = pricing.seat_category_map(event)
        return pricing.priced(event, [(categories.get(seat), self._type_of(event, categories, seat, wanted))
                                      for seat in places.units])

    @staticmethod
    def _type_of(event: Offering, categories: dict[str, str], seat: str, wanted: dict[str, Any]) -> str | None:
        chosen = (wanted.get("ticket_types") or {}).get(seat) or wanted.get("ticket_type")
        return pricing.ticket_type_for(event, categories.get(seat), chosen)

    # a confirmed booking's tickets, one per place (tickets.py)
    view_extras, passes, admitted = tickets.view_extras, tickets.passes, tickets.admitted
    # a confirmed booking may move to another date or seat (services/exchange.py): new tickets
    exchangeable, reissue = True, tickets.reissue
    # a booking given to someone else gets new tickets, its old ones void (issue 45)
    transferable, credential_ids = True, tickets.credential_ids

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
