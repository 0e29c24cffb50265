"""CPU seconds per test file: the pytest process and every process descended from it (DynamoDB
Local's JVM, Chromium's processes, a stack's workers), however they end (docs/testing.md, issue 47,
seventh pass). `/usr/bin/time` counts only the children a process waited for, and Chromium's
processes exit unreaped by pytest on close: it missed ~50 CPU-s of the browser package.

A thread reads each descendant's own user + system time from /proc every 0.2 s (keyed by pid and
start time, so a reused pid is another process), keeping the last reading of one that has exited;
a test's share is the growth of the total across its setup, call and teardown. Linux only.

    HOLDFAST_CPU_COSTS=/tmp/before.jsonl .venv/bin/python -m pytest -p tests.support.cpu_costs -p no:randomly -q tests/<dir>
    python -m tests.support.cpu_costs /tmp/before.jsonl                    # CPU and wall per file
    python -m tests.support.cpu_costs /tmp/before.jsonl /tmp/after.jsonl   # side by side, with the ratio
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator

import pytest

VARIABLE = "HOLDFAST_CPU_COSTS"
SAMPLE_SECONDS = 0.2
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stats() -> Iterator[tuple[int, int, float, float]]:
    """(pid, parent pid, start time in ticks, own CPU seconds) of every process readable in /proc."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            text = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # the command name is in parentheses and may hold spaces: the fields follow the last ')'
        fields = text[text.rindex(")") + 2:].split()
        yield int(entry.name), int(fields[1]), float(fields[19]), (int(fields[11]) + int(fields[12])) / _TICKS


class Sampler:
    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[tuple[int, float], float] = {}
        self.lock = threading.Lock()

    def sample(self) -> None:
        rows = list(_stats())
        children: dict[int, list[tuple[int, float, float]]] = defaultdict(list)
        for pid, parent, started, cpu in rows:
            children[parent].append((pid, started, cpu))
        stack, found = [self.root], []
        while stack:
            for pid, started, cpu in children.get(stack.pop(), ()):
                found.append(((pid, started), cpu))
                stack.append(pid)
        with self.lock:
            for key, cpu in found:
                self.seen[key] = max(self.seen.get(key, 0.0), cpu)

    def total(self) -> float:
        self.sample()
        own = os.times()
        with self.lock:
            return own.user + own.system + sum(self.seen.values())

    def run(self) -> None:
        while True:
            self.sample()
            time.sleep(SAMPLE_SECONDS)


_sampler: Sampler | None = None


def pytest_configure(config: Any) -> None:
    global _sampler
    if os.environ.get(VARIABLE) and _sampler is None:
        _sampler = Sampler(os.getpid())
        threading.Thread(target=_sampler.run, daemon=True, name="cpu-costs").start()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Iterator[None]:
    sampler, path = _sampler, os.environ.get(VARIABLE)
    if sampler is None or not path:
        yield
        return
    before, wall = sampler.total(), time.monotonic()
    yield
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps({"id": item.nodeid, "cpu": round(sampler.total() - before, 3),
                              "wall": round(time.monotonic() - wall, 3), "load": os.getloadavg()[0]}) + "\n")



def per_file(path: str) -> tuple[dict[str, float], dict[str, float], list[float]]:
    cpu: dict[str, float] = defaultdict(float)
    wall: dict[str, float] = defaultdict(float)
    loads = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        name = row["id"].split("::")[0]
        cpu[name] += row["cpu"]
        wall[name] += row["wall"]
        loads.append(row["load"])
    return cpu, wall, loads


def main(argv: list[str]) -> int:
    if len(argv) == 1:
        cpu, wall, loads = per_file(argv[0])
        print("| file | CPU s | wall s |\n|---|---|---|")
        for name in sorted(cpu, key=cpu.get, reverse=True):
            print(f"| `{name}` | {cpu[name]:.1f} | {wall[name]:.1f} |")
        print(f"| **all** (load {min(loads):.1f}-{max(loads):.1f}) | **{sum(cpu.values()):.1f}** | **{sum(wall.values()):.1f}** |")
        return 0
    if len(argv) == 2:
        (before, _, loads_before), (after, _, loads_after) = per_file(argv[0]), per_file(argv[1])
        print("| file | before CPU s | after CPU s | after/before |\n|---|---|---|---|")
        for name in sorted(set(before) | set(after), key=lambda n: before.get(n, 0.0), reverse=True):
            b, a = before.get(name, 0.0), after.get(name, 0.0)
            print(f"| `{name}` | {b:.1f} | {a:.1f} | {a / b if b else float('nan'):.2f} |")
        b, a = sum(before.values()), sum(after.values())
        print(f"| **all** (load {min(loads_before):.1f}-{max(loads_before):.1f} / "
              f"{min(loads_after):.1f}-{max(loads_after):.1f}) | **{b:.1f}** | **{a:.1f}** | **{a / b:.2f}** |")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
