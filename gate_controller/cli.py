"""Command line of the gate: one command per pass, plus the background duty (``run``).

    python -m gate_controller --api http://127.0.0.1:3000 --lot L --gate G --key-file gate.key entry --token T
    ... entry --plate A123BC | exit --ticket T | exit --plate A123BC | lane-cleared | sync | refresh | status | run

Each command prints one JSON object. Exit status: 0 done (the barrier opens, for a pass), 2 the
pass was refused, 3 the backend could not be reached or answered busy (sync and refresh only), 4 the queue is
stuck (the backend expects a pass this gate does not hold).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from .backend import Backend, Busy, Refused, Unreachable
from .controller import Gate, LotKeyRefused, SyncStuck
from .journal import Journal


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m gate_controller", description="A parking gate's controller.")
    top.add_argument("--api", required=True, help="backend base URL, e.g. http://127.0.0.1:3000")
    top.add_argument("--lot", required=True)
    top.add_argument("--gate", required=True)
    top.add_argument("--key-file", required=True, type=Path, help="file holding the gate key (X-Gate-Key)")
    top.add_argument("--db", type=Path, help="the gate's SQLite journal (default gate-<lot>-<gate>.sqlite3)")
    top.add_argument("--timeout", type=float, default=3.0, help="seconds before the backend counts as unreachable")
    commands = top.add_subparsers(dest="command", required=True)
    entry = commands.add_parser("entry", help="a vehicle at the entry barrier")
    who = entry.add_mutually_exclusive_group(required=True)
    who.add_argument("--token")
    who.add_argument("--plate")
    leaving = commands.add_parser("exit", help="a vehicle at the exit barrier")
    who = leaving.add_mutually_exclusive_group(required=True)
    who.add_argument("--ticket")
    who.add_argument("--plate")
    commands.add_parser("lane-cleared", help="the lane's presence detector: the vehicle at the barrier has left")
    commands.add_parser("sync", help="send queued passes in order")
    refresh = commands.add_parser("refresh", help="fetch the lot key, policy, subscriptions and the coming "
                                                  "confirmed reservations")
    refresh.add_argument("--accept-lot-key", metavar="KID",
                         help="trust this new lot key id (after the lot's key was rotated); the first key is pinned")
    commands.add_parser("status", help="what the gate knows and what it still has to send")
    run = commands.add_parser("run", help="keep syncing and refreshing in the background")
    run.add_argument("--interval", type=float, default=10.0)
    run.add_argument("--iterations", type=int, default=0, help="stop after this many rounds (0: never)")
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    journal = Journal(str(args.db or Path(f"gate-{args.lot}-{args.gate}.sqlite3")))
    try:
        backend = Backend(args.api, args.lot, args.gate, args.key_file.read_text().strip(), timeout=args.timeout)
    except ValueError as exc:
        parser().error(str(exc))
    gate = Gate(journal, backend, args.lot, args.gate)
    try:
        return _run(gate, args)
    finally:
        journal.close()


def _run(gate: Gate, args: argparse.Namespace) -> int:
    if args.command == "entry":
        return _pass(gate.entry(token=args.token, plate=args.plate))
    if args.command == "exit":
        return _pass(gate.exit(ticket=args.ticket, plate=args.plate))
    if args.command == "lane-cleared":
        return _print(gate.lane_cleared(), 0)
    if args.command == "status":
        return _print(gate.status(), 0)
    if args.command == "run":
        rounds = 0
        while not args.iterations or rounds < args.iterations:
            for duty in (gate.sync, gate.refresh):
                _guarded(duty)
            rounds += 1
            if not args.iterations or rounds < args.iterations:
                time.sleep(args.interval)
        return 0
    if args.command == "refresh":
        return _guarded(lambda: gate.refresh(accept_kid=args.accept_lot_key))
    return _guarded(gate.sync)


def _guarded(duty: Any) -> int:
    try:
        return _print(duty(), 0)
    except Busy as exc:   # answered 429 or 5xx after the retries: try again later
        return _print({"error": "busy", "status": exc.status, "detail": str(exc)}, 3)
    except Unreachable as exc:
        return _print({"error": "unreachable", "detail": str(exc)}, 3)
    except Refused as exc:
        return _print({"error": exc.code, "status": exc.status, "detail": exc.message}, 2)
    except SyncStuck as exc:
        return _print({"error": "sync_stuck", "detail": str(exc)}, 4)
    except LotKeyRefused as exc:
        return _print({"error": "lot_key_refused", "detail": str(exc)}, 5)


def _pass(outcome: dict[str, Any]) -> int:
    return _print(outcome, 0 if outcome["open"] else 2)


def _print(body: dict[str, Any], code: int) -> int:
    json.dump(body, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    sys.stdout.flush()
    return code
