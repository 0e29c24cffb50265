"""Parking spaces: a lot (an offering of this kind) has typed spaces; a reservation takes the best
free space for its whole time window, falling back by type.

A space is a resource whose time granules (30 minutes, products/parking/rules.py) are claimed like an
appointment's whole-resource booking (adapters/granule_claims.py): the resource id
``<lot>|<space>`` keeps a lot's granules in one partition a day, so a plan reads the window of
every space with one range query a day. Overlapping windows share a granule and exclude each other
atomically, as do two that use the same half hour; windows touching on a half hour share none. A plan that loses a race is re-planned from a fresh read
by the hold path and takes the next candidate in the same fallback order.
"""
from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from holdfast.clock import iso, parse_iso
from holdfast.domain.booking import Booking
from holdfast.domain.errors import Conflict, InvalidRequest, SoldOut
from holdfast.domain.inventory import Granule, Places
from holdfast.domain.lifecycle import ExtraState
from holdfast.domain.money import Money
from holdfast.ports import InventoryReads
from holdfast.kinds.base import Inventory, Kind
from . import rules

if TYPE_CHECKING:
    from .schemas import ParkingSettings

CHECKED_IN, COMPLETED, NO_SHOW = "CHECKED_IN", "COMPLETED", "NO_SHOW"
#: A confirmed reservation the customer gave up when the lot's policy gives nothing back.
CANCELLED_NO_REFUND = "CANCELLED_NO_REFUND"


class NoSpaceAvailable(SoldOut):
    def __init__(self, tried: tuple[str, ...]) -> None:
        Conflict.__init__(self, "No space that fits this vehicle is free for the whole window.",
                          code="no_space_available", tried=list(tried))


