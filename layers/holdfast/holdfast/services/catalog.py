"""Events: created by an organizer, read by everyone with live counts of their places."""
from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any, Protocol

from .. import kinds
from ..clock import iso
from ..domain.booking import DEFAULT_HOLDS_PER_CUSTOMER
from ..domain.commands import Price
from ..domain.exchange import EXCHANGE_FIELD, change_terms
from ..domain.errors import IdempotencyKeyReused, InvalidRequest, NotFound, TooBusy
from ..domain.ids import created_id
from ..domain.money import Money
from ..domain.refund_policy import stored_policy
from ..domain import companion, pricing
from ..domain.organizers import Caller
from ..ports import CatalogStore, Clock, ItemExists, TransientStoreError
from .challenges import Challenges
from .listing import decode_cursor, encode_cursor, page_limit

#: GET /admin/sales: offerings a page, at most and by default
SALES_PAGE_SIZE = 100


class EventCreation(Protocol):
    """What the catalog reads of a product's command that creates an event (the events product's
    ``CreateEvent``, products/events/commands.py); its kind (``kinds.for_request``) reads the
    inventory part: a capacity, zones, a seat map."""

    name: str
    venue: str
    city: str
    category: str
    starts_at: datetime
    price: Price
    capacity: int | None
    hold_ttl_seconds: int | None
    payment_mode: str | None
    max_per_booking: int
    max_holds_per_customer: int | None
    max_holds_per_address: int | None
    captcha_required: bool
    high_demand: bool
    price_categories: tuple[dict[str, Any], ...] | None
    prices: tuple[dict[str, Any], ...] | None
    zones: tuple[dict[str, Any], ...] | None
    cancellation: tuple[dict[str, Any], ...] | None
    exchange_until_hours: int | None
    transfers_allowed: bool


