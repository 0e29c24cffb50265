"""Appointment services: resources and services created by an organizer, a day's availability,
and bookings of a time, which are held through the same hold path as event places
(BookingService; the ``slots`` inventory kind decides what a time claims)."""
from __future__ import annotations

from datetime import date
from typing import Any

from holdfast import kinds
from holdfast.clock import iso
from holdfast.domain.booking import DEFAULT_HOLDS_PER_CUSTOMER
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import IdempotencyKeyReused, InvalidRequest, NotFound
from holdfast.domain.exchange import EXCHANGE_FIELD
from holdfast.domain.ids import created_id
from holdfast.domain.money import Money
from holdfast.domain.organizers import Caller, owned_by, require_owner
from holdfast.domain.refund_policy import stored_policy
from holdfast.ports import Clock, ItemExists
from holdfast.services.bookings import BookingService, HoldResult
from holdfast.services.catalog import creation_fingerprint, put_offering_once
from holdfast.services.listing import publish_offering, shelf_items, shelf_page
from .kind import Slots
from .timeslots import GRANULE, local_day, parse_granule_key, utc_days, zone
from .ports import AppointmentStore


class AppointmentService:
    def __init__(self, store: AppointmentStore, clock: Clock, bookings: BookingService, default_hold_ttl_seconds: int,
                 id_salt: str) -> None:
        self.store = store
        self.id_salt = id_salt
        self.clock = clock
        self.bookings = bookings
        self.default_hold_ttl = default_hold_ttl_seconds

    # ------------------------------------------------------------------------- resources
    def create_resource(self, request: CreateResource, idempotency_key: str | None = None,
                        caller: Caller | None = None) -> dict[str, Any]:
        """A resource of ``caller``'s; with an Idempotency-Key its id comes from the key (scoped to
        the organizer), so a repeat returns it."""
        fields = {"name": request.name, "timezone": request.timezone, "open": request.opens, "close": request.closes}
        if caller is not None:
            fields["organizer_id"] = caller.organizer_id
        resource = {"resource_id": created_id(self.id_salt, "resource", _scoped(idempotency_key, caller)), **fields,
                    "fingerprint": creation_fingerprint(fields), "created_at": iso(self.clock())}
        try:
            self.store.put_resource(resource)
        except ItemExists:
            existing = self.store.get_resource(resource["resource_id"])
            if existing is None or existing.get("fingerprint") != resource["fingerprint"]:
                raise IdempotencyKeyReused() from None
            resource = existing
        return describe_resource(resource)

    def resources(self, caller: Caller) -> dict[str, Any]:
        """The calling organizer's own resources, oldest first (the operator page offers them when
        a service is made, and for the day view). Resources are not offerings: a key limited to
        some offerings sees them too, as it may name them when its offerings' services use them."""
        return {"resources": [describe_resource(resource) for resource in self.store.owned_resources(caller.organizer_id)]}

    def resource_day(self, resource_id: str, day_text: str | None, caller: Caller | None = None) -> dict[str, Any]:
        """What holds the resource on one of its local days, for its organizer: each run of granules
        one session uses, with its seats held and sold. A private booking is its own session (its
        booking id); a group session names its service and start, and its seats are counted there,
        not per booking. Another organizer's resource is answered like no resource."""
        resource = require_owner(self.store.get_resource(resource_id), caller,
                                 NotFound(f"No resource {resource_id}.", code="resource_not_found"))
        day = _date(day_text)
        tz = zone(resource["timezone"])
        granules = self.store.read_granules(resource_id, [str(d) for d in utc_days(day, tz)])
        runs: list[dict[str, Any]] = []
        for at, item in sorted(granules.items()):
            start = parse_granule_key(at)
            if not int(item.get("taken") or 0) or local_day(start, tz) != day:
                continue   # a granule given back, or one of the neighbouring local day
            counts = {"held": int(item.get("held") or 0), "sold": int(item.get("sold") or 0)}
            last = runs[-1] if runs else None
            if last and last["session"] == item["session"] and last["ends_at"] == start and last["counts"] == counts:
                last["ends_at"] = start + GRANULE
                continue
            runs.append({"session": item["session"], "starts_at": start, "ends_at": start + GRANULE, "counts": counts})
        return {"resource": describe_resource(resource), "date": day.isoformat(),
                "times": [_run(run) for run in runs]}

    # -------------------------------------------------------------------------- services
    def create_service(self, request: CreateService, idempotency_key: str | None = None,
                       caller: Caller | None = None) -> dict[str, Any]:
        settings = request.settings
        if len(set(settings.resource_ids)) != len(settings.resource_ids):
            raise InvalidRequest("A resource is named twice in resource_ids.", code="duplicate_resources")
        resources: dict[str, dict[str, str]] = {}
        for resource_id in settings.resource_ids:
            resource = self.store.get_resource(resource_id)
            if not owned_by(resource, caller):   # another organizer's resource is one that does not exist
                raise InvalidRequest(f"No resource {resource_id}.", code="unknown_resource", resource_id=resource_id)
            hours = Slots.hours(resource)
            if settings.duration_minutes > hours.close_minute - hours.open_minute:
                raise InvalidRequest(f"The service is longer than resource {resource_id} is open.",
                                     code="duration_exceeds_opening_hours", resource_id=resource_id)
            resources[resource_id] = {key: resource[key] for key in ("timezone", "open", "close")}
        price = Money.parse(request.price.value, request.price.currency.upper())
        kind = kinds.for_request(settings)
        created = iso(self.clock())
        event = {
            "event_id": created_id(self.id_salt, "service", _scoped(idempotency_key, caller)), "name": request.name,
            # An offering's descriptive fields, so that every reader of offerings finds them.
            "venue": "", "city": request.city or "", "category": "service", "starts_at": created,
            "price": price.text, "currency": price.currency, "inventory_kind": kind.name,
            "capacity": settings.seats, "max_per_booking": settings.seats,
            "hold_ttl_seconds": settings.hold_ttl_seconds or self.default_hold_ttl,
            "payment_mode": settings.payment_mode, "high_demand": False,
            "max_holds_per_customer": request.max_holds_per_customer or DEFAULT_HOLDS_PER_CUSTOMER,
            "settings": settings.model_dump(), "resources": resources, "created_at": created,
        }
        if caller is not None:
            event["organizer_id"] = caller.organizer_id
        if request.exchange_until_hours is not None:
            event[EXCHANGE_FIELD] = int(request.exchange_until_hours)
        if request.cancellation:
            event["cancellation"] = stored_policy(request.cancellation)
        if request.transfers_allowed is False:   # stored only when forbidden (services/transfers.py)
            event["transfers_allowed"] = False
        if request.captcha_required:   # stored only when asked (services/challenges.py)
            event["captcha_required"] = True
        fingerprint = creation_fingerprint({key: value for key, value in event.items()
                                            if key not in ("created_at", "starts_at")})
        return describe_service(put_offering_once(self.store, event, fingerprint))

    def service(self, service_id: str, caller: Caller | None = None) -> dict[str, Any]:
        """The service; for an organizer, only its own (another's is answered like no service)."""
        missing = NotFound(f"No service {service_id}.", code="service_not_found")
        event = require_owner(self.store.get_event(service_id), caller, missing)
        if not isinstance(kinds.of_event(event), Slots):
            raise missing
        return event

    # --------------------------------------------------------------------------- listing
    def publish_service(self, service_id: str, caller: Caller | None = None) -> dict[str, Any]:
        """List the service in GET /services (its own shelf: never among the events). Publishing
        a published service changes nothing."""
        event = publish_offering(self.store, self.clock, lambda: self.service(service_id, caller), listing_items)
        return describe_service(event) | {"published": True}

    def list_services(self, city: str | None, q: str | None, limit: int, cursor: str | None) -> dict[str, Any]:
        """Published services by name, in ``city``, with every word of ``q`` in the name; a page
        of ``limit`` from ``cursor``."""
        items, next_cursor = shelf_page(self.store, SHELF, city, q, limit, cursor)
        return {"services": [_listed(item) for item in items], "next_cursor": next_cursor}

    def availability(self, service_id: str, day_text: str | None) -> dict[str, Any]:
        event = self.service(service_id)
        day = _date(day_text)
        slots = kinds.of_event(event).availability(self.store, event, day, self.clock())  # type: ignore[attr-defined]
        # name, price and each resource's zone let a page show the day on the resource's clock
        # without a second read (there is no GET of a service)
        return {"service_id": service_id, "name": event["name"], "date": day.isoformat(),
                "mode": Slots.settings(event).mode,
                "price": {"value": event["price"], "currency": event["currency"]},
                "timezones": {rid: res["timezone"] for rid, res in event["resources"].items()}, "slots": slots} \
            | self.bookings.challenge_view(event)   # whether its hold must carry a solved challenge

    def book(self, service_id: str, customer_id: str, idempotency_key: str, request: HoldPlaces) -> HoldResult:
        """A hold on a time, through the one hold path every offering uses."""
        self.service(service_id)
        return self.bookings.create_booking(service_id, customer_id, idempotency_key, request)


