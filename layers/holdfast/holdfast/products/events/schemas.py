"""The events product's request models: an event as created, with its seat map
(functions/events_api), and an event's doors (functions/doors_api): a door, a scan, a door's sync
of the scans it made offline."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from holdfast.domain.commands import Price
from holdfast.domain.errors import InvalidRequest
from holdfast.schemas import (MAX_CAPACITY, MAX_PRICE_CATEGORIES, MAX_ZONES, PASS_ID, SEAT_ID, CancellationTierIn,
                              EventTime, KeyPart, PassTime, PriceCategoryIn, PriceId, PriceIn, TicketPriceIn, ZoneIn,
                              _Strict, distinct_passes, pass_time_text)
from .commands import CreateEvent, SeatLayout

MAX_SEATS_PER_EVENT = 5_000


class SeatRowIn(_Strict):
    name: str = Field(min_length=1, max_length=8, pattern=r"^[A-Za-z0-9]+$")
    seats: int = Field(ge=1, le=500)
    #: The row's price category (none named: the event's first).
    price_category: PriceId | None = None


class SeatIn(_Strict):
    """A seat of ``seat_ids`` given as an object, to name its price category."""

    id: str
    price_category: PriceId | None = None


class SeatMapIn(_Strict):
    rows: list[SeatRowIn] | None = Field(default=None, min_length=1, max_length=200)
    seat_ids: list[str | SeatIn] | None = Field(default=None, min_length=1, max_length=MAX_SEATS_PER_EVENT)

    def seats(self) -> list[tuple[str, str | None]]:
        """Every seat id with the price category it names (None: none named)."""
        if self.rows is not None:
            return [(f"{row.name}-{number}", row.price_category) for row in self.rows
                    for number in range(1, row.seats + 1)]
        return [(seat, None) if isinstance(seat, str) else (seat.id, seat.price_category)
                for seat in self.seat_ids or ()]

    @model_validator(mode="after")
    def _one_form(self) -> "SeatMapIn":
        if (self.rows is None) == (self.seat_ids is None):
            raise ValueError("give either rows or seat_ids")
        if self.seat_ids is not None:
            bad = [seat for seat, _ in self.seats() if not SEAT_ID.match(seat)]
            if bad:
                raise ValueError(f"invalid seat ids: {bad[:5]}")
            ids = [seat for seat, _ in self.seats()]
            if len(set(ids)) != len(ids):
                raise ValueError("seat ids repeat")
        if self.rows is not None:
            names = [row.name for row in self.rows]
            if len(set(names)) != len(names):
                raise ValueError("row names repeat")
            if sum(row.seats for row in self.rows) > MAX_SEATS_PER_EVENT:
                raise ValueError(f"a seat map holds at most {MAX_SEATS_PER_EVENT} seats")
        return self


class EventIn(_Strict):
    name: str = Field(min_length=1, max_length=200)
    venue: str = Field(min_length=1, max_length=200)
    city: KeyPart = Field(min_length=1, max_length=100)
    category: KeyPart = Field(min_length=1, max_length=50)
    starts_at: EventTime
    #: A cancellation policy with fees: what a customer's cancel gives back by how early it comes.
    cancellation: list[CancellationTierIn] | None = Field(default=None, min_length=1, max_length=10)
    #: Exchanges (POST /bookings/{id}/exchange) allowed until this many hours before the start; none when left out.
    exchange_until_hours: int | None = Field(default=None, ge=0, le=8760)
    #: The one price of every place; left out when ``prices`` are given.
    price: PriceIn | None = None
    capacity: int | None = Field(default=None, ge=1, le=MAX_CAPACITY)
    seat_map: SeatMapIn | None = None
    #: Price categories and what each ticket type costs in each (issue 43).
    price_categories: list[PriceCategoryIn] | None = Field(default=None, min_length=1,
                                                           max_length=MAX_PRICE_CATEGORIES)
    prices: list[TicketPriceIn] | None = Field(default=None, min_length=1, max_length=MAX_PRICE_CATEGORIES * 10)
    #: General admission in zones, each its own capacity, instead of one ``capacity``.
    zones: list[ZoneIn] | None = Field(default=None, min_length=1, max_length=MAX_ZONES)
    hold_ttl_seconds: int | None = Field(default=None, ge=1, le=86_400)
    #: Unset: the inventory kind's default (``Kind.payment_mode``; one_stage for events).
    payment_mode: Literal["one_stage", "two_stage"] | None = None
    max_per_booking: int = Field(default=10, ge=1, le=50)
    #: Active holds (HELD or PAYMENT_PENDING bookings) one customer may have for this event at once;
    #: unset means DEFAULT_HOLDS_PER_CUSTOMER (holdfast.domain.booking).
    max_holds_per_customer: int | None = Field(default=None, ge=1, le=100)
    #: Live holds one network address may have for this event at once, whatever accounts make them
    #: (domain/holder_address.py); unset means the deployment's HOLDS_PER_ADDRESS.
    max_holds_per_address: int | None = Field(default=None, ge=1, le=10_000)
    #: Every hold must carry a solved challenge (X-Captcha-Token, services/challenges.py).
    captcha_required: bool = False
    #: A high-demand sale: booking needs an admission token from the waiting room.
    high_demand: bool = False
    #: Whether a confirmed booking may be given to another customer (POST /bookings/{id}/transfer).
    transfers_allowed: bool = True

    @field_validator("payment_mode", mode="before")
    @classmethod
    def _mode_given(cls, value):  # noqa: ANN001, ANN206 - runs only on a value the request sent
        if value is None:
            raise ValueError("payment_mode is one_stage or two_stage; leave it out for the kind's default")
        return value

    @model_validator(mode="after")
    def _one_inventory(self) -> "EventIn":
        if sum(part is not None for part in (self.capacity, self.seat_map, self.zones)) != 1:
            raise ValueError("give one of capacity or zones (general admission) or seat_map")
        if (self.price is None) == (self.prices is None):
            raise ValueError("give either price (one price) or prices (by price category and ticket type)")
        if self.prices is not None and self.price_categories is None:
            raise ValueError("prices name price categories: give price_categories too")
        self._check_price_list()
        return self

    def _check_price_list(self) -> None:
        """Every price category named exists and has a price, in one currency (4xx with a code)."""
        ids = [category.id for category in self.price_categories or ()]
        if len(set(ids)) != len(ids):
            raise InvalidRequest("Price category ids repeat.", code="duplicate_price_categories")
        named = [(p.price_category, "prices") for p in self.prices or ()]
        named += [(zone.price_category, "zones") for zone in self.zones or () if zone.price_category]
        if self.seat_map is not None:
            named += [(category, "seat_map") for _, category in self.seat_map.seats() if category]
        unknown = sorted({category for category, _ in named if category not in ids})
        if unknown:
            raise InvalidRequest("These price categories are not among price_categories.",
                                 code="unknown_price_category", price_categories=unknown)
        if self.prices is not None:
            pairs = [(p.price_category, p.ticket_type) for p in self.prices]
            if len(set(pairs)) != len(pairs):
                raise InvalidRequest("A price category and ticket type are priced twice.", code="duplicate_prices")
            unpriced = [category for category in ids if category not in {p.price_category for p in self.prices}]
            if unpriced:
                raise InvalidRequest("Every price category needs a price.", code="price_category_without_price",
                                     price_categories=unpriced)
            currencies = {p.price.currency.upper() for p in self.prices}
            if len(currencies) > 1:
                raise InvalidRequest("Every price of an event is in one currency.", code="currency_mismatch",
                                     field="prices", currencies=sorted(currencies))
        zone_ids = [zone.id for zone in self.zones or ()]
        if len(set(zone_ids)) != len(zone_ids):
            raise InvalidRequest("Zone ids repeat.", code="duplicate_zones")
        if self.zones is not None and sum(zone.capacity for zone in self.zones) > MAX_CAPACITY:
            raise ValueError(f"the zones hold at most {MAX_CAPACITY} places together")

    def _from_price(self) -> PriceIn:
        """The event's one price, or with a price list its lowest (what a listing shows: from ...)."""
        if self.price is not None:
            return self.price
        return min((p.price for p in self.prices or ()), key=lambda price: price.money().value)

    def command(self) -> CreateEvent:
        seat_map = None
        first = self.price_categories[0].id if self.price_categories else None
        if self.seat_map is not None:
            rows = self.seat_map.rows
            seats = self.seat_map.seats()
            seat_map = SeatLayout(rows=tuple((row.name, row.seats) for row in rows) if rows is not None else None,
                               seat_ids=tuple(seat for seat, _ in seats) if rows is None else None,
                               categories=tuple((seat, category or first) for seat, category in seats)
                               if first else None)
        price = self._from_price()
        return CreateEvent(name=self.name, venue=self.venue, city=self.city, category=self.category,
                           starts_at=self.starts_at, price=Price(price.value, price.currency),
                           capacity=self.capacity, seat_map=seat_map, hold_ttl_seconds=self.hold_ttl_seconds,
                           payment_mode=self.payment_mode, max_per_booking=self.max_per_booking,
                           max_holds_per_customer=self.max_holds_per_customer, high_demand=self.high_demand,
                           max_holds_per_address=self.max_holds_per_address,
                           captcha_required=self.captcha_required,
                           price_categories=tuple(c.model_dump(exclude_none=True) for c in self.price_categories)
                           if self.price_categories else None,
                           prices=tuple({"price_category": p.price_category, "ticket_type": p.ticket_type,
                                         "price": Price(p.price.value, p.price.currency),
                                         **({"hidden": True} if p.hidden else {})} for p in self.prices)
                           if self.prices else None,
                           zones=tuple({"id": z.id, "name": z.name, "capacity": z.capacity,
                                        "price_category": z.price_category or first,
                                        **({"hidden": True} if z.hidden else {})} for z in self.zones)
                           if self.zones else None,
                           cancellation=tuple(tier.model_dump() for tier in self.cancellation)
                           if self.cancellation else None, exchange_until_hours=self.exchange_until_hours,
                           transfers_allowed=self.transfers_allowed)


