"""Events' own settings, read from the function's environment like the core's (holdfast/config.py)."""
from __future__ import annotations

from holdfast.config import section, setting


@section
class EventsConfig:
    #: Secrets Manager secret holding ``master_seed``, from which every event's ticket key is derived
    #: (set only on the functions that sign or check tickets). The template points it at the one seed
    #: parking's lots use too: the purposes differ, so no event key is ever a lot's.
    key_secret_name: str = setting("TICKET_KEY_SECRET_NAME", "")
    #: How far ahead of the backend's clock a door's offline scan may be dated (services/doors.py);
    #: the gates' variable, so one rule holds for every check-in device.
    door_clock_skew_seconds: int = setting("GATE_CLOCK_SKEW_SECONDS", 120, ge=0, le=86_400)