class CatalogService:
    def __init__(self, store: CatalogStore, clock: Clock, default_hold_ttl_seconds: int, id_salt: str,
                 challenges: Challenges | None = None) -> None:
        self.store = store
        self.clock = clock
        self.default_hold_ttl = default_hold_ttl_seconds
        self.id_salt = id_salt
        #: when a hold must carry a solved challenge: the hold path's own rule (services/challenges.py)
        self.challenges = challenges or Challenges(None)

    def create_event(self, request: EventCreation, idempotency_key: str | None = None,
                     caller: Caller | None = None) -> dict[str, Any]:
        """Create an event, owned by ``caller``. With an Idempotency-Key the event id is derived
        from it (scoped to the organizer), so a repeat returns the event created the first time
        instead of a second event."""
        price = Money.parse(request.price.value, request.price.currency.upper())
        event_id = self._event_id(caller.scoped(idempotency_key) if caller and idempotency_key else idempotency_key)
        kind = kinds.for_request(request)
        inventory = kind.inventory(request)
        capacity, pools, units = inventory.capacity, inventory.pool_sizes, inventory.unit_ids
        event = {
            "event_id": event_id,
            "name": request.name, "venue": request.venue, "city": request.city, "category": request.category,
            "starts_at": iso(request.starts_at), "price": price.text, "currency": price.currency,
            "inventory_kind": kind.name, "capacity": capacity,
            "hold_ttl_seconds": request.hold_ttl_seconds or self.default_hold_ttl,
            "payment_mode": request.payment_mode or kind.payment_mode, "max_per_booking": request.max_per_booking,
            "high_demand": request.high_demand,
            "max_holds_per_customer": request.max_holds_per_customer or DEFAULT_HOLDS_PER_CUSTOMER,
            "created_at": iso(self.clock()),
        }
        if caller is not None:
            event["organizer_id"] = caller.organizer_id
        event |= pricing.stored_price_list(request, price.currency, inventory.unit_categories)
        if request.cancellation:
            event["cancellation"] = stored_policy(request.cancellation)
        if request.exchange_until_hours is not None:
            event[EXCHANGE_FIELD] = int(request.exchange_until_hours)
        if request.max_holds_per_address:
            event["max_holds_per_address"] = int(request.max_holds_per_address)
        if request.captcha_required:
            event["captcha_required"] = True
        if request.transfers_allowed is False:   # stored only when forbidden
            event["transfers_allowed"] = False
        settings = kind.settings_of(request)
        if settings is not None:
            event["settings"] = settings
        # The whole request, inventory included: the same key with other seats is another request.
        fingerprint = creation_fingerprint({"event": {key: value for key, value in event.items() if key != "created_at"},
                                            "pools": pools, "units": units})
        return self.describe(put_offering_once(self.store, event, fingerprint, pools, units))

    def _event_id(self, idempotency_key: str | None) -> str:
        """With an Idempotency-Key the event id is derived from it: a retry addresses the same event."""
        return created_id(self.id_salt, "event", idempotency_key)

    def sales(self, caller: Caller, limit: int | str | None = None, cursor: str | None = None) -> dict[str, Any]:
        """One page of the organizer's own offerings (events, services, lots), newest first, and
        the cursor of the next (None at the end): what the operator page's sales table shows.
        Events carry their live counts, read for this page's only; an offering whose kind sells
        places per time (a service, a lot) has none here: its own view has them by time. A key
        limited to some offerings sees only those."""
        size = page_limit(limit, SALES_PAGE_SIZE)
        bound = f"sales/{caller.organizer_id}"
        offset = int(decode_cursor(cursor, bound, "000000", "999999")["sk"]) if cursor else 0
        offerings = [event for event in self.store.owned_offerings(caller.organizer_id)
                     if caller.sees_offering(event["event_id"])]
        shown = []
        for event in offerings[offset:offset + size]:
            view = {"event_id": event["event_id"], "name": event["name"], "starts_at": event["starts_at"],
                    "inventory": kinds.of_event(event).label, "category": event["category"],
                    "published": bool(event.get("published")), "created_at": event["created_at"]}
            try:
                view["counts"] = self.counts(event)
            except InvalidRequest:
                pass   # a kind that sells places per time has no one count, and says so by refusing
            # places given away (confirmed comps), counted apart: also among the counts' sold
            view["comps"] = self.store.comps_given(event["event_id"])
            if event.get("zones") or event.get("seat_categories"):
                view["by_price_category"] = self._sales_by_category(event)
                if event.get("zones"):
                    view["zones"] = pricing.price_list_view(event, self._zone_counts(event))["zones"]
            shown.append(view)
        following = offset + size
        return {"offerings": shown,
                "next_cursor": encode_cursor(bound, f"{following:06d}") if following < len(offerings) else None}

    def get_event(self, event_id: str) -> dict[str, Any]:
        event = self.store.get_event(event_id)
        if event is None:
            raise NotFound(f"No event {event_id}.", code="event_not_found")
        return self.describe(event)

    def describe(self, event: dict[str, Any]) -> dict[str, Any]:
        counts = self.counts(event)
        return {
            "event_id": event["event_id"], "name": event["name"], "venue": event["venue"], "city": event["city"],
            "category": event["category"], "starts_at": event["starts_at"],
            "price": {"value": event["price"], "currency": event["currency"]},
            "inventory": kinds.of_event(event).label,
            "capacity": int(event["capacity"]), "hold_ttl_seconds": int(event["hold_ttl_seconds"]),
            "payment_mode": event["payment_mode"], "max_per_booking": int(event["max_per_booking"]),
            "high_demand": bool(event.get("high_demand", False)),
            "max_holds_per_customer": int(event.get("max_holds_per_customer") or DEFAULT_HOLDS_PER_CUSTOMER),
            "counts": counts,
        } | pricing.price_list_view(event, self._zone_counts(event)) | _companion(event) \
            | ({"cancellation": event["cancellation"]} if event.get("cancellation") else {}) \
            | change_terms(event) \
            | ({"max_holds_per_address": int(event["max_holds_per_address"])}
               if event.get("max_holds_per_address") else {}) \
            | self.challenges.view(event)

    def _sales_by_category(self, event: dict[str, Any]) -> dict[str, dict[str, int]]:
        """available / held / sold per price category: a zoned event's zones summed by their
        category, a seat map's seats by theirs."""
        totals: dict[str, dict[str, int]] = {}

        def add(category: str, counts: dict[str, int]) -> None:
            into = totals.setdefault(category, {"available": 0, "held": 0, "sold": 0})
            for state, number in counts.items():
                into[state] = into.get(state, 0) + number

        if event.get("zones"):
            counts = self._zone_counts(event)
            for zone in pricing.zones_of(event):
                add(str(zone.price_category), counts.get(zone.zone_id, {}))
        else:
            states = kinds.of_event(event).unit_states(self.store, event["event_id"]) or {}
            for seat, category in pricing.seat_category_map(event).items():
                add(category, {states.get(seat, "available"): 1})
        return totals

    def _zone_counts(self, event: dict[str, Any]) -> dict[str, dict[str, int]]:
        kind = kinds.of_event(event)
        return kind.zone_counts(self.store, event) if event.get("zones") else {}

    def counts(self, event: dict[str, Any]) -> dict[str, int]:
        return kinds.of_event(event).counts(self.store, event["event_id"])


def _companion(event: dict[str, Any]) -> dict[str, Any]:
    shown = companion.window(event)
    return {"companion": shown} if shown else {}


def creation_fingerprint(request: Any) -> str:
    """What identifies an offering's creation request (what it would store, less the moment it
    was made): a repeat under the same Idempotency-Key with another fingerprint is refused."""
    return hashlib.sha256(json.dumps(request, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


def put_offering_once(store: CatalogStore, offering: dict[str, Any], fingerprint: str,
                      pools: list[int] | None = None, units: list[str] | None = None) -> dict[str, Any]:
    """Write a new offering (an event, a service, a lot) whose id its Idempotency-Key made: the
    offering as stored, the first one when the same request came before; ``IdempotencyKeyReused``
    when another request took the id; ``TooBusy`` when the write did not finish (nothing is
    visible until the offering is whole, and the retry completes what was written). The one rule
    for every product's creation."""
    try:
        store.put_event(offering, pools, units, fingerprint)
    except ItemExists:
        existing = store.get_event(offering["event_id"])
        if existing is None or not _same_request(existing, offering, fingerprint):
            raise IdempotencyKeyReused() from None
        return existing
    except TransientStoreError:
        raise TooBusy() from None
    return offering


def _same_request(existing: dict[str, Any], event: dict[str, Any], fingerprint: str) -> bool:
    if "creation_fingerprint" in existing:
        return existing["creation_fingerprint"] == fingerprint
    # Events created before fingerprints were stored: compare the event's own fields.
    return all(existing.get(key) == value for key, value in event.items() if key != "created_at")
