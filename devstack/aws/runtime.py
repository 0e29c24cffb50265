"""In-process Lambda runtime and the moto 5.2.5 patches the local stack relies on.

Every hook here touches moto internals, which is why moto is pinned to an exact version:

* `moto.awslambda.models.LambdaFunction._invoke_lambda` -> `_invoke_in_process`: runs the real
  handler of a registered function in this process (moto would start a Docker container).
* `moto.core.responses.BaseResponse.call_action` -> serialised per service for DynamoDB (with
  DynamoDB Streams, which reads the same tables) and SQS, so conditional writes are atomic.
  Never Lambda or Step Functions: an in-process handler calls back over HTTP and would deadlock.
* `moto.sqs.models.Queue.wait_for_messages` -> releases the SQS lock while a long poll waits, so
  one `WaitTimeSeconds=20` receive does not stall every other SQS call.
* `WaitFunction._wait_interval`, `Timestamp._get_wait_seconds` and the Retrier's `time.sleep` ->
  timers of the stack's clock (devstack/aws/clock.py), which `advance` ends; waits of some seconds
  and retry intervals are scaled by `wait_scale` (a wait until a timestamp is not).
* stdout during an invocation -> its EMF lines also go to the function's log group in moto's
  CloudWatch Logs (devstack/aws/emf.py), where Lambda would put them.
* moto_speedups.py -> repeated work moto does per request (JSONPath, SQS clock, ASL parse).
* dynamodb_answers.py -> DynamoDB answers written as JSON without moto's generic serializer.
* `botocore.client.BaseClient._make_api_call` -> records every AWS call a function makes
  (devstack/aws/calls.py), because moto enforces no IAM: tests check them against the roles.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import sys
import threading
import time
import traceback
import types
import uuid
from dataclasses import dataclass, field
from datetime import timezone
from pathlib import Path
from typing import Any

from . import calls, dynamodb_answers, emf, moto_speedups, queries, transactions
from . import clock as stack_clock
from .calls import CURRENT_FUNCTION as _CURRENT_FUNCTION

LOG = logging.getLogger("devstack.aws")

# EventBridge shares the SQS lock: moto's PutEvents writes straight into the target queues.
# CloudWatch Logs has its own: the functions' EMF lines are written into its backend directly (emf.py).
SERIALISED_SERVICES = {"dynamodb": "dynamodb", "dynamodbstreams": "dynamodb", "sqs": "sqs", "events": "sqs",
                       "logs": "logs"}
_SERVICE_LOCKS = {"dynamodb": threading.Lock(), "sqs": threading.Lock(), "logs": threading.Lock()}
_lock_owner = threading.local()

_patch_lock = threading.Lock()
_patched = False


# --------------------------------------------------------------------------------------------
# Lambda context and handler registry
# --------------------------------------------------------------------------------------------


class LambdaContext:
    """The attributes and method of the Python runtime's context object that handlers use."""

    def __init__(self, function: "LocalFunction", request_id: str | None = None):
        self.function_name = function.function_name
        self.function_version = "$LATEST"
        self.invoked_function_arn = function.arn
        self.memory_limit_in_mb = int(function.memory_size)
        self.aws_request_id = request_id or str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function.function_name}"
        day = time.strftime("%Y/%m/%d", time.gmtime())
        self.log_stream_name = f"{day}/[$LATEST]{uuid.uuid4().hex}"
        self.identity = None
        self.client_context = None
        self._deadline = time.monotonic() + float(function.timeout)

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


