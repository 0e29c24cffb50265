"""Entry tokens of parking reservations (the QR payload a gate verifies offline) and gate keys.

One master seed lives in Secrets Manager; each lot's Ed25519 key is derived from it with
HKDF-SHA256 (info ``holdfast-lot-key:<lot_id>``), so no per-lot secret is stored and a lot's public
key can be handed to its gates at any time. ``kid`` is the first 8 hex characters of sha256 of the
raw public key. The format is the contract in the gate controller's brief (docs/parking.md):

  token = b64url(payload) + "." + b64url(Ed25519(payload)),
  payload = JSON with sorted keys and no spaces: v, kid, lot, bk, plate, space, from, to.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from holdfast.clock import parse_iso

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

# `cryptography` (~50 ms of a cold start) is imported by the calls that sign, derive or verify:
# a gate key's hash and most of the parking API's routes never need it.


class TokenInvalid(Exception):
    """A token that is malformed, signed by another key, or for another lot (``reason`` says which)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def gate_key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class LotKeys:
    def __init__(self, master_seed: bytes) -> None:
        if len(master_seed) < 16:
            raise ValueError("the parking master seed must be at least 16 bytes")
        self._seed = master_seed

    def private_key(self, lot_id: str) -> Ed25519PrivateKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return Ed25519PrivateKey.from_private_bytes(_lot_key_bytes(self._seed, lot_id))

    def public_raw(self, lot_id: str) -> bytes:
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        return self.private_key(lot_id).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def public_key(self, lot_id: str) -> dict[str, str]:
        raw = self.public_raw(lot_id)
        return {"public_key": b64(raw), "kid": kid_of(raw), "alg": "Ed25519"}

    def entry_token(self, lot_id: str, booking_id: str, details: dict[str, Any]) -> str:
        payload = {"v": 1, "kid": kid_of(self.public_raw(lot_id)), "lot": lot_id, "bk": booking_id,
                   "plate": details["plate"], "space": details["space_id"], "from": details["from"],
                   "to": details["to"]}
        data = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
        return b64(data) + "." + b64(self.private_key(lot_id).sign(data))


# GET /lots/{id} is public and every answer names the lot's key: derived once per container and
# lot, not on each call (issue 34: a costly value an unauthenticated caller could make us compute)
@functools.lru_cache(maxsize=1024)
def _lot_key_bytes(seed: bytes, lot_id: str) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=f"holdfast-lot-key:{lot_id}".encode()).derive(seed)


def kid_of(public_raw: bytes) -> str:
    return hashlib.sha256(public_raw).hexdigest()[:8]


def verify(token: str, public_raw: bytes, lot_id: str) -> dict[str, Any]:
    """The token's payload, if it is well formed, signed by the lot's key and for this lot."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        payload_text, signature_text = token.split(".")
        data, signature = unb64(payload_text), unb64(signature_text)
    except ValueError:
        raise TokenInvalid("token_malformed") from None
    try:
        Ed25519PublicKey.from_public_bytes(public_raw).verify(signature, data)
    except InvalidSignature:
        raise TokenInvalid("token_signature_invalid") from None
    try:
        payload = json.loads(data)
        parse_iso(payload["from"]), parse_iso(payload["to"])
    except (ValueError, KeyError, TypeError):
        raise TokenInvalid("token_malformed") from None
    if payload.get("v") != 1 or payload.get("lot") != lot_id:
        raise TokenInvalid("token_wrong_lot")
    return payload


def in_window(payload: dict[str, Any], now: datetime, early_entry_minutes: int) -> bool:
    from datetime import timedelta

    return parse_iso(payload["from"]) - timedelta(minutes=early_entry_minutes) <= now < parse_iso(payload["to"])
