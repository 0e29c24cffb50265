"""Signed passes and the keys of the devices that check them, for every product that admits
people or vehicles at a checkpoint (a lot's gates, an event's doors).

Each product has a signing root of its own (issue 42, finding 12): a secret seed, read only by the
functions that make passes, from which the product's one Ed25519 signing key is derived with
HKDF-SHA256 under ``info = <purpose>``; and a published list of the public keys its passes are
accepted under, read by the functions and devices that check passes, which never see the seed.
``kid`` is the first 8 hex characters of sha256 of the raw public key; a token names the key that
signed it, so a verifier picks that key from the list and a rotation lists two keys for a while
(docs/doors.md, "Signing keys"). A token is ``b64url(payload) + "." + b64url(Ed25519(payload))``,
the payload JSON with sorted keys and no spaces (no padding in either part); every token made now
carries ``exp``, after which no verifier accepts it.

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
from typing import TYPE_CHECKING, Any, Sequence

from ..clock import iso, parse_iso

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


#: The field a device's pass (a gate's entry or exit, a door's scan) carries its own id in, as the
#: devices send it and the sync's records keep it. The name predates the word: such a pass is no
#: event of the catalog, and in code its id is a ``pass_id``, read by ``pass_id_of`` only. Kept on
#: the wire on purpose (devices in the field send it, stored sync records keep it, the public API's
#: names are fixed): docs/gate-sync.md says why and what a rename would take.
PASS_ID_FIELD = "event_id"


def pass_id_of(seen: dict[str, Any]) -> str:
    """A device's pass's own id (a pass as sent, held or recorded)."""
    return str(seen[PASS_ID_FIELD])


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


class KeyNotPublished(Exception):
    """The signing key's public half is not in the product's published list: every pass signed
    now would be refused by every door or gate, so none is signed (a rotation done out of order)."""


class PublicKeys:
    """The public keys a product's passes are accepted under (its published list, the first the
    one passes are signed with now, the others still accepted: a rotation). What a verifying
    function and a device hold: they can check passes and never make one."""

    def __init__(self, published: Sequence[bytes]) -> None:
        if not published or any(len(raw) != 32 for raw in published):
            raise ValueError("a product publishes one or more raw 32-byte Ed25519 public keys")
        self.published = list(published)
        self._by_kid = {kid_of(raw): raw for raw in self.published}

    @classmethod
    def from_listing(cls, listed: Sequence[str]) -> PublicKeys:
        return cls([unb64(str(text)) for text in listed])

    @property
    def kids(self) -> list[str]:
        return list(self._by_kid)

    def public_key(self, scope_id: str | None = None) -> dict[str, Any]:
        """What a device is given (the same for each lot or event of the product): the current
        key (``public_key``, ``kid``) and every key it must accept (``keys``)."""
        current = self.published[0]
        return {"public_key": b64(current), "kid": kid_of(current), "alg": "Ed25519",
                "keys": [{"kid": kid_of(raw), "public_key": b64(raw), "alg": "Ed25519"} for raw in self.published]}

    def public_raw(self, scope_id: str | None = None) -> bytes:
        return self.published[0]

    def verify(self, token: str, now: datetime | None = None) -> dict[str, Any]:
        """The payload of a token signed by one of the listed keys, the one its ``kid`` names, and
        not expired at ``now`` (when given). ``TokenInvalid``: ``token_malformed``,
        ``token_unknown_key`` (a key not listed: never listed, or retired after a rotation),
        ``token_signature_invalid``, ``token_expired``."""
        raw = self._by_kid.get(str(claimed(token).get("kid")))
        if raw is None:
            raise TokenInvalid("token_unknown_key")
        payload = verify(token, raw)
        if payload.get("kid") != kid_of(raw):
            raise TokenInvalid("token_unknown_key")
        if now is not None and expired(payload, now):
            raise TokenInvalid("token_expired")
        return payload


def claimed(token: str) -> dict[str, Any]:
    """What a token's payload says, unchecked (to pick the key that checks it); {} if unreadable."""
    try:
        payload = json.loads(unb64(token.split(".")[0]))
    except (ValueError, AttributeError, IndexError):
        return {}
    return payload if isinstance(payload, dict) else {}


def expired(payload: dict[str, Any], now: datetime) -> bool:
    """Whether a signed payload is past its ``exp`` (a token without one, or with one that is not a
    time, counts as expired: every token made since keys have versions carries it)."""
    try:
        return now >= parse_iso(str(payload["exp"]))
    except (KeyError, ValueError, TypeError):
        return True


class SigningKeys(PublicKeys):
    """A product's signing key (derived from its root seed) with the product's published list. The
    list defaults to the key's own public half (tests, a single-key deployment); given, it must name
    that half, or nothing is signed (``KeyNotPublished``)."""

    def __init__(self, master_seed: bytes, purpose: str, published: Sequence[bytes] | None = None) -> None:
        if len(master_seed) < 16:
            raise ValueError("the signing master seed must be at least 16 bytes")
        self._seed = master_seed
        self.purpose = purpose
        own = _public_raw(master_seed, purpose)
        if published is not None and own not in published:
            raise KeyNotPublished(f"the {purpose} signing key {kid_of(own)} is not among the published keys "
                                  f"{[kid_of(raw) for raw in published]}")
        super().__init__([own] + [raw for raw in published or () if raw != own])
        self.signing_kid = kid_of(own)

    def private_key(self) -> Ed25519PrivateKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return Ed25519PrivateKey.from_private_bytes(_derived(self._seed, self.purpose))

    def sign(self, payload: dict[str, Any], expires: datetime | str) -> str:
        """``payload`` with ``v`` 1, the signing key's ``kid`` and ``exp``, signed."""
        exp = expires if isinstance(expires, str) else iso(expires)
        body = {"v": 1, "kid": self.signing_kid, **payload, "exp": exp}
        data = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        return b64(data) + "." + b64(self.private_key().sign(data))


# derived once per container (issue 34: a costly value an unauthenticated caller could make us compute)
@functools.lru_cache(maxsize=64)
def _derived(seed: bytes, info: str) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info.encode()).derive(seed)


@functools.lru_cache(maxsize=64)
def _public_raw(seed: bytes, info: str) -> bytes:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    key = Ed25519PrivateKey.from_private_bytes(_derived(seed, info))
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def public_half(master_seed: bytes, purpose: str) -> str:
    """The published form (base64url, raw 32 bytes) of the key a seed signs with: what goes into
    the product's public-key list (docs/deploy.md)."""
    return b64(_public_raw(master_seed, purpose))


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
