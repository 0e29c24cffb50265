"""Request models at the API boundary. Anything they accept, the services can handle."""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationInfo, field_validator, model_validator

from .domain.commands import CreateEvent, Price, SeatLayout
from .domain.errors import InvalidRequest
from .domain.money import Money
from .domain.search import MAX_KEY_PART_BYTES, EventSearch, fits_key

SEAT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,15}$")
MAX_SEATS_PER_EVENT = 5_000
MAX_CAPACITY = 100_000
MAX_SEATS_PER_BOOKING = 50   # the highest max_per_booking an event may set


def _event_time(value: datetime) -> datetime:
    """A moment with a time zone, in UTC, within years 2000-2199 (anything else is a typo, and
    some extremes cannot even be converted to UTC)."""
    if value.tzinfo is None:
        raise ValueError("needs a time zone (for example 2027-05-01T19:00:00Z)")
    if not 2000 <= value.year <= 2199 or not 2000 <= (value - value.utcoffset()).year <= 2199:
        raise ValueError("must be between the years 2000 and 2199")
    return value.astimezone(timezone.utc)


EventTime = Annotated[datetime, AfterValidator(_event_time)]


def _key_part(value: str) -> str:
    """City and category become parts of listing keys after Unicode normalisation, which can make
    a short text long (one U+FDFA is 18 characters): bound the normalised form, not the raw one."""
    if not fits_key(value):
        raise ValueError(f"is longer than {MAX_KEY_PART_BYTES} bytes once normalised")
    return value


KeyPart = Annotated[str, AfterValidator(_key_part)]
#: A seat id as a seat map may define it (see SeatMapIn); anything else cannot exist.
SeatId = Annotated[str, Field(min_length=1, max_length=16, pattern=SEAT_ID.pattern)]

#: Where the customer's notifications go by email: one address, checked for shape only (the
#: mail system is the judge of whether it exists). Lower-cased domain, at most 254 characters.
EMAIL = re.compile(r"^[^@\s\x00-\x1f<>,;]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")


def _email(value: str) -> str:
    if len(value) > 254 or not EMAIL.match(value):
        raise ValueError("is not an email address (name@example.com)")
    local, _, domain = value.rpartition("@")
    return f"{local}@{domain.lower()}"


ContactEmail = Annotated[str, AfterValidator(_email)]


def known_zone(value: str) -> str:
    """An IANA zone name the build's zone database knows (a resource's, a lot's)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise ValueError(f"unknown time zone {value!r} (use an IANA name such as Europe/Moscow)") from None
    return value


ZoneName = Annotated[str, Field(min_length=1, max_length=64), AfterValidator(known_zone)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, defer_build=True)


#: A check-in device's own id of a pass (a gate's, a door's), kept whichever way it reaches us.
PASS_ID = r"^[A-Za-z0-9_.:-]{1,100}$"


def _pass_time(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("needs a time zone (for example 2027-05-01T19:00:00Z)")
    if not 2000 <= value.year <= 2199:
        raise ValueError("must be between the years 2000 and 2199")
    return value.astimezone(timezone.utc)


#: When a device saw a pass it queued while offline.
PassTime = Annotated[datetime, AfterValidator(_pass_time)]


def distinct_passes(events: list[Any]) -> None:
    """A device's batch numbers each pass once and names each pass id once."""
    if len({event.seq for event in events}) != len(events):
        raise ValueError("each seq appears once in a batch")
    if len({event.event_id for event in events}) != len(events):
        raise ValueError("each event_id appears once in a batch")


def pass_time_text(value: datetime) -> str:
    """A pass's time as the applier and the held copy see it."""
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class PriceIn(_Strict):
    """Every amount a request sends, in the shape every answer shows: ``{value, currency}``."""

    value: str | int | float
    currency: str = Field(min_length=3, max_length=3)

    @model_validator(mode="before")
    @classmethod
    def _an_object(cls, data: object, info: ValidationInfo) -> object:
        # A bare number names no currency, and the API never shows one: refused with its own code
        # so a client still sending the old shape of a lot's daily_cap learns what to send.
        if not isinstance(data, dict | PriceIn):
            name = info.field_name or "amount"
            raise InvalidRequest(f'{name} is an amount object such as {{"value": "1200.00", "currency": "RUB"}}.',
                                 code="money_object_required", field=name)
        return data

    def money(self) -> Money:
        return Money.parse(self.value, self.currency.upper())


