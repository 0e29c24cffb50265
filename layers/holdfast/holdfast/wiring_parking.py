"""The parking family's factories (lots, gate passes, gate cases, gate sync), split from wiring.py.

The same pattern as there: ``@functools.cache``, imports inside, every factory cleared by
``wiring.reset()``; the shared collaborators (store, bookings, provider, settings) are read through
the ``wiring`` module at call time, so a test that replaces one of them there is seen here too.
"""
from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from . import wiring


def parking_keys():
    """Every lot's Ed25519 key, derived from the master seed (read through the five-minute cache)."""
    from .adapters.aws import read_secret
    from .parking_tokens import LotKeys

    name = wiring.settings().parking_key_secret_name
    if not name:
        raise wiring.ConfigurationError("PARKING_KEY_SECRET_NAME is not set: parking needs the entry-token master seed")
    seed = read_secret(name).get("master_seed")
    if not isinstance(seed, str) or len(seed) < 16:
        raise wiring.ConfigurationError(f"secret {name} lacks master_seed (16+ characters)")
    return LotKeys(seed.encode())


@functools.cache
def parking():
    from .services.parking import ParkingService

    return ParkingService(wiring.store(), wiring.system_clock, wiring.bookings(),
                          wiring.settings().default_hold_ttl_seconds, parking_keys)


@functools.cache
def gate_passes():
    from .services.gate_passes import GatePasses

    return GatePasses(wiring.store(), wiring.system_clock, parking(), wiring.provider,
                      wiring.settings().payment_return_url,
                      max_clock_skew_seconds=wiring.settings().gate_clock_skew_seconds)


def apply_gate_pass(lot_id: str, gate_id: str, event: dict[str, Any], *, at: datetime, offline: bool
                    ) -> dict[str, Any]:
    """The one entry point for a gate pass (the gate routes and gate sync's applier): the service
    is looked up per call, so a ``reset()`` between calls is seen."""
    return gate_passes().apply(lot_id, gate_id, event, at=at, offline=offline)


@functools.cache
def gate_cases():
    from .services.gate_cases import GateCases

    return GateCases(wiring.store(), wiring.system_clock)


@functools.cache
def gate_sync():
    from .adapters.gate_sync_store import GateSyncStore
    from .services.gate_sync import GateSync

    return GateSync(GateSyncStore(wiring.store().table, wiring.store().client), apply_gate_pass)
