"""Builds parking's services (lots, gate passes, gate cases, gate sync) from the core's wiring,
once per cold start, importing each only when first asked (like holdfast/wiring.py)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from holdfast.clock import system_clock
from holdfast.config import load_section, settings
from holdfast.wiring import (bookings, cached, checking_keys, fiscal_directory, id_salt, provider, published_keys,
                             signing_seed, store)

# imported here, not on first use, so that every function building parking's services checks it at
# its cold start (config.check_sections)
from .config import ParkingConfig

@cached
def parking_config() -> ParkingConfig:
    return load_section(ParkingConfig)


def parking_keys():
    """Parking's signing key (derived from its seed) with its published public keys, both read
    through the five-minute secret cache: only where passes are made."""
    from .tokens import LotKeys

    config = parking_config()
    return LotKeys(signing_seed(config.key_secret_name, "PARKING_KEY_SECRET_NAME"),
                   published_keys(config.public_keys_secret_name, "PARKING_PUBLIC_KEYS_SECRET_NAME"))


def parking_public_keys():
    """The public keys gates accept passes under: what the functions that check passes or configure
    gates hold (never the seed)."""
    return checking_keys(parking_config().public_keys_secret_name, "PARKING_PUBLIC_KEYS_SECRET_NAME", parking_keys)


def parking_keys_if_configured():
    """What a parking booking's view signs its entry pass with (the product's view credentials):
    the key source, or None where this deployment has no parking seed."""
    return parking_keys if parking_config().key_secret_name else None


@cached
def parking():
    from .services.lots import ParkingService

    from .adapters.gate_sync_store import GateSyncStore

    return ParkingService(store(), system_clock, bookings(), settings().default_hold_ttl_seconds, parking_public_keys,
                          id_salt(), sync_cursor=GateSyncStore(store().table, store().client).expected_seq)


@cached
def gate_passes():
    from .services.gate_passes import GatePasses

    from urllib.parse import urljoin

    return_url = settings().payment_return_url
    # the exit payment page lives beside the booking page PAYMENT_RETURN_URL names (web/exit.html)
    return GatePasses(store(), system_clock, parking(), provider, return_url,
                      max_clock_skew_seconds=parking_config().gate_clock_skew_seconds,
                      exit_page_url=urljoin(return_url, "exit.html"), fiscal_reads=fiscal_directory())


def apply_gate_pass(lot_id: str, gate_id: str, event: dict[str, Any], *, at: datetime, offline: bool
                    ) -> dict[str, Any]:
    """The one entry point for a gate pass (the gate routes and gate sync's applier): the service
    is looked up per call, so a ``reset()`` between calls is seen."""
    return gate_passes().apply(lot_id, gate_id, event, at=at, offline=offline)


@cached
def gate_cases():
    from .services.gate_cases import GateCases

    from holdfast.wiring import organizer_ids

    return GateCases(store(), system_clock, organizer_ids)


@cached
def gate_sync():
    from .adapters.gate_sync_store import GateSyncStore
    from .services.gate_sync import GateSync

    return GateSync(GateSyncStore(store().table, store().client), apply_gate_pass, store(), system_clock)
