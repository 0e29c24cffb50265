"""Offline check of a parking entry token (version 1, see docs/parking.md and the token spec).

token = base64url(payload JSON) + "." + base64url(Ed25519 signature of those exact bytes), signed
with the lot's private key. The gate holds only the lot's public key, so it can tell a genuine,
current token for this lot from anything else without asking the backend.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

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


def signed_payload(token: str, public_key_b64: str) -> Verdict:
    """Is ``token`` a version-1 payload signed by this key (``kid`` included)? What it says is the caller's to check."""
    try:
        encoded_payload, encoded_signature = token.strip().split(".")
        payload_bytes, signature = b64url_decode(encoded_payload), b64url_decode(encoded_signature)
        public_key = b64url_decode(public_key_b64)
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, payload_bytes)
    except InvalidSignature:
        return Verdict(False, "bad_signature")
    except (ValueError, binascii.Error):
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


def verify(token: str, public_key_b64: str, lot_id: str, now: datetime, early_entry: timedelta) -> Verdict:
    """Is ``token`` a version-1 token signed by this lot's key, for this lot, valid at ``now``?"""
    signed = signed_payload(token, public_key_b64)
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
    if now >= ends:
        return Verdict(False, "token_expired", payload)
    return Verdict(True, None, payload)


def verify_ticket(token: str, public_key_b64: str, event_id: str) -> Verdict:
    """Is ``token`` a ticket of this event, signed by its key? (A door's offline check.)"""
    signed = signed_payload(token, public_key_b64)
    if not signed.ok:
        return Verdict(False, "bad_token")
    payload = signed.payload or {}
    if payload.get("ev") != event_id or not isinstance(payload.get("tk"), str):
        return Verdict(False, "wrong_event")
    return Verdict(True, None, payload)
