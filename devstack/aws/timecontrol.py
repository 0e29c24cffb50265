"""The local stack's time, for tests and for a person at the operator page: its clock
(devstack/aws/clock.py), whether it is idle, and the local-only route that shows and moves it.

"Idle" is a fact the stack can tell: no function invocation running, no message a poller could
take now, no batch or stream record a poller holds, no Step Functions execution between states
(one that waits in a Wait state or a retry interval waits on the clock, and is idle until it is
moved), no timer whose moment has come and whose waiter has not run, and nothing a linked
component (the payment sandbox) reports busy. `wait_idle` waits for that and then for one more
empty poll of every poller with no invocation begun meanwhile, so a record written by the last
invocation is seen. A test checks "nothing happened twice" after it, never after a sleep.

  GET  /dev/clock                      the clock: now, the offset, the timers waiting, idle or busy
  POST /dev/clock {"advance_seconds"}  move it forward (settling at every moment something falls
                                       due), answer the clock as GET does

There is no such route on AWS: the deployed engine reads its time from the machine.
"""
from __future__ import annotations

import json
import math
import time
from typing import Any, Callable, Mapping

from .clock import SETTLE_SECONDS, StackClock

PREFIX = "/dev/clock"
#: The longest one POST may move the clock: a year, which covers every timer of the engine (the
#: 90-day personal-data retention the longest).
MAX_ADVANCE_SECONDS = 366 * 86400