@dataclass
class LocalFunction:
    logical_id: str
    function_name: str
    arn: str
    code_dir: Path
    handler: str
    timeout: int = 3
    memory_size: int = 128
    environment: dict[str, str] = field(default_factory=dict)
    import_environment: dict[str, str] = field(default_factory=dict)
    reserved_concurrency: int | None = None  # the template's ReservedConcurrentExecutions
    pool: Any = None  # a workers.WorkerPool when the stack runs functions in worker processes
    _handler: Any = None

    @property
    def module_name(self) -> str:
        safe = "".join(c if c.isalnum() else "_" for c in self.logical_id)
        return f"_devstack_lambda_{safe}_{self.handler.rsplit('.', 1)[0].replace('.', '_')}"

    def load(self) -> Any:
        """The handler, its module imported once (the cold start) under a module name of its own
        (every function's file is `app.py`), with its code directory first on sys.path during the
        import (as /var/task)."""
        with _IMPORT_LOCK:
            if self._handler is not None:
                return self._handler
            module_path, _, attribute = self.handler.rpartition(".")
            source = self.code_dir / (module_path.replace(".", "/") + ".py")
            if not source.is_file():
                raise ImportError(f"handler module not found: {source}")
            name = self.module_name
            token = _CURRENT_FUNCTION.set(self.logical_id)  # calls made at import are the function's too
            saved_env = {k: os.environ.get(k) for k in self.import_environment}
            os.environ.update(self.import_environment)
            sys.path.insert(0, str(self.code_dir))
            try:
                spec = importlib.util.spec_from_file_location(name, source)
                assert spec and spec.loader
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    sys.modules.pop(name, None)
                    raise
            finally:
                try:
                    sys.path.remove(str(self.code_dir))
                except ValueError:
                    pass
                for key, value in saved_env.items():
                    if value is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = value
                _CURRENT_FUNCTION.reset(token)
            self._handler = getattr(module, attribute)
            return self._handler

    def invoke(self, event: Any, request_id: str | None = None) -> Any:
        """Call the handler; exceptions propagate (callers shape them).

        Invocations run one at a time, across all functions. Lambda gives every concurrent
        invocation an interpreter of its own; here they share one, and libraries keep
        per-invocation state in globals (Powertools' API resolver puts the current event on a
        class attribute, its Logger keeps the invocation's keys), so two invocations at once would
        read each other's requests. No handler waits for another invocation (Step Functions and
        the pollers call in on threads of their own), so one lock cannot deadlock.
        """
        if self.pool is not None:
            result, error = run_function(self, event, request_id)
            if error is not None:
                raise InvocationError(error)
            return result
        handler = self.load()
        with _INVOCATION_LOCK:
            token = _CURRENT_FUNCTION.set(self.logical_id)
            try:
                with emf.captured(self.function_name):
                    return handler(event, LambdaContext(self, request_id))
            finally:
                _CURRENT_FUNCTION.reset(token)


_INVOCATION_LOCK = threading.Lock()
_choice_variable = threading.local()
_IMPORT_LOCK = threading.RLock()
_REGISTRY: dict[str, LocalFunction] = {}  # function name and ARN -> function


def register_functions(functions: list[LocalFunction]) -> None:
    _REGISTRY.clear()
    for fn in functions:
        _REGISTRY[fn.function_name] = fn
        _REGISTRY[fn.arn] = fn


def clear_functions() -> None:
    _REGISTRY.clear()


def lambda_error(exc: BaseException) -> dict[str, Any]:
    """The payload the Python runtime returns for an unhandled exception."""
    return {
        "errorMessage": str(exc),
        "errorType": type(exc).__name__,
        "requestId": "",
        "stackTrace": traceback.format_tb(exc.__traceback__),
    }


