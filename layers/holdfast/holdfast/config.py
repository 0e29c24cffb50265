"""Runtime configuration, read from the environment once per cold start and validated.

A missing or malformed variable fails the cold start with a message naming it, instead of
failing later inside a request. ``Settings`` are the core's; a product declares its own in a
``section`` (its package's ``config.py``), read and checked the same way.
"""
from __future__ import annotations

import functools
import ipaddress
import os

import math
import re
from dataclasses import dataclass, field, fields
from typing import Any, Callable, TypeVar

# A frozen dataclass with its own checks rather than a pydantic model: every function reads its
# settings at the cold start, and building the model (and importing pydantic where nothing else
# needs it yet) was a measurable share of it (docs/performance.md, "Cold start").


def _text(least: int = 0, most: int | None = None, pattern: str | None = None) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        value = str(value)
        if len(value) < least:
            raise ValueError(f"String should have at least {least} characters")
        if most is not None and len(value) > most:
            raise ValueError(f"String should have at most {most} characters")
        if pattern is not None and not re.search(pattern, value):
            raise ValueError(f"String should match pattern '{pattern}'")
        return value
    return check


def _number(as_type: type, *, gt: float | None = None, ge: float | None = None, le: float | None = None):
    def check(value: Any):
        try:
            number = as_type(value.strip() if isinstance(value, str) else value)
        except (TypeError, ValueError):
            raise ValueError(f"Input should be a valid {'integer' if as_type is int else 'number'}") from None
        if as_type is float and not math.isfinite(number):
            raise ValueError("Input should be a finite number")
        if gt is not None and not number > gt:
            raise ValueError(f"Input should be greater than {gt}")
        if ge is not None and not number >= ge:
            raise ValueError(f"Input should be greater than or equal to {ge}")
        if le is not None and not number <= le:
            raise ValueError(f"Input should be less than or equal to {le}")
        return number
    return check


def _schedule(value: Any) -> tuple[int, ...]:
    if isinstance(value, str):
        try:
            value = [int(part) for part in value.split(",") if part.strip()]
        except ValueError:
            raise ValueError("a comma-separated list of non-negative seconds") from None
    if not value or any(int(part) < 0 for part in value):
        raise ValueError("a comma-separated list of non-negative seconds")
    return tuple(int(part) for part in value)


def _networks(value: Any) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    return tuple(ipaddress.ip_network(part, strict=False) for part in value)


_CHECKS: dict[str, Callable[[Any], Any]] = {
    "bookings_table_name": _text(3),
    "provider_api_url": _text(), "provider_shop_id": _text(), "provider_secret_name": _text(),
    "platform_key_secret_name": _text(), "organizer_key_hash_secret_name": _text(),
    "admission_token_secret_name": _text(),
    "pseudonym_secret_name": _text(),
    "provider_timeout_seconds": _number(float, gt=0, le=60),
    "default_hold_ttl_seconds": _number(int, ge=1, le=86_400),
    "customer_identity_source": _text(pattern="^(authorizer|header)$"),
    "deployment": _text(pattern="^(aws|local)$"),
    "payment_return_url": _text(), "payment_events_queue_url": _text(),
    "hold_expiry_state_machine_arn": _text(), "reconciliation_state_machine_arn": _text(),
    "event_cancellation_state_machine_arn": _text(),
    "reconcile_schedule_seconds": _schedule,
    "reconcile_limit_seconds": _number(int, ge=1),
    "provider_key_retention_seconds": _number(int, ge=1),
    "sweep_grace_seconds": _number(int, ge=0),
    "sweep_max_restarts": _number(int, ge=1),
    "resolution_window_seconds": _number(int, ge=1),
    "resolution_operator": _text(1, 100),
    "allowed_webhook_networks": _networks,
    "waiting_room_admit_per_second": _number(float, gt=0, le=10_000),
    "admission_token_ttl_seconds": _number(int, ge=10, le=3600),
    "booking_rate_per_minute": _number(int, ge=0),
    "booking_rate_burst": _number(int, ge=1),
    "queue_rate_per_minute": _number(int, ge=0),
    "queue_rate_burst": _number(int, ge=1),
    "waitlist_offer_seconds": _number(int, ge=1, le=86_400),
    "notifications_bus_name": _text(), "notifications_sender": _text(),
    "ses_configuration_set": _text(), "contact_confirm_url": _text(), "transfer_accept_url": _text(), "transfer_page_url": _text(),
    "mail_per_address_per_hour": _number(int, ge=1, le=10_000),
    "hold_reminder_seconds": _number(int, ge=0, le=86_400),
    "id_salt": _text(16),
    "holds_per_address": _number(int, ge=0, le=10_000),
    "captcha_on_holds": _text(pattern="^(off|on)$"), "captcha_verify_url": _text(),
    "captcha_secret_name": _text(), "captcha_site_key": _text(), "holder_key_secret_name": _text(),
    "captcha_widget_origin": _text(pattern=r"^(https?://[A-Za-z0-9.-]+(:[0-9]+)?)?$"),
    "personal_data_retention_days": _number(int, ge=1, le=3650),
    "webhook_key_secret_name": _text(), "webhook_attempts_queue_url": _text(),
    "webhook_local_networks": _networks,
    "webhook_ca_file": _text(),
    "export_jobs_queue_url": _text(), "exports_bucket_name": _text(),
    "export_link_seconds": _number(int, ge=60, le=43_200),
    "export_file_retention_days": _number(int, ge=1, le=30),
    "export_job_receives": _number(int, ge=1, le=1000),
    "export_job_give_up_seconds": _number(int, ge=60, le=15 * 86_400),
}


