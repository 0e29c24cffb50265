"""A CPU-weighted sampling profiler for one process's Python threads (no py-spy here).

Every `interval` seconds it reads each thread's stack (`sys._current_frames`) and that thread's
CPU clock (`pthread_getcpuclockid`); the CPU the thread used since the previous sample is charged
to the stack it is in now. Threads that only wait (HTTP keep-alive readers, pollers, pipes) use
no CPU and so cost nothing in the report, unlike a wall-clock sampler. The bench uses it inside
the stack process (`--sample-stack`), where the API stand-in, moto and the worker pools' threads
share one interpreter.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from collections import Counter
from typing import Any


def _label(frame: Any) -> str:
    code = frame.f_code
    path = code.co_filename
    for marker in ("site-packages/", "/lib/python3", "/work/"):
        at = path.find(marker)
        if at >= 0:
            path = path[at + len(marker):]
            break
    return f"{path}:{code.co_name}"


def _thread_cpu_clock(tid: int) -> int:
    # Linux's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): (~tid << 3) | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED
    return ((~tid) << 3) | 4 | 2


class CpuSampler:
    def __init__(self, interval: float = 0.02, depth: int = 40) -> None:
        self.interval, self.depth = interval, depth
        self.self_cpu: Counter[str] = Counter()  # the innermost Python frame
        self.total_cpu: Counter[str] = Counter()  # any frame on the stack (once per stack)
        self.threads_cpu: Counter[str] = Counter()  # by thread name prefix
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.started = self.cpu0 = 0.0
        self.samples = 0

    def start(self) -> None:
        self.started, self.cpu0 = time.monotonic(), time.process_time()
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        return self.report()

    def _run(self) -> None:
        me = threading.get_ident()
        while not self._stop.wait(self.interval):
            self.samples += 1
            threads = {t.ident: t for t in threading.enumerate()}
            for ident, frame in sys._current_frames().items():
                thread = threads.get(ident)
                if ident == me or thread is None or thread.native_id is None:
                    continue
                try:
                    # the kernel's clock id of a thread, from its tid: a thread that ended meanwhile
                    # is an EINVAL here (pthread_getcpuclockid would read its freed pthread_t: a crash)
                    cpu = time.clock_gettime(_thread_cpu_clock(thread.native_id))
                except OSError:
                    continue
                used = cpu - self._last.get(ident, cpu)
                self._last[ident] = cpu
                if used <= 0:
                    continue
                name = thread.name.split("-")[0].rstrip("0123456789 (")
                self.threads_cpu[name] += used
                self.self_cpu[_label(frame)] += used
                seen = set()
                depth = 0
                while frame is not None and depth < self.depth:
                    label = _label(frame)
                    if label not in seen:
                        seen.add(label)
                        self.total_cpu[label] += used
                    frame, depth = frame.f_back, depth + 1

    def report(self, top: int = 30) -> dict[str, Any]:
        wall = time.monotonic() - self.started
        cpu = time.process_time() - self.cpu0
        charged = sum(self.self_cpu.values()) or 1.0

        def rows(counter: Counter[str]) -> list[list[Any]]:
            return [[label, round(seconds, 2), round(100 * seconds / charged, 1)]
                    for label, seconds in counter.most_common(top)]

        return {"pid": os.getpid(), "wall_s": round(wall, 1), "process_cpu_s": round(cpu, 1),
                "cores_used": round(cpu / wall, 2) if wall else None, "samples": self.samples,
                "charged_cpu_s": round(charged, 1), "by_thread": rows(self.threads_cpu),
                "self": rows(self.self_cpu), "inclusive": rows(self.total_cpu)}


def process_cpu(pids: list[int]) -> dict[int, float]:
    """User+system CPU seconds of each process (Linux /proc), for a per-process split of the cores."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            out[pid] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return out
