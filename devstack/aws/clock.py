"""The local stack's clock: the machine's time plus an offset that only grows.

`holdfast.clock` reads the offset from the file this clock writes (HOLDFAST_CLOCK_FILE, set in the
stack's environment and so in every worker's), so the engine's every reading of the time moves
with it; the emulator's own timers are patched onto it (devstack/aws/runtime.py): Step Functions'
Wait states and retry intervals, SQS delays and visibility timeouts (moto's SQS clock), the
scheduled rules' invoker (devstack/aws/pollers.py), and whatever a caller links with
`add_listener` (the payment sandbox's clock, tests/support/system.py).

Nothing moves it but `advance`. Left alone it is the machine's clock (`make run`). `advance`
does not jump at once: it moves to the next moment something waits for (a timer registered by
`sleep_until`, or a due source such as the first delayed SQS message), lets the stack settle
(the `settle` callable: the stack's `wait_idle`), and goes on from there, so what falls due fires
in order and sees the time it was due at, as Temporal's time-skipping test server does. A
scheduled rule makes no steps of its own: it runs once at each step that passes its moment (the
runs it missed in between are one run, which is what the sweeper it drives needs: it looks at
everything overdue; a day's move is then a few steps, not 1,440 sweeps).
"""
from __future__ import annotations

import os
import tempfile
import threading
import time
from collections import deque
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

from holdfast.clock import CLOCK_FILE_VARIABLE

#: The clock of the running stack (one per process, like the stack); the moto patches read it.
current: "StackClock | None" = None

#: The longest an advance may take to settle at one step before it gives up and says what is busy.
SETTLE_SECONDS = 60.0


def offset() -> float:
    clock = current
    return 0.0 if clock is None else clock.offset


def now_seconds() -> float:
    """Seconds since the epoch on the running stack's clock (the machine's when none runs)."""
    return time.time() + offset()


class ClockError(RuntimeError):
    pass


