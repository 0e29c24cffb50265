"""The program as a gate runs it: one process per command, sharing the journal file. A process
that queued a pass and ended (the gate restarted before it could send) loses nothing."""
from __future__ import annotations

import json
import subprocess
import sys

from gate_controller.backend import Backend
from gate_controller.controller import Gate
from gate_controller.journal import Journal
from tests.gate_controller.conftest import GATE, KEY, LOT, REPO, config


def run(backend_url: str, key_file, db, *command: str) -> tuple[int, dict]:
    done = subprocess.run(
        [sys.executable, "-m", "gate_controller", "--api", backend_url, "--lot", LOT, "--gate", GATE,
         "--key-file", str(key_file), "--db", str(db), "--timeout", "1", *command],
        cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.stderr == "", done.stderr
    return done.returncode, json.loads(done.stdout)


def test_gate_cli_queues_offline_and_syncs_after_a_restart(backend, applier, lot_key, clock, tmp_path):
    key_file, db = tmp_path / "gate.key", tmp_path / "gate.sqlite3"
    key_file.write_text(KEY + "\n")
    backend.config = config(lot_key, clock, offline_tickets=False, subscriptions=["C100CC"])
    journal = Journal(str(db))
    Gate(journal, Backend(backend.url, LOT, GATE, KEY), LOT, GATE).refresh()   # what `refresh` does
    journal.close()
    backend.stop()

    code, admitted = run(backend.url, key_file, db, "entry", "--plate", "c100cc")
    assert (code, admitted["open"], admitted["seq"], admitted["basis"]) == (0, True, 1, "subscription")
    code, refused = run(backend.url, key_file, db, "entry", "--plate", "Z999ZZ")
    assert (code, refused["open"], refused["reason"]) == (2, False, "offline_unknown_vehicle")

    backend.start()
    code, summary = run(backend.url, key_file, db, "sync")
    assert (code, summary["sent"], summary["expected_seq"], summary["unsent"]) == (0, 1, 2, 0)
    assert applier.effects == [admitted["event_id"]]


def test_gate_cli_run_keeps_the_cache_fresh_and_the_queue_empty(backend, applier, lot_key, clock, tmp_path, capsys):
    from gate_controller.cli import main

    key_file, db = tmp_path / "gate.key", str(tmp_path / "gate.sqlite3")
    key_file.write_text(KEY)
    backend.config = config(lot_key, clock, offline_tickets=True)
    journal = Journal(db)
    Gate(journal, Backend(backend.url, LOT, GATE, KEY), LOT, GATE).refresh()
    backend.stop()
    queued = Gate(journal, Backend(backend.url, LOT, GATE, KEY), LOT, GATE).entry(plate="Q100QQ")
    journal.close()
    backend.start()
    common = ["--api", backend.url, "--lot", LOT, "--gate", GATE, "--key-file", str(key_file), "--db", db]
    assert main(common + ["run", "--iterations", "2", "--interval", "0"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [sorted(line)[0] for line in lines] == ["conflicts", "refreshed", "conflicts", "refreshed"]
    assert (lines[0]["sent"], lines[2]["sent"]) == (1, 0)
    assert applier.effects == [queued["event_id"]]
