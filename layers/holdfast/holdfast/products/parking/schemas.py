"""Request models of parking: lots (and ``ParkingSettings``, what the ``parking`` inventory kind
stores on the offering), reservations, gates, gate passes and subscriptions."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import InvalidRequest
from holdfast.domain.money import Money
from holdfast.schemas import ContactEmail, EventTime, PriceIn, ZoneName, _Strict
from .commands import CreateLot, CreateSubscription

ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
PLATE_PATTERN = r"^[A-Za-z0-9 \-]{2,16}$"
MAX_SPACES = 500
SpaceType = Literal["COMPACT", "REGULAR", "LARGE", "HANDICAP"]
VehicleType = Literal["COMPACT", "REGULAR", "LARGE"]


class SpaceIn(_Strict):
    space_id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,32}$")
    type: SpaceType
    zone: str = Field(default="", max_length=32)
    priority: int = Field(default=100, ge=0, le=1_000_000)


class TariffIn(_Strict):
    hourly: PriceIn
    daily_cap: PriceIn | None = None
    grace_minutes: int = Field(default=0, ge=0, le=240)

    @model_validator(mode="after")
    def _money(self) -> "TariffIn":
        hourly = self.hourly.money()
        if self.daily_cap is not None and self.daily_cap.money().currency != hourly.currency:
            # a lot has one currency (its offering's): the cap is stored as an amount in it
            raise InvalidRequest(f"daily_cap must be in the hourly rate's currency, {hourly.currency}.",
                                 code="currency_mismatch", field="daily_cap", currency=hourly.currency)
        return self


class PolicyIn(_Strict):
    """What a lot gives back. A no-show keeps nothing unless ``refund_no_show``; a confirmed
    reservation cancelled gets ``cancel_refund`` ("full" or "none"), and "full" only until
    ``cancel_refund_until_minutes_before`` the window's start (0: until it starts)."""

    refund_no_show: bool = False
    cancel_refund: Literal["full", "none"] = "full"
    cancel_refund_until_minutes_before: int = Field(default=0, ge=0, le=43_200)


class ParkingSettings(_Strict):
    """A lot's settings (the offering's, for the ``parking`` kind), as stored. Amounts are text in
    the offering's ``currency``; the API shows each as ``{value, currency}``."""

    spaces: list[SpaceIn] = Field(min_length=1, max_length=MAX_SPACES)
    timezone: str = "UTC"
    hourly: str
    daily_cap: str | None = None
    grace_minutes: int = 0
    no_show_grace_seconds: int = 900
    default_stay_minutes: int = 240
    early_entry_minutes: int = 15
    allow_offline_temporary_tickets: bool = False
    policy: PolicyIn = Field(default_factory=PolicyIn)

    def by_id(self) -> dict[str, SpaceIn]:
        return {space.space_id: space for space in self.spaces}


class LotIn(_Strict):
    name: str = Field(min_length=1, max_length=200)
    city: str | None = Field(default=None, min_length=1, max_length=100)
    timezone: ZoneName = "UTC"
    spaces: list[SpaceIn] = Field(min_length=1, max_length=MAX_SPACES)
    tariff: TariffIn
    hold_ttl_seconds: int | None = Field(default=None, ge=1, le=86_400)
    no_show_grace_seconds: int = Field(default=900, ge=0, le=86_400)
    default_stay_minutes: int = Field(default=240, ge=30, le=1440)
    early_entry_minutes: int = Field(default=15, ge=0, le=240)
    allow_offline_temporary_tickets: bool = False
    policy: PolicyIn = Field(default_factory=PolicyIn)
    #: Every reservation must carry a solved challenge (X-Captcha-Token, services/challenges.py), as an event's hold.
    captcha_required: bool = False


    @field_validator("default_stay_minutes")
    @classmethod
    def _whole_granules(cls, value: int) -> int:
        if value % 30:
            raise ValueError("must be a multiple of 30 minutes")
        return value

    def settings(self) -> ParkingSettings:
        cap = self.tariff.daily_cap.money().text if self.tariff.daily_cap is not None else None
        return ParkingSettings(
            spaces=self.spaces, timezone=self.timezone, hourly=self.tariff.hourly.money().text, daily_cap=cap,
            grace_minutes=self.tariff.grace_minutes, no_show_grace_seconds=self.no_show_grace_seconds,
            default_stay_minutes=self.default_stay_minutes, early_entry_minutes=self.early_entry_minutes,
            allow_offline_temporary_tickets=self.allow_offline_temporary_tickets, policy=self.policy)

    def command(self) -> CreateLot:
        return CreateLot(name=self.name, settings=self.settings(), currency=self.tariff.hourly.currency.upper(),
                         hold_ttl_seconds=self.hold_ttl_seconds, city=self.city,
                         captcha_required=self.captcha_required)


class LotListQuery(_Strict):
    """Query string of GET /lots."""

    city: str | None = Field(default=None, min_length=1, max_length=100)
    limit: int = Field(default=20, ge=1, le=100)
    cursor: str | None = Field(default=None, max_length=2000)

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, defer_build=True)


class ReservationIn(_Strict):
    vehicle_type: VehicleType
    plate: str = Field(pattern=PLATE_PATTERN)
    from_: EventTime = Field(alias="from")
    to: EventTime
    handicap_permit: bool = False
    contact_email: ContactEmail | None = None
    #: A discount or access code of the lot (case-insensitive; domain/codes.py).
    code: str | None = Field(default=None, min_length=1, max_length=64)

    model_config = {**_Strict.model_config, "populate_by_name": True}

    def command(self) -> HoldPlaces:
        return HoldPlaces.of({"vehicle_type": self.vehicle_type, "plate": self.plate, "window_from": self.from_,
                              "window_to": self.to, "handicap_permit": self.handicap_permit,
                              "contact_email": self.contact_email,
                              **({"code": self.code} if self.code is not None else {})})


class GateIn(_Strict):
    name: str = Field(min_length=1, max_length=100)


class GatePassIn(_Strict):
    """An online entry or exit: a pass id, and a token, a plate or a ticket."""

    event_id: str = Field(pattern=r"^[A-Za-z0-9_.:-]{1,100}$")
    token: str | None = Field(default=None, min_length=10, max_length=2000)
    plate: str | None = Field(default=None, pattern=PLATE_PATTERN)
    ticket_id: str | None = Field(default=None, pattern=ID_PATTERN)


class SubscriptionIn(_Strict):
    plate: str = Field(pattern=PLATE_PATTERN)
    valid_from: EventTime
    valid_to: EventTime

    @model_validator(mode="after")
    def _order(self) -> "SubscriptionIn":
        if self.valid_to <= self.valid_from:
            raise ValueError("valid_to must be after valid_from")
        return self

    def command(self) -> CreateSubscription:
        return CreateSubscription(plate=self.plate, valid_from=self.valid_from, valid_to=self.valid_to)


class GateCaseResolveIn(BaseModel):
    """An operator's resolution of a parking gate case (POST /admin/gate-cases/{id}/resolve)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, defer_build=True)

    #: One of the case type's resolutions (services/gate_cases.py: RESOLUTIONS).
    resolution: str = Field(pattern="^[a-z_]{1,40}$")
    operator: str = Field(min_length=1, max_length=100)
    note: str = Field(min_length=1, max_length=1000)


class EventParkingIn(_Strict):
    """A lot offered with an event's tickets (POST /events/{id}/parking), and the window around the
    event's start its reservations take."""

    lot_id: str = Field(min_length=1, max_length=100)
    before_minutes: int = Field(default=60, ge=0, le=720)
    after_minutes: int = Field(default=240, ge=30, le=1440)