#: A price category's, ticket type's or zone's id: short, and safe in a key and a CSS class.
PRICE_ID = r"^[A-Za-z0-9_-]{1,32}$"
PriceId = Annotated[str, Field(pattern=PRICE_ID)]


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


class PriceCategoryIn(_Strict):
    """A price category of an event (stalls, balcony): named apart from the event's genre."""

    id: PriceId
    name: str = Field(min_length=1, max_length=100)
    color: str | None = Field(default=None, pattern=r"^#[0-9A-Fa-f]{6}$")


class TicketPriceIn(_Strict):
    """What one place of a price category costs sold as a ticket type (adult, child)."""

    price_category: PriceId
    ticket_type: PriceId
    price: PriceIn
    #: Sold only with an access code that names the ticket type (a presale, a press list).
    hidden: bool = False


class ZoneIn(_Strict):
    """A general-admission zone: its own capacity, counted in its own pools."""

    id: PriceId
    name: str = Field(min_length=1, max_length=100)
    price_category: PriceId | None = None
    capacity: int = Field(ge=1, le=MAX_CAPACITY)
    #: Sold only with an access code that names the zone.
    hidden: bool = False


MAX_PRICE_CATEGORIES = 20
MAX_ZONES = 10


class CancellationTierIn(_Strict):
    """A tier of an offering's cancellation policy (domain/refund_policy.py)."""

    until_hours: int = Field(ge=0, le=8760)
    refund_percent: int = Field(ge=0, le=100)


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


#: The fields a kind reads from a chosen alternative (e.g. starts_at and resource_id): a few flat values.
MAX_CHOICE_FIELDS = 8
_CHOICE_FIELD = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


def _flat_choice(fields: dict) -> dict:
    if len(fields) > MAX_CHOICE_FIELDS:
        raise ValueError(f"an alternative is named by at most {MAX_CHOICE_FIELDS} fields")
    for name, value in fields.items():
        if not _CHOICE_FIELD.match(name):
            raise ValueError("an alternative's field names are lower-case words")
        if isinstance(value, bool) or not isinstance(value, (str, int)) or len(str(value)) > 100:
            raise ValueError(f"{name} must be a short string or an integer")
    return fields


class ResolutionIn(BaseModel):
    """A conflict case decided by its customer: ``{"choice": "refund"}``, or
    ``{"choice": "alternative", ...}`` with the fields of one of the offered alternatives."""

    model_config = ConfigDict(extra="allow", str_strip_whitespace=True, defer_build=True)

    choice: Literal["alternative", "refund"]

    @model_validator(mode="after")
    def _fields_flat(self) -> "ResolutionIn":
        _flat_choice(dict(self.model_extra or {}))
        return self

    @property
    def fields(self) -> dict:
        return dict(self.model_extra or {})


class ResolveIn(BaseModel):
    """An operator's decision on a booking in manual review (POST /admin/reviews/{id}/resolve)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, defer_build=True)

    action: str = Field(pattern="^(refund|confirm|close|alternative)$")
    operator: str = Field(min_length=1, max_length=100)
    note: str = Field(min_length=1, max_length=1000)
    #: With ``alternative``: the fields of one of the case's offered alternatives.
    choice: Annotated[dict[str, str | int], AfterValidator(_flat_choice)] | None = None


class OrganizerCancelIn(BaseModel):
    """An organizer cancels a confirmed booking of its own, money back (POST /admin/bookings/{id}/cancel)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, defer_build=True)

    operator: str = Field(min_length=1, max_length=100)
    note: str = Field(min_length=1, max_length=1000)


class BookingIn(_Strict):
    quantity: int | None = Field(default=None)
    #: An event in zones: which zone (one zone: taken when left out).
    zone: PriceId | None = None
    #: The ticket type of every place of a quantity (left out: the price category's first listed).
    ticket_type: PriceId | None = None
    #: Named seats: each seat's ticket type (a seat left out: its price category's first listed).
    ticket_types: dict[SeatId, PriceId] | None = Field(default=None, max_length=MAX_SEATS_PER_BOOKING)
    #: With ``best_available``: only seats of this price category.
    price_category: PriceId | None = None
    seats: list[SeatId] | None = Field(default=None, max_length=MAX_SEATS_PER_BOOKING)
    #: On a seated event, ``{"quantity": n, "best_available": true}`` lets the engine pick the seats.
    best_available: bool = False
    #: Where this booking's notifications are emailed (held, reminder, confirmed, refunded, ...).
    contact_email: ContactEmail | None = None
    #: A discount or access code of the event (case-insensitive; domain/codes.py).
    code: str | None = Field(default=None, min_length=1, max_length=64)

    @model_validator(mode="after")
    def _one_form(self) -> "BookingIn":
        if (self.quantity is None) == (self.seats is None):
            raise ValueError("give either quantity or seats")
        if self.best_available and self.quantity is None:
            raise ValueError("best_available goes with a quantity, not with named seats")
        return self