MAX_SCANS_PER_SYNC = 100
REASON = r"^[a-z_]{1,40}$"


class DoorIn(_Strict):
    name: str = Field(min_length=1, max_length=100)


class ScanIn(_Strict):
    """An online scan: the door's own id of the scan and the ticket's token."""

    event_id: str = Field(pattern=PASS_ID)
    token: str = Field(min_length=1, max_length=2000)


class SyncScanIn(_Strict):
    """A scan the door made while offline, numbered by the door. ``admitted`` false: the door kept
    the holder out by itself (``reason``, say ``ticket_void`` from its configuration)."""

    seq: int = Field(ge=1, le=10**12 - 1)
    event_id: str = Field(pattern=PASS_ID)
    at: PassTime
    token: str = Field(min_length=1, max_length=2000)
    admitted: bool | None = None
    reason: str | None = Field(default=None, pattern=REASON)

    def as_event(self) -> dict[str, Any]:
        """The scan as the applier and the held copy see it (``at`` as ISO text, no empty fields)."""
        return {**self.model_dump(exclude_none=True), "at": pass_time_text(self.at)}


class DoorSyncIn(_Strict):
    events: list[SyncScanIn] = Field(min_length=1, max_length=MAX_SCANS_PER_SYNC)

    @model_validator(mode="after")
    def _distinct(self) -> "DoorSyncIn":
        distinct_passes(self.events)
        return self


class CheckinCaseResolveIn(_Strict):
    """An operator's resolution of a check-in case (POST /admin/checkin-cases/{id}/resolve)."""

    resolution: str = Field(pattern=REASON)
    operator: str = Field(min_length=1, max_length=100)
    note: str = Field(min_length=1, max_length=1000)
