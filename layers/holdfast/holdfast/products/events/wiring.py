"""Builds events' ticket keys and door services from the core's wiring, once per cold start,
importing each only when first asked (like holdfast/wiring.py)."""
from __future__ import annotations

from holdfast.config import ConfigurationError, load_section
from holdfast.wiring import cached

# imported here, not on first use, so that every function building events' services checks it at
# its cold start (config.check_sections)
from .config import EventsConfig

#: The shortest master seed accepted (the template's ParkingKeySecretName: 32+ random characters).
MASTER_SEED_LENGTH = 32


@cached
def events_config() -> EventsConfig:
    return load_section(EventsConfig)


def ticket_keys():
    """Every event's Ed25519 ticket key, derived from the master seed (the five-minute secret cache)."""
    from holdfast.adapters.aws import read_secret

    from .tickets import EventKeys

    name = events_config().key_secret_name
    if not name:
        raise ConfigurationError("TICKET_KEY_SECRET_NAME is not set: tickets need the signing master seed")
    seed = read_secret(name).get("master_seed")
    if not isinstance(seed, str) or len(seed) < MASTER_SEED_LENGTH:
        raise ConfigurationError(f"secret {name} lacks master_seed ({MASTER_SEED_LENGTH}+ characters)")
    return EventKeys(seed.encode())


def ticket_keys_if_configured():
    """What an event booking's view signs its tickets with (the product's view credentials): the
    key source, or None where this deployment has no seed."""
    return ticket_keys if events_config().key_secret_name else None