class ExchangeIn(BookingIn):
    """POST /bookings/{booking_id}/exchange to an event's places: the body of the target's hold
    (``seats`` or ``quantity``, with its zone and ticket types) and, to move to another date of
    the same organizer, that event's id (the booking's own when left out)."""

    event_id: str | None = Field(default=None, min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_-]+$")


class BlockIn(_Strict):
    """POST /events/{event_id}/blocks: the places the organizer keeps out of sale (``seats``, or a
    ``quantity`` of a ``zone`` or of the whole) and what they are kept for."""

    seats: list[SeatId] | None = Field(default=None, max_length=MAX_SEATS_PER_BOOKING)
    zone: PriceId | None = None
    quantity: int | None = Field(default=None, ge=1)
    label: str = Field(default="", max_length=100)

    @model_validator(mode="after")
    def _one_form(self) -> "BlockIn":
        if (self.quantity is None) == (self.seats is None):
            raise ValueError("give either quantity or seats")
        return self

    def command(self) -> Any:
        from .domain.commands import HoldPlaces

        return HoldPlaces.of({key: value for key, value in
                              {"seats": self.seats, "zone": self.zone, "quantity": self.quantity}.items()
                              if value is not None})


class CodeIn(_Strict):
    """A discount or access code of an offering (POST /events|services|lots/{id}/codes)."""

    code: str = Field(min_length=1, max_length=64)
    kind: Literal["percent", "fixed", "access"]
    #: A percent (a number), or for ``fixed`` an amount object ``{"value", "currency"}``.
    value: float | int | str | dict[str, str] | None = None
    max_uses: int | None = Field(default=None, ge=1, le=1_000_000)
    per_customer: int | None = Field(default=None, ge=1, le=1000)
    valid_from: EventTime | None = None
    valid_to: EventTime | None = None
    price_categories: list[PriceId] | None = Field(default=None, max_length=50)
    ticket_types: list[PriceId] | None = Field(default=None, max_length=50)
    #: An access code: the hidden zones it unlocks (with ``ticket_types``, the hidden ticket types).
    zones: list[PriceId] | None = Field(default=None, max_length=50)


class EventPatchIn(_Strict):
    """What an organizer may change on an existing event: its description, not its inventory or price."""

    name: str | None = Field(default=None, min_length=1, max_length=200)
    venue: str | None = Field(default=None, min_length=1, max_length=200)
    city: KeyPart | None = Field(default=None, min_length=1, max_length=100)
    category: KeyPart | None = Field(default=None, min_length=1, max_length=50)
    starts_at: EventTime | None = None
    #: Sell through the virtual waiting room (POST /events/{id}/queue, admission tokens).
    high_demand: bool | None = None
    #: After a change of start time, how long customers may cancel with a full refund (0: no window).
    change_refund_hours: int | None = Field(default=None, ge=0, le=720)
    #: Exchanges allowed until this many hours before the start (issue 45); null ends them.
    exchange_until_hours: StrictInt | None = Field(default=None, ge=0, le=8760)
    #: Whether customers may give their bookings to someone else (issue 45).
    transfers_allowed: StrictBool | None = None

    #: The fields null is a value of: it turns the setting off.
    NULLABLE: ClassVar[frozenset[str]] = frozenset({"exchange_until_hours"})

    @model_validator(mode="after")
    def _something(self) -> "EventPatchIn":
        if not self.model_fields_set:
            raise ValueError("give at least one field to change")
        if any(getattr(self, name) is None for name in self.model_fields_set - self.NULLABLE):
            raise ValueError("fields cannot be set to null")
        return self

    def changes(self) -> dict[str, Any]:
        """The fields the organizer sent, and only those."""
        return self.model_dump(exclude_unset=True)


class EventCancelIn(_Strict):
    """POST /events/{id}/cancel: why the event is cancelled (written into every booking's journal)."""

    reason: str = Field(min_length=1, max_length=500)