class StackClock:
    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self._own_directory = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="holdfast-clock-"))
        self.path = self.directory / "offset"
        self.offset = 0.0
        self._cond = threading.Condition()
        self._timers: dict[object, tuple[float, str]] = {}
        self._followers: set[object] = set()   # timers `advance` does not step to
        self._listeners: list[Callable[[float], None]] = []
        self._due_sources: list[tuple[str, Callable[[], float | None]]] = []
        self._advancing = threading.Lock()
        self._closed = False
        #: what moving it has cost so far (a test's share is the difference across it)
        self.stats = {"advances": 0, "steps": 0, "seconds_moved": 0.0}
        #: the last steps: (seconds into their move, what they stepped to, seconds settling)
        self.step_log: deque[tuple[float, list[str], float]] = deque(maxlen=1000)
        self._write()

    # -- reading ---------------------------------------------------------------------------------
    def now_seconds(self) -> float:
        return time.time() + self.offset

    def now(self) -> datetime:
        return datetime.now(timezone.utc) + timedelta(seconds=self.offset)

    def timers(self) -> list[tuple[float, str]]:
        """(due, kind) of everything waiting on this clock, soonest first."""
        with self._cond:
            return sorted(self._timers.values())

    def overdue(self) -> list[str]:
        """Kinds of the timers whose moment has come but whose waiter has not woken yet."""
        now = self.now_seconds()
        return [kind for due, kind in self.timers() if due <= now]

    def next_due(self) -> float | None:
        """The soonest moment after now that a timer or a due source waits for."""
        return self._upcoming()[0]

    def _upcoming(self) -> tuple[float | None, list[str]]:
        """The soonest moment after now that a timer or a due source waits for, and what waits for
        it (timers' kinds, sources' names)."""
        now = self.now_seconds()
        with self._cond:
            moments = [(due, kind) for token, (due, kind) in self._timers.items() if token not in self._followers]
        for name, source in list(self._due_sources):
            try:
                moment = source()
            except Exception:  # noqa: BLE001 - a source that cannot answer has nothing due
                moment = None
            if moment is not None:
                moments.append((moment, name))
        later = [(m, why) for m, why in moments if m > now]
        if not later:
            return None, []
        soonest = min(m for m, _ in later)
        return soonest, sorted({why for m, why in later if m == soonest})

    def _followers_due(self, moment: float) -> list[str]:
        with self._cond:
            return sorted({kind for token, (due, kind) in self._timers.items()
                           if token in self._followers and due <= moment})

    # -- waiting ---------------------------------------------------------------------------------
    def sleep_until(self, due: float, *, kind: str = "timer", running: Callable[[], bool] | None = None,
                    stop: threading.Event | None = None, step: bool = True) -> bool:
        """Wait until this clock reads `due` (epoch seconds); False when `running` turns false or
        `stop` is set first. While it waits, `advance` steps to the moment (unless `step` is
        False: a scheduled rule's run follows the steps others make, and runs once when a step
        passes its moment)."""
        token = object()
        with self._cond:
            self._timers[token] = (due, kind)
            if not step:
                self._followers.add(token)
            try:
                while True:
                    if (stop is not None and stop.is_set()) or (running is not None and not running()):
                        return False
                    remaining = due - self.now_seconds()
                    if remaining <= 0:
                        return True
                    if self._closed:   # the stack stopped: its executions wait on, idle, as on a dead host
                        self._cond.wait(60)
                        continue
                    # a stop is looked at four times a second; a move of the clock wakes at once
                    self._cond.wait(min(remaining, 0.25))
            finally:
                del self._timers[token]
                self._followers.discard(token)

    def sleep(self, seconds: float, **kwargs: Any) -> bool:
        return self.sleep_until(self.now_seconds() + max(0.0, float(seconds)), **kwargs)

    def wake(self) -> None:
        """Every waiter looks at the clock again (a stop it waits on may have been set)."""
        with self._cond:
            self._cond.notify_all()

    # -- moving ----------------------------------------------------------------------------------
    def add_listener(self, callback: Callable[[float], None]) -> None:
        """`callback(seconds)` after each move of the clock by that many seconds."""
        self._listeners.append(callback)

    def add_due_source(self, source: Callable[[], float | None], name: str = "source") -> None:
        """`source()` names the next moment (epoch seconds on this clock) something not waiting in
        `sleep_until` falls due, or None."""
        self._due_sources.append((name, source))

    def advance(self, seconds: float, settle: Callable[[], Any] | None = None) -> dict[str, Any]:
        """Move the clock `seconds` forward in steps, one per moment something falls due, settling
        after each; answers the new time and how many steps it took."""
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not seconds >= 0 \
                or seconds == float("inf"):
            raise ValueError("advance_seconds is a finite number of seconds, 0 or more")
        with self._advancing:
            start = self.now_seconds()
            target = start + float(seconds)
            steps = 0
            self.stats["advances"] += 1
            self.stats["seconds_moved"] += float(seconds)
            if settle is not None:
                settle()
            while True:
                upcoming, why = self._upcoming()
                if upcoming is None or upcoming > target:
                    step_to, why = target, ["end of the move"]
                else:
                    step_to = upcoming
                why += self._followers_due(step_to)
                self._move_by(step_to - self.now_seconds())
                steps += 1
                self.stats["steps"] += 1
                settled = time.monotonic()
                if settle is not None:
                    settle()
                self.step_log.append((round(step_to - start, 3), why, round(time.monotonic() - settled, 3)))
                if step_to >= target:
                    break
            return {"now": _iso(self.now()), "offset_seconds": round(self.offset, 3), "steps": steps}

    def _move_by(self, seconds: float) -> None:
        if seconds <= 0:
            return
        with self._cond:
            self.offset += seconds
            self._write()
            self._cond.notify_all()
        for callback in list(self._listeners):
            callback(seconds)

    def _write(self) -> None:
        temporary = self.path.with_name(f".offset.{os.getpid()}.{threading.get_ident()}")
        temporary.write_text(repr(self.offset), encoding="ascii")
        os.replace(temporary, self.path)

    # -- the process's clock ---------------------------------------------------------------------
    def install(self) -> None:
        """This process's stack clock (the moto patches read it); the caller sets the variable."""
        global current
        current = self

    def uninstall(self) -> None:
        global current
        if current is self:
            current = None
        self._closed = True
        self.wake()
        if self._own_directory:
            for name in os.listdir(self.directory):
                os.unlink(self.directory / name)
            os.rmdir(self.directory)

    def snapshot(self) -> dict[str, Any]:
        timers = self.timers()
        return {"now": _iso(self.now()), "offset_seconds": round(self.offset, 3),
                "timers": [{"due": _iso(datetime.fromtimestamp(due, timezone.utc)), "kind": kind}
                           for due, kind in timers]}

    @property
    def variable(self) -> tuple[str, str]:
        return CLOCK_FILE_VARIABLE, str(self.path)


def _iso(moment: datetime) -> str:
    from holdfast.clock import iso

    return iso(moment)
