"""Builds events' ticket keys and door services from the core's wiring, once per cold start,
importing each only when first asked (like holdfast/wiring.py)."""
from __future__ import annotations

from typing import Any

from holdfast.config import load_section
from holdfast.wiring import cached, checking_keys, published_keys, signing_seed

# imported here, not on first use, so that every function building events' services checks it at
# its cold start (config.check_sections)
from .config import EventsConfig

@cached
def events_config() -> EventsConfig:
    return load_section(EventsConfig)


def ticket_keys():
    """Events' ticket signing key (derived from its own seed) with its published public keys, both
    through the five-minute secret cache: only where tickets are made."""
    from .tickets import EventKeys

    config = events_config()
    return EventKeys(signing_seed(config.key_secret_name, "TICKET_KEY_SECRET_NAME"),
                     published_keys(config.public_keys_secret_name, "TICKET_PUBLIC_KEYS_SECRET_NAME"))


def ticket_public_keys():
    """The public keys doors accept tickets under: what the doors' function holds (never the seed)."""
    return checking_keys(events_config().public_keys_secret_name, "TICKET_PUBLIC_KEYS_SECRET_NAME", ticket_keys)


def ticket_signer_if_configured():
    """What an event booking's view signs its tickets with (the product's view credentials): the
    key source and the table its events are read from (each ticket expires with its event's start
    as it is now), or None where this deployment has no seed."""
    if not events_config().key_secret_name:
        return None
    from holdfast.wiring import store

    from .tickets import TicketSigner

    return TicketSigner(ticket_keys, store())


@cached
def doors():
    from holdfast.clock import system_clock
    from holdfast.wiring import store

    from .services.doors import Doors

    from .adapters.doors_store import DoorSyncStore

    return Doors(store(), system_clock, ticket_public_keys, events_config().door_clock_skew_seconds,
                 sync_cursor=DoorSyncStore(store().table, store().client).expected_seq)


def apply_door_scan(event_id: str, door_id: str, event: dict, *, at, offline: bool) -> dict:  # noqa: ANN001
    """The one entry point for a scan (the scan route and the door sync's applier): the service is
    looked up per call, so a ``reset()`` between calls is seen."""
    return doors().scan(event_id, door_id, event, at=at, offline=offline)


def scan_online(event_id: str, door_id: str, key: str | None, read_body, *, at) -> dict:  # noqa: ANN001
    """The scan route: the door's key checked, the body read, the scan applied."""
    return doors().scan_online(event_id, door_id, key, read_body, at=at)


def apply_retired_scan(event_id: str, door_id: str, event: dict, *, at, offline: bool) -> dict:  # noqa: ANN001
    """A revoked door's synced scan: recorded and refused with a case, never checked in."""
    return doors().scan(event_id, door_id, event, at=at, offline=offline, retired=True)


def door_sync(retired: bool = False):
    """The door's sequenced sync; ``retired``: a revoked door's, whose scans are refused with cases."""
    return _door_syncs()[retired]


def revoked_door_sync(door: dict[str, Any], event_id: str, door_id: str, scans: list[dict[str, Any]]
                      ) -> dict[str, Any]:
    """A revoked door's batch: the scans numbered up to its last number go through its sync (each
    refused with a case, once per number); the rest are refused without one (``device_revoked``)."""
    from holdfast.services.checkin_sync import past_revocation

    heard, past = past_revocation(door, scans)
    answer = door_sync(True).sync(event_id, door_id, heard) if heard else {"expected_seq": None, "results": []}
    expected = answer["expected_seq"] if heard and answer["expected_seq"] <= max(int(s["seq"]) for s in heard) \
        else max(int(scan["seq"]) for scan in scans) + 1
    return {"expected_seq": expected, "results": sorted(answer["results"] + past, key=lambda r: r["seq"])}


@cached
def _door_syncs():
    from holdfast.services.checkin_sync import SequencedSync
    from holdfast.wiring import store

    from .adapters.doors_store import DoorSyncStore
    from .services.doors import refused_after_pass

    ledger = DoorSyncStore(store().table, store().client)
    return {False: SequencedSync(ledger, apply_door_scan, refused_after_pass),
            True: SequencedSync(ledger, apply_retired_scan, refused_after_pass)}


@cached
def checkin_cases():
    from holdfast.clock import system_clock
    from holdfast.wiring import store

    from .services.doors import CheckinCases

    from holdfast.wiring import organizer_ids

    return CheckinCases(store(), system_clock, organizer_ids)
