"""Entry tokens of parking reservations (the QR payload a gate verifies offline).

Parking's passes are signed with its own key (``holdfast/domain/signatures.py``, purpose
``holdfast-lot-key``), apart from events' tickets; the gates of every lot check them against the
product's published public keys. The payload is the contract in the gate controller's brief
(docs/parking.md): v, kid, lot, bk, plate, space, from, to, and ``exp``, the window's end (read from
the reservation, where the window lives): after it the pass opens no gate.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Sequence

from holdfast.clock import parse_iso
from holdfast.domain.signatures import PublicKeys, SigningKeys, TokenInvalid

PURPOSE = "holdfast-lot-key"


class LotKeys(SigningKeys):
    def __init__(self, master_seed: bytes, published: Sequence[bytes] | None = None) -> None:
        super().__init__(master_seed, PURPOSE, published)

    def entry_token(self, lot_id: str, booking_id: str, details: dict[str, Any]) -> str:
        return self.sign({"lot": lot_id, "bk": booking_id, "plate": details["plate"],
                          "space": details["space_id"], "from": details["from"], "to": details["to"]},
                         expires=details["to"])


def verify(token: str, keys: PublicKeys | bytes, lot_id: str, now: datetime | None = None) -> dict[str, Any]:
    """The token's payload, if it is well formed, signed by one of parking's published keys (or the
    one raw public key given), for this lot, and (``now`` given) not past its ``exp``."""
    payload = (PublicKeys([keys]) if isinstance(keys, bytes) else keys).verify(token, now)
    try:
        parse_iso(payload["from"]), parse_iso(payload["to"]), parse_iso(payload["exp"])
    except (ValueError, KeyError, TypeError):
        raise TokenInvalid("token_malformed") from None
    if payload.get("v") != 1 or payload.get("lot") != lot_id:
        raise TokenInvalid("token_wrong_lot")
    return payload


def in_window(payload: dict[str, Any], now: datetime, early_entry_minutes: int) -> bool:
    return parse_iso(payload["from"]) - timedelta(minutes=early_entry_minutes) <= now < parse_iso(payload["to"])