class Parking(Kind):
    name = "parking"
    label = "parking_spaces"
    personal_details = ("plate", "permit")
    extra_states = (
        ExtraState(CHECKED_IN, frozenset({"CONFIRMED"}), frozenset({"gate"}), "sold", "vehicle.entered",
                   in_use=True),   # the car is inside: live until it leaves, whatever its window says
        ExtraState(COMPLETED, frozenset({CHECKED_IN}), frozenset({"gate"}), "available", "vehicle.exited",
                   renders=True),
        # a no-show keeps its money only: a refunded one goes to REFUND_PENDING instead (refund_on_timer)
        ExtraState(NO_SHOW, frozenset({"CONFIRMED"}), frozenset({"timer"}), "available", "booking.no_show",
                   renders=True),
        ExtraState(CANCELLED_NO_REFUND, frozenset({"CONFIRMED"}), frozenset({"customer"}), "available",
                   "booking.cancelled"),
    )

    @property
    def settings_model(self) -> type[ParkingSettings]:
        # imported on first use: the functions that never read such an offering skip pydantic
        from .schemas import ParkingSettings

        return ParkingSettings

    def accepts(self, request: Any) -> bool:
        return isinstance(request, self.settings_model)

    def inventory(self, request: Any) -> Inventory:
        return Inventory(capacity=len(request.spaces))   # granule items appear with their first claim

    # --------------------------------------------------------------------------- holds
    def validate(self, event: Any, request: Any) -> dict[str, Any]:
        if getattr(request, "vehicle_type", None) is None or getattr(request, "window_from", None) is None:
            raise InvalidRequest("This is a parking lot: reserve with POST /lots/{lot_id}/reservations.",
                                 code="reservation_required")
        start, end = _moment(request.window_from), _moment(request.window_to)
        check_window(start, end)
        return {"vehicle_type": request.vehicle_type, "plate": rules.normalise_plate(request.plate),
                "from": iso(start), "to": iso(end), "permit": bool(request.handicap_permit)}

    def check_time(self, event: Any, wanted: dict[str, Any], now: datetime) -> None:
        # as far back as the current granule, which the window claims anyway (and a driver's clock
        # a minute behind the server's is no error)
        if parse_iso(wanted["from"]) < rules.floor_granule(now):
            raise InvalidRequest("The window has already begun; start it at the current half hour or later.",
                                 code="window_in_past")

    def plan(self, store: InventoryReads, event: Any, wanted: dict[str, Any], rng: random.Random,
             attempt: int, *, now: datetime) -> Places:
        start, end = parse_iso(wanted["from"]), parse_iso(wanted["to"])
        settings = self.settings(event)
        space = allocate(store, rules.lot_id_of(event), settings, wanted["vehicle_type"], wanted["permit"], start, end)
        if space is None:
            raise NoSpaceAvailable(rules.fallback(wanted["vehicle_type"], wanted["permit"]))
        return self.places(rules.lot_id_of(event), space.space_id, start, end)

    def replan(self, store: InventoryReads, booking: Booking, rng: random.Random | None = None, *,
               now: datetime) -> Places | None:
        """The same space for the same window, if the window has not ended and the space is still
        free for it (a late payment)."""
        if self.ended(booking, now):
            return None
        granules = booking.places.granules
        lot_id, space_id = granules[0].resource_id.split("|", 1)
        items = store.read_lot_granules(lot_id, granules[0].at, rules.granule_key(  # type: ignore[attr-defined]
            rules.parse_granule(granules[-1].at) + rules.GRANULE))
        taken = any(int(items.get((space_id, g.at), {}).get("taken", 0)) for g in granules)
        return None if taken else booking.places

    def ended(self, booking: Booking, now: datetime) -> bool:
        # the window the customer asked for, not its last granule: 10:10-11:40 is over at 11:40
        to = (booking.kind_details or {}).get("to")
        return (parse_iso(to) if to else rules.parse_granule(booking.places.granules[-1].at) + rules.GRANULE) <= now

    def places(self, lot_id: str, space_id: str, start: datetime, end: datetime) -> Places:
        granules = tuple(Granule(f"{lot_id}|{space_id}", key) for key in rules.window_granules(start, end))
        return Places(self.name, 1, granules=granules)

    def booking_details(self, event: Any, wanted: dict[str, Any], places: Places) -> dict[str, Any]:
        settings = self.settings(event)
        space_id = places.granules[0].resource_id.split("|", 1)[1]
        # the no-show timer counts from when the reservation can first be used: the later of its
        # window's start and its confirmation (Booking.confirmed sets timer_at as it is paid)
        return {"plate": wanted["plate"], "vehicle_type": wanted["vehicle_type"], "permit": wanted["permit"],
                "space_id": space_id, "space_type": settings.by_id()[space_id].type,
                "from": wanted["from"], "to": wanted["to"],
                "timer_from": wanted["from"], "timer_grace_seconds": settings.no_show_grace_seconds,
                "timer_state": NO_SHOW}

    def cancel_without_refund(self, event: Any, booking: Booking, now: datetime) -> str | None:
        until = self.refund_until(event, booking)
        if until is None or now > parse_iso(until):
            return CANCELLED_NO_REFUND
        return None

    def refund_until(self, event: Any, booking: Booking) -> str | None:
        policy = self.settings(event).policy
        if policy.cancel_refund == "none":
            return None
        start = parse_iso((booking.kind_details or {})["from"])
        return iso(start - timedelta(minutes=policy.cancel_refund_until_minutes_before))

    def refund_on_timer(self, event: Any, booking: Booking) -> bool:
        return self.settings(event).policy.refund_no_show

    def view_extras(self, booking: Booking, credentials: Any) -> dict[str, Any]:
        details = booking.kind_details or {}
        view = {key: details[key] for key in ("space_id", "space_type", "plate", "vehicle_type", "from", "to")
                if key in details}
        token = self.pass_token(booking, credentials)
        if token is not None:
            view["entry_token"] = token
        return view

    def pass_token(self, booking: Booking, credentials: Any) -> str | None:
        """The entry pass, signed with the lot's key, once the reservation is paid and until the car has left."""
        if str(booking.status) not in ("CONFIRMED", CHECKED_IN) or credentials is None:
            return None
        if booking.erased_at or not (booking.kind_details or {}).get("plate"):
            return None   # erased: the pass named its plate, and a message composed late must not fail on it
        return credentials().entry_token(booking.event_id, booking.booking_id, booking.kind_details or {})

    def hold_price(self, event: Any, places: Places, wanted: dict[str, Any]) -> Money:
        """The tariff of the window asked for: 10:10-11:40 is 90 minutes, though it claims the
        granules 10:00-12:00."""
        return self._tariff(event, rules.window_minutes(parse_iso(wanted["from"]), parse_iso(wanted["to"])))

    def price(self, event: Any, places: Places) -> Money:
        """The tariff of the granules (where no window was asked for)."""
        return self._tariff(event, len(places.granules) * int(rules.GRANULE.total_seconds() // 60))

    def _tariff(self, event: Any, minutes: int) -> Money:
        return rules.Tariff.of(self.settings(event), event["currency"]).charge(minutes)

    # ---------------------------------------------------------------------- availability
    def counts(self, store: InventoryReads, event_id: str, consistent: bool = True) -> dict[str, int]:
        raise InvalidRequest("A parking lot has places per time: see GET /lots/{lot_id}.", code="lot_counts_by_type")

    def describe_places(self, places: Places) -> dict[str, Any]:
        view = super().describe_places(places)
        if places.granules:
            view["space_id"] = places.granules[0].resource_id.split("|", 1)[1]
            # the granules claimed; the booking's own ``from`` and ``to`` are the window asked for
            view["from"] = iso(rules.parse_granule(places.granules[0].at))
            view["to"] = iso(rules.parse_granule(places.granules[-1].at) + rules.GRANULE)
        return view

    def waitlist_request(self, quantity: int) -> dict[str, Any]:
        raise InvalidRequest("Parking lots have no waitlist.", code="waitlist_not_supported")

    @staticmethod
    def settings(event: Any) -> ParkingSettings:
        from .schemas import ParkingSettings

        settings = event["settings"]
        return settings if isinstance(settings, ParkingSettings) else ParkingSettings.model_validate(settings)


def check_window(start: datetime, end: datetime) -> None:
    if not (rules.on_minute(start) and rules.on_minute(end)):
        raise InvalidRequest("from and to must be whole minutes (e.g. 10:10, UTC offsets allowed).",
                             code="window_not_on_minute")
    if end <= start:
        raise InvalidRequest("to must be after from.", code="invalid_window")
    if end - start > rules.MAX_WINDOW:
        raise InvalidRequest("A reservation lasts at most 24 hours.", code="window_too_long", max_hours=24)


def allocate(store: Any, lot_id: str, settings: ParkingSettings, vehicle_type: str, permit: bool,
             start: datetime, end: datetime):
    """The best space free for all of [start, end): the first type of the fallback order that has
    one, and within a type the lowest priority, then the space id. None when nothing fits.

    A space with a car in it (an open ticket) is not free, whatever its granules say: a car keeps
    its space until it leaves, and a drive-up's claim covers only the stay it was taken for (the
    lot's default), so one that stays longer would otherwise see its space given to the next car."""
    # every granule the window touches: one partly used by another window is taken
    items = store.read_lot_granules(lot_id, rules.granule_key(rules.floor_granule(start)),
                                    rules.granule_key(rules.ceil_granule(end)))
    busy = {space for (space, _), item in items.items() if int(item.get("taken", 0))}
    busy |= {ticket["space_id"] for ticket in store.open_tickets(lot_id)}
    for space_type in rules.fallback(vehicle_type, permit):
        free = [s for s in settings.spaces if s.type == space_type and s.space_id not in busy]
        if free:
            return min(free, key=lambda s: (s.priority, s.space_id))
    return None


def space_states(store: Any, lot_id: str, settings: ParkingSettings, now: datetime) -> dict[str, str]:
    """Every space's state now: available, held (a reservation being paid), reserved, occupied."""
    start = rules.floor_granule(now)
    items = store.read_lot_granules(lot_id, rules.granule_key(start), rules.granule_key(start + rules.GRANULE))
    occupied = {ticket["space_id"] for ticket in store.open_tickets(lot_id)}
    states = {}
    for space in settings.spaces:
        item = items.get((space.space_id, rules.granule_key(start))) or {}
        if space.space_id in occupied:
            states[space.space_id] = "occupied"
        elif int(item.get("held", 0)):
            states[space.space_id] = "held"
        elif int(item.get("sold", 0)):
            states[space.space_id] = "reserved"
        else:
            states[space.space_id] = "available"
    return states


def _moment(value: Any) -> datetime:
    return value if isinstance(value, datetime) else parse_iso(str(value))
