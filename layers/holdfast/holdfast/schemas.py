"""Request models at the API boundary. Anything they accept, the services can handle."""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationInfo, model_validator

from .domain.errors import InvalidRequest
from .domain.money import Money
from .domain.search import MAX_KEY_PART_BYTES, EventSearch, fits_key

#: A named unit's id (a seat of the events product's seat map, products/events/schemas.py): what a
#: booking may name; anything else cannot exist.
SEAT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,15}$")
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
#: A seat id as a booking names it (``SEAT_ID``).
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
