"""The gate's offline token check against the backend's own signer (holdfast.products.parking.tokens): a
token the backend issues verifies at the gate, and the gate refuses what the backend would."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from gate_controller.tokens import verify
from holdfast.products.parking.tokens import LotKeys

KEYS = LotKeys(b"gate-test-master-seed-0123456789")
NOW = datetime(2030, 1, 1, 12, 0, tzinfo=timezone.utc)
EARLY = timedelta(minutes=15)
DETAILS = {"plate": "A123BC77", "space_id": "R1", "from": "2030-01-01T12:00:00Z", "to": "2030-01-01T14:00:00Z"}


def test_a_token_the_backend_signs_verifies_at_the_gate_with_the_lots_public_key():
    token = KEYS.entry_token("lot-a", "bk-1", DETAILS)
    verdict = verify(token, KEYS.public_key("lot-a")["public_key"], "lot-a", NOW, EARLY)
    assert verdict.ok and verdict.payload["bk"] == "bk-1" and verdict.payload["space"] == "R1"


def test_the_gate_refuses_another_lots_key_another_lot_and_a_changed_payload():
    token = KEYS.entry_token("lot-a", "bk-1", DETAILS)
    # another root's key (issue 42, finding 12: parking has one key for every lot, so "another
    # lot's key" is now another root's): a kid the gate does not list is refused before the signature
    other_key = LotKeys(b"another-parking-root-0123456789").public_key("lot-a")["public_key"]
    assert verify(token, other_key, "lot-a", NOW, EARLY).reason == "unknown_key"
    payload, signature = token.split(".")
    forged = payload + "." + signature[:-4] + ("AAAA" if not signature.endswith("AAAA") else "BBBB")
    assert verify(forged, KEYS.public_key("lot-a")["public_key"], "lot-a", NOW, EARLY).reason == "bad_signature"
    other_lots_token = KEYS.entry_token("lot-b", "bk-2", DETAILS)
    assert verify(other_lots_token, KEYS.public_key("lot-b")["public_key"], "lot-a", NOW, EARLY).reason == "other_lot"
    payload, signature = token.split(".")
    assert verify(payload[:-2] + "AA." + signature, KEYS.public_key("lot-a")["public_key"], "lot-a", NOW,
                  EARLY).reason in ("bad_signature", "malformed_token")
    assert verify("not-a-token", KEYS.public_key("lot-a")["public_key"], "lot-a", NOW, EARLY).reason == "malformed_token"


def test_the_gate_applies_the_window_with_the_early_entry_minutes():
    token = KEYS.entry_token("lot-a", "bk-1", DETAILS)
    key = KEYS.public_key("lot-a")["public_key"]
    assert verify(token, key, "lot-a", NOW - timedelta(minutes=15), EARLY).ok
    assert verify(token, key, "lot-a", NOW - timedelta(minutes=16), EARLY).reason == "too_early"
    assert verify(token, key, "lot-a", NOW + timedelta(hours=2), EARLY).reason == "token_expired"
