"""Parking's own settings, read from the function's environment like the core's (holdfast/config.py)."""
from __future__ import annotations

from holdfast.config import section, setting


@section
class ParkingConfig:
    #: Secrets Manager secret holding ``master_seed``, from which parking's entry-pass signing key
    #: is derived (told only to the functions that sign passes: bookings, notifier).
    key_secret_name: str = setting("PARKING_KEY_SECRET_NAME", "")
    #: How far ahead of the backend's clock a gate's offline pass may be dated (services/gate_passes.py).
    gate_clock_skew_seconds: int = setting("GATE_CLOCK_SKEW_SECONDS", 120, ge=0, le=86_400)
    #: Secrets Manager secret holding ``public_keys``, the public keys gates accept passes under
    #: (the functions that check passes or configure gates read it, and the signers, which refuse
    #: to sign with a key not listed there).
    public_keys_secret_name: str = setting("PARKING_PUBLIC_KEYS_SECRET_NAME", "")
