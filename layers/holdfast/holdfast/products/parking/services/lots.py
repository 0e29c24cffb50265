"""Parking lots: created by an organizer with typed spaces and a tariff; reservations held through
the one hold path every offering uses (the ``parking`` kind decides the space); gates registered
with a key shown once; subscriptions of plates. Passes through gates are products/parking/services/gate_passes.py."""
from __future__ import annotations

import uuid
from collections import Counter
from datetime import datetime, timedelta
from typing import Any, Callable

from holdfast import kinds
from holdfast.clock import iso, parse_iso
from holdfast.domain.booking import DEFAULT_HOLDS_PER_CUSTOMER
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import InvalidRequest, NotFound, Unauthorized
from holdfast.domain.ids import created_id
from holdfast.domain.money import Money
from holdfast.domain.organizers import Caller, require_owner
from holdfast.ports import Clock
from holdfast.services.bookings import BookingService, HoldResult
from holdfast.services.catalog import creation_fingerprint, put_offering_once
from holdfast.services.listing import publish_offering, shelf_items, shelf_page
from holdfast.domain.entry_rights import status_admits, status_revoked
from ..rules import GRANULE, TYPES, ceil_granule, floor_granule, granule_key, lot_id_of, normalise_plate
from ..kind import Parking, space_states
from holdfast.domain.signatures import device_key_matches, new_device, new_device_key, revoked_may_sync
from ..tokens import LotKeys
from ..commands import CreateLot, CreateSubscription
from ..ports import ParkingStore

#: The shelf of the public listing (domain/search.py) lots are on.
SHELF = "LOTS"
#: How long a gate may keep the subscriptions it read before reading them again.
SUBSCRIPTIONS_TTL_SECONDS = 300
#: How far ahead a gate's configuration lists confirmed reservations (and how long the gate may
#: admit their plates offline from that list).
RESERVATIONS_AHEAD = timedelta(hours=2)
#: How long a gate may trust the voided reservations it read (answered busy, it admits a token or a
#: cached reservation only while this list is fresh: gate_controller/offline.py).
VOIDED_TTL_SECONDS = 60


class GateUnauthorized(Unauthorized):
    code = "gate_unauthorized"


