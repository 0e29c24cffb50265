"""The key that keeps the gate's cache unreadable at rest, and what it does to a value.

A plate or a token is sealed with AES-256-GCM (a fresh 12-byte nonce per value; the column's
name is bound in as associated data, so a sealed token cannot be passed off as a plate). Where
the gate must find rows by plate, it keeps a keyed hash (HMAC-SHA256 under a key derived from
the same secret) next to the sealed value: equal plates match, the file alone names none.

The key is the gate's, never the database's: ``HOLDFAST_GATE_CACHE_KEY`` (32 bytes, base64), or
else a key file beside the database (``<db>.key``, created once with mode 0600).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

ENV = "HOLDFAST_GATE_CACHE_KEY"
PREFIX = "v1:"


class KeyUnusable(Exception):
    """The key is malformed, or is not the one the cache was sealed with."""


def load_key(db_path: str) -> bytes:
    configured = os.environ.get(ENV)
    if configured:
        try:
            key = base64.b64decode(configured, validate=True)
        except (binascii.Error, ValueError):
            raise KeyUnusable(f"{ENV} is not base64") from None
        if len(key) != 32:
            raise KeyUnusable(f"{ENV} must hold 32 bytes")
        return key
    path = Path(f"{db_path}.key")
    if not path.exists():
        # O_EXCL: two processes of one gate starting together agree on the one key written first
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(os.urandom(32))
                handle.flush()
                os.fsync(handle.fileno())
    key = path.read_bytes()
    if len(key) != 32:
        raise KeyUnusable(f"{path} must hold 32 bytes")
    return key


class Sealer:
    def __init__(self, key: bytes) -> None:
        self.aead = AESGCM(hashlib.sha256(b"holdfast-gate-cache-seal" + key).digest())
        self.hash_key = hashlib.sha256(b"holdfast-gate-cache-lookup" + key).digest()

    def seal(self, column: str, value: str | None) -> str | None:
        if value is None:
            return None
        nonce = os.urandom(12)
        sealed = self.aead.encrypt(nonce, str(value).encode(), column.encode())
        return PREFIX + base64.b64encode(nonce + sealed).decode()

    def open(self, column: str, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith(PREFIX):
            raise KeyUnusable(f"{column} is not sealed")
        raw = base64.b64decode(value[len(PREFIX):])
        try:
            return self.aead.decrypt(raw[:12], raw[12:], column.encode()).decode()
        except InvalidTag:
            raise KeyUnusable("the cache was sealed with another key") from None

    def tag(self, value: str | None) -> str | None:
        return None if value is None else hmac.new(self.hash_key, str(value).encode(), hashlib.sha256).hexdigest()
