"""Appointment slots: a seat in a group session, or a whole resource, for a time.

A service (an offering of this kind) is done on one of its resources for ``duration_minutes``,
starting on its step within the resource's opening hours. A booking claims every time granule of
the resource its slot covers (products/appointments/timeslots.py, adapters/granule_claims.py): the whole resource
for a private service, or ``quantity`` seats of the group session named by service and start. The
granules belong to the resource, not the service, so everything booked on one resource competes
on the same items, in the booking's one transaction.
"""
from __future__ import annotations

import random
from datetime import date, datetime, timedelta, timezone
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from holdfast.clock import iso, parse_iso
from holdfast.domain.booking import Booking
from holdfast.domain.errors import Conflict, InvalidRequest, SoldOut
from holdfast.domain.inventory import Granule, Places
from holdfast.ports import InventoryReads
from holdfast.kinds.base import Inventory, Kind
from .timeslots import (GRANULE, OpeningHours, Slot, day_slots, granule_key, local_day, parse_granule_key,
                        utc_days, zone)

if TYPE_CHECKING:
    from .schemas import SlotsSettings


class SlotUnavailable(SoldOut):
    """An appointment time that is taken (or has fewer seats left than asked), with free times near it."""

    def __init__(self, available: int, nearby: list[dict[str, Any]]) -> None:
        Conflict.__init__(self, "This time is not available; the nearest free times are listed.",
                          code="slot_unavailable", available=available, nearby=nearby)


#: How many free times a refused booking is offered instead.
NEARBY_SHOWN = 5