class ParkingService:
    def __init__(self, store: ParkingStore, clock: Clock, bookings: BookingService, default_hold_ttl_seconds: int,
                 keys: Callable[[], LotKeys], id_salt: str,
                 sync_cursor: Callable[[str, str], int] | None = None) -> None:
        self.store = store
        #: a gate's next expected sequence number (its sync's cursor), kept when the gate is revoked
        self.sync_cursor = sync_cursor
        self.id_salt = id_salt
        self.clock = clock
        self.bookings = bookings
        self.default_hold_ttl = default_hold_ttl_seconds
        self.keys = keys

    # ------------------------------------------------------------------------------ lots
    def create_lot(self, request: CreateLot, idempotency_key: str | None = None,
                   caller: Caller | None = None) -> dict[str, Any]:
        settings = request.settings
        ids = [space.space_id for space in settings.spaces]
        if len(set(ids)) != len(ids):
            raise InvalidRequest("A space_id appears twice.", code="duplicate_spaces")
        hourly = Money.parse(settings.hourly, request.currency)
        kind = kinds.for_request(settings)
        created = iso(self.clock())
        if idempotency_key and caller:
            idempotency_key = caller.scoped(idempotency_key)
        lot_id = created_id(self.id_salt, "lot", idempotency_key)
        event = {
            "event_id": lot_id, "name": request.name, "venue": "", "city": request.city or "", "category": "parking",
            "starts_at": created, "price": hourly.text, "currency": hourly.currency, "inventory_kind": kind.name,
            "capacity": len(ids), "max_per_booking": 1,
            "hold_ttl_seconds": request.hold_ttl_seconds or self.default_hold_ttl, "payment_mode": kind.payment_mode,
            "high_demand": False, "max_holds_per_customer": DEFAULT_HOLDS_PER_CUSTOMER,
            "settings": settings.model_dump(), "created_at": created,
        }
        if caller is not None:
            event["organizer_id"] = caller.organizer_id
        if request.captcha_required:   # stored only when asked (services/challenges.py)
            event["captcha_required"] = True
        fingerprint = creation_fingerprint({k: v for k, v in event.items() if k not in ("created_at", "starts_at")})
        return self.describe_lot(put_offering_once(self.store, event, fingerprint))

    def lot(self, lot_id: str, caller: Caller | None = None) -> dict[str, Any]:
        """The lot; for an organizer, only its own (another's is answered like no lot at all)."""
        missing = NotFound(f"No lot {lot_id}.", code="lot_not_found")
        event = require_owner(self.store.get_event(lot_id), caller, missing)
        if not isinstance(kinds.of_event(event), Parking):
            raise missing
        return event

    def get_lot(self, lot_id: str) -> dict[str, Any]:
        event = self.lot(lot_id)
        settings = Parking.settings(event)
        states = space_states(self.store, lot_id, settings, self.clock())
        counts = {t: {"total": 0, "available": 0, "held": 0, "reserved": 0, "occupied": 0}
                  for t in TYPES}
        for space in settings.spaces:
            counts[space.type]["total"] += 1
            counts[space.type][states[space.space_id]] += 1
        return self.describe_lot(event) | {"counts": counts, "occupied": Counter(states.values())["occupied"]}

    def describe_lot(self, event: dict[str, Any]) -> dict[str, Any]:
        settings = Parking.settings(event)
        return {
            "lot_id": lot_id_of(event), "name": event["name"], "city": event.get("city") or None,
            "timezone": settings.timezone,
            "spaces": [space.model_dump() for space in settings.spaces],
            "tariff": {"hourly": {"value": event["price"], "currency": event["currency"]},
                       "daily_cap": {"value": settings.daily_cap, "currency": event["currency"]}
                       if settings.daily_cap else None,
                       "grace_minutes": settings.grace_minutes},
            "hold_ttl_seconds": int(event["hold_ttl_seconds"]), "no_show_grace_seconds": settings.no_show_grace_seconds,
            "default_stay_minutes": settings.default_stay_minutes,
            "allow_offline_temporary_tickets": settings.allow_offline_temporary_tickets,
            "policy": settings.policy.model_dump(),
            "public_key": self.keys().public_key(lot_id_of(event)),
        } | self.bookings.challenge_view(event)   # whether its reservation must carry a solved challenge

    # --------------------------------------------------------------------------- listing
    def publish_lot(self, lot_id: str, caller: Caller | None = None) -> dict[str, Any]:
        """List the lot in GET /lots (its own shelf: never among the events). Publishing a
        published lot changes nothing."""
        event = publish_offering(self.store, self.clock, lambda: self.lot(lot_id, caller), listing_items)
        return self.describe_lot(event) | {"published": True}

    def list_lots(self, city: str | None, limit: int, cursor: str | None) -> dict[str, Any]:
        """Published lots by name, in ``city``; a page of ``limit`` from ``cursor``. What is free
        depends on the window asked: GET /lots/{lot_id} has it."""
        items, next_cursor = shelf_page(self.store, SHELF, city, None, limit, cursor)
        return {"lots": [_listed(item) for item in items], "next_cursor": next_cursor}

    # ---------------------------------------------------------------------- reservations
    def reserve(self, lot_id: str, customer_id: str, idempotency_key: str, request: HoldPlaces) -> HoldResult:
        self.lot(lot_id)
        return self.bookings.create_booking(lot_id, customer_id, idempotency_key, request)

    # ----------------------------------------------------------------------------- gates
    def create_gate(self, lot_id: str, name: str, caller: Caller | None = None) -> dict[str, Any]:
        gate, key = new_device("gate_id", name, "gk_", iso(self.clock()), self.lot(lot_id, caller))
        self.store.put_gate(lot_id, gate)
        return {"gate_id": gate["gate_id"], "lot_id": lot_id, "name": name, "gate_key": key,
                **self.keys().public_key(lot_id)}

    def list_gates(self, lot_id: str, caller: Caller | None = None) -> dict[str, Any]:
        """The lot's gates for its organizer, oldest first, deleted ones marked (what they did stays
        explained by them). Never a key nor its hash: a key is shown once, when it is made."""
        self.lot(lot_id, caller)
        shown = ("gate_id", "name", "created_at", "key_rotated_at", "deleted_at")
        gates = sorted(self.store.list_gates(lot_id), key=lambda gate: (gate["created_at"], gate["gate_id"]))
        return {"lot_id": lot_id, "gates": [{field: gate[field] for field in shown if gate.get(field)}
                                            for gate in gates]}

    def gate(self, lot_id: str, gate_id: str, key: str | None, deleted_too: bool = False) -> dict[str, Any]:
        """The gate, if ``key`` is its key (401 otherwise, the same for an unknown or deleted gate;
        ``deleted_too``: a deleted gate's key still names it, for the sync that reports its passes,
        within the grace after its deletion: ``signatures.revoked_may_sync``)."""
        gate = self.store.get_gate(lot_id, gate_id) if key else None
        if gate is None or (gate.get("deleted_at") and not (deleted_too and revoked_may_sync(gate, self.clock()))) \
                or not device_key_matches(gate["key_sha256"], key):
            raise GateUnauthorized("The gate key is missing or wrong.")
        return gate

    def rotate_gate_key(self, lot_id: str, gate_id: str, caller: Caller | None = None) -> dict[str, Any]:
        """A new key for the gate, shown only here; the old one answers 401 from now on. Each call
        is a new key (a repeat rotates again: only the last answer's key works)."""
        self.lot(lot_id, caller)
        gate, (key, key_hash) = self.store.get_gate(lot_id, gate_id), new_device_key("gk_")
        if gate is None or not self.store.change_gate(lot_id, gate_id, {"key_sha256": key_hash,
                                                                         "key_rotated_at": iso(self.clock())}):
            raise NotFound(f"No gate {gate_id}.", code="gate_not_found")
        return {"gate_id": gate_id, "lot_id": lot_id, "name": gate["name"], "gate_key": key,
                **self.keys().public_key(lot_id)}

    def delete_gate(self, lot_id: str, gate_id: str, caller: Caller | None = None) -> None:
        """The gate stops: its key answers 401 everywhere but its sync, which may still report the
        passes it made before it heard, for a grace period and up to a number past the last one
        recorded now (``revoked_after_seq``; retired_gates.py). Its item stays (deleted_at), so what
        it did stays explained; deleting it again changes nothing."""
        self.lot(lot_id, caller)
        gate = self.store.get_gate(lot_id, gate_id)
        if gate is None:
            raise NotFound(f"No gate {gate_id}.", code="gate_not_found")
        if not gate.get("deleted_at"):
            recorded = self.sync_cursor(lot_id, gate_id) - 1 if self.sync_cursor else 0
            self.store.change_gate(lot_id, gate_id, {"deleted_at": iso(self.clock()), "revoked_after_seq": recorded})

    def gate_config(self, lot_id: str, gate_id: str, key: str | None) -> dict[str, Any]:
        self.gate(lot_id, gate_id, key)
        event = self.lot(lot_id)
        settings = Parking.settings(event)
        now = self.clock()
        return {"lot_id": lot_id, "gate_id": gate_id, **self.keys().public_key(lot_id),
                "early_entry_minutes": settings.early_entry_minutes,
                "policy": {"allow_offline_temporary_tickets": settings.allow_offline_temporary_tickets},
                "subscriptions": self.active_subscriptions(lot_id),
                "subscriptions_valid_until": iso(now + timedelta(seconds=SUBSCRIPTIONS_TTL_SECONDS)),
                "reservations": self.coming_reservations(lot_id, now, settings.early_entry_minutes),
                "reservations_valid_until": iso(now + RESERVATIONS_AHEAD),
                "voided_reservations": self.voided_reservations(lot_id, now),
                "voided_valid_until": iso(now + timedelta(seconds=VOIDED_TTL_SECONDS))}

    def voided_reservations(self, lot_id: str, now: datetime) -> list[str]:
        """The booking ids of the lot's reservations with a payment, whose window has not ended, that admit
        nobody now (``entry_rights.status_revoked``, the doors' rule): their tokens still verify, so a gate that cannot
        ask the backend must know to refuse them. One walk of the lot's booking index, as an
        event's doors do for voided tickets."""
        moment = iso(now)
        return sorted(summary["booking_id"] for summary in
                      self.store.reservation_summaries(sorted(self.store.event_booking_ids(lot_id)))
                      if summary.get("event_id") == lot_id
                      and (summary.get("kind_details") or {}).get("to", "") > moment
                      and status_revoked(str(summary["status"]), summary.get("payment") is not None))

    def coming_reservations(self, lot_id: str, now: datetime, early_entry_minutes: int) -> list[dict[str, str]]:
        """Confirmed reservations whose window (with early entry) meets the next RESERVATIONS_AHEAD,
        for a gate to admit by plate while offline: plate, window, space, booking id, nothing about
        the customer. Found through the lot's granules (who holds each sold one), not a scan: one
        query per UTC day of the horizon, then the bookings by key."""
        end = ceil_granule(now + RESERVATIONS_AHEAD + timedelta(minutes=early_entry_minutes))
        return self._confirmed_reservations(lot_id, now, end)

    def reservation_entering(self, lot_id: str, plate: str, at: datetime, early_entry_minutes: int
                             ) -> str | None:
        """The booking id of this plate's confirmed reservation whose window (early entry included)
        covers ``at``, or None: a holder the plate camera reads comes in on it (the same lookup
        as the gate configuration's, over the next granules only)."""
        early = timedelta(minutes=early_entry_minutes)
        for found in self._confirmed_reservations(lot_id, at, ceil_granule(at + early) + GRANULE):
            if found["plate"] == plate and parse_iso(found["from"]) - early <= at < parse_iso(found["to"]):
                return found["booking_id"]
        return None

    def _confirmed_reservations(self, lot_id: str, now: datetime, end: datetime) -> list[dict[str, str]]:
        start = floor_granule(now)
        holders = self.store.sold_holders(lot_id, granule_key(start), granule_key(end))
        holders -= {ticket["ticket_id"] for ticket in self.store.open_tickets(lot_id)}   # drive-ups inside
        found = []
        for booking in self.store.reservation_summaries(sorted(holders)):
            details = booking.get("kind_details") or {}
            if booking["event_id"] == lot_id and status_admits(str(booking["status"])) \
                    and details.get("to", "") > iso(now):
                found.append({"booking_id": booking["booking_id"], "plate": details["plate"],
                              "space_id": details["space_id"], "from": details["from"], "to": details["to"]})
        return sorted(found, key=lambda r: (r["from"], r["booking_id"]))

    # --------------------------------------------------------------------- subscriptions
    def create_subscription(self, lot_id: str, request: CreateSubscription,
                            caller: Caller | None = None) -> dict[str, Any]:
        event = self.lot(lot_id, caller)
        subscription = {"subscription_id": str(uuid.uuid4()), "plate": normalise_plate(request.plate),
                        "valid_from": iso(request.valid_from), "valid_to": iso(request.valid_to)}
        owner = {"organizer_id": event["organizer_id"]} if event.get("organizer_id") else {}
        self.store.put_subscription(lot_id, subscription | owner)
        return {"lot_id": lot_id, **subscription}

    def active_subscriptions_at(self, lot_id: str, plate: str, at) -> list[dict[str, str]]:  # noqa: ANN001
        moment = iso(at)
        return [sub for sub in self.store.subscriptions(lot_id, plate) if sub["valid_from"] <= moment < sub["valid_to"]]

    def active_subscriptions(self, lot_id: str, plate: str | None = None) -> list[dict[str, str]]:
        now = iso(self.clock())
        return [{key: sub[key] for key in ("subscription_id", "plate", "valid_from", "valid_to")}
                for sub in self.store.subscriptions(lot_id, plate) if sub["valid_from"] <= now < sub["valid_to"]]


def listing_items(event: dict[str, Any]) -> list[dict[str, Any]]:
    settings = Parking.settings(event)
    spaces = Counter(space.type for space in settings.spaces)
    shown = {"lot_id": lot_id_of(event), "name": event["name"], "city": event.get("city") or "",
             "timezone": settings.timezone, "price": event["price"], "currency": event["currency"],
             "spaces": {kind: spaces.get(kind, 0) for kind in TYPES}}
    # no searchable words: GET /lots filters by city only, so no word partition is written
    return shelf_items(SHELF, event, shown)


def _listed(item: dict[str, Any]) -> dict[str, Any]:
    return {"lot_id": item["lot_id"], "name": item["name"], "city": item["city"] or None,
            "timezone": item["timezone"], "hourly": {"value": item["price"], "currency": item["currency"]},
            "spaces": {kind: int(count) for kind, count in item["spaces"].items()}}
