"""Signed passes and the keys of the devices that check them, for every product that admits
people or vehicles at a checkpoint (a lot's gates, an event's doors).

One master seed; each scope's Ed25519 key (a lot, an event) is derived from it with HKDF-SHA256
under ``info = <purpose>:<scope id>``, so no per-scope secret is stored and a scope's public key
can be handed to its devices at any time. ``kid`` is the first 8 hex characters of sha256 of the
raw public key. A token is ``b64url(payload) + "." + b64url(Ed25519(payload))``, the payload JSON
with sorted keys and no spaces (no padding in either part).

A device's own key (a gate's, a door's) is a random string shown once; only its sha256 is kept and
it is compared in constant time.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import json
import secrets
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..clock import parse_iso

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

# `cryptography` (~50 ms of a cold start) is imported by the calls that sign, derive or verify:
# hashing a device key and most routes never need it.


class TokenInvalid(Exception):
    """A token that is malformed or signed by another key (``reason`` says which); a product adds
    its own reasons (another scope, a window) on top."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def kid_of(public_raw: bytes) -> str:
    return hashlib.sha256(public_raw).hexdigest()[:8]


def device_key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_device_key(prefix: str) -> tuple[str, str]:
    """A new device key (shown once) and the hash that is stored."""
    key = prefix + secrets.token_urlsafe(32)
    return key, device_key_hash(key)


def new_device(id_field: str, name: str, key_prefix: str, created_at: str,
               offering: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A new device of an offering (its id under ``id_field``, a new uuid) and its key, shown once:
    the record keeps the key's hash and the offering's organizer."""
    import uuid

    key, key_hash = new_device_key(key_prefix)
    device = {id_field: str(uuid.uuid4()), "name": name, "key_sha256": key_hash, "created_at": created_at,
              **({"organizer_id": offering["organizer_id"]} if offering.get("organizer_id") else {})}
    return device, key


#: How long a revoked device may still report the passes it made before it heard (seconds); after
#: that its key answers 401 on its sync too.
REVOKED_SYNC_GRACE_SECONDS = 72 * 3600
#: How many sequence numbers past the last one the backend had recorded at revocation a revoked
#: device may still report. Each number is applied (refused, with a case) at most once, so this is
#: also the most cases a revoked device, or whoever holds its key, can ever open.
REVOKED_PASS_ALLOWANCE = 200


def revoked_may_sync(device: dict[str, Any], now: datetime) -> bool:
    """Whether a revoked device (``deleted_at``) may still sync: within the grace after revocation."""
    return now < parse_iso(str(device["deleted_at"])) + timedelta(seconds=REVOKED_SYNC_GRACE_SECONDS)


def revoked_last_seq(device: dict[str, Any]) -> int:
    """The last sequence number a revoked device may still report: the last one the backend had
    recorded when it was revoked (``revoked_after_seq``, 0 for a device revoked before it was
    kept) and the allowance after it."""
    return int(device.get("revoked_after_seq") or 0) + REVOKED_PASS_ALLOWANCE


def device_key_matches(stored_hash: str | None, key: str | None) -> bool:
    return bool(stored_hash) and secrets.compare_digest(str(stored_hash), device_key_hash(key or ""))


class ScopedKeys:
    """The Ed25519 keys of one purpose's scopes, all derived from one master seed."""

    def __init__(self, master_seed: bytes, purpose: str) -> None:
        if len(master_seed) < 16:
            raise ValueError("the signing master seed must be at least 16 bytes")
        self._seed = master_seed
        self.purpose = purpose

    def private_key(self, scope_id: str) -> Ed25519PrivateKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return Ed25519PrivateKey.from_private_bytes(_derived(self._seed, f"{self.purpose}:{scope_id}"))

    def public_raw(self, scope_id: str) -> bytes:
        return _public_raw(self._seed, f"{self.purpose}:{scope_id}")

    def public_key(self, scope_id: str) -> dict[str, str]:
        raw = self.public_raw(scope_id)
        return {"public_key": b64(raw), "kid": kid_of(raw), "alg": "Ed25519"}

    def sign(self, scope_id: str, payload: dict[str, Any]) -> str:
        """``payload`` with ``v`` 1 and the scope's ``kid``, signed."""
        body = {"v": 1, "kid": kid_of(self.public_raw(scope_id)), **payload}
        data = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        return b64(data) + "." + b64(self.private_key(scope_id).sign(data))


# Public routes name a scope's key in their answers: derived once per container and scope, not on
# each call (issue 34: a costly value an unauthenticated caller could make us compute)
@functools.lru_cache(maxsize=4096)
def _derived(seed: bytes, info: str) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info.encode()).derive(seed)


@functools.lru_cache(maxsize=4096)
def _public_raw(seed: bytes, info: str) -> bytes:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    key = Ed25519PrivateKey.from_private_bytes(_derived(seed, info))
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def verify(token: str, public_raw: bytes) -> dict[str, Any]:
    """The payload of a well-formed token signed by ``public_raw``'s key (version 1); the caller
    checks what the payload says."""
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
    except ValueError:
        raise TokenInvalid("token_malformed") from None
    if not isinstance(payload, dict):
        raise TokenInvalid("token_malformed")
    return payload
