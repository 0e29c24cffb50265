"""Builds the collaborators of the services from the process settings, once per cold start.

Every factory imports what it builds when it is first called, never at the top of this module: a
function imports this module, and it must load only what its own handler calls (the store, the
provider SDK, a service and its kinds), not what any function might (docs/performance.md,
"Cold start"; tests/contract/test_cold_imports.py holds each function to it). A new factory
follows the same pattern: ``@cached`` (so ``reset`` forgets it), imports inside. A product builds
its own services the same way in its package's ``wiring`` module (products/parking/wiring.py).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from .clock import system_clock
from .config import ConfigurationError, check_sections, load_settings, settings, variable_of
from .domain import lifecycle
from .observability import logger

if TYPE_CHECKING:
    from .config import Settings
    from .adapters.aws import StepFunctionsHoldExpiryScheduler, SqsPaymentEventsQueue, StepFunctionsReconciliationStarter
    from .adapters.dynamo import BookingStore
    from .adapters.provider import YooKassaProvider

#: Every cached factory, the products' included: ``reset`` clears them all.
CACHED: list[Any] = []


def cached(factory: Any) -> Any:
    """``functools.cache`` that ``reset`` knows of."""
    wrapped = functools.cache(factory)
    CACHED.append(wrapped)
    return wrapped


def _declare_builtin_kinds() -> None:
    from . import kinds  # noqa: F401 - registering the built-in kinds declares their states


# A booking in a kind's own status (parking's CHECKED_IN) is read by functions that never load
# the kinds: the lifecycle loads them on the first such status.
lifecycle.declare_kinds_with(_declare_builtin_kinds)

@dataclass(frozen=True)
class Secret:
    """One Secrets Manager secret of one purpose: the setting holding its name (set only on the
    functions granted it) and its fields, each with the shortest value accepted."""
    setting: str
    fields: dict[str, int]

    def read(self, config: Settings | None = None) -> dict[str, str]:
        """The secret, checked for every field (read through the five-minute cache)."""
        from .adapters.aws import read_secret

        name = getattr(config or settings(), self.setting)
        if not name:
            raise ConfigurationError(f"{variable_of(self.setting)} is not set: this function is not given the secret "
                                     f"holding {', '.join(self.fields)}")
        secret = read_secret(name)
        missing = [field for field, least in self.fields.items()
                   if not isinstance(secret.get(field), str) or len(secret[field]) < least]
        if missing:
            raise ConfigurationError(f"secret {name} lacks {', '.join(missing)} (or has it shorter than "
                                     f"{', '.join(str(self.fields[f]) for f in missing)} characters)")
        return secret


# One secret per purpose, each granted only to the functions that read it (docs/deploy.md); a
# function names the ones it reads in its cold_start(...), and tests/contract/test_secret_grants.py
# holds the template's grants and variables to that.
#: the provider shop's secret key: the functions that call the provider
PROVIDER_SECRET = Secret("provider_secret_name", {"secret_key": 1})
#: what the platform's operators send as X-Api-Key (/admin/organizers)
PLATFORM_KEY_SECRET = Secret("platform_key_secret_name", {"platform_api_key": 16})
#: HMAC-SHA256 key under which organizers' API keys are stored: the functions that authenticate organizers
ORGANIZER_KEY_HASH_SECRET = Secret("organizer_key_hash_secret_name", {"api_key_hash_key": 16})
#: HMAC-SHA256 key of waiting-room admission tokens: the waiting room and the routes that check tokens
ADMISSION_TOKEN_SECRET = Secret("admission_token_secret_name", {"admission_token_key": 16})
#: HMAC-SHA256 key of erased customers' pseudonyms: the functions that erase personal data
PSEUDONYM_SECRET = Secret("pseudonym_secret_name", {"pseudonym_key": 16})
#: HMAC-SHA256 key webhook endpoints' signing secrets are derived from: the routes that show one, and the deliveries
WEBHOOK_KEY_SECRET = Secret("webhook_key_secret_name", {"webhook_key": 16})
#: The challenge verifier's server key (adapters/captcha.py): read on the first hold that must carry
#: a solved challenge, never at a cold start (a deployment that never asks for one need not fill it).
CAPTCHA_SECRET = Secret("captcha_secret_name", {"server_key": 16})
#: HMAC-SHA256 key of the stored keys of holds' network addresses (domain/holder_address.py): read
#: on the first hold of an offering with a cap on live holds per address, never at a cold start.
HOLDER_KEY_SECRET = Secret("holder_key_secret_name", {"holder_key": 16})
SECRETS = {"WEBHOOK_KEY_SECRET": WEBHOOK_KEY_SECRET, "PROVIDER_SECRET": PROVIDER_SECRET, "PLATFORM_KEY_SECRET": PLATFORM_KEY_SECRET,
           "ORGANIZER_KEY_HASH_SECRET": ORGANIZER_KEY_HASH_SECRET, "ADMISSION_TOKEN_SECRET": ADMISSION_TOKEN_SECRET,
           "PSEUDONYM_SECRET": PSEUDONYM_SECRET}


#: What a function loads as it starts because every invocation uses it, rather than on its first
#: request (docs/performance.md, "Cold start"; `make bench-coldstart` measures it): a handler names
#: them in its ``cold_start(..., loads=...)`` by the factory below that builds them, and the modules
#: each name stands for are declared here, once. Everything else loads on first use.
PRELOADS: dict[str, tuple[str, ...]] = {
    "admission": ("holdfast.services.admission",),   # rate_limiter(), waiting_room(): every change is rate limited
    "bookings": ("holdfast.services.bookings",),
    "cancellation_job": ("holdfast.services.cancellation_job",),
    "catalog": ("holdfast.services.catalog",),
    "listing": ("holdfast.services.listing",),
    "payments": ("holdfast.services.payments",),
    # the provider's SDK: only for a function that calls the provider on every invocation
    "provider": ("holdfast.adapters.yookassa_sdk",),
    "reconciliation": ("holdfast.services.reconciliation",),
    "reviews": ("holdfast.services.reviews",),
    "waitlist": ("holdfast.services.waitlist",),
}


def cold_start(*secrets: Secret, primed: tuple[str, ...] = (), loads: tuple[str, ...] = ()) -> None:
    """Called when a function's module is imported with the secrets the function reads: its
    configuration (the core's, and the sections of the products it imported) and each of those
    secrets are checked once, so a misconfigured function fails its start with one clear log line
    instead of answering every request with a 500. ``loads``: what the function uses on every
    invocation (``PRELOADS``), imported now.

    Under SnapStart (the template's ``SnapStart`` parameter) the same check runs again after every
    restore, and ``primed`` (``"module:Model"`` request models of the main route) are built before
    the snapshot is taken: see ``_snapshot_hooks``."""
    import importlib

    for name in loads:
        for module in PRELOADS[name]:
            importlib.import_module(module)
    _check(secrets)
    _snapshot_hooks(secrets, primed)


def _check(secrets: tuple[Secret, ...]) -> None:
    try:
        config = load_settings()  # not the cached settings(): the local stack imports functions with their own variables
        check_sections()
        for secret in secrets:
            secret.read(config)
    except ConfigurationError as exc:
        logger.error("refusing to start: %s", exc)
        raise


#: What the SnapStart hooks of this process re-check and prime (the last cold_start's); None: no hooks yet
_snapshot: dict[str, Any] = {}


def _snapshot_hooks(secrets: tuple[Secret, ...], primed: tuple[str, ...]) -> None:
    """SnapStart (docs/performance.md, "SnapStart"): Lambda runs the init once per published
    version, snapshots the process and starts every later environment from that snapshot.
    Before the snapshot: build the main route's request models (pydantic's import and schema
    building is most of a first call), then forget every secret, client and cached collaborator,
    so that no secret, open connection or offering read at publishing time is copied into every
    restored environment. After each restore: reseed ``random`` (each environment its own retry
    jitter) and run the start's check again, reading the secrets anew; a missing or malformed
    secret fails the restore, as it fails a cold start. The hooks' library ships with Lambda's
    Python runtimes; where it is absent nothing snapshots the process and nothing is registered.
    Registered once per process, with the latest start's secrets and models."""
    first = not _snapshot
    _snapshot.update(secrets=secrets, primed=primed)
    if not first:
        return
    try:
        from snapshot_restore_py import register_after_restore, register_before_snapshot
    except ImportError:
        return
    register_before_snapshot(before_snapshot)
    register_after_restore(after_restore)


def before_snapshot() -> None:
    """Prime what the first call would build, then drop what must not be shared (see above)."""
    import importlib

    for path in _snapshot.get("primed", ()):
        module, _, name = path.partition(":")
        getattr(importlib.import_module(module), name).model_rebuild(force=True)
    store()   # the DynamoDB client: botocore's models stay loaded in the session, the client is dropped
    reset()


def after_restore() -> None:
    import random

    random.seed()
    _check(_snapshot.get("secrets", ()))


@cached
def store() -> BookingStore:
    from .adapters.dynamo import BookingStore

    return BookingStore(settings().bookings_table_name)


@cached
def provider() -> YooKassaProvider:
    from .adapters.provider import YooKassaProvider

    config = settings()
    secret = PROVIDER_SECRET.read()
    return YooKassaProvider(config.provider_api_url, config.provider_shop_id, secret["secret_key"], config.provider_timeout_seconds)


@cached
def scheduler() -> StepFunctionsHoldExpiryScheduler:
    from .adapters.aws import StepFunctionsHoldExpiryScheduler

    return StepFunctionsHoldExpiryScheduler(settings().hold_expiry_state_machine_arn,
                               reminder_seconds=settings().hold_reminder_seconds)


def tick_indexed(tick: Any) -> bool:
    """Whether a hold expiry tick's input (as the state machine passes it on, ``tick``) says the
    shard markers of its buckets are written, so a read of its buckets needs only the shards they
    name (adapters/expiry_buckets.py); a tick started before them reads every shard."""
    from .adapters.expiry_buckets import INDEXED

    return isinstance(tick, dict) and tick.get("index") == INDEXED


@cached
def payment_events_queue() -> SqsPaymentEventsQueue:
    from .adapters.aws import SqsPaymentEventsQueue

    return SqsPaymentEventsQueue(settings().payment_events_queue_url)


def platform_api_key() -> str:
    return PLATFORM_KEY_SECRET.read()["platform_api_key"]


def api_key_hash_key() -> bytes:
    return ORGANIZER_KEY_HASH_SECRET.read()["api_key_hash_key"].encode()


@cached
def organizers():
    from .adapters.organizers_store import OrganizerStore
    from .services.organizers import OrganizerService

    return OrganizerService(OrganizerStore(store().table, store().client), system_clock, api_key_hash_key)


def audit():
    from .adapters.audit_store import AuditStore
    from .services.audit import AuditService

    return AuditService(AuditStore(store().table, store().client), system_clock)


def exports():
    from .services.exports import ExportService

    return ExportService(store())


@cached
def export_jobs():
    from .adapters.export_jobs import ExportBucket, ExportJobItems, ExportJobsQueue
    from .adapters.organizers_store import OrganizerStore
    from .services.export_jobs import ExportJobService

    config = settings()
    queue = ExportJobsQueue(config.export_jobs_queue_url) if config.export_jobs_queue_url else None
    files = ExportBucket(config.exports_bucket_name) if config.exports_bucket_name else None
    return ExportJobService(exports(), ExportJobItems(store().table, store().client),
                            OrganizerStore(store().table, store().client).organizer_keys,
                            queue, files, system_clock, id_salt(), config.export_link_seconds,
                            config.export_file_retention_days, config.export_job_give_up_seconds)


def record_action(who, action: str, path_parameters, answer, status: int) -> None:  # noqa: ANN001
    """The API functions' audit recorder (``holdfast.entry.http.make_resolver(audit=...)``)."""
    audit().record(who, action, path_parameters, answer, status)


def webhook_key() -> bytes:
    return WEBHOOK_KEY_SECRET.read()["webhook_key"].encode()


@cached
def webhooks():
    from .adapters.webhook_transport import HttpTransport, WebhookAttemptsQueue
    from .adapters.webhooks_store import WebhookItems
    from .services.webhooks import WebhookService

    config = settings()
    queue = WebhookAttemptsQueue(config.webhook_attempts_queue_url) \
        if config.webhook_attempts_queue_url else None
    return WebhookService(WebhookItems(store().table, store().client), store(), system_clock, webhook_key, queue,
                          HttpTransport(config.webhook_ca_file or None), config.webhook_local_networks)


def organizer_ids() -> list[str]:
    """Every organizer's id (the engine's whole list of open cases reads each one's partition)."""
    from .adapters.organizers_store import OrganizerStore

    return [organizer["organizer_id"] for organizer in OrganizerStore(store().table, store().client).list_organizers()]


def authenticate_organizer(api_key: str | None):  # noqa: ANN201 - a Caller, typed where it is defined
    """The Caller behind an organizer's X-Api-Key (the handlers' ``require_organizer``)."""
    return organizers().authenticate(api_key)


@cached
def catalog():
    from .services.catalog import CatalogService

    return CatalogService(store(), system_clock, settings().default_hold_ttl_seconds, id_salt(),
                          challenges=challenge_rule())


@cached
def bookings():
    from .services.bookings import BookingService

    arn = settings().hold_expiry_state_machine_arn
    return BookingService(store(), system_clock, scheduler().schedule if arn else None,
                          view_extras=booking_view_extras, codes=codes(), payments=payments,
                          holds_per_address=settings().holds_per_address, challenges=challenges(),
                          address_key=holder_address)


@cached
def challenges():
    """Whether holds must carry a solved challenge, and its verifier (services/challenges.py)."""
    from .adapters.captcha import SmartCaptchaVerifier
    from .services.challenges import Challenges

    config = settings()
    verifier = SmartCaptchaVerifier(config.captcha_verify_url, lambda: CAPTCHA_SECRET.read()["server_key"]) \
        if config.captcha_verify_url else None
    return Challenges(verifier, **_challenge_settings())


@cached
def challenge_rule():
    """When a hold must carry a solved challenge, without its verifier: what the offerings' views
    (events, services, lots) say by the same rule the hold path applies (services/challenges.py)."""
    from .services.challenges import Challenges

    return Challenges(None, **_challenge_settings())


def _challenge_settings() -> dict[str, Any]:
    config = settings()
    return {"always": config.captcha_on_holds == "on", "widget_origin": config.captcha_widget_origin,
            "site_key": config.captcha_site_key}


def holder_address(address: str) -> str | None:
    """The stored key of the network a hold came from (domain/holder_address.py), keyed with the
    holder key secret of its own (never the id salt, which is the public stack id); None when
    ``address`` is no address. The bookings service asks it only for a capped offering's hold."""
    from .domain.holder_address import holder_key

    return holder_key(HOLDER_KEY_SECRET.read()["holder_key"], address)


def transfers():
    """Confirmed bookings given to another customer (services/transfers.py)."""
    from .services.transfers import TransferService

    return TransferService(store(), system_clock, settings().transfer_accept_url, settings().transfer_page_url)


@cached
def codes():
    """Discount and access codes of the offerings (services/codes.py)."""
    from .services.codes import CodeService

    return CodeService(store(), system_clock)


@cached
def exchanges():
    """Confirmed bookings moved to other places of the same organizer (services/exchange.py)."""
    from .services.exchange import ExchangeService

    from .services.exchange_differences import DifferencePayments
    from .services.money_at_provider import MoneyAtProvider

    config = settings()
    money = MoneyAtProvider(provider())
    return ExchangeService(store(), system_clock, money=money, differences=DifferencePayments(
        store(), system_clock, money, config.payment_return_url, config.reconcile_schedule_seconds[0]))


@cached
def blocks():
    """The organizers' blocks of places kept out of sale (services/blocks.py)."""
    from .services.blocks import BlockService

    return BlockService(store(), system_clock)


#: The shortest signing master seed accepted (template.yaml ParkingKeySecretName: 32+ random characters):
#: every key a product derives from it (a lot's, an event's) is as strong as it is.
MASTER_SEED_LENGTH = 32


def signing_seed(secret_name: str, variable: str) -> bytes:
    """The master seed a product derives its signing keys from, read through the five-minute cache
    of the secret named by ``variable``."""
    from .adapters.aws import read_secret

    if not secret_name:
        raise ConfigurationError(f"{variable} is not set: signed passes need the signing master seed")
    seed = read_secret(secret_name).get("master_seed")
    if not isinstance(seed, str) or len(seed) < MASTER_SEED_LENGTH:
        raise ConfigurationError(f"secret {secret_name} lacks master_seed ({MASTER_SEED_LENGTH}+ characters)")
    return seed.encode()


def published_keys(secret_name: str, variable: str) -> list[bytes] | None:
    """A product's published public keys (the secret's ``public_keys``, base64url raw Ed25519, the
    key passes are signed with now first), through the five-minute cache; None where ``variable``
    is not set (a signer then checks nothing against it)."""
    from .adapters.aws import read_secret
    from .domain.signatures import unb64

    if not secret_name:
        return None
    listed = read_secret(secret_name).get("public_keys")
    try:
        keys = [unb64(str(text)) for text in listed or ()]
    except ValueError:
        keys = []
    if not keys or any(len(raw) != 32 for raw in keys):
        raise ConfigurationError(f"secret {secret_name} lacks public_keys (a list of base64url Ed25519 public keys)")
    return keys


def checking_keys(public_secret_name: str, public_variable: str, signing: Callable[[], Any]) -> Any:
    """The public keys a product's passes are checked with: its published list, or, where none is
    named (a test, or a deployment that signs and checks in one place), the signing key's own."""
    from .domain.signatures import PublicKeys

    published = published_keys(public_secret_name, public_variable)
    return PublicKeys(published) if published is not None else signing()


def booking_view_extras(booking) -> dict:  # noqa: ANN001
    """What a booking's kind adds to its view, signed with its product's credentials (a parking
    booking's entry pass: kinds/products.py, ``view_credentials``)."""
    kind, credentials = _kind_and_credentials(booking)
    return kind.view_extras(booking, credentials)


def booking_pass(booking) -> str | None:  # noqa: ANN001
    """The booking's signed pass, made with its product's credentials (None: it has none now)."""
    kind, credentials = _kind_and_credentials(booking)
    return kind.pass_token(booking, credentials)


def booking_passes(booking) -> dict[str, str]:  # noqa: ANN001
    """The booking's passes for several holders by id, made with its product's credentials."""
    kind, credentials = _kind_and_credentials(booking)
    return kind.passes(booking, credentials)


def _kind_and_credentials(booking):  # noqa: ANN001, ANN202
    from . import kinds
    from .kinds import products

    kind = kinds.of_booking(booking)
    product = products.of_kind(kind.name)
    reference = product.view_credentials if product else None
    return kind, products.resolve(reference)() if reference else None


@cached
def passes():
    from .services.passes import PassService

    return PassService(store(), booking_pass, booking_passes)


@cached
def reconciliation_starter() -> StepFunctionsReconciliationStarter | None:
    from .adapters.aws import StepFunctionsReconciliationStarter

    arn = settings().reconciliation_state_machine_arn
    return StepFunctionsReconciliationStarter(arn) if arn else None


@cached
def reconciliation_buckets():
    from .adapters.aws import ReconciliationBuckets

    starter = reconciliation_starter()
    if starter is None:
        return None
    # the first checks ride on the hold expiry ticks where this function may start them
    return ReconciliationBuckets(starter, ticks=scheduler() if settings().hold_expiry_state_machine_arn else None)


@cached
def payments():
    from .services.payments import PaymentService

    config = settings()
    starter = reconciliation_buckets()   # a payment's first check is batched per time bucket
    return PaymentService(store(), provider(), system_clock, bookings(), config.payment_return_url,
                          first_check_seconds=config.reconcile_schedule_seconds[0],
                          start_reconciliation=starter.start if starter else None,
                          resolution_window_seconds=config.resolution_window_seconds,
                          resolution_operator=config.resolution_operator, fiscal=fiscal_directory())


@cached
def settlements():
    from .services.settlements import Settlements

    return Settlements(store(), provider(), system_clock, retry_seconds=settings().reconcile_schedule_seconds)


@cached
def fiscal_directory():  # noqa: ANN201 - the OrganizerDirectory adapter, typed where it is defined
    """Where organizers' fiscal settings live (the organizers' items on the shared table)."""
    from .adapters.organizers_store import OrganizerStore

    return OrganizerStore(store().table, store().client)


@cached
def fiscal_settings():
    from .services.fiscal_settings import FiscalSettingsService

    return FiscalSettingsService(fiscal_directory(), store(), system_clock)


@cached
def resolutions():
    from .services.resolutions import ResolutionService

    return ResolutionService(store(), payments(), system_clock)


@cached
def reconciliation():
    from .services.reconciliation import ReconciliationService

    config = settings()
    return ReconciliationService(store(), provider(), payments(), system_clock,
                                 schedule_seconds=config.reconcile_schedule_seconds,
                                 limit_seconds=config.reconcile_limit_seconds,
                                 key_retention_seconds=config.provider_key_retention_seconds)


@cached
def reviews():
    from .services.reviews import ReviewService

    return ReviewService(store(), payments(), system_clock)


@cached
def listing():
    from .services.listing import ListingService

    return ListingService(store(), system_clock)


@cached
def waitlist():
    from .services.waitlist import WaitlistService

    return WaitlistService(store(), bookings(), system_clock, settings().waitlist_offer_seconds)


@cached
def surge_store():
    from .adapters.surge import SurgeStore

    return SurgeStore(settings().bookings_table_name, store().client)


def admission_token_key() -> bytes:
    """The HMAC key of admission tokens."""
    return ADMISSION_TOKEN_SECRET.read()["admission_token_key"].encode()


@cached
def waiting_room():
    from .services.admission import WaitingRoomService

    config = settings()
    return WaitingRoomService(store(), surge_store(), system_clock, admission_token_key,
                              admit_per_second=config.waiting_room_admit_per_second,
                              token_ttl_seconds=config.admission_token_ttl_seconds)


@cached
def rate_limiter():
    from .domain.admission import RateRule
    from .services.admission import RateLimiter

    config = settings()
    return RateLimiter(surge_store(), system_clock, {
        "booking": RateRule(config.booking_rate_per_minute, config.booking_rate_burst),
        "queue": RateRule(config.queue_rate_per_minute, config.queue_rate_burst),
    })


@cached
def event_cancellation():
    from .adapters.aws import StepFunctionsCancellationJobs
    from .services.event_cancellation import EventCancellationService

    arn = settings().event_cancellation_state_machine_arn
    return EventCancellationService(store(), system_clock, StepFunctionsCancellationJobs(arn) if arn else None)


@cached
def cancellation_job():
    from .services.cancellation_job import CancellationJob

    return CancellationJob(store(), payments(), system_clock)


@cached
def notifications_bus():
    from .adapters.aws import NotificationsBus

    name = settings().notifications_bus_name
    return NotificationsBus(name) if name else None


@cached
def email_sender():
    from .adapters.aws import SesEmailSender

    config = settings()
    return SesEmailSender(config.notifications_sender, configuration_set=config.ses_configuration_set) \
        if config.notifications_sender else None


@cached
def mail_policy():
    from .adapters.mail_policy_store import MailPolicyStore

    return MailPolicyStore(settings().bookings_table_name)


@cached
def mail_gate():
    from .services.mail_policy import MailGate

    config = settings()
    return MailGate(mail_policy(), system_clock, config.mail_per_address_per_hour, config.contact_confirm_url)


@cached
def message_site():
    """Where messages link to (the booking page, PAYMENT_RETURN_URL's form) and what a booking's
    kind adds to what they show (a parking pass), as the API's booking view does."""
    from .services.messages import Site

    config = settings()
    return Site(booking_url=config.payment_return_url, sender=config.notifications_sender,
                view_extras=booking_view_extras, offering_of=lambda offering_id: store().get_event(offering_id))


@cached
def personal_data():
    from .services.personal_data import PersonalDataService

    return PersonalDataService(store(), system_clock, pseudonym_key(), settings().personal_data_retention_days)


def pseudonym_key() -> bytes:
    """The key of erased customers' pseudonyms (its own secret: changing it splits one customer's
    erased bookings into two pseudonyms, and no other key may tell it)."""
    return PSEUDONYM_SECRET.read()["pseudonym_key"].encode()


def id_salt() -> str:
    """The salt of the ids organizers' objects get (domain/ids.py); the template always sets it."""
    salt = settings().id_salt
    if not salt:
        raise ConfigurationError("HOLDFAST_ID_SALT is required: ids derived from Idempotency-Keys are keyed with it")
    return salt


def reset() -> None:
    """Forget every cached collaborator (the products' too) and the settings (tests change the
    environment)."""
    from .config import settings as cached_settings

    for factory in CACHED:
        factory.cache_clear()
    cached_settings.cache_clear()
    from .adapters.aws import clear_secret_cache

    clear_secret_cache()
