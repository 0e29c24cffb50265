"""Offline check of a parking entry token (version 1, see docs/parking.md and the token spec).

token = base64url(payload JSON) + "." + base64url(Ed25519 signature of those exact bytes), signed
with parking's private key (events' tickets: with events' own). A device holds only public keys:
the list its configuration gives (``keys``, each with its ``kid``; more than one while a key is
rotated), and picks the one the token's ``kid`` names, so it can tell a genuine, current pass
from anything else without asking the backend. A pass past its ``exp`` opens nothing.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Mapping, Sequence, Union

#: What a device verifies with: one key (base64url), or its configuration's ``keys`` list
#: (``[{"kid", "public_key"}]``), or a mapping kid -> key.
Keys = Union[str, Sequence[Mapping[str, str]], Mapping[str, str]]

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def key_id(public_key: bytes) -> str:
    return hashlib.sha256(public_key).hexdigest()[:8]


def parse_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError("a time without a zone")
    return moment.astimezone(timezone.utc)


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str | None = None
    payload: dict[str, Any] | None = None


def by_kid(keys: Keys) -> dict[str, str]:
    """The keys a device accepts, by their ids (each id checked against its key)."""
    if isinstance(keys, str):
        listed = [keys]
    elif isinstance(keys, Mapping):
        listed = list(keys.values())
    else:
        listed = [str(entry.get("public_key") or "") for entry in keys]
    found = {}
    for text in listed:
        try:
            found[key_id(b64url_decode(text))] = text
        except (ValueError, binascii.Error):
            continue
    return found


def signed_payload(token: str, keys: Keys) -> Verdict:
    """Is ``token`` a version-1 payload signed by the key its ``kid`` names, one of ``keys``? What it
    says is the caller's to check."""
    try:
        encoded_payload, encoded_signature = token.strip().split(".")
        payload_bytes, signature = b64url_decode(encoded_payload), b64url_decode(encoded_signature)
        claimed = json.loads(payload_bytes)
        kid = claimed.get("kid") if isinstance(claimed, dict) else None
        public_key_b64 = by_kid(keys).get(str(kid))
        if public_key_b64 is None:
            return Verdict(False, "unknown_key")
        public_key = b64url_decode(public_key_b64)
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, payload_bytes)
    except InvalidSignature:
        return Verdict(False, "bad_signature")
    except (ValueError, binascii.Error, AttributeError):
        return Verdict(False, "malformed_token")
    try:
        payload = json.loads(payload_bytes)
        if payload.get("v") != 1:
            return Verdict(False, "unknown_token_version")
        if payload.get("kid") != key_id(public_key):
            return Verdict(False, "unknown_key")
    except (ValueError, TypeError, AttributeError):
        return Verdict(False, "malformed_token")
    return Verdict(True, None, payload)


def expired(payload: dict[str, Any], now: datetime) -> bool:
    """Past the pass's ``exp`` (a pass without one is judged by what else it says)."""
    try:
        return "exp" in payload and now >= parse_time(str(payload["exp"]))
    except ValueError:
        return True


def verify(token: str, keys: Keys, lot_id: str, now: datetime, early_entry: timedelta) -> Verdict:
    """Is ``token`` a version-1 token signed by one of parking's keys, for this lot, valid at ``now``?"""
    signed = signed_payload(token, keys)
    if not signed.ok:
        return signed
    payload = signed.payload or {}
    if payload.get("lot") != lot_id:
        return Verdict(False, "other_lot")
    try:
        starts, ends = parse_time(payload["from"]), parse_time(payload["to"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return Verdict(False, "malformed_token")
    if now < starts - early_entry:
        return Verdict(False, "too_early", payload)
    if now >= ends or expired(payload, now):
        return Verdict(False, "token_expired", payload)
    return Verdict(True, None, payload)


def verify_ticket(token: str, keys: Keys, event_id: str, now: datetime | None = None) -> Verdict:
    """Is ``token`` a ticket of this event, signed by one of events' keys, not expired at ``now``?
    (A door's offline check.)"""
    signed = signed_payload(token, keys)
    if not signed.ok:
        return Verdict(False, "bad_token")
    payload = signed.payload or {}
    if payload.get("ev") != event_id or not isinstance(payload.get("tk"), str):
        return Verdict(False, "wrong_event")
    if now is not None and expired(payload, now):
        return Verdict(False, "ticket_expired", payload)
    return Verdict(True, None, payload)
