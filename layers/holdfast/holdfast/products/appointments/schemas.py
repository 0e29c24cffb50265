"""Request models of appointment services: resources, services (and their ``SlotsSettings``, the
settings the ``slots`` inventory kind stores on the offering) and bookings of a time."""
from __future__ import annotations

import re
from typing import Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from holdfast.domain.commands import Price
from holdfast.schemas import CancellationTierIn, ContactEmail, EventTime, PriceIn, ZoneName, _Strict
from .commands import CreateResource, CreateService
from .timeslots import GRANULE_MINUTES, MAX_DURATION_MINUTES, OpeningHours, TimeError


#: A resource id as the API hands it out (a UUID); anything else cannot exist.
RESOURCE_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
MAX_RESOURCES_PER_SERVICE = 20
MAX_SESSION_CAPACITY = 1_000


class OpeningHoursIn(_Strict):
    open: str = Field(min_length=4, max_length=5)
    close: str = Field(min_length=4, max_length=5)

    @model_validator(mode="after")
    def _parse(self) -> "OpeningHoursIn":
        try:
            OpeningHours.parse(self.open, self.close)
        except TimeError as exc:
            raise ValueError(str(exc)) from None
        return self

    def hours(self) -> OpeningHours:
        return OpeningHours.parse(self.open, self.close)


class ResourceIn(_Strict):
    name: str = Field(min_length=1, max_length=200)
    timezone: ZoneName
    opening_hours: OpeningHoursIn

    def command(self) -> CreateResource:
        return CreateResource(name=self.name, timezone=self.timezone, opens=self.opening_hours.open,
                              closes=self.opening_hours.close)


def _whole_granules(value: int | None) -> int | None:
    if value is not None and value % GRANULE_MINUTES:
        raise ValueError(f"must be a multiple of {GRANULE_MINUTES} minutes")
    return value


class SlotsSettings(_Strict):
    """The settings of a service (an offering of the ``slots`` inventory kind): how it uses its
    resources and sells its times."""

    mode: Literal["group", "private"]
    duration_minutes: int = Field(ge=GRANULE_MINUTES, le=MAX_DURATION_MINUTES)
    #: Seats of one group session; a private service takes the whole resource and has none.
    capacity: int | None = Field(default=None, ge=1, le=MAX_SESSION_CAPACITY)
    #: The resources the service can take place on; a booking names one of them.
    resource_ids: list[str] = Field(min_length=1, max_length=MAX_RESOURCES_PER_SERVICE)
    #: Minutes between two slot starts; the duration unless set.
    step_minutes: int | None = Field(default=None, ge=GRANULE_MINUTES, le=24 * 60)
    hold_ttl_seconds: int | None = Field(default=None, ge=1, le=86_400)
    payment_mode: Literal["one_stage", "two_stage"] = "two_stage"

    _durations = field_validator("duration_minutes", "step_minutes")(_whole_granules)

    @field_validator("resource_ids")
    @classmethod
    def _ids(cls, value: list[str]) -> list[str]:
        bad = [item for item in value if not re.match(RESOURCE_ID_PATTERN, item)]
        if bad:
            raise ValueError(f"not resource ids: {bad[:5]}")
        return value

    @model_validator(mode="after")
    def _capacity_by_mode(self) -> "SlotsSettings":
        if self.mode == "group" and self.capacity is None:
            raise ValueError("a group service needs a capacity (seats per session)")
        if self.mode == "private" and self.capacity is not None:
            raise ValueError("a private service takes the whole resource: leave capacity out")
        return self

    @property
    def step(self) -> int:
        return self.step_minutes or self.duration_minutes

    @property
    def seats(self) -> int:
        return self.capacity if self.mode == "group" and self.capacity else 1


class ServiceIn(SlotsSettings):
    name: str = Field(min_length=1, max_length=200)
    price: PriceIn
    max_holds_per_customer: int | None = Field(default=None, ge=1, le=100)
    city: str | None = Field(default=None, min_length=1, max_length=100)
    #: Exchanges (POST /bookings/{id}/exchange) allowed until this many hours before a slot; none when left out.
    exchange_until_hours: int | None = Field(default=None, ge=0, le=8760)
    #: A cancellation policy with fees, as an event's: its tiers count back from each booking's slot.
    cancellation: list[CancellationTierIn] | None = Field(default=None, min_length=1, max_length=10)
    #: Whether a confirmed booking may be given to another customer (POST /bookings/{id}/transfer).
    transfers_allowed: bool = True
    #: Every hold must carry a solved challenge (X-Captcha-Token, services/challenges.py), as an event's.
    captcha_required: bool = False

    def settings(self) -> SlotsSettings:
        return SlotsSettings.model_validate(self.model_dump(include=set(SlotsSettings.model_fields)))

    def command(self) -> CreateService:
        return CreateService(name=self.name, price=Price(self.price.value, self.price.currency),
                             settings=self.settings(), max_holds_per_customer=self.max_holds_per_customer,
                             city=self.city, exchange_until_hours=self.exchange_until_hours,
                             cancellation=tuple(tier.model_dump() for tier in self.cancellation)
                             if self.cancellation else None, transfers_allowed=self.transfers_allowed,
                             captcha_required=self.captcha_required)


class ServiceListQuery(_Strict):
    """Query string of GET /services."""

    city: str | None = Field(default=None, min_length=1, max_length=100)
    q: str | None = Field(default=None, min_length=1, max_length=200)
    limit: int = Field(default=20, ge=1, le=100)
    cursor: str | None = Field(default=None, max_length=2000)

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, defer_build=True)


class SlotBookingIn(_Strict):
    starts_at: EventTime
    resource_id: str = Field(min_length=1, max_length=64, pattern=RESOURCE_ID_PATTERN)
    #: Seats of a group session (default 1); a private booking takes the whole resource and has none.
    quantity: int | None = None
    contact_email: ContactEmail | None = None
    #: A discount or access code of the service (case-insensitive; domain/codes.py).
    code: str | None = Field(default=None, min_length=1, max_length=64)


class SlotExchangeIn(SlotBookingIn):
    """POST /bookings/{booking_id}/exchange to another slot: the slot hold's body and, to move to
    another service of the same organizer, its id (the booking's own when left out)."""

    service_id: str | None = Field(default=None, min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_-]+$")
