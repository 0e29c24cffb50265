"""The inventory kinds the invariant suite runs on, through the same test code: an offering of
each kind with ``n`` places, and a hold request for ``k`` of them that lets the kind choose.

The toy kind (tests/support/toy_kind.py) is registered here, so every parametrised test runs on
a kind the engine has never heard of as well as on the built-in ones.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from holdfast.products.events.commands import CreateEvent
from holdfast.schemas import BookingIn
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
    #: Whether a late payment whose places were resold is offered other places (a conflict case)
    #: rather than given back: ``Kind.alternatives`` finds some for this case's offering.
    offers_alternatives: bool = False
    #: The places a hold of ``ask(2)`` takes, when the kind decides it (a parking space: 1).
    held_places: int = 2

    def body(self, places: int, **overrides: Any) -> dict[str, Any]:
        """The fields of an offering of this kind with ``places`` places (event_request's input)."""
        inventory = ({"capacity": None, "seat_map": {"seat_ids": [f"S-{n}" for n in range(1, places + 1)]}}
                     if self.seated else {"capacity": places})
        return {**inventory, **self.event_fields, **overrides}

    def event(self, places: int, **overrides: Any) -> CreateEvent:
        return event_request(**self.body(places, **overrides))

    def create(self, catalog: Any, places: int, **overrides: Any) -> str:
        """Create an offering of this kind with ``places`` places; its id."""
        return catalog.create_event(self.event(places, **overrides))["event_id"]

    def ask(self, quantity: int) -> Any:
        return BookingIn(quantity=quantity, **self.ask_fields)

    def largest_holdable(self, snap: Snapshot, event_id: str) -> int:
        if self.largest is not None:
            return self.largest(snap, event_id)
        return inventory_total(snap, event_id)["available"]

    def __str__(self) -> str:
        return self.name


#: The one slot the appointment case sells: a group session on a hall open all day (UTC); the
#: hall's id is derived from its creation key, so a request can name it before it exists.
SLOT_HALL_KEY = "kind-case-hall"
SLOT_STARTS_AT = "2030-01-02T10:00:00Z"


@dataclass(frozen=True)
class SlotsCase(KindCase):
    """Appointment slots: ``places`` seats of one group session, asked for by quantity."""

    def create(self, catalog: Any, places: int, **overrides: Any) -> str:
        from holdfast.products.appointments.schemas import ResourceIn, ServiceIn
        from holdfast.products.appointments.services import AppointmentService
        from holdfast.services.bookings import BookingService

        service = AppointmentService(catalog.store, catalog.clock, BookingService(catalog.store, catalog.clock), 600,
                                     id_salt="tests-deployment-salt")
        owner = overrides.get("caller")   # the model's organizer, so its orders may take a slot
        hall = service.create_resource(ResourceIn.model_validate(
            {"name": "Hall", "timezone": "UTC", "opening_hours": {"open": "00:00", "close": "24:00"}}
        ).command(), SLOT_HALL_KEY, owner)
        assert hall["resource_id"] == slot_hall(owner)
        # 30 minutes: two granules, so every move is a claim on more than one item, at about
        # the cost of the other kinds in the exhaustive race.
        body = {"name": "Session", "mode": "group", "capacity": places, "duration_minutes": 30,
                "resource_ids": [hall["resource_id"]], "price": {"value": "1500.00", "currency": "RUB"},
                "payment_mode": overrides.get("payment_mode", "one_stage"), "hold_ttl_seconds": 600}
        return service.create_service(ServiceIn.model_validate(body).command(), None, owner)["service_id"]

    def ask(self, quantity: int) -> Any:
        from holdfast.products.appointments.schemas import SlotBookingIn

        return SlotBookingIn(starts_at=SLOT_STARTS_AT, resource_id=slot_hall(), quantity=quantity)


def slot_hall(owner: Any = None) -> str:
    from holdfast.domain.ids import created_id

    # the id the service gave the hall it created with SLOT_HALL_KEY (the salt the cases pass it),
    # for ``owner`` (an organizer's key is scoped to it)
    return created_id("tests-deployment-salt", "resource", owner.scoped(SLOT_HALL_KEY) if owner else SLOT_HALL_KEY)


@dataclass(frozen=True)
class ParkingCase(KindCase):
    """Parking: a lot whose one LARGE space is the whole inventory, reserved for one window. A
    reservation always takes one space, whatever ``quantity`` says, so the races that count
    places (last places, the hypothesis machine) do not fit it; the exhaustive race does: its
    hold takes the lot, and the competitor's asks for the same space and window."""

    def create(self, catalog: Any, places: int, **overrides: Any) -> str:
        from holdfast.products.parking.schemas import LotIn
        from holdfast.products.parking.tokens import LotKeys
        from holdfast.services.bookings import BookingService
        from holdfast.products.parking.services.lots import ParkingService

        parking = ParkingService(catalog.store, catalog.clock, BookingService(catalog.store, catalog.clock), 600,
                                 lambda: LotKeys(b"kind-case-parking-master-seed"), id_salt="tests-deployment-salt")
        body = {"name": "Lot", "spaces": [{"space_id": "L1", "type": "LARGE"}], "hold_ttl_seconds": 600,
                "tariff": {"hourly": {"value": "1500.00", "currency": "RUB"}}}
        return parking.create_lot(LotIn.model_validate(body).command())["lot_id"]

    def ask(self, quantity: int) -> Any:
        from holdfast.products.parking.schemas import ReservationIn

        return ReservationIn.model_validate({"vehicle_type": "LARGE", "plate": "A123BC77", **PARKING_WINDOW}).command()


PARKING_WINDOW = {"from": "2030-01-02T10:00:00Z", "to": "2030-01-02T11:00:00Z"}


CASES = [
    KindCase("general_admission"),
    KindCase("seat_map", ask_fields={"best_available": True}, seated=True),
    # A hold takes its whole quantity from one zone: the largest zone's room is all one hold can get.
    KindCase("toy_zones", event_fields={"category": "zoned"}, largest=_largest_pool),
    SlotsCase("slots", offers_alternatives=True),
]
BY_NAME = {case.name: case for case in CASES}
#: The kinds the hypothesis machine (model.py) runs on: it creates its offerings from ``body``
#: through the catalog, which appointment services (created through their own service) do not
#: share; the slots kind runs the exhaustive and last-places races and the granule checks.
MODEL_CASES = [case for case in CASES if not isinstance(case, SlotsCase)]
#: Kinds only the exhaustive race runs on (see ParkingCase).
RACE_ONLY_CASES = [ParkingCase("parking", held_places=1)]


def inventory_total(snap: Snapshot, event_id: str) -> dict[str, int]:
    """available / held / sold from the inventory items, whatever the kind keeps them in."""
    if snap.events.get(event_id, {}).get("inventory_kind") == "slots":
        return snap.counts(event_id)   # from the sessions' granule items
    totals: Counter[str] = Counter({"available": 0, "held": 0, "sold": 0})
    for pool in snap.pools.get(event_id, {}).values():
        for state in ("available", "held", "sold"):
            totals[state] += pool[state]
    for unit in snap.units.get(event_id, {}).values():
        totals[unit["state"]] += 1
    return dict(totals)
