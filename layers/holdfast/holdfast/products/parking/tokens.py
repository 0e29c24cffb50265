"""Entry tokens of parking reservations (the QR payload a gate verifies offline).

Each lot's key is the core's scoped key (``holdfast/domain/signatures.py``) of purpose
``holdfast-lot-key``, so ``info`` is ``holdfast-lot-key:<lot_id>``. The payload is the contract in
the gate controller's brief (docs/parking.md): v, kid, lot, bk, plate, space, from, to.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from holdfast.clock import parse_iso
from holdfast.domain.signatures import ScopedKeys, TokenInvalid, verify as verify_signed

PURPOSE = "holdfast-lot-key"


class LotKeys(ScopedKeys):
    def __init__(self, master_seed: bytes) -> None:
        super().__init__(master_seed, PURPOSE)

    def entry_token(self, lot_id: str, booking_id: str, details: dict[str, Any]) -> str:
        return self.sign(lot_id, {"lot": lot_id, "bk": booking_id, "plate": details["plate"],
                                  "space": details["space_id"], "from": details["from"], "to": details["to"]})


def verify(token: str, public_raw: bytes, lot_id: str) -> dict[str, Any]:
    """The token's payload, if it is well formed, signed by the lot's key and for this lot."""
    payload = verify_signed(token, public_raw)
    try:
        parse_iso(payload["from"]), parse_iso(payload["to"])
    except (ValueError, KeyError, TypeError):
        raise TokenInvalid("token_malformed") from None
    if payload.get("v") != 1 or payload.get("lot") != lot_id:
        raise TokenInvalid("token_wrong_lot")
    return payload


def in_window(payload: dict[str, Any], now: datetime, early_entry_minutes: int) -> bool:
    return parse_iso(payload["from"]) - timedelta(minutes=early_entry_minutes) <= now < parse_iso(payload["to"])
