"""What one hold expiry costs on the local stack, in CPU (issue 47, fifth pass).

Starts the integration tests' system (tests/support/system.py, the same template parameters),
books `--holds` unpaid holds of one offering in one expiry bucket, lets the stack go idle, then
moves the clock to the bucket's tick and past it (the Step Functions wait ends, the expiry task
runs, the releases are written, and whatever follows: the stream, the outbox, notifications,
mails, metrics) and waits until the stack is idle again. The figure is this process's CPU time
(user + system, `resource.getrusage`) over that move, divided by the holds that expired; the
tests run the stack in one process (no worker pools), so that is all of it. With `--sample`, a
CPU-weighted sampler (devstack/measure/sampler.py) says which thread and which code used it.

    .venv/bin/python -m devstack.measure.expiry_cpu --holds 1 --runs 3
    .venv/bin/python -m devstack.measure.expiry_cpu --holds 10 --runs 2 --sample
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
import uuid
from typing import Any


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class _Connections:
    """TCP connections the stack's servers accepted (moto's, the API's): one per AWS call when
    the server closes each after its answer."""
    count = 0


def _count_connections() -> None:
    import socketserver

    original = socketserver.ThreadingMixIn.process_request

    def counted(self: Any, request: Any, client_address: Any) -> None:
        _Connections.count += 1
        original(self, request, client_address)

    socketserver.ThreadingMixIn.process_request = counted


def _calls() -> dict[str, int]:
    """AWS calls the stack's functions made so far, by function and operation (devstack/aws/calls.py)."""
    from devstack.aws.calls import recorded_calls

    counts: dict[str, int] = {}
    for call in recorded_calls():
        key = f"{call['function'].removeprefix('holdfast-')} {call['action']}"
        counts[key] = counts.get(key, 0) + call["count"]
    return counts


def one_tick(system: dict[str, Any], holds: int, sampler: Any | None) -> dict[str, Any]:
    from holdfast.adapters.expiry_buckets import bucket_of
    from holdfast.clock import parse_iso, system_clock

    api, stack = system["api"], system["stack"]
    event = api.create_event(capacity=holds, hold_ttl_seconds=600)
    booked = []
    for _ in range(holds):
        customer = f"cust-{uuid.uuid4().hex[:10]}"
        answer = api.book(event["event_id"], customer, {"quantity": 1})
        assert answer.status_code == 201, answer.text
        booked.append((answer.json(), customer))
    ticks = {bucket_of(b["hold_expires_at"]) for b, _ in booked}
    # the holds of one bucket: the move stops at that bucket's tick (no other timer past it)
    last_tick = max(parse_iso(t) for t in ticks)
    # the reminder (2 s before the end) and its bucket fall due on the way: move there first
    stack.advance_clock(max(0.0, (last_tick - system_clock()).total_seconds()) - 20)
    stack.wait_idle()
    before_steps = stack.time.costs() if hasattr(stack, "time") else {}
    calls0, connections0 = _calls(), _Connections.count
    cpu0, wall0 = _cpu(), time.monotonic()
    if sampler is not None:
        sampler.start()
    stack.advance_clock(max(0.0, (last_tick - system_clock()).total_seconds()) + 0.1)
    stack.wait_idle()
    cpu, wall = _cpu() - cpu0, time.monotonic() - wall0
    profile = sampler.stop() if sampler is not None else None
    made = _calls()
    made = {k: n - calls0.get(k, 0) for k, n in made.items() if n > calls0.get(k, 0)}
    statuses = [api.booking(b["booking_id"], c)["status"] for b, c in booked]
    after_steps = stack.time.costs() if hasattr(stack, "time") else {}
    steps = {k: after_steps[k] - before_steps.get(k, 0) for k in after_steps
             if isinstance(after_steps.get(k), (int, float)) and k in ("moves", "steps", "scheduled_runs")}
    expired = statuses.count("EXPIRED")
    return {"holds": holds, "buckets": len(ticks), "expired": expired, "cpu_s": round(cpu, 3),
            "cpu_per_expired_s": round(cpu / max(1, expired), 3), "wall_s": round(wall, 2),
            "load": os.getloadavg()[0], "clock": steps, "aws_calls": sum(made.values()),
            "connections": _Connections.count - connections0,
            "calls": dict(sorted(made.items(), key=lambda kv: -kv[1])), "profile": profile}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--holds", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sample", action="store_true", help="CPU-weighted profile of the last run")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)

    sys.path.insert(0, os.getcwd())
    from devstack.measure.sampler import CpuSampler

    _count_connections()
    from tests.integration import conftest

    # the integration package's own system fixture (its template parameters), called directly
    wrapped = getattr(conftest.system, "_get_wrapped_function", None)
    generator = (wrapped() if wrapped else conftest.system.__wrapped__)()
    system = next(generator)
    try:
        one_tick(system, args.holds, None)  # warm: first imports, first tick of each function
        rows = []
        for run in range(args.runs):
            last = run == args.runs - 1
            row = one_tick(system, args.holds, CpuSampler(0.01) if args.sample and last else None)
            profile = row.pop("profile")
            print(json.dumps(row), flush=True)
            rows.append(row)
            if profile:
                for section in ("by_thread", "self", "inclusive"):
                    print(f"-- {section}")
                    for label, seconds, share in profile[section][: args.top]:
                        print(f"{seconds:8.2f} s {share:5.1f}%  {label}")
        per = sorted(r["cpu_per_expired_s"] for r in rows)
        print(json.dumps({"holds_per_tick": args.holds, "median_cpu_per_expired_s": per[len(per) // 2],
                          "runs": per}))
    finally:
        try:
            next(generator)
        except StopIteration:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