class ProgressDeadline:
    """When a wait for idle gives up: at the end of a whole `timeout` window in which nothing
    progressed (`progress()` answering what it answered at the window's start: the functions' AWS
    calls, invocations begun), and at most `cap` times `timeout` in all. A sweep erasing a page of bookings on a machine at load 40 made calls
    for over a minute and was taken for a stuck stack; a stuck invocation makes none and is still
    named after `timeout`."""

    def __init__(self, timeout: float, progress: Callable[[], Any], cap: float = 5,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.timeout = timeout
        self.progress = progress
        self.now = now
        self.started = now()
        self.last = progress()
        self.deadline = self.started + timeout
        self.end = self.started + cap * timeout

    def passed(self) -> bool:
        at = self.now()
        if at < self.deadline:
            return False
        seen = self.progress()
        if seen != self.last and at < self.end:
            self.last = seen
            self.deadline = min(at + self.timeout, self.end)
            return False
        return True

    def waited(self) -> float:
        return self.now() - self.started


class StackTime:
    def __init__(self, stack: Any, clock: StackClock) -> None:
        self.stack = stack
        self.clock = clock
        self._probes: dict[str, Callable[[], Any]] = {}
        self._advance_wall = 0.0
        self._settle_wall = 0.0
        clock.add_due_source(self._next_visible_message, "sqs")
        clock.add_listener(lambda _seconds: self._nudge())

    # -- busy or idle ----------------------------------------------------------------------------
    def add_probe(self, name: str, probe: Callable[[], Any]) -> None:
        """`probe()` answers something true while a linked component has work under way."""
        self._probes[name] = probe

    def busy(self) -> dict[str, Any]:
        """What keeps the stack from being idle now (empty when idle)."""
        from .runtime import invocations

        reasons: dict[str, Any] = {}
        _, running = invocations()
        if running:
            reasons["invocations_running"] = running
        pollers = sorted(p.uuid for p in self.stack.pollers.values() if p.busy())
        if pollers:
            reasons["pollers_busy"] = pollers
        waiting = self._deliverable_messages()
        if waiting:
            reasons["messages_waiting"] = waiting
        executing = self._executions_between_states()
        if executing:
            reasons["executions_running"] = executing
        overdue = self.clock.overdue()
        if overdue:
            reasons["timers_due"] = overdue
        for name, probe in self._probes.items():
            answer = probe()
            if answer:
                reasons[name] = answer
        return reasons

    def wait_idle(self, timeout: float = SETTLE_SECONDS) -> dict[str, Any]:
        """Wait until the stack is idle (module docstring); TimeoutError naming what stayed busy
        once `timeout` seconds have passed with no progress (ProgressDeadline)."""
        from . import calls
        from .runtime import invocations

        deadline = ProgressDeadline(timeout, lambda: (calls.made(), invocations()[0]))
        pollers = [p for p in self.stack.pollers.values() if p.enabled and p.kind != "schedule"]
        reasons: dict[str, Any] = {}
        while not deadline.passed():
            reasons = self.busy()
            if not reasons:
                started, _ = invocations()
                # one more empty poll of each, begun after this mark: nothing written meanwhile went
                # unseen (a poll under way at the mark may have read before the write: one more)
                marks = {p.uuid: p.empty_polls + (2 if p.polls_under_way else 1) for p in pollers}
                for poller in pollers:
                    poller.nudge()
                while not deadline.passed() and any(
                        p.empty_polls < marks[p.uuid] for p in pollers if p._thread and p._thread.is_alive()):
                    time.sleep(0.005)
                reasons = self.busy()
                if not reasons and invocations()[0] == started:
                    return self.snapshot()
                continue
            time.sleep(0.01)
        raise TimeoutError(f"the local stack did not become idle ({timeout:.0f}s without progress, "
                           f"{deadline.waited():.0f}s in all): {reasons}")

    def advance(self, seconds: float, settle_seconds: float = SETTLE_SECONDS) -> dict[str, Any]:
        started = time.monotonic()
        try:
            moved = self.clock.advance(seconds, settle=lambda: self._settle(settle_seconds))
        finally:
            self._advance_wall += time.monotonic() - started
        return {**self.snapshot(), "steps": moved["steps"]}

    def _settle(self, timeout: float) -> None:
        started = time.monotonic()
        try:
            self.wait_idle(timeout)
        finally:
            self._settle_wall += time.monotonic() - started

    def costs(self) -> dict[str, Any]:
        """What moving the clock has cost since the stack started: moves, steps, seconds moved,
        scheduled runs (by rule), and the wall time of the moves and of their settling; a test's
        share is the difference across it (tests/support/clock_costs.py)."""
        from .pollers import ScheduleInvoker

        runs = {p.uuid: p.stats.invocations for p in self.stack.pollers.values() if isinstance(p, ScheduleInvoker)}
        return {**self.clock.stats, "scheduled_runs": sum(runs.values()), "runs_by_rule": runs,
                "advance_wall": self._advance_wall, "settle_wall": self._settle_wall}

    def snapshot(self) -> dict[str, Any]:
        reasons = self.busy()
        return {**self.clock.snapshot(), "idle": not reasons, "busy": reasons}

    # -- the emulator's state --------------------------------------------------------------------
    def _nudge(self) -> None:
        for poller in list(self.stack.pollers.values()):
            poller.nudge()

    def _polled_queues(self) -> set[str]:
        from .pollers import SqsPoller

        return {p.queue_name for p in self.stack.pollers.values() if isinstance(p, SqsPoller) and p.enabled}

    def _queues(self) -> list[Any]:
        from moto.sqs import models as sqs_models

        names = self._polled_queues()
        found = []
        for account in list(sqs_models.sqs_backends.keys()):
            for backend in list(sqs_models.sqs_backends[account].values()):
                found.extend(q for name, q in list(backend.queues.items()) if name in names)
        return found

    def _deliverable_messages(self) -> dict[str, int]:
        """Messages a poller could receive now, by queue (a FIFO group with one in flight holds
        the rest of the group back, as SQS does)."""
        waiting: dict[str, int] = {}
        for queue in self._queues():
            messages = list(getattr(queue, "_messages", ()) or ())
            held = {getattr(m, "group_id", None) for m in messages if not m.visible} if queue.fifo_queue else set()
            count = sum(1 for m in messages if m.visible and not m.delayed
                        and not (queue.fifo_queue and getattr(m, "group_id", None) in held))
            if count:
                waiting[queue.name] = count
        return waiting

    def _next_visible_message(self) -> float | None:
        """The soonest moment a delayed or in-flight message of a polled queue turns visible."""
        soonest = None
        for queue in self._queues():
            for message in list(getattr(queue, "_messages", ()) or ()):
                at = max(message.visible_at, message.delayed_until) / 1000.0
                if soonest is None or at < soonest:
                    soonest = at
        return soonest

    def _executions_between_states(self) -> int:
        """Running executions beyond those waiting on the clock (in a Wait or a retry interval)."""
        from moto.stepfunctions.parser.api import ExecutionStatus
        from moto.stepfunctions.parser.models import stepfunctions_parser_backends

        running = 0
        for account in list(stepfunctions_parser_backends.keys()):
            for backend in list(stepfunctions_parser_backends[account].values()):
                for machine in list(backend.state_machines):
                    # moto lists an execution before its start sets RUNNING: read on another thread
                    # meanwhile, its status was None and `.status` raised AttributeError (a random-order
                    # run of the package); one being started is running
                    running += sum(1 for execution in list(machine.executions)
                                   if execution.exec_status in (None, ExecutionStatus.RUNNING))
        now = self.clock.now_seconds()
        parked = sum(1 for due, kind in self.clock.timers() if kind.startswith("states:") and due > now)
        return max(0, running - parked)

    # -- the route ---------------------------------------------------------------------------------
    def page(self, method: str, path: str, headers: Mapping[str, str], query: Mapping[str, list[str]],
             body: bytes) -> tuple[int, dict[str, str], bytes]:
        if path.rstrip("/") != PREFIX:
            return _json(404, {"error": {"code": "route_not_found", "message": f"no route for {method} {path}"}})
        if method in ("GET", "HEAD"):
            return _json(200, self.snapshot())
        if method != "POST":
            return _json(405, {"error": {"code": "method_not_allowed", "message": f"{method} is not allowed on {path}"}})
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            return _json(400, {"error": {"code": "body_invalid", "message": "the body is a JSON object"}})
        seconds = payload.get("advance_seconds") if isinstance(payload, dict) else None
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
                or not 0 <= seconds <= MAX_ADVANCE_SECONDS:
            return _json(400, {"error": {"code": "advance_seconds_invalid", "field": "advance_seconds",
                                         "message": f"advance_seconds is a number of seconds from 0 to {MAX_ADVANCE_SECONDS}"}})
        try:
            return _json(200, self.advance(float(seconds)))
        except TimeoutError as exc:
            # the clock moved as far as it could settle; say what stayed busy
            return _json(409, {"error": {"code": "stack_busy", "message": str(exc)}, **self.snapshot()})


def _json(status: int, payload: Any) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json"}, json.dumps(payload).encode()


def link_payment_sandbox(stack: Any, sandbox: Any) -> None:
    """The payment sandbox (devstack/paysandbox, in this process) on the stack's clock: each move
    sets the sandbox's clock to the stack's, its payment deadlines and webhook retries are moments
    the clock steps to, and its deliveries under way or due keep the stack from being idle."""
    clock, time_control = stack.clock, stack.time
    sandbox.clock.set(clock.now())
    clock.add_listener(lambda _seconds: sandbox.clock.set(clock.now()))

    def moments() -> list[float]:
        with sandbox.lock:
            found = [deadline.timestamp() for deadline, _, _ in sandbox.store._deadlines[:1]]
            found += [job.next_at.timestamp() for job in sandbox.notifier.queue]
        return found

    def next_due() -> float | None:
        now = clock.now_seconds()
        later = [m for m in moments() if m > now]
        return min(later) if later else None

    def busy() -> Any:
        now = clock.now_seconds()
        due = sum(1 for m in moments() if m <= now)
        return {"due": due, "sending": sandbox.notifier._in_flight} \
            if due or sandbox.notifier._in_flight else None

    clock.add_due_source(next_due, "payment_sandbox")
    time_control.add_probe("payment_sandbox", busy)
