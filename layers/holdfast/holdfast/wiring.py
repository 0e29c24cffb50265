"""Builds the collaborators of the services from the process settings, once per cold start."""
from __future__ import annotations

import functools

from .adapters.aws import HoldExpiryScheduler, PaymentEventsQueue, ReconciliationStarter, read_secret
from .adapters.dynamo import BookingStore
from .adapters.provider import YooKassaProvider
from .clock import system_clock
from .config import settings


@functools.cache
def store() -> BookingStore:
    return BookingStore(settings().bookings_table_name)


@functools.cache
def provider() -> YooKassaProvider:
    config = settings()
    secret = read_secret(config.provider_secret_name)
    return YooKassaProvider(config.provider_api_url, config.provider_shop_id, secret["secret_key"], config.provider_timeout_seconds)


@functools.cache
def scheduler() -> HoldExpiryScheduler:
    return HoldExpiryScheduler(settings().hold_expiry_state_machine_arn)


@functools.cache
def payment_events_queue() -> PaymentEventsQueue:
    return PaymentEventsQueue(settings().payment_events_queue_url)


def organizer_api_key() -> str:
    return read_secret(settings().provider_secret_name)["organizer_api_key"]


@functools.cache
def catalog():
    from .services.catalog import CatalogService

    return CatalogService(store(), system_clock, settings().default_hold_ttl_seconds)


@functools.cache
def bookings():
    from .services.bookings import BookingService

    arn = settings().hold_expiry_state_machine_arn
    return BookingService(store(), system_clock, scheduler().schedule if arn else None)


@functools.cache
def reconciliation_starter() -> ReconciliationStarter | None:
    arn = settings().reconciliation_state_machine_arn
    return ReconciliationStarter(arn) if arn else None


@functools.cache
def payments():
    from .services.payments import PaymentService

    config = settings()
    starter = reconciliation_starter()
    return PaymentService(store(), provider(), system_clock, bookings(), config.payment_return_url,
                          first_check_seconds=config.reconcile_schedule_seconds[0],
                          start_reconciliation=starter.start if starter else None)


@functools.cache
def reconciliation():
    from .services.reconciliation import ReconciliationService

    config = settings()
    return ReconciliationService(store(), provider(), payments(), system_clock,
                                 schedule_seconds=config.reconcile_schedule_seconds,
                                 limit_seconds=config.reconcile_limit_seconds,
                                 key_retention_seconds=config.provider_key_retention_seconds)


@functools.cache
def reviews():
    from .services.reviews import ReviewService

    return ReviewService(store(), payments(), system_clock)


@functools.cache
def listing():
    from .services.listing import ListingService

    return ListingService(store(), system_clock)


def reset() -> None:
    """Forget every cached collaborator and the settings (tests change the environment)."""
    from .config import settings as cached_settings

    for factory in (store, provider, scheduler, payment_events_queue, catalog, bookings, reconciliation_starter,
                    payments, reconciliation, reviews, listing, cached_settings):
        factory.cache_clear()
