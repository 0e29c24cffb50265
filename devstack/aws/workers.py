"""Lambda execution environments as worker processes: a pool per function.

On AWS every concurrent invocation of a function gets an execution environment of its own (its
own interpreter, module globals and environment variables), which handles one invocation at a
time and is reused while warm. Here each environment is a spawned Python process:

* started lazily, when an invocation finds no idle worker and the pool is below its concurrency
  (the function's `ReservedConcurrentExecutions`, else the stack's default); its first import of
  the handler is its cold start;
* given exactly the function's environment variables (`POWERTOOLS_SERVICE_NAME` and the rest),
  so Powertools' per-process state belongs to one function and one invocation at a time;
* reused for the next invocation once it answers;
* killed when an invocation outlives the function's `Timeout` (as Lambda ends the environment),
  and the invocation fails with Lambda's `Sandbox.Timedout` error.

An invocation that finds the pool full waits for a worker. The API Gateway stand-in bounds that
wait (`max_wait`): past it the invocation is throttled, as Lambda throttles a synchronous call
over its concurrency (`TooManyRequestsException`). Pollers and Step Functions wait as long as
it takes, since they retry a throttle anyway.

What the worker's handler asked of AWS (devstack/aws/calls.py) and its EMF lines
(devstack/aws/emf.py) travel back with each answer and are recorded here, in the stack's process,
exactly as for an in-process invocation.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

LOG = logging.getLogger("devstack.aws")

#: concurrency of a function the template gives no `ReservedConcurrentExecutions` (see docs/local-stack.md)
DEFAULT_CONCURRENCY = 2


class _Discard:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


_DEVNULL = _Discard()


class Throttled(Exception):
    """No worker became free within the caller's wait (Lambda: TooManyRequestsException)."""


@dataclass
class InvocationRecord:
    function: str
    pid: int
    queued: float  # monotonic, when the invocation asked for a worker
    started: float  # when a worker took it
    ended: float
    cold: bool
    wall: float = 0.0  # the handler's own wall time, in the worker
    cpu: float = 0.0  # the worker's CPU time during the handler
    aws_calls: list[tuple[str, str, float]] = field(default_factory=list)  # (service, op, wall)
    route: str | None = None
    status: Any = None


# ------------------------------------------------------------------------------------------------
# The worker process
# ------------------------------------------------------------------------------------------------


def instrument_calls() -> tuple[list[tuple[str, str, float]], dict[str, Any]]:
    """What a worker adds to every AWS call of its process (devstack/measure/hold_cpu.py's bare process too,
    so that both sides carry it): the stack's call recorder and each call's wall time, plus one
    TransactWriteItems request kept as the bench's bare-transaction shape. (timings, sample)"""
    import botocore.client

    from devstack.aws import calls

    calls.install()
    timings: list[tuple[str, str, float]] = []
    sample: dict[str, Any] = {}
    original = botocore.client.BaseClient._make_api_call

    def timed_call(client: Any, operation: str, params: dict[str, Any]) -> Any:
        if operation == "TransactWriteItems" and "tx" not in sample:
            sample["tx"] = params
        t0 = time.perf_counter()
        try:
            return original(client, operation, params)
        finally:
            timings.append((client.meta.service_model.service_name, operation, time.perf_counter() - t0))

    botocore.client.BaseClient._make_api_call = timed_call
    return timings, sample


