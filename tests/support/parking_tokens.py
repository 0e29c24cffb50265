"""Entry tokens for tests, made exactly as the token spec says (the backend's signer is
parking-core's; this lets the gate's tests run without it)."""
from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class LotKey:
    def __init__(self, seed: bytes = b"\x07" * 32) -> None:
        self.private = Ed25519PrivateKey.from_private_bytes(seed)
        self.public_raw = self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.public_b64 = b64url(self.public_raw)
        self.kid = hashlib.sha256(self.public_raw).hexdigest()[:8]

    def token(self, lot: str, booking: str, plate: str, starts: str, ends: str, **changes: Any) -> str:
        payload = {"v": 1, "kid": self.kid, "lot": lot, "bk": booking, "plate": plate, "space": "S-1",
                   "from": starts, "to": ends, **changes}
        payload_bytes = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
        return b64url(payload_bytes) + "." + b64url(self.private.sign(payload_bytes))