@dataclass(frozen=True)
class Settings:
    bookings_table_name: str
    provider_api_url: str = "https://api.yookassa.ru/v3"
    provider_shop_id: str = ""
    # The secrets' names, each set only on the functions granted that secret (wiring.SECRETS): a
    # function not given one fails on reading it with a ConfigurationError naming the variable.
    provider_secret_name: str = ""
    platform_key_secret_name: str = ""
    organizer_key_hash_secret_name: str = ""
    admission_token_secret_name: str = ""
    pseudonym_secret_name: str = ""
    provider_timeout_seconds: float = 8.0
    default_hold_ttl_seconds: int = 600
    customer_identity_source: str = "authorizer"
    #: ``local`` only where the whole stack is a development one (the template's DeploymentKind).
    deployment: str = "aws"
    payment_return_url: str = "https://example.com/bookings"
    payment_events_queue_url: str = ""
    hold_expiry_state_machine_arn: str = ""
    reconciliation_state_machine_arn: str = ""
    event_cancellation_state_machine_arn: str = ""
    reconcile_schedule_seconds: tuple[int, ...] = (30, 60, 120, 300, 900, 1800, 3600)
    reconcile_limit_seconds: int = 86_400
    provider_key_retention_seconds: int = 86_400
    sweep_grace_seconds: int = 60
    sweep_max_restarts: int = 5   # services/sweeper.py's MAX_RESTARTS
    # Conflict cases (services/conflict_cases.py): how long the customer has to choose, who owns them.
    resolution_window_seconds: int = 86_400
    resolution_operator: str = "on-call"
    allowed_webhook_networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    # Surge control (docs/catalog-waitlist-surge.md): waiting room rate, token life, per-customer limits.
    waiting_room_admit_per_second: float = 5.0
    admission_token_ttl_seconds: int = 300
    booking_rate_per_minute: int = 30
    booking_rate_burst: int = 10
    queue_rate_per_minute: int = 120
    queue_rate_burst: int = 30
    waitlist_offer_seconds: int = 900
    notifications_bus_name: str = ""
    notifications_sender: str = ""
    #: the SES configuration set whose events (bounces, complaints) feed the suppression list
    ses_configuration_set: str = ""
    #: where a confirmation message's link points (services/mail_policy.py)
    contact_confirm_url: str = ""
    #: where a transfer's link points, ``{booking_id}`` replaced (services/transfers.py); empty: the
    #: API's own path, relative
    transfer_accept_url: str = ""
    #: the web page a browser opening that link is sent to (transfer.html; empty: the API answers JSON)
    transfer_page_url: str = ""
    #: messages one address takes an hour, confirmation requests included
    mail_per_address_per_hour: int = 10
    hold_reminder_seconds: int = 120
    #: Keys the ids derived from Idempotency-Keys (domain/ids.py): the template sets the stack's id.
    id_salt: str = ""
    #: Live holds (HELD or PAYMENT_PENDING) one network address may have of an offering that sets no
    #: ``max_holds_per_address`` (domain/holder_address.py); 0: no cap (the template's HoldsPerAddress).
    holds_per_address: int = 0
    #: The secret keying the stored keys of holds' network addresses (wiring.HOLDER_KEY_SECRET); set
    #: only on the functions that take holds
    holder_key_secret_name: str = ""
    #: ``on``: every hold must carry a solved challenge, whatever its offering says (an offering's
    #: ``captcha_required`` asks for it alone); the verifier's validate URL, its server key's secret
    #: and the widget's public site key (services/challenges.py, adapters/captcha.py)
    captcha_on_holds: str = "off"
    captcha_verify_url: str = ""
    captcha_secret_name: str = ""
    captcha_site_key: str = ""
    #: The origin the pages load the challenge widget's script from (``<origin>/captcha.js``), the
    #: one origin their Content-Security-Policy adds for it (the template's CaptchaWidgetOrigin)
    captcha_widget_origin: str = ""
    #: Days after a booking ends before its personal data is erased (domain/personal_data.py).
    personal_data_retention_days: int = 90
    #: the webhook key endpoints' secrets are derived from (docs/api.md, "Webhooks"), and the queue of attempts
    webhook_key_secret_name: str = ""
    webhook_attempts_queue_url: str = ""
    #: networks plain-http webhooks may reach; only on a local stack (the template's WebhookLocalNetworks)
    webhook_local_networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    #: a PEM file of certificates webhook attempts trust instead of the system's (a local https
    #: receiver's self-signed one); only on a local stack, and never a way to skip verification
    webhook_ca_file: str = ""
    #: exports as a job (docs/api.md): the queue that runs them, the bucket of their files, how long
    #: a download link lasts and how many days a file is kept (the bucket's lifecycle rule, the same
    #: template parameter)
    export_jobs_queue_url: str = ""
    exports_bucket_name: str = ""
    export_link_seconds: int = 900
    export_file_retention_days: int = 1
    #: how many times the export jobs queue hands a job's message out before its dead-letter queue
    #: (the queue's RedrivePolicy maxReceiveCount; a contract test holds the two equal): the last
    #: attempt's failure is recorded on the job as ``failed``
    export_job_receives: int = 3
    #: after this long from its message's queueing an export job still running has no attempt to
    #: come: ExportJobsQueue's MessageRetentionPeriod plus ExportJobFunction's Timeout
    export_job_give_up_seconds: int = 86_700

    @classmethod
    def checked(cls, values: dict[str, Any]) -> "Settings":
        """Every given value checked and converted; all problems at once, each named by its field."""
        problems: list[tuple[str | None, str]] = []
        converted: dict[str, Any] = {}
        for field in fields(cls):
            if field.name not in values:
                if field.name == "bookings_table_name":
                    problems.append((field.name, "Field required"))
                continue
            try:
                converted[field.name] = _CHECKS[field.name](values[field.name])
            except ValueError as exc:
                problems.append((field.name, str(exc)))
        if not problems:
            settings = cls(**converted)
            # X-Customer-Id is whatever the caller writes: trusting it anywhere reachable would let
            # anyone act as any customer, so it takes an explicit statement that this stack is local.
            if settings.customer_identity_source == "header" and settings.deployment != "local":
                problems.append((None, "CUSTOMER_IDENTITY_SOURCE=header trusts any caller's X-Customer-Id and is "
                                       "refused unless HOLDFAST_DEPLOYMENT=local (template parameter DeploymentKind=local)"))
            elif settings.webhook_local_networks and settings.deployment != "local":
                problems.append(("webhook_local_networks", "webhooks to inner networks are refused unless "
                                 "HOLDFAST_DEPLOYMENT=local (template parameter DeploymentKind=local)"))
            elif settings.webhook_ca_file and settings.deployment != "local":
                problems.append(("webhook_ca_file", "webhooks trust the system's certificate authorities unless "
                                 "HOLDFAST_DEPLOYMENT=local (template parameter DeploymentKind=local)"))
            else:
                return settings
        raise ConfigurationError("invalid function configuration: " + "; ".join(
            f"{_ENV_NAMES.get(field, field)}: {message}" if field else message for field, message in problems))