class InvocationError(Exception):
    """A worker process's handler failed: carries Lambda's error payload (errorType is the class name)."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(f"{payload.get('errorType')}: {payload.get('errorMessage')}")
        self.payload = payload


def run_function(fn: LocalFunction, event: Any, request_id: str | None = None, *, max_wait: float | None = None,
                 answer_within: float | None = None, route: str | None = None) -> tuple[Any, dict[str, Any] | None]:
    """(result, None) on success, (None, error payload) on an unhandled exception.

    With worker processes, `max_wait` bounds the wait for a free worker (past it: workers.Throttled)
    and `answer_within` the wait for the answer (past it: TimeoutError); in-process, both are ignored."""
    request_id = request_id or str(uuid.uuid4())
    # the stack's own work is counted for `wait_idle`; an API request is its caller's, who waits
    # for the answer (a page polling every few seconds would otherwise keep the stack from idling)
    with _counting_invocation(route is None):
        if fn.pool is not None:
            return fn.pool.invoke(event, request_id, max_wait=max_wait, answer_within=answer_within, route=route)
        try:
            result = fn.invoke(event, request_id)
        except Exception as exc:  # noqa: BLE001 - shaped like Lambda's error
            LOG.warning("function %s raised %s: %s", fn.function_name, type(exc).__name__, exc,
                        exc_info=LOG.isEnabledFor(logging.DEBUG))
            error = lambda_error(exc)
            error["requestId"] = request_id
            return None, error
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - the environment ended mid-invocation
            # what no handler of the function's code catches (SystemExit, a test's kill point
            # standing for a timeout or out of memory) ends the invocation as Lambda reports an
            # environment that exited; the worker processes answer the same (workers.py)
            LOG.warning("function %s ended by %s: %s", fn.function_name, type(exc).__name__, exc)
            return None, {"errorType": "Runtime.ExitError", "requestId": request_id,
                          "errorMessage": f"the execution environment exited ({type(exc).__name__})"}
        return result, None


class _Invocations:
    """Invocations of the stack's functions by its pollers, schedules and state machines (not the
    API's): how many began, how many are running (the stack's `wait_idle` reads both)."""
    lock = threading.Lock()
    started = 0
    running = 0


class _counting_invocation:
    def __init__(self, counted: bool) -> None:
        self.counted = counted

    def __enter__(self) -> None:
        if self.counted:
            with _Invocations.lock:
                _Invocations.started += 1
                _Invocations.running += 1

    def __exit__(self, *exc: Any) -> None:
        if self.counted:
            with _Invocations.lock:
                _Invocations.running -= 1


def invocations() -> tuple[int, int]:
    """(begun so far, running now) of every function's invocations in this process."""
    with _Invocations.lock:
        return _Invocations.started, _Invocations.running


def _invoke_in_process(self: Any, event: Any = None) -> tuple[str, bool, str]:
    """Replacement for LambdaFunction._invoke_lambda: (payload, errored, logs)."""
    fn = _REGISTRY.get(self.function_name) or _REGISTRY.get(getattr(self, "function_arn", ""))
    if fn is None:
        payload = {"errorType": "Runtime.ImportModuleError",
                   "errorMessage": f"no local code registered for {self.function_name}"}
        return json.dumps(payload), True, ""
    if isinstance(event, (str, bytes)):
        try:
            event = json.loads(event) if event else {}
        except ValueError:
            pass
    elif event is None:
        event = {}
    result, error = run_function(fn, event)
    if error is not None:
        return json.dumps(error), True, f"{error['errorType']}: {error['errorMessage']}"
    try:
        return json.dumps(result), False, ""
    except (TypeError, ValueError) as exc:
        payload = {"errorType": "Runtime.MarshalError",
                   "errorMessage": f"Unable to marshal response: {exc}"}
        return json.dumps(payload), True, ""


# --------------------------------------------------------------------------------------------
# Patches
# --------------------------------------------------------------------------------------------


class _WaitScale:
    value = 1.0


def set_wait_scale(scale: float) -> None:
    if scale < 0:
        raise ValueError("wait_scale must be >= 0")
    _WaitScale.value = float(scale)


def install_patches() -> None:
    """Install the moto hooks once per process (idempotent)."""
    global _patched
    with _patch_lock:
        if _patched:
            return
        _install()
        _patched = True


