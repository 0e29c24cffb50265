"""The shop's use cases: open a day of bikes (an offering the core sells), and record a damage
charge's provider payment (the product's payment purpose)."""
from __future__ import annotations

import uuid
from typing import Any, Protocol

from holdfast import kinds
from holdfast.clock import iso
from holdfast.domain.money import Money
from holdfast.ports import Catalog, Clock

from .kind import ShopSettings


class DamagePayments(Protocol):
    def record_damage_payment(self, damage_id: str, payment_id: str, amount: str, at: str) -> bool: ...


def open_day(store: Catalog, clock: Clock, name: str, price: Money, settings: ShopSettings) -> dict[str, Any]:
    kind = kinds.for_request(settings)
    inventory = kind.inventory(settings)
    created = iso(clock())
    event = {
        "event_id": str(uuid.uuid4()), "name": name, "venue": "", "city": "", "category": "rental",
        "starts_at": created, "price": price.text, "currency": price.currency, "inventory_kind": kind.name,
        "capacity": inventory.capacity, "max_per_booking": settings.max_bikes, "hold_ttl_seconds": 600,
        "payment_mode": kind.payment_mode, "high_demand": False, "max_holds_per_customer": 2,
        "settings": settings.model_dump(), "created_at": created,
    }
    store.put_event(event, inventory.pool_sizes, None, "rental-day")
    return event


def record_damage_payment(store: DamagePayments, clock: Clock, payment: dict[str, Any]) -> str:
    """A succeeded damage charge is recorded once; anything else is left to the provider's next word."""
    if payment.get("status") != "succeeded":
        return "damage_not_paid"
    damage_id = payment["metadata"]["damage_id"]
    recorded = store.record_damage_payment(damage_id, payment["id"], payment["amount"]["value"], iso(clock()))
    return "damage_recorded" if recorded else "damage_already_recorded"