_ENV_NAMES = {
    "bookings_table_name": "BOOKINGS_TABLE_NAME",
    "provider_api_url": "PROVIDER_API_URL",
    "provider_shop_id": "PROVIDER_SHOP_ID",
    "provider_secret_name": "PROVIDER_SECRET_NAME",
    "platform_key_secret_name": "PLATFORM_KEY_SECRET_NAME",
    "organizer_key_hash_secret_name": "ORGANIZER_KEY_HASH_SECRET_NAME",
    "admission_token_secret_name": "ADMISSION_TOKEN_SECRET_NAME",
    "pseudonym_secret_name": "PSEUDONYM_SECRET_NAME",
    "webhook_key_secret_name": "WEBHOOK_KEY_SECRET_NAME",
    "webhook_attempts_queue_url": "WEBHOOK_ATTEMPTS_QUEUE_URL",
    "webhook_local_networks": "WEBHOOK_LOCAL_NETWORKS",
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
    "sweep_max_restarts": "SWEEP_MAX_RESTARTS",
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
    "ses_configuration_set": "SES_CONFIGURATION_SET",
    "contact_confirm_url": "CONTACT_CONFIRM_URL",
    "transfer_accept_url": "TRANSFER_ACCEPT_URL",
    "transfer_page_url": "TRANSFER_PAGE_URL",
    "mail_per_address_per_hour": "MAIL_PER_ADDRESS_PER_HOUR",
    "hold_reminder_seconds": "HOLD_REMINDER_SECONDS",
    "id_salt": "HOLDFAST_ID_SALT",
    "holds_per_address": "HOLDS_PER_ADDRESS",
    "holder_key_secret_name": "HOLDER_KEY_SECRET_NAME",
    "captcha_on_holds": "CAPTCHA_ON_HOLDS",
    "captcha_verify_url": "CAPTCHA_VERIFY_URL",
    "captcha_secret_name": "CAPTCHA_SECRET_NAME",
    "captcha_site_key": "CAPTCHA_SITE_KEY",
    "captcha_widget_origin": "CAPTCHA_WIDGET_ORIGIN",
    "personal_data_retention_days": "PERSONAL_DATA_RETENTION_DAYS",
    "webhook_ca_file": "WEBHOOK_CA_FILE",
    "export_jobs_queue_url": "EXPORT_JOBS_QUEUE_URL",
    "exports_bucket_name": "EXPORTS_BUCKET_NAME",
    "export_link_seconds": "EXPORT_LINK_SECONDS",
    "export_file_retention_days": "EXPORT_FILE_RETENTION_DAYS",
    "export_job_receives": "EXPORT_JOB_RECEIVES",
    "export_job_give_up_seconds": "EXPORT_JOB_GIVE_UP_SECONDS",
}


