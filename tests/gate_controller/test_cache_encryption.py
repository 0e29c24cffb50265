"""The gate's SQLite file at rest: plates (of passes, subscriptions and cached reservations) and tokens are sealed (AES-GCM under a key the gate
keeps outside the file); lookups by plate go through a keyed hash, so the file alone tells nothing."""
from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from gate_controller.journal import Journal, KeyUnusable

PLATES = ("S123SS", "T456TT", "P789PP")
TOKEN = "eyJiayI6ImJvb2tpbmctNDIifQ.c2lnbmF0dXJlLW9mLXRoZS1sb3Q"


def _fill(journal: Journal) -> None:
    journal.replace_cache({"public_key": "pk", "kid": "k1", "subscriptions": [
        {"plate": "S123SS", "valid_from": "2030-01-01T00:00:00Z", "valid_to": "2030-02-01T00:00:00Z"}],
        "reservations": [{"booking_id": "b-42", "plate": "T456TT", "space_id": "R1", "from": "2030-01-01T10:00:00Z",
                          "to": "2030-01-01T12:00:00Z"}]}, "2030-01-01T09:00:00Z", "2030-01-01T09:05:00Z")
    journal.begin_pass({"event_id": "e-1", "kind": "entry", "at": "2030-01-01T09:01:00Z", "plate": "P789PP"})
    journal.decide("e-1", {"mode": "offline", "opened": 1, "basis": "local_ticket", "local_ticket_id": "L-1"},
                   queue=True)
    journal.begin_pass({"event_id": "e-2", "kind": "entry", "at": "2030-01-01T09:02:00Z", "token": TOKEN})
    journal.decide("e-2", {"mode": "offline", "opened": 1, "basis": "token", "token": TOKEN, "booking_id": "b-42",
                           "plate": "T456TT"}, queue=True)


def _raw(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.iterdir() if p.name.startswith(path.name) and
                    not p.name.endswith(".key"))


def test_the_sqlite_file_holds_no_plate_or_token_in_clear_and_the_gate_still_reads_them(tmp_path):
    path = tmp_path / "gate.sqlite3"
    journal = Journal(str(path))
    _fill(journal)
    raw = _raw(path)                                    # the database, its WAL and shared memory
    assert b"b-42" in raw                               # the file is read as it is (ids stay clear)
    for secret in (*PLATES, TOKEN):
        assert secret.encode() not in raw, secret
        assert secret.lower().encode() not in raw.lower()
    journal.close()

    again = Journal(str(path))                          # the key file the gate keeps next to it
    assert again.subscription("S123SS")["plate"] == "S123SS"
    assert [r["booking_id"] for r in again.cached_reservations("T456TT")] == ["b-42"]
    assert again.last_entry("plate", "P789PP")["local_ticket_id"] == "L-1"
    assert [(row["seq"], row["plate"], row["token"]) for row in again.unsent(1, 10)] == \
        [(1, "P789PP", None), (2, "T456TT", TOKEN)]
    again.close()
    assert oct((tmp_path / "gate.sqlite3.key").stat().st_mode & 0o777) == "0o600"


def test_a_key_from_the_environment_and_a_wrong_key_reads_nothing(tmp_path, monkeypatch):
    path = tmp_path / "gate.sqlite3"
    monkeypatch.setenv("HOLDFAST_GATE_CACHE_KEY", base64.b64encode(os.urandom(32)).decode())
    journal = Journal(str(path))
    _fill(journal)
    journal.close()
    assert not (tmp_path / "gate.sqlite3.key").exists()            # the environment's key was used
    monkeypatch.setenv("HOLDFAST_GATE_CACHE_KEY", base64.b64encode(os.urandom(32)).decode())
    stranger = Journal(str(path))
    assert stranger.subscription("S123SS") is None                 # its keyed hash finds nothing
    with pytest.raises(KeyUnusable):
        stranger.passes()                                           # and nothing sealed opens
    stranger.close()
    monkeypatch.setenv("HOLDFAST_GATE_CACHE_KEY", "short")
    with pytest.raises(KeyUnusable):
        Journal(str(path))