class EventListQuery(_Strict):
    """Query string of GET /events."""

    city: str | None = Field(default=None, min_length=1, max_length=100)
    category: str | None = Field(default=None, min_length=1, max_length=50)
    q: str | None = Field(default=None, min_length=1, max_length=200)
    date_from: EventTime | None = Field(default=None, alias="from")
    date_to: EventTime | None = Field(default=None, alias="to")
    limit: int = Field(default=20, ge=1, le=100)
    cursor: str | None = Field(default=None, max_length=2000)

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, populate_by_name=True, defer_build=True)

    def search(self) -> EventSearch:
        return EventSearch(**self.model_dump())


class WaitlistIn(_Strict):
    """Body of POST /events/{id}/waitlist: how many places the customer wants when one is offered."""

    quantity: int = Field(default=1)
    #: Where the offer (and the offered hold's later notifications) are emailed.
    contact_email: ContactEmail | None = None
    #: The zone (general admission) or price category (a seat map's) to wait for: the offer is
    #: then made only of places released there (issue 43).
    zone: str | None = Field(default=None, min_length=1, max_length=64)
    price_category: str | None = Field(default=None, min_length=1, max_length=64)


class OrganizerIn(_Strict):
    """A new organizer (POST /admin/organizers); its first key is made by the engine, never sent."""

    name: str = Field(min_length=1, max_length=200)


_OFFERING_ID = r"^[A-Za-z0-9_-]{1,64}$"


class WebhookIn(_Strict):
    """Body of POST /organizers/me/webhooks. The URL's rules and the event names are the
    service's 400s (``webhook_url_invalid``, ``webhook_url_not_public``, ``unknown_webhook_event``)."""

    url: str = Field(min_length=1, max_length=2048)
    events: list[Annotated[str, Field(max_length=64)]] = Field(min_length=1, max_length=20)
    description: str | None = Field(default=None, max_length=200)


class ExportJobIn(_Strict):
    """Body of POST /organizers/me/exports: which export (as in ``/admin/exports/{export}.csv``)
    and the same filters as its pages. An unknown export, an offering the key does not see and a
    bad time are the service's 404s and 400s, as for a page."""

    export: str = Field(min_length=1, max_length=40, pattern=r"^[a-z_]+$")
    offering: str | None = Field(default=None, pattern=_OFFERING_ID)
    since: str | None = Field(default=None, alias="from", min_length=1, max_length=40)
    until: str | None = Field(default=None, alias="to", min_length=1, max_length=40)


class OrganizerKeyIn(_Strict):
    """Body of POST /organizers/me/keys, all optional (no body: a key with the calling key's rights).
    Unknown scope names are the service's 400 ``unknown_scope``, which lists the known ones."""

    name: str | None = Field(default=None, min_length=1, max_length=100)
    scopes: list[Annotated[str, Field(max_length=32)]] | None = Field(default=None, min_length=1, max_length=20)
    offerings: list[Annotated[str, Field(pattern=_OFFERING_ID)]] | None = Field(default=None, min_length=1,
                                                                                max_length=100)


class FiscalSettingsIn(_Strict):
    """An organizer's fiscal settings (PUT /organizers/me/fiscal): receipts on, with its tax system,
    its default VAT rate, what it sells, and the VAT rates of offerings that differ."""

    tax_system_code: int = Field(ge=1, le=6, strict=True)
    vat_code: int = Field(ge=1, le=12, strict=True)
    payment_subject: Literal["service", "commodity", "job", "another"] = "service"
    vat_overrides: dict[Annotated[str, Field(min_length=1, max_length=100)],
                        Annotated[int, Field(ge=1, le=12, strict=True)]] = Field(default_factory=dict, max_length=200)

    def settings(self):  # noqa: ANN201 - domain.fiscal.FiscalSettings, imported with the route
        from .domain.fiscal import FiscalSettings

        return FiscalSettings(self.tax_system_code, self.vat_code, self.payment_subject,
                              tuple(sorted(self.vat_overrides.items())))


class TransferIn(_Strict):
    """The body of POST /bookings/{id}/transfer: the address the booking's link is mailed to."""

    to_email: ContactEmail


class PaymentIn(_Strict):
    """The optional body of POST /bookings/{id}/payment: the address a booking made without one
    gets, for its fiscal receipt (and its messages), stored with the payment attempt."""

    contact_email: ContactEmail
