"""Events' own settings, read from the function's environment like the core's (holdfast/config.py)."""
from __future__ import annotations

from holdfast.config import section, setting


@section
class EventsConfig:
    #: Secrets Manager secret holding ``master_seed``, from which events' ticket signing key is
    #: derived: a root apart from parking's, told only to the functions that sign tickets.
    key_secret_name: str = setting("TICKET_KEY_SECRET_NAME", "")
    #: How far ahead of the backend's clock a door's offline scan may be dated (services/doors.py);
    #: the gates' variable, so one rule holds for every check-in device.
    door_clock_skew_seconds: int = setting("GATE_CLOCK_SKEW_SECONDS", 120, ge=0, le=86_400)
    #: Secrets Manager secret holding ``public_keys``, the public keys doors accept tickets under.
    public_keys_secret_name: str = setting("TICKET_PUBLIC_KEYS_SECRET_NAME", "")