class Slots(Kind):
    name = "slots"
    #: a confirmed slot may move to another time or resource (services/exchange.py)
    exchangeable = True
    offers_alternatives = True
    label = "appointment_slots"
    #: a slot's booking may be given to someone else (issue 45); it shows no credential to void
    transferable = True

    @property
    def settings_model(self) -> type[SlotsSettings]:
        # imported on first use: the functions that never read such an offering skip pydantic
        from .schemas import SlotsSettings

        return SlotsSettings

    # ------------------------------------------------------------------------ creation
    def accepts(self, request: Any) -> bool:
        return isinstance(request, self.settings_model)

    def inventory(self, request: Any) -> Inventory:
        # Nothing is written up front: a granule's item appears with its first claim.
        return Inventory(capacity=request.seats)

    # --------------------------------------------------------------------------- holds
    def validate(self, event: dict[str, Any], request: Any) -> dict[str, Any]:
        # A hold command carries a time only when it came from POST /services/{id}/bookings.
        if getattr(request, "starts_at", None) is None or getattr(request, "resource_id", None) is None:
            raise InvalidRequest("This is an appointment service: book a time with POST /services/{id}/bookings.",
                                 code="slot_required")
        settings = self.settings(event)
        resource = event["resources"].get(request.resource_id)
        if resource is None:
            raise InvalidRequest("This service does not take place on that resource.", code="unknown_resource",
                                 resource_ids=settings.resource_ids)
        if settings.mode == "private":
            if request.quantity is not None:
                raise InvalidRequest("A private booking takes the whole resource; leave quantity out.",
                                     code="quantity_not_supported")
            quantity = 1
        else:
            quantity = 1 if request.quantity is None else request.quantity
            if not 1 <= quantity <= settings.seats:
                raise InvalidRequest(f"quantity must be between 1 and {settings.seats}.", code="invalid_quantity",
                                     max=settings.seats)
        tz = zone(resource["timezone"])
        starts = request.starts_at.astimezone(timezone.utc)
        offered = [slot.starts_at for slot in self._day_slots(settings, resource, local_day(starts, tz))]
        if starts not in offered:
            raise InvalidRequest("No slot of this service starts at that time: slots start on its step within "
                                 "the resource's opening hours.", code="slot_not_offered",
                                 opening_hours={"open": resource["open"], "close": resource["close"]},
                                 timezone=resource["timezone"], step_minutes=settings.step)
        return {"starts_at": iso(starts), "resource_id": request.resource_id, "quantity": quantity}

    def check_time(self, event: dict[str, Any], wanted: dict[str, Any], now: datetime) -> None:
        if parse_iso(wanted["starts_at"]) <= now:
            raise InvalidRequest("This time has already begun.", code="slot_in_past")

    def plan(self, store: InventoryReads, event: dict[str, Any], wanted: dict[str, Any], rng: random.Random,
             attempt: int, *, now: datetime) -> Places:
        settings = self.settings(event)
        resource_id, quantity = wanted["resource_id"], wanted["quantity"]
        start = parse_iso(wanted["starts_at"])
        slot = Slot(start, start + timedelta(minutes=settings.duration_minutes))
        session = self.session(event, slot)
        items = self._granules(store, event, resource_id, local_day(start, zone(event["resources"][resource_id]["timezone"])))
        left = seats_left(items, slot, session, settings.seats)
        if left >= quantity:
            return self._places(resource_id, slot, session, quantity, settings.seats)
        raise SlotUnavailable(available=left, nearby=self._nearby(store, event, slot, quantity, resource_id, now))

    def replan(self, store: InventoryReads, booking: Booking, rng: random.Random | None = None, *,
               now: datetime) -> Places | None:
        """The very same time, if it has not begun and can be taken again (a late payment)."""
        if self.ended(booking, now):
            return None
        granules = booking.places.granules
        first = granules[0]
        days = sorted({granule.at[:10] for granule in granules})
        items = store.read_granules(first.resource_id, days)
        slot = Slot(parse_granule_key(first.at), parse_granule_key(granules[-1].at) + GRANULE)
        left = seats_left(items, slot, first.session or None, first.capacity)
        return booking.places if left >= first.seats else None

    def ended(self, booking: Booking, now: datetime) -> bool:
        # The same rule as a new booking's check_time: a slot that has begun is not sold.
        return parse_granule_key(booking.places.granules[0].at) <= now

    # ------------------------------------------------------- a late payment's conflict case
    def alternatives(self, store: InventoryReads, event: dict[str, Any], booking: Booking, *,
                     now: datetime) -> list[dict[str, Any]]:
        """The nearest free times of the same service for the booking's quantity: every slot of a
        service costs the same, so each costs what the booking costs."""
        granules = booking.places.granules
        first = granules[0]
        slot = Slot(parse_granule_key(first.at), parse_granule_key(granules[-1].at) + GRANULE)
        nearby = self._nearby(store, event, slot, booking.places.quantity, first.resource_id, now)
        return [{"starts_at": free["starts_at"], "resource_id": free["resource_id"], "ends_at": free["ends_at"],
                 "available": free["available"]} for free in nearby]

    def plan_choice(self, store: InventoryReads, event: dict[str, Any], booking: Booking,
                    choice: dict[str, Any], *, now: datetime) -> Places:
        """The chosen time, checked like a new booking's (validate, check_time) and planned from a
        fresh read (plan: SlotUnavailable when it went meanwhile)."""
        try:
            starts_at = parse_iso(str(choice["starts_at"]))
            resource_id = str(choice["resource_id"])
        except (KeyError, ValueError):
            raise InvalidRequest("Choose an alternative by its starts_at and resource_id.",
                                 code="invalid_alternative") from None
        private = self.settings(event).mode == "private"
        request = SimpleNamespace(starts_at=starts_at, resource_id=resource_id,
                                  quantity=None if private else booking.places.quantity)
        wanted = self.validate(event, request)
        self.check_time(event, wanted, now)
        return self.plan(store, event, wanted, random.Random(), 0, now=now)

    def normalise_choice(self, choice: dict[str, Any]) -> dict[str, Any]:
        """``starts_at`` as the UTC instant the offers are written in."""
        normal = dict(choice)
        try:
            normal["starts_at"] = iso(parse_iso(str(choice["starts_at"])))
        except (KeyError, ValueError):
            pass
        return normal

    # ---------------------------------------------------------------------- availability
    def counts(self, store: InventoryReads, event_id: str, consistent: bool = True) -> dict[str, int]:
        raise InvalidRequest("An appointment service has places per time: see "
                             "GET /services/{service_id}/availability?date=YYYY-MM-DD.", code="availability_by_date")

    def availability(self, store: InventoryReads, event: dict[str, Any], day: date, now: datetime) -> list[dict[str, Any]]:
        """Every slot of the local day on each of the service's resources that has not begun, with
        the seats left (1 or 0 for a private service)."""
        settings = self.settings(event)
        found = []
        for resource_id in settings.resource_ids:
            resource = event["resources"][resource_id]
            items = self._granules(store, event, resource_id, day)
            for slot in self._day_slots(settings, resource, day):
                if slot.starts_at <= now:
                    continue
                found.append({"starts_at": iso(slot.starts_at), "ends_at": iso(slot.ends_at),
                              "resource_id": resource_id,
                              "available": seats_left(items, slot, self.session(event, slot), settings.seats)})
        return found

    def starts_at(self, event: Any, booking: Booking) -> str | None:
        """The booking's own slot (a service's offering has no start of its own)."""
        granules = booking.places.granules
        return iso(parse_granule_key(min(granule.at for granule in granules))) if granules else None

    def describe_places(self, places: Places) -> dict[str, Any]:
        view = super().describe_places(places)
        if places.granules:
            first, last = places.granules[0], places.granules[-1]
            view.update(resource_id=first.resource_id, starts_at=iso(parse_granule_key(first.at)),
                        ends_at=iso(parse_granule_key(last.at) + GRANULE),
                        mode="group" if first.session else "private")
        return view

    def waitlist_request(self, quantity: int) -> dict[str, Any]:
        raise InvalidRequest("Appointment services have no waitlist; pick another free time.",
                             code="waitlist_not_supported")

    # ----------------------------------------------------------------------------- parts
    @staticmethod
    def settings(event: dict[str, Any]) -> SlotsSettings:
        from .schemas import SlotsSettings

        settings = event["settings"]
        # An Offering carries them parsed already; a stored item (the catalog's readers) as a dict.
        return settings if isinstance(settings, SlotsSettings) else SlotsSettings.model_validate(settings)

    @staticmethod
    def session(event: dict[str, Any], slot: Slot) -> str | None:
        """The group session a slot is (service and start), or None: a private booking is its own."""
        if Slots.settings(event).mode != "group":
            return None
        return f"S#{event['event_id']}#{granule_key(slot.starts_at)}"

    def _places(self, resource_id: str, slot: Slot, session: str | None, quantity: int, capacity: int) -> Places:
        granules = tuple(Granule(resource_id, granule_key(moment), quantity, session or "", capacity)
                         for moment in slot.granules())
        return Places(self.name, quantity, granules=granules)

    @staticmethod
    def hours(resource: dict[str, Any]) -> OpeningHours:
        return OpeningHours.parse(resource["open"], resource["close"])

    @classmethod
    def _day_slots(cls, settings: SlotsSettings, resource: dict[str, Any], day: date) -> list[Slot]:
        return day_slots(day, zone(resource["timezone"]), cls.hours(resource), settings.duration_minutes, settings.step)

    @staticmethod
    def _granules(store: InventoryReads, event: dict[str, Any], resource_id: str, day: date) -> dict[str, dict[str, Any]]:
        tz = zone(event["resources"][resource_id]["timezone"])
        return store.read_granules(resource_id, [str(d) for d in utc_days(day, tz)])

    def _nearby(self, store: InventoryReads, event: dict[str, Any], wanted: Slot, quantity: int,
                resource_id: str, now: datetime) -> list[dict[str, Any]]:
        """Free times of the same local day on the service's resources that have not begun by
        ``now`` (the service's clock), nearest first."""
        day = local_day(wanted.starts_at, zone(event["resources"][resource_id]["timezone"]))
        free = [slot for slot in self.availability(store, event, day, now) if slot["available"] >= quantity]
        free.sort(key=lambda slot: abs((parse_iso(slot["starts_at"]) - wanted.starts_at).total_seconds()))
        return free[:NEARBY_SHOWN]


def seats_left(items: dict[str, dict[str, Any]], slot: Slot, session: str | None, capacity: int) -> int:
    """Seats a slot still has: ``capacity`` where all its granules are free, less the seats taken
    where they are this session's, 0 where any granule is used by something else."""
    left = capacity
    for moment in slot.granules():
        item = items.get(granule_key(moment))
        taken = int(item.get("taken", 0)) if item else 0
        if taken == 0:
            continue
        if session is None or item.get("session") != session:
            return 0
        left = min(left, capacity - taken)
    return max(left, 0)