def variable_of(field: str) -> str:
    """The environment variable a setting is read from."""
    return _ENV_NAMES[field]


class ConfigurationError(RuntimeError):
    """The function's environment is incomplete or malformed."""


def load_settings(environ: dict[str, str] | None = None) -> Settings:
    environ = os.environ if environ is None else environ
    return Settings.checked({field: environ[name] for field, name in _ENV_NAMES.items() if name in environ})


@functools.cache
def settings() -> Settings:
    """The settings of this process, read on first use."""
    return load_settings()


def setting(variable: str, default: str | int | float, **limits: Any) -> Any:
    """One field of a product's ``section``: read from ``variable``, checked like the core's settings
    by the type of its default (text: ``least``, ``most``, ``pattern``; a number: ``gt``, ``ge``, ``le``)."""
    check = _text(**limits) if isinstance(default, str) else _number(type(default), **limits)
    return field(default=default, metadata={"variable": variable, "check": check})


S = TypeVar("S")
_SECTIONS: list[type] = []


def section(cls: type[S]) -> type[S]:
    """A product's settings: a frozen dataclass of ``setting(...)`` fields. Every section imported
    by the time a function starts is checked by its cold start (``check_sections``), so a product's
    wiring imports its section at the top."""
    checked = dataclass(frozen=True)(cls)
    _SECTIONS.append(checked)
    return checked


def load_section(cls: type[S], environ: dict[str, str] | None = None) -> S:
    """A section read from the environment: every value checked, all problems at once, each named
    by its variable."""
    environ = os.environ if environ is None else environ
    problems, converted = [], {}
    for declared in fields(cls):  # type: ignore[arg-type]
        variable = declared.metadata["variable"]
        if variable in environ:
            try:
                converted[declared.name] = declared.metadata["check"](environ[variable])
            except ValueError as exc:
                problems.append(f"{variable}: {exc}")
    if problems:
        raise ConfigurationError("invalid function configuration: " + "; ".join(problems))
    return cls(**converted)


def check_sections(environ: dict[str, str] | None = None) -> None:
    """Read every section imported so far (a function's cold start), so a malformed product setting
    stops the start instead of a request."""
    for cls in _SECTIONS:
        load_section(cls, environ)
