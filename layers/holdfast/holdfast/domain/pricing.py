"""Prices by price category and ticket type (issue 43): what one place of an event costs, and the
lines a booking's amount is made of.

An event created with ``price_categories`` and ``prices`` stores them on its ``META`` item, with
its general-admission ``zones`` (each a run of pool items and one price category) or, on a seat
map, ``seat_categories`` (the seat ids of each category). An event created with one ``price``
has none of them and is priced as before: that price times the places.

Pure functions of the stored offering (a dict or an ``Offering``) and the booking: the hold path
prices a request with ``price_place``/``priced``; a receipt, a message or an order page reads a
booking's lines with ``line_items``, the one place they are spelled out.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Iterable, Mapping

from .errors import InvalidRequest
from .inventory import pool_sizes
from .money import Money

__all__ = ["Zone", "PriceLine", "LineItem", "has_price_list", "zones_of", "zone_of", "category_of_seat",
           "ticket_type_for", "unit_price", "priced", "total", "line_items", "seat_category_map",
           "price_table", "discounted", "zone_layout", "stored_price_list", "price_list_view", "hidden_zones", "hidden_asked"]


@dataclass(frozen=True)
class Zone:
    """A general-admission zone: its own pools ``POOL#first`` .. ``POOL#first+pools-1``."""

    zone_id: str
    name: str
    price_category: str | None
    capacity: int
    first_pool: int
    pools: int

    @property
    def pool_ids(self) -> frozenset[str]:
        return frozenset(f"POOL#{index:03d}" for index in range(self.first_pool, self.first_pool + self.pools))


@dataclass(frozen=True)
class PriceLine:
    """``quantity`` places of one price category and ticket type, each costing ``unit``."""

    price_category: str | None
    ticket_type: str | None
    quantity: int
    unit: Money

    def stored(self) -> dict[str, Any]:
        line: dict[str, Any] = {"quantity": self.quantity, "unit": self.unit.text}
        if self.price_category is not None:
            line["price_category"] = self.price_category
        if self.ticket_type is not None:
            line["ticket_type"] = self.ticket_type
        return line


@dataclass(frozen=True)
class LineItem:
    """One item of what a booking is paid for, as a receipt or a message shows it."""

    description: str
    quantity: int
    unit: Money
    #: The offering the item sells (an order's line's; "" where the caller knows it): a receipt
    #: reads its VAT rate by it. Not part of what the item is.
    offering_id: str = field(default="", compare=False)

    @property
    def amount(self) -> Money:
        return self.unit.times(self.quantity)


def _get(event: Any, name: str) -> Any:
    return event.get(name) if hasattr(event, "get") else None


def zone_layout(zones: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[int]]:
    """The stored zones of a creation request, each with its run of pools, and every pool's size
    in order: each zone's capacity split like an event's (``pool_sizes``), one zone after another."""
    stored, sizes = [], []
    for zone in zones:
        own = pool_sizes(int(zone["capacity"]))
        stored.append({**{key: value for key, value in zone.items() if value is not None},
                       "first_pool": len(sizes), "pools": len(own)})
        sizes += own
    return stored, sizes


def hidden_zones(event: Any) -> frozenset[str]:
    """The zones sold only with an access code that names them (issue 45)."""
    return frozenset(str(z["id"]) for z in (_get(event, "zones") or ()) if z.get("hidden"))


