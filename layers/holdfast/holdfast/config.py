"""Runtime configuration, read from the environment once per cold start and validated.

A missing or malformed variable fails the cold start with a message naming it, instead of
failing later inside a request.
"""
from __future__ import annotations

import functools
import ipaddress
import os

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator


class Settings(BaseModel):
    bookings_table_name: str = Field(min_length=3)
    provider_api_url: str = "https://api.yookassa.ru/v3"
    provider_shop_id: str = ""
    provider_secret_name: str = "holdfast/provider"
    provider_timeout_seconds: float = Field(default=8.0, gt=0, le=60)
    default_hold_ttl_seconds: int = Field(default=600, ge=1, le=86_400)
    customer_identity_source: str = Field(default="authorizer", pattern="^(authorizer|header)$")
    #: ``local`` only where the whole stack is a development one (the template's DeploymentKind).
    deployment: str = Field(default="aws", pattern="^(aws|local)$")
    payment_return_url: str = "https://example.com/bookings"
    payment_events_queue_url: str = ""
    hold_expiry_state_machine_arn: str = ""
    reconciliation_state_machine_arn: str = ""
    event_cancellation_state_machine_arn: str = ""
    reconcile_schedule_seconds: tuple[int, ...] = (30, 60, 120, 300, 900, 1800, 3600)
    reconcile_limit_seconds: int = Field(default=86_400, ge=1)
    provider_key_retention_seconds: int = Field(default=86_400, ge=1)
    sweep_grace_seconds: int = Field(default=60, ge=0)
    # Conflict cases (services/conflict_cases.py): how long the customer has to choose, who owns them.
    resolution_window_seconds: int = Field(default=86_400, ge=1)
    resolution_operator: str = Field(default="on-call", min_length=1, max_length=100)
    allowed_webhook_networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    # Surge control (docs/catalog-waitlist-surge.md): waiting room rate, token life, per-customer limits.
    waiting_room_admit_per_second: float = Field(default=5.0, gt=0, le=10_000)
    admission_token_ttl_seconds: int = Field(default=300, ge=10, le=3600)
    booking_rate_per_minute: int = Field(default=30, ge=0)
    booking_rate_burst: int = Field(default=10, ge=1)
    queue_rate_per_minute: int = Field(default=120, ge=0)
    queue_rate_burst: int = Field(default=30, ge=1)
    waitlist_offer_seconds: int = Field(default=900, ge=1, le=86_400)
    notifications_bus_name: str = ""
    notifications_sender: str = ""
    hold_reminder_seconds: int = Field(default=120, ge=0, le=86_400)
    #: Secrets Manager secret holding ``master_seed``, from which every lot's entry-token key is derived.
    parking_key_secret_name: str = ""

    @model_validator(mode="after")
    def _header_identity_only_locally(self):
        # X-Customer-Id is whatever the caller writes: trusting it anywhere reachable would let
        # anyone act as any customer, so it takes an explicit statement that this stack is local.
        if self.customer_identity_source == "header" and self.deployment != "local":
            raise ValueError("CUSTOMER_IDENTITY_SOURCE=header trusts any caller's X-Customer-Id and is refused "
                             "unless HOLDFAST_DEPLOYMENT=local (template parameter DeploymentKind=local)")
        return self

    @field_validator("reconcile_schedule_seconds", mode="before")
    @classmethod
    def _parse_schedule(cls, value):
        if isinstance(value, str):
            value = [int(part) for part in value.split(",") if part.strip()]
        if not value or any(int(part) < 0 for part in value):
            raise ValueError("a comma-separated list of non-negative seconds")
        return tuple(int(part) for part in value)

    @field_validator("allowed_webhook_networks", mode="before")
    @classmethod
    def _parse_networks(cls, value):
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        return tuple(ipaddress.ip_network(part, strict=False) for part in value)


_ENV_NAMES = {
    "bookings_table_name": "BOOKINGS_TABLE_NAME",
    "provider_api_url": "PROVIDER_API_URL",
    "provider_shop_id": "PROVIDER_SHOP_ID",
    "provider_secret_name": "PROVIDER_SECRET_NAME",
    "provider_timeout_seconds": "PROVIDER_TIMEOUT_SECONDS",
    "default_hold_ttl_seconds": "DEFAULT_HOLD_TTL_SECONDS",
    "customer_identity_source": "CUSTOMER_IDENTITY_SOURCE",
    "deployment": "HOLDFAST_DEPLOYMENT",
    "payment_return_url": "PAYMENT_RETURN_URL",
    "payment_events_queue_url": "PAYMENT_EVENTS_QUEUE_URL",
    "hold_expiry_state_machine_arn": "HOLD_EXPIRY_STATE_MACHINE_ARN",
    "allowed_webhook_networks": "ALLOWED_WEBHOOK_NETWORKS",
    "reconciliation_state_machine_arn": "RECONCILIATION_STATE_MACHINE_ARN",
    "event_cancellation_state_machine_arn": "EVENT_CANCELLATION_STATE_MACHINE_ARN",
    "reconcile_schedule_seconds": "RECONCILE_SCHEDULE_SECONDS",
    "reconcile_limit_seconds": "RECONCILE_LIMIT_SECONDS",
    "provider_key_retention_seconds": "PROVIDER_KEY_RETENTION_SECONDS",
    "sweep_grace_seconds": "SWEEP_GRACE_SECONDS",
    "resolution_window_seconds": "RESOLUTION_WINDOW_SECONDS",
    "resolution_operator": "RESOLUTION_OPERATOR",
    "waiting_room_admit_per_second": "WAITING_ROOM_ADMIT_PER_SECOND",
    "admission_token_ttl_seconds": "ADMISSION_TOKEN_TTL_SECONDS",
    "booking_rate_per_minute": "BOOKING_RATE_PER_MINUTE",
    "booking_rate_burst": "BOOKING_RATE_BURST",
    "queue_rate_per_minute": "QUEUE_RATE_PER_MINUTE",
    "queue_rate_burst": "QUEUE_RATE_BURST",
    "waitlist_offer_seconds": "WAITLIST_OFFER_SECONDS",
    "notifications_bus_name": "NOTIFICATIONS_BUS_NAME",
    "notifications_sender": "NOTIFICATIONS_SENDER",
    "hold_reminder_seconds": "HOLD_REMINDER_SECONDS",
    "parking_key_secret_name": "PARKING_KEY_SECRET_NAME",
}


class ConfigurationError(RuntimeError):
    """The function's environment is incomplete or malformed."""


def load_settings(environ: dict[str, str] | None = None) -> Settings:
    environ = os.environ if environ is None else environ
    values = {field: environ[name] for field, name in _ENV_NAMES.items() if name in environ}
    try:
        return Settings(**values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{_ENV_NAMES.get(str(err['loc'][0]), err['loc'][0])}: {err['msg']}" if err["loc"] else err["msg"]
            for err in exc.errors()
        )
        raise ConfigurationError(f"invalid function configuration: {problems}") from None


@functools.cache
def settings() -> Settings:
    """The settings of this process, read on first use."""
    return load_settings()
