"""The events product's commands: an event created with general admission or a seat map.

``EventIn.command()`` (schemas.py) builds them; the core's catalog creates the offering
(``CatalogService.create_event``) and the product's kinds read the inventory part."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from holdfast.domain.commands import Price


@dataclass(frozen=True)
class SeatLayout:
    """Named seats: rows of numbered seats (``("A", 20)`` is A1..A20), or the seat ids themselves."""

    rows: tuple[tuple[str, int], ...] | None = None
    seat_ids: tuple[str, ...] | None = None
    #: (seat, price category) of every seat, when the event has price categories.
    categories: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True)
class CreateEvent:
    """An event with general admission (``capacity`` or ``zones``) or a seat map; the kinds read
    which, and the core's catalog the rest (``services/catalog.EventCreation``)."""

    name: str
    venue: str
    city: str
    category: str
    starts_at: datetime
    price: Price
    capacity: int | None = None
    seat_map: SeatLayout | None = None
    hold_ttl_seconds: int | None = None
    payment_mode: str | None = None
    max_per_booking: int = 10
    max_holds_per_customer: int | None = None
    #: the offering's cap on one network address's live holds (None: the deployment's default)
    max_holds_per_address: int | None = None
    #: every hold must carry a solved challenge
    captcha_required: bool = False
    high_demand: bool = False
    #: Price categories, prices by category and ticket type, general-admission zones (issue 43):
    #: ``{"id", "name", "color"?}``, ``{"price_category", "ticket_type", "price": Price}``,
    #: ``{"id", "name", "price_category", "capacity"}``.
    price_categories: tuple[dict[str, Any], ...] | None = None
    prices: tuple[dict[str, Any], ...] | None = None
    zones: tuple[dict[str, Any], ...] | None = None
    #: The cancellation policy with fees: ``{"until_hours", "refund_percent"}`` tiers (domain/refund_policy.py).
    cancellation: tuple[dict[str, Any], ...] | None = None
    #: Exchanges allowed until this many hours before the start (domain/exchange.py); None: none.
    exchange_until_hours: int | None = None
    #: Whether its confirmed bookings may be given to another customer (issue 45, services/transfers.py).
    transfers_allowed: bool = True
