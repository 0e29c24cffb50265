"""What each test of a local-stack package pays for moving the stack's clock, by count rather than
by wall time alone (the machine is shared, so wall figures are noisy): moves, steps, seconds moved,
scheduled runs (the sweeper's and any other rule's), and the wall and CPU seconds of the test (its
setup, call and teardown). The package's conftest calls `record` around each test; with the environment variable
HOLDFAST_CLOCK_COSTS set to a path, one JSON line per test is appended there, and
`python -m tests.support.clock_costs PATH` prints them as a table (docs/testing.md, issue 47).
"""
from __future__ import annotations

import json
import os
import resource
import sys
import time
import warnings
from contextlib import contextmanager
from typing import Any, Iterator

VARIABLE = "HOLDFAST_CLOCK_COSTS"
COUNTS = ("advances", "steps", "seconds_moved", "scheduled_runs", "advance_wall", "settle_wall")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def wanted() -> bool:
    return bool(os.environ.get(VARIABLE))


def _stack() -> Any:
    from devstack.aws import EmbeddedStack

    stack = EmbeddedStack._active
    return None if stack is None or stack.time is None else stack


def _costs() -> dict[str, Any] | None:
    stack = _stack()
    return None if stack is None else stack.time.costs()


_settled_after_test = 0.0
_costs_after_test: tuple[dict[str, Any], list[Any]] | None = None

#: How long a test's teardown waits for the stack to finish what the test set going.
SETTLE_AFTER_TEST_SECONDS = 20.0


def settle_after_test() -> None:
    """Wait until the running stack (if any) is idle; a stack still busy after the bound is reported
    as a warning naming what stayed busy (the next test starts anyway, as it did before this wait)."""
    global _settled_after_test, _costs_after_test
    stack = _stack()
    if stack is None:
        return
    started = time.monotonic()
    try:
        stack.wait_idle(SETTLE_AFTER_TEST_SECONDS)
    except TimeoutError as exc:
        warnings.warn(f"the test left the stack busy: {exc}", stacklevel=1)
    finally:
        _settled_after_test = time.monotonic() - started
        # the package's last test stops the stack in its teardown: its counts are read here
        _costs_after_test = (stack.time.costs(), list(stack.clock.step_log))


@contextmanager
def record(nodeid: str) -> Iterator[None]:
    """Around a test (setup, call, teardown): its share of the clock's costs and the wall time its
    teardown waited for idleness, written when the variable names a file."""
    global _settled_after_test, _costs_after_test
    path = os.environ.get(VARIABLE)
    before, wall, cpu = _costs(), time.monotonic(), _cpu()
    _settled_after_test, _costs_after_test = 0.0, None
    try:
        yield
    finally:
        if path:
            stack = _stack()
            after, step_log = (stack.time.costs(), list(stack.clock.step_log)) if stack is not None \
                else _costs_after_test or (None, [])
            row: dict[str, Any] = {"test": nodeid, "wall": round(time.monotonic() - wall, 2),
                                   "cpu": round(_cpu() - cpu, 2), "load": round(os.getloadavg()[0], 1),
                                   "idle_after": round(_settled_after_test, 2)}
            if after is not None:
                base = before or {key: 0 for key in COUNTS}
                row.update({key: round(after[key] - base.get(key, 0), 2) for key in COUNTS})
                steps = int(row["steps"])
                row["step_log"] = step_log[-steps:] if steps else []
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(row) + "\n")


def table(path: str) -> str:
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    head = f"{'wall':>7} {'cpu':>6} {'load':>5} {'moves':>5} {'steps':>5} {'sweeps':>6} {'moved s':>10} " \
           f"{'in moves':>8} {'settling':>8} {'after':>6}  test"
    lines = [head]
    for r in sorted(rows, key=lambda r: -r["wall"]):
        lines.append(f"{r['wall']:7.1f} {r['cpu']:6.1f} {r['load']:5.1f} {r.get('advances', 0):5.0f} "
                     f"{r.get('steps', 0):5.0f} {r.get('scheduled_runs', 0):6.0f} {r.get('seconds_moved', 0):10.0f} "
                     f"{r.get('advance_wall', 0):8.1f} {r.get('settle_wall', 0):8.1f} {r.get('idle_after', 0):6.2f}  {r['test']}")
    total = {key: sum(r.get(key, 0) for r in rows) for key in ("wall", "cpu", "idle_after", *COUNTS)}
    lines.append(f"{total['wall']:7.1f} {total['cpu']:6.1f} {'':>5} {total['advances']:5.0f} {total['steps']:5.0f} "
                 f"{total['scheduled_runs']:6.0f} {total['seconds_moved']:10.0f} {total['advance_wall']:8.1f} "
                 f"{total['settle_wall']:8.1f} {total['idle_after']:6.1f}  all {len(rows)} tests")
    return "\n".join(lines)


def step_table(path: str, match: str) -> str:
    """Each step of the tests whose id contains `match`: seconds into its move, what it stepped
    to (timers' kinds, due sources, the scheduled rules whose run it passed), seconds settling."""
    lines = []
    for row in (json.loads(line) for line in open(path, encoding="utf-8") if line.strip()):
        if match in row["test"]:
            lines.append(row["test"])
            lines += [f"  {at:>10.1f} s {settling:6.2f} s  {', '.join(why)}" for at, why, settling in row.get("step_log", ())]
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(sys.argv[1]) if len(sys.argv) < 3 else step_table(sys.argv[1], sys.argv[2]))