def hidden_asked(event: Any, zone: str | None, priced_lines: Iterable[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """The hidden zone and ticket types a hold asks for, as ("zone" | "ticket_type", id): what
    only an access code naming each sells."""
    hidden_types = {(str(p["price_category"]), str(p["ticket_type"])) for p in (_get(event, "prices") or ())
                    if p.get("hidden")}
    asked = {("ticket_type", str(line.get("ticket_type"))) for line in priced_lines
             if (str(line.get("price_category")), str(line.get("ticket_type"))) in hidden_types}
    if zone is not None and zone in hidden_zones(event):
        asked.add(("zone", zone))
    return asked


def has_price_list(event: Any) -> bool:
    return bool(_get(event, "prices"))


def zones_of(event: Any) -> tuple[Zone, ...]:
    return tuple(Zone(str(z["id"]), str(z.get("name") or z["id"]), z.get("price_category"), int(z["capacity"]),
                      int(z["first_pool"]), int(z["pools"])) for z in (_get(event, "zones") or ()))


def zone_of(event: Any, zone_id: str | None) -> Zone | None:
    """The zone a request names (None: the event has no zones). One zone is taken when none is
    named; an event of several asks which (400 ``zone_required``); an unknown one is 400."""
    zones = zones_of(event)
    if not zones:
        if zone_id is not None:
            raise InvalidRequest("This event has no zones.", code="unknown_zone", zone=zone_id)
        return None
    if zone_id is None:
        if len(zones) == 1:
            return zones[0]
        raise InvalidRequest("This event has several zones; name one.", code="zone_required",
                             zones=[zone.zone_id for zone in zones])
    for zone in zones:
        if zone.zone_id == zone_id:
            return zone
    raise InvalidRequest(f"No zone {zone_id} at this event.", code="unknown_zone", zone=zone_id)


def seat_category_map(event: Any) -> dict[str, str]:
    """Each seat's price category (empty for an event without categories)."""
    return {seat: category for category, seats in (_get(event, "seat_categories") or {}).items() for seat in seats}


def category_of_seat(event: Any, seat: str) -> str | None:
    for category, seats in (_get(event, "seat_categories") or {}).items():
        if seat in seats:
            return category
    return None


def price_table(event: Any) -> dict[tuple[str, str], Money]:
    currency = str(_get(event, "currency"))
    return {(str(p["price_category"]), str(p["ticket_type"])): Money.parse(p["price"], currency)
            for p in (_get(event, "prices") or ())}


def ticket_type_for(event: Any, category: str | None, ticket_type: str | None) -> str | None:
    """The ticket type a place of ``category`` is sold as: the one asked for, or the category's
    first listed one. An event with one price has none (asking for one is 400)."""
    if not has_price_list(event):
        if ticket_type is not None:
            raise InvalidRequest("This event has one price and no ticket types.", code="unknown_ticket_type",
                                 ticket_type=ticket_type)
        return None
    listed = [str(p["ticket_type"]) for p in _get(event, "prices") if p["price_category"] == category]
    if ticket_type is None:
        # a place of no type asked is sold as the first type on open sale
        shown = [str(p["ticket_type"]) for p in _get(event, "prices")
                 if p["price_category"] == category and not p.get("hidden")]
        listed = shown or listed
        if not listed:
            raise InvalidRequest(f"Price category {category} has no price.", code="unknown_ticket_type")
        return listed[0]
    if ticket_type not in listed:
        raise InvalidRequest(f"Ticket type {ticket_type} is not sold in price category {category}.",
                             code="unknown_ticket_type", ticket_type=ticket_type, price_category=category,
                             ticket_types=listed)
    return ticket_type


def unit_price(event: Any, category: str | None, ticket_type: str | None) -> Money:
    """What one place of ``category`` sold as ``ticket_type`` costs (the event's one price when it
    has no price list)."""
    if not has_price_list(event):
        return Money.parse(_get(event, "price"), _get(event, "currency"))
    table = price_table(event)
    key = (str(category), str(ticket_type))
    if key not in table:
        raise InvalidRequest(f"No price for {ticket_type} in {category}.", code="unknown_ticket_type",
                             ticket_type=ticket_type, price_category=category)
    return table[key]


def priced(event: Any, places: Iterable[tuple[str | None, str | None]]) -> tuple[PriceLine, ...]:
    """The price lines of places given as (price category, ticket type), one line per pair, in
    the order the pairs first appear."""
    counts: dict[tuple[str | None, str | None], int] = {}
    for place in places:
        counts[place] = counts.get(place, 0) + 1
    return tuple(PriceLine(category, ticket_type, quantity, unit_price(event, category, ticket_type))
                 for (category, ticket_type), quantity in counts.items())


def total(lines: Iterable[PriceLine], currency: str) -> Money:
    value = sum((line.unit.times(line.quantity).value for line in lines), Decimal("0.00"))
    return Money(value, currency)


def stored_price_list(request: Any, currency: str,
                      unit_categories: Iterable[tuple[str, str]] | None = None) -> dict[str, Any]:
    """What an event's ``META`` item keeps of a creation request's price list and zones (nothing
    for an event of one price and one capacity); ``unit_categories`` are its named units' price
    categories as its kind read them (``Inventory.unit_categories``: a seat map's), None when its
    places are counted."""
    stored: dict[str, Any] = {}
    if request.price_categories:
        stored["price_categories"] = [dict(category) for category in request.price_categories]
    if request.prices:
        stored["prices"] = [{"price_category": p["price_category"], "ticket_type": p["ticket_type"],
                             "price": Money.parse(p["price"].value, currency).text,
                             **({"hidden": True} if p.get("hidden") else {})} for p in request.prices]
    if request.zones:
        stored["zones"] = zone_layout(request.zones)[0]
    elif request.price_categories and unit_categories is None:
        # one capacity and price categories: one zone of the first category, over every pool
        stored["zones"] = zone_layout([{"id": "main", "name": "main", "capacity": request.capacity,
                                        "price_category": request.price_categories[0]["id"]}])[0]
    if unit_categories:
        by_category: dict[str, list[str]] = {}
        for unit, category in unit_categories:
            by_category.setdefault(category, []).append(unit)
        stored["seat_categories"] = by_category
    return stored


def price_list_view(event: Any, zone_counts: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An event's price categories, prices by category and ticket type, and zones with their
    counts, as answers show them (nothing for an event of one price and one capacity)."""
    view: dict[str, Any] = {}
    if _get(event, "price_categories"):
        view["price_categories"] = [dict(category) for category in _get(event, "price_categories")]
    if _get(event, "prices"):
        view["prices"] = [{"price_category": p["price_category"], "ticket_type": p["ticket_type"],
                           "price": {"value": p["price"], "currency": _get(event, "currency")}}
                          for p in _get(event, "prices") if not p.get("hidden")]
    if _get(event, "zones"):
        hidden = hidden_zones(event)
        view["zones"] = [{"id": zone.zone_id, "name": zone.name, "price_category": zone.price_category,
                          "capacity": zone.capacity, "counts": (zone_counts or {}).get(zone.zone_id)}
                         for zone in zones_of(event) if zone.zone_id not in hidden]
    return view


def line_items(booking: Any, offering_name: str = "") -> tuple[LineItem, ...]:
    """What a booking is paid for, one item per price category and ticket type (a booking priced
    by one price, or of another product, is one item: its places at their average); an order's
    items are its lines' (``kind_details.lines``), each named by its offering. Their sum is the
    booking's amount, to the kopeck, a code's discount included (``discounted``). The one place a
    receipt, an order page and a message read them from."""
    details: Mapping[str, Any] = booking.kind_details or {}
    currency = booking.amount.currency
    if details.get("lines"):
        return tuple(replace(item, offering_id=str(line.get("offering_id") or ""))
                     for line in details["lines"]
                     for item in _items(line.get("details") or {}, int(line["quantity"]),
                                        Money.stored(line["amount"], currency), str(line.get("name") or offering_name)))
    return tuple(replace(item, offering_id=str(booking.event_id or ""))
                 for item in _items(details, int(booking.places.quantity or 1), booking.amount,
                                    offering_name or str(booking.places.kind)))


def _items(details: Mapping[str, Any], quantity: int, amount: Money, name: str) -> tuple[LineItem, ...]:
    stored = details.get("priced") or ()
    if stored:
        full = []
        for line in stored:
            parts = [name] if name else []
            parts += [str(line[key]) for key in ("price_category", "ticket_type") if line.get(key)]
            if details.get("zone"):
                parts.append(str(details["zone"]))
            full.append(LineItem(", ".join(parts), int(line["quantity"]), Money.parse(line["unit"], amount.currency)))
        return discounted(full, amount)
    quantity = max(1, quantity)
    unit = Money((amount.value / quantity).quantize(Decimal("0.01")), amount.currency)
    if unit.times(quantity) != amount:   # not evenly divisible: one item for the whole
        return (LineItem(name, 1, amount),)
    return (LineItem(name, quantity, unit),)


_CENT = Decimal("0.01")


def discounted(items: Iterable[LineItem], amount: Money) -> tuple[LineItem, ...]:
    """``items`` at their full prices, repriced to sum exactly to ``amount`` (what a code's
    discount left, or nothing for a comp): each item takes its share of ``amount`` in proportion to
    its full price, in whole kopecks (the largest remainders take the kopecks rounding leaves), and
    an item whose share does not divide by its quantity is split in two: the same places, some one
    kopeck dearer. Items already summing to ``amount`` come back as they are."""
    items = [item for item in items if item.quantity > 0]
    if not items:
        return ()
    full = sum((item.amount.value for item in items), Decimal("0.00"))
    if full == amount.value:
        return tuple(items)
    target = int((amount.value / _CENT).to_integral_value())
    if full <= 0:   # nothing to weigh by: the places share it evenly
        weights = [item.quantity for item in items]
    else:
        weights = [int((item.amount.value / _CENT).to_integral_value()) for item in items]
    total_weight = sum(weights)
    shares = [target * weight // total_weight for weight in weights]
    by_remainder = sorted(range(len(items)), key=lambda i: (-(target * weights[i] % total_weight), i))
    for index in by_remainder[:target - sum(shares)]:
        shares[index] += 1
    out: list[LineItem] = []
    for item, share in zip(items, shares):
        unit, dearer = divmod(share, item.quantity)
        cheaper = item.quantity - dearer
        if cheaper:
            out.append(replace(item, quantity=cheaper, unit=Money(_CENT * unit, amount.currency)))
        if dearer:
            out.append(replace(item, quantity=dearer, unit=Money(_CENT * (unit + 1), amount.currency)))
    return tuple(out)
