"""Parking's own settings, read from the function's environment like the core's (holdfast/config.py)."""
from __future__ import annotations

from holdfast.config import section, setting


@section
class ParkingConfig:
    #: Secrets Manager secret holding ``master_seed``, from which every lot's entry-token key is
    #: derived (set only on the functions that sign or check entry passes).
    key_secret_name: str = setting("PARKING_KEY_SECRET_NAME", "")
    #: How far ahead of the backend's clock a gate's offline pass may be dated (services/gate_passes.py).
    gate_clock_skew_seconds: int = setting("GATE_CLOCK_SKEW_SECONDS", 120, ge=0, le=86_400)
