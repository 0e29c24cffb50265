"""What the gate trusts of the backend (issue 34, finding 6): it talks to it over https only (plain
http only to this machine), and it keeps the first lot key it fetched: a refresh that offers
another key is refused, and nothing of that answer is kept, until the operator names the new key."""
from __future__ import annotations

import pytest

from gate_controller.backend import Backend, checked_api_url
from gate_controller.cli import main
from gate_controller.controller import LotKeyRefused
from tests.gate_controller.conftest import GATE, KEY, LOT, config
from tests.support.parking_tokens import LotKey


@pytest.mark.parametrize("url", ["http://backend.example.com", "http://10.0.0.5:3000", "ftp://x", "https://",
                                 "backend.example.com"])
def test_the_backend_is_refused_without_https_outside_this_machine(url):
    with pytest.raises(ValueError, match="https"):
        Backend(url, LOT, GATE, KEY)


@pytest.mark.parametrize("url", ["https://api.example.com/v1", "http://127.0.0.1:3000", "http://[::1]:3000",
                                 "http://localhost:3000"])
def test_https_anywhere_and_plain_http_to_this_machine_are_accepted(url):
    assert checked_api_url(url) == url


def test_the_cli_says_why_it_refuses_a_plain_http_backend(tmp_path, capsys):
    key_file = tmp_path / "gate.key"
    key_file.write_text(KEY)
    with pytest.raises(SystemExit) as exited:
        main(["--api", "http://gate-backend.example.com", "--lot", LOT, "--gate", GATE, "--key-file", str(key_file),
              "--db", str(tmp_path / "gate.sqlite3"), "status"])
    assert exited.value.code == 2 and "https" in capsys.readouterr().err


def test_the_first_lot_key_is_pinned_and_another_is_refused_until_accepted(gate, backend, lot_key, clock):
    backend.config = config(lot_key, clock, offline_tickets=False, subscriptions=["C100CC"])
    gate.refresh()
    assert gate.journal.get("kid") == lot_key.kid
    other = LotKey(b"\x09" * 32)
    backend.config = config(other, clock, offline_tickets=True, subscriptions=["Z999ZZ"])
    with pytest.raises(LotKeyRefused, match=other.kid):
        gate.refresh()
    # nothing of the refused answer is kept: the old key, the old policy, the old list
    assert gate.journal.get("kid") == lot_key.kid and gate.journal.get("public_key") == lot_key.public_b64
    assert gate.journal.subscription("Z999ZZ") is None and gate.journal.subscription("C100CC")
    with pytest.raises(LotKeyRefused):
        gate.refresh(accept_kid="not-the-offered-one")
    gate.refresh(accept_kid=other.kid)
    assert gate.journal.get("kid") == other.kid and gate.journal.subscription("Z999ZZ")


def test_a_key_whose_id_does_not_match_it_is_refused_even_first(gate, backend, lot_key, clock):
    answer = config(lot_key, clock, offline_tickets=False)
    backend.config = {**answer, "kid": "0000beef"}
    with pytest.raises(LotKeyRefused, match="does not match"):
        gate.refresh()
    assert gate.journal.get("kid") is None


def test_a_rotation_lists_both_keys_and_the_gate_accepts_passes_of_either_once_the_new_one_is_named(
        gate, backend, lot_key, clock):
    """Issue 42, finding 12: a config lists every key passes are accepted under (``keys``); a key
    new to the gate is refused until the operator names it, then passes of both keys open offline."""
    from tests.support.parking_tokens import b64url  # noqa: F401 - the spec's encoding, as the tokens use it

    backend.config = config(lot_key, clock, offline_tickets=False)
    gate.refresh()
    new = LotKey(b"\x0b" * 32)
    listed = [{"kid": k.kid, "public_key": k.public_b64, "alg": "Ed25519"} for k in (new, lot_key)]
    backend.config = {**config(new, clock, offline_tickets=False), "keys": listed}
    with pytest.raises(LotKeyRefused, match=new.kid):
        gate.refresh()
    gate.refresh(accept_kid=new.kid)
    assert [entry["kid"] for entry in gate.journal.get("keys")] == [new.kid, lot_key.kid]
    from gate_controller.tokens import verify
    from datetime import timedelta

    iso = lambda moment: moment.isoformat().replace("+00:00", "Z")  # noqa: E731
    window = (iso(clock.now), iso(clock.now + timedelta(hours=2)))
    for key in (new, lot_key):
        token = key.token(LOT, "bk-1", "A123BC77", *window, exp=window[1])
        assert verify(token, gate.journal.get("keys"), LOT, clock.now, timedelta(minutes=15)).ok
    stranger = LotKey(b"\x0c" * 32).token(LOT, "bk-1", "A123BC77", *window, exp=window[1])
    assert verify(stranger, gate.journal.get("keys"), LOT, clock.now, timedelta(minutes=15)).reason == "unknown_key"
    # the old key retired: the next config lists only the new one, and the gate forgets the old
    backend.config = {**config(new, clock, offline_tickets=False), "keys": listed[:1]}
    gate.refresh()
    old_token = lot_key.token(LOT, "bk-1", "A123BC77", *window, exp=window[1])
    assert verify(old_token, gate.journal.get("keys"), LOT, clock.now, timedelta(minutes=15)).reason == "unknown_key"