def _worker_main(conn: Any, fn: Any, environ: dict[str, str], sys_path: list[str], quiet: bool = False) -> None:
    """One execution environment: import the handler once, then one invocation per message.
    `quiet`: what the handler prints is dropped (its EMF lines are still kept)."""
    os.environ.clear()
    os.environ.update(environ)
    for entry in reversed(sys_path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    if quiet:
        import logging as _logging

        _logging.disable(_logging.WARNING)  # Powertools' Logger writes through logging, outside invocations too
    from devstack.aws import calls, emf
    from devstack.aws.runtime import LambdaContext, lambda_error

    timings, sample = instrument_calls()
    token = calls.CURRENT_FUNCTION.set(fn.logical_id)  # this process belongs to one function
    t0 = time.monotonic()
    try:
        handler = fn.load()
    except BaseException as exc:  # noqa: BLE001 - Lambda reports an init error per invocation
        conn.send({"init_error": lambda_error(exc), "pid": os.getpid()})
        return
    conn.send({"ready": True, "pid": os.getpid(), "init_s": time.monotonic() - t0,
               "calls": calls.recorded_calls(clear=True)})
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        if message is None:
            break
        event, request_id = message
        timings.clear()
        tee = emf._Tee(_DEVNULL if quiet else sys.stdout)
        previous, sys.stdout = sys.stdout, tee
        w0, c0 = time.perf_counter(), time.process_time()
        result = error = None
        try:
            result = handler(event, LambdaContext(fn, request_id))
        except Exception as exc:  # noqa: BLE001 - shaped like Lambda's error
            error = lambda_error(exc)
            error["requestId"] = request_id
        finally:
            sys.stdout = previous
        answer = {"result": result, "error": error, "emf": tee.records, "calls": calls.recorded_calls(clear=True),
                  "wall": time.perf_counter() - w0, "cpu": time.process_time() - c0, "aws": list(timings)}
        if sample.get("tx") is not None:
            answer["tx"], sample["tx"] = sample["tx"], None  # sent once per worker
        try:
            conn.send(answer)
        except Exception as exc:  # noqa: BLE001 - an answer that does not pickle is Lambda's marshal error
            answer.update(result=None, error={"errorType": "Runtime.MarshalError",
                                              "errorMessage": f"Unable to marshal response: {exc}",
                                              "requestId": request_id, "stackTrace": []})
            conn.send(answer)
    calls.CURRENT_FUNCTION.reset(token)


# ------------------------------------------------------------------------------------------------
# The pool, in the stack's process
# ------------------------------------------------------------------------------------------------


class _Worker:
    def __init__(self, process: Any, conn: Any) -> None:
        self.process, self.conn = process, conn
        self.pid = process.pid
        self.invocations = 0


class WorkerPool:
    """Execution environments of one function (at most `concurrency` at once)."""

    _context = multiprocessing.get_context("spawn")

    def __init__(self, fn: Any, concurrency: int, environ: dict[str, str], sys_path: list[str],
                 on_answer: Any = None, quiet: bool = False) -> None:
        self.fn = fn
        self.quiet = quiet
        self.concurrency = max(1, int(concurrency))
        self.environ = dict(environ)
        self.sys_path = list(sys_path)
        self.on_answer = on_answer  # (function, answer dict) -> None: calls and EMF lines, in the stack
        self._idle: list[_Worker] = []
        self._count = 0  # workers alive or starting
        self._cond = threading.Condition()
        self._closed = False
        self.records: list[InvocationRecord] = []
        self.transactions: dict[str, Any] = {}  # route -> one TransactWriteItems request it made
        self.cold_starts: list[float] = []
        self.throttles = 0
        self.timeouts = 0

    # -- workers ------------------------------------------------------------------------------
    def _spawn(self) -> _Worker:
        env = {k: v for k, v in self.fn.environment.items()}
        environ = {**self.environ, **env}
        parent, child = self._context.Pipe()
        spec = _spec(self.fn)
        process = self._context.Process(target=_worker_main, args=(child, spec, environ, self.sys_path, self.quiet),
                                        name=f"lambda-{self.fn.logical_id}", daemon=True)
        process.start()
        child.close()
        try:
            hello = parent.recv() if parent.poll(120) else {"init_error": {
                "errorType": "Runtime.InitTimeout", "errorMessage": "the worker did not start in 120 s"}}
        except (EOFError, OSError):
            hello = {"init_error": {"errorType": "Runtime.ExitError",
                                    "errorMessage": f"the worker exited while starting ({process.exitcode})"}}
        if "init_error" in hello:
            process.kill()
            process.join(5)
            raise WorkerInitError(hello["init_error"])
        if self.on_answer is not None:
            self.on_answer(self.fn, {"calls": hello.get("calls", []), "emf": []})
        self.cold_starts.append(hello["init_s"])
        return _Worker(process, parent)

    def _acquire(self, max_wait: float | None) -> tuple[_Worker | None, bool]:
        """(worker, cold): an idle worker, a new one if below concurrency, else wait."""
        deadline = None if max_wait is None else time.monotonic() + max_wait
        with self._cond:
            while True:
                if self._closed:
                    raise RuntimeError("the stack has stopped")
                if self._idle:
                    return self._idle.pop(), False
                if self._count < self.concurrency:
                    self._count += 1
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    self.throttles += 1
                    raise Throttled(self.fn.function_name)
                self._cond.wait(remaining if remaining is not None else 1.0)
        try:
            return self._spawn(), True
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise

    def _release(self, worker: _Worker, healthy: bool) -> None:
        with self._cond:
            if healthy and not self._closed:
                self._idle.append(worker)
            else:
                self._count -= 1
                _end(worker)
            self._cond.notify()

    # -- invocations --------------------------------------------------------------------------
    def invoke(self, event: Any, request_id: str | None = None, *, max_wait: float | None = None,
               answer_within: float | None = None, route: str | None = None) -> tuple[Any, dict[str, Any] | None]:
        """(result, None) or (None, Lambda's error payload: a function that fails to start answers
        its init error, as Lambda does). Raises Throttled past `max_wait`, and TimeoutError when
        `answer_within` seconds pass first (the invocation goes on, as on AWS after API Gateway's
        integration timeout, and its worker returns to the pool when done)."""
        request_id = request_id or str(uuid.uuid4())
        queued = time.monotonic()
        try:
            worker, cold = self._acquire(max_wait)
        except WorkerInitError as exc:
            LOG.warning("function %s failed to start: %s", self.fn.function_name, exc)
            return None, {**exc.payload, "requestId": request_id}
        started = time.monotonic()
        if answer_within is not None:
            # the wait for a worker and its cold start count against the caller's timeout, as on AWS
            answer_within -= started - queued
            if answer_within <= 0:
                self._release(worker, True)
                raise TimeoutError(f"{self.fn.function_name} was not ready in time")
        try:
            worker.conn.send((event, request_id))
        except (OSError, ValueError) as exc:
            self._release(worker, False)
            return None, _error("Runtime.ExitError", f"the execution environment is gone: {exc}", request_id)
        limit = float(self.fn.timeout) + 1.0
        if answer_within is not None and answer_within < limit:
            if worker.conn.poll(answer_within):
                return self._collect(worker, request_id, queued, started, cold, route, limit)
            threading.Thread(target=self._collect, args=(worker, request_id, queued, started, cold, route,
                                                         limit - answer_within),
                             name=f"late-{self.fn.logical_id}", daemon=True).start()
            raise TimeoutError(f"{self.fn.function_name} did not answer within {answer_within:g} s")
        return self._collect(worker, request_id, queued, started, cold, route, limit)

    def _collect(self, worker: _Worker, request_id: str, queued: float, started: float, cold: bool,
                 route: str | None, limit: float) -> tuple[Any, dict[str, Any] | None]:
        answer: dict[str, Any] | None = None
        try:
            if worker.conn.poll(limit):
                answer = worker.conn.recv()
        except (EOFError, OSError):
            answer = None
        if answer is None:
            timed_out = worker.process.is_alive()
            self._release(worker, False)
            if timed_out:
                self.timeouts += 1
                return None, _error("Sandbox.Timedout", f"Task timed out after {self.fn.timeout:.2f} seconds",
                                    request_id)
            return None, _error("Runtime.ExitError", "the execution environment exited", request_id)
        worker.invocations += 1
        self._release(worker, True)
        if self.on_answer is not None:
            self.on_answer(self.fn, answer)
        result, error = answer["result"], answer["error"]
        record = InvocationRecord(self.fn.logical_id, worker.pid, queued, started, time.monotonic(), cold,
                                  answer["wall"], answer["cpu"], answer["aws"], route,
                                  error["errorType"] if error else (result.get("statusCode", "ok")
                                                                     if isinstance(result, dict) else "ok"))
        with self._cond:
            if answer.get("tx") is not None and route is not None:
                self.transactions.setdefault(route, answer["tx"])
            self.records.append(record)
            if len(self.records) > 100_000:  # bounded: a long `make run` keeps the recent ones
                del self.records[:50_000]
        return result, error

    def stats(self) -> dict[str, Any]:
        with self._cond:
            return {"workers": self._count, "idle": len(self._idle), "concurrency": self.concurrency,
                    "cold_starts": len(self.cold_starts), "throttles": self.throttles, "timeouts": self.timeouts,
                    "invocations": len(self.records)}

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._cond.notify_all()
        for worker in idle:  # all asked to leave first, then waited for: stopping takes one wait, not one each
            try:
                worker.conn.send(None)
            except (OSError, ValueError):
                pass
        for worker in idle:
            _end(worker)


class WorkerInitError(Exception):
    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(payload.get("errorMessage", "init failed"))
        self.payload = payload


def _spec(fn: Any) -> Any:
    from .runtime import LocalFunction

    return LocalFunction(logical_id=fn.logical_id, function_name=fn.function_name, arn=fn.arn,
                         code_dir=fn.code_dir, handler=fn.handler, timeout=fn.timeout,
                         memory_size=fn.memory_size, environment=dict(fn.environment))


def _end(worker: _Worker) -> None:
    try:
        worker.conn.send(None)
    except (OSError, ValueError):
        pass
    worker.process.join(0.5)
    if worker.process.is_alive():
        worker.process.kill()
        worker.process.join(5)
    worker.conn.close()


def _error(kind: str, message: str, request_id: str) -> dict[str, Any]:
    return {"errorType": kind, "errorMessage": message, "requestId": request_id, "stackTrace": []}