def _install() -> None:
    from moto.awslambda.models import LambdaFunction
    from moto.core.responses import BaseResponse
    from moto.sqs.models import Queue
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import (
        WaitFunction,
    )

    LambdaFunction._invoke_lambda = _invoke_in_process
    calls.install()
    transactions.install()
    queries.install()
    moto_speedups.install()
    dynamodb_answers.install()

    original_call_action = BaseResponse.call_action

    def serialised_call_action(self: Any) -> Any:
        key = SERIALISED_SERVICES.get(getattr(self, "service_name", None) or "")
        if key is None or getattr(_lock_owner, key, False):
            return original_call_action(self)
        lock = _SERVICE_LOCKS[key]
        with lock:
            setattr(_lock_owner, key, True)
            try:
                return original_call_action(self)
            finally:
                setattr(_lock_owner, key, False)

    BaseResponse.call_action = serialised_call_action

    original_wait_for_messages = Queue.wait_for_messages

    def wait_without_lock(self: Any, timeout: Any) -> Any:
        if not getattr(_lock_owner, "sqs", False):
            return original_wait_for_messages(self, timeout)
        lock = _SERVICE_LOCKS["sqs"]
        _lock_owner.sqs = False
        lock.release()
        try:
            # the condition moto waits on is notified under no lock of ours: poll briefly instead
            time.sleep(min(float(timeout), 0.05))
        finally:
            lock.acquire()
            _lock_owner.sqs = True

    Queue.wait_for_messages = wait_without_lock

    original_wait_interval = WaitFunction._wait_interval

    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.timestamp import Timestamp
    from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import FailureEventException

    def wait_on_stack_clock(self: Any, env: Any, wait_seconds: Any) -> Any:
        """A Wait waits on the stack's clock (devstack/aws/clock.py), so `advance` ends it; a wait
        for some seconds is scaled by `wait_scale`, a wait until a moment is not (the task behind
        it, a hold's expiry tick, acts on the clock, so waking it early would only make it wait the
        rest itself)."""
        clock = stack_clock.current
        scale = 1.0 if isinstance(self, Timestamp) else _WaitScale.value
        if clock is None:
            if scale == 1.0:
                return original_wait_interval(self, env, wait_seconds)
            if float(wait_seconds) * scale > 0:
                env.program_state_event.wait(float(wait_seconds) * scale)
            return None
        if float(wait_seconds) * scale > 0:
            clock.sleep(float(wait_seconds) * scale, kind="states:Wait", running=env.is_running)
        return None

    def seconds_until_timestamp(self: Any, env: Any) -> float:
        # moto's: the moment minus the machine's local time, in whole seconds; here the stack's
        # clock, whose time the engine wrote the moment on
        self.string.eval(env=env)
        text = env.stack.pop()
        moment = self._from_timestamp_string(timestamp=text)
        if moment is None:
            raise FailureEventException(self._create_failure_event(env, text))
        return moment.replace(tzinfo=timezone.utc).timestamp() - stack_clock.now_seconds()

    WaitFunction._wait_interval = wait_on_stack_clock
    Timestamp._get_wait_seconds = seconds_until_timestamp

    # A Choice rule's Variable that is missing from the input is not an error (`IsPresent` tests
    # exactly that, and the interpreter turns it into a "no such variable" value), but the path
    # lookup inside logs an ERROR before the Variable catches it. Quiet that log while a Choice
    # Variable is evaluated, and only then.
    from moto.stepfunctions.parser.asl.component.state.choice.comparison.variable import Variable

    sample_variable = Variable._eval_body

    def quiet_variable(self: Any, env: Any) -> Any:
        _choice_variable.active = True
        try:
            return sample_variable(self, env)
        finally:
            _choice_variable.active = False

    Variable._eval_body = quiet_variable
    logging.getLogger("moto.stepfunctions.parser.asl.component.eval_component").addFilter(
        lambda record: not getattr(_choice_variable, "active", False))

    def scaled_sleep(seconds: float) -> None:
        clock = stack_clock.current
        if clock is None:
            time.sleep(max(0.0, float(seconds) * _WaitScale.value))
        else:   # a retry's interval is a timer of the stack's clock too
            clock.sleep(float(seconds) * _WaitScale.value, kind="states:Retry")

    retrier_decl.time = types.SimpleNamespace(sleep=scaled_sleep, time=time.time,
                                              monotonic=time.monotonic)