#: The shelf of the public listing (domain/search.py) services are on.
SHELF = "SERVICES"


def listing_items(event: dict[str, Any]) -> list[dict[str, Any]]:
    settings = Slots.settings(event)
    shown = {"service_id": event["event_id"], "name": event["name"], "city": event.get("city") or "",
             "mode": settings.mode, "duration_minutes": settings.duration_minutes,
             "price": event["price"], "currency": event["currency"]}
    return shelf_items(SHELF, event, shown, event["name"])


def _listed(item: dict[str, Any]) -> dict[str, Any]:
    return {"service_id": item["service_id"], "name": item["name"], "city": item["city"] or None,
            "mode": item["mode"], "duration_minutes": int(item["duration_minutes"]),
            "price": {"value": item["price"], "currency": item["currency"]}}


def describe_resource(resource: dict[str, Any]) -> dict[str, Any]:
    return {"resource_id": resource["resource_id"], "name": resource["name"], "timezone": resource["timezone"],
            "opening_hours": {"open": resource["open"], "close": resource["close"]}}


def describe_service(event: dict[str, Any]) -> dict[str, Any]:
    settings = Slots.settings(event)
    return {
        "service_id": event["event_id"], "name": event["name"], "city": event.get("city") or None,
        "mode": settings.mode,
        "duration_minutes": settings.duration_minutes, "step_minutes": settings.step,
        "capacity": settings.capacity, "resource_ids": settings.resource_ids,
        "price": {"value": event["price"], "currency": event["currency"]},
        "hold_ttl_seconds": int(event["hold_ttl_seconds"]), "payment_mode": event["payment_mode"],
        "max_holds_per_customer": int(event["max_holds_per_customer"]),
        **({"cancellation": event["cancellation"]} if event.get("cancellation") else {}),
        "transfers_allowed": event.get("transfers_allowed", True) is not False,
    } | ({EXCHANGE_FIELD: int(event[EXCHANGE_FIELD])} if event.get(EXCHANGE_FIELD) is not None else {})


def _run(run: dict[str, Any]) -> dict[str, Any]:
    """A run of granules as the day view shows it: a private booking's id, or a group session's
    service (sessions are "S#<service>#<start>", private bookings "B#<booking>")."""
    shown: dict[str, Any] = {"starts_at": iso(run["starts_at"]), "ends_at": iso(run["ends_at"]), **run["counts"]}
    marker, _, rest = run["session"].partition("#")
    if marker == "B":
        shown.update(mode="private", booking_id=rest)
    else:
        shown.update(mode="group", service_id=rest.rpartition("#")[0])
    return shown


def _date(text: str | None) -> date:
    try:
        day = date.fromisoformat(text or "")
        if len(text or "") != 10 or not 2000 <= day.year <= 2199:
            raise ValueError
        return day
    except ValueError:
        raise InvalidRequest("date must be a day YYYY-MM-DD.", code="invalid_date") from None


def _scoped(key: str | None, caller: Caller | None) -> str | None:
    return caller.scoped(key) if key and caller else key
