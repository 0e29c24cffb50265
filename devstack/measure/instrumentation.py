"""What each in-process Lambda invocation costs: its wall and CPU time, its AWS and provider
calls (and, given a meter, their DynamoDB capacity). The load test (devstack/measure/bench.py, with
`--in-process`) and the per-operation cost profile (devstack/measure/costs.py) both count with it."""
from __future__ import annotations

import re
import threading
import time
from collections import Counter
from typing import Any

PROVIDER_ID = re.compile(r"/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class Instrumentation:
    """Wraps every in-process Lambda invocation and every botocore API call.

    Per invocation it records: the function, the API route (for proxy events), the time spent
    waiting for the stack's one-invocation-at-a-time lock, the handler's wall time, the handler
    thread's CPU time (`time.thread_time()`: moto serves requests on its own threads, so the
    emulator's work is not in it), and the AWS calls made from the handler's thread with their
    wall time. Calls made outside any invocation (pollers, the bench itself) are counted apart.
    """

    def __init__(self, capacity_hook: Any = None) -> None:
        self.local = threading.local()
        self.records: list[dict[str, Any]] = []
        self.outside: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.capacity_hook = capacity_hook  # (service, op, params, response) -> (wcu, rcu)
        self.t0 = time.monotonic()

    def install(self) -> None:
        import botocore.client
        import requests

        from devstack.aws import runtime

        instr = self
        original_call = botocore.client.BaseClient._make_api_call

        def make_api_call(client: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
            rec = getattr(instr.local, "rec", None)
            service = client.meta.service_model.service_name
            if rec is None or getattr(instr.local, "suppress", False):
                if rec is None:
                    with instr.lock:
                        instr.outside[f"{service}:{operation_name}"] += 1
                return original_call(client, operation_name, api_params)
            w0, c0 = time.perf_counter(), time.thread_time()
            response = None
            try:
                response = original_call(client, operation_name, api_params)
                return response
            finally:
                call = {"service": service, "op": operation_name,
                        "wall": time.perf_counter() - w0, "cpu": time.thread_time() - c0}
                if service == "stepfunctions" and operation_name == "StartExecution":
                    call["execution_name"] = str(api_params.get("name", ""))
                if instr.capacity_hook is not None and service == "dynamodb":
                    instr.local.suppress = True
                    s0, sc0 = time.perf_counter(), time.thread_time()
                    try:
                        call["wcu"], call["rcu"], call["iwcu"] = instr.capacity_hook(operation_name, api_params, response)
                        call["keys"] = getattr(instr.capacity_hook, "keys_of_last", lambda: None)()
                    except Exception:  # noqa: BLE001 - a meter failure must not fail the handler
                        call["wcu"] = call["rcu"] = call["iwcu"] = 0.0
                    finally:
                        instr.local.suppress = False
                        rec["excluded_wall"] += time.perf_counter() - s0
                        rec["excluded_cpu"] += time.thread_time() - sc0
                rec["calls"].append(call)

        botocore.client.BaseClient._make_api_call = make_api_call

        original_send = requests.Session.send

        def send(session: Any, request: Any, **kwargs: Any) -> Any:
            rec = getattr(instr.local, "rec", None)
            if rec is None:
                return original_send(session, request, **kwargs)
            w0 = time.perf_counter()
            try:
                return original_send(session, request, **kwargs)
            finally:
                path = PROVIDER_ID.sub("/{id}", request.path_url.split("?")[0])  # one row per route, not per payment
                rec["calls"].append({"service": "provider", "op": f"{request.method} {path}",
                                     "wall": time.perf_counter() - w0, "cpu": 0.0})

        requests.Session.send = send

        def invoke(fn: Any, event: Any, request_id: str | None = None) -> Any:
            handler = fn.load()
            route = None
            if isinstance(event, dict) and "httpMethod" in event and "resource" in event:
                route = f"{event['httpMethod']} {event['resource']}"
            rec: dict[str, Any] = {"function": fn.logical_id, "route": route, "calls": [],
                                   "excluded_wall": 0.0, "excluded_cpu": 0.0,
                                   "memory_mb": int(fn.memory_size),
                                   # a task of a bucket's execution, shared by the bucket's bookings
                                   "bucket_task": isinstance(event, dict) and bool(
                                       event.get("bucket") or event.get("remind_bucket"))}
            queued = time.perf_counter()
            with runtime._INVOCATION_LOCK:
                w0, c0 = time.perf_counter(), time.thread_time()
                rec["start"] = time.monotonic() - instr.t0
                rec["lock_wait"] = w0 - queued
                instr.local.rec = rec
                status: Any = "error"
                try:
                    result = handler(event, runtime.LambdaContext(fn, request_id))
                    status = result.get("statusCode", "ok") if isinstance(result, dict) else "ok"
                    return result
                finally:
                    instr.local.rec = None
                    rec["wall"] = time.perf_counter() - w0 - rec["excluded_wall"]
                    rec["cpu"] = time.thread_time() - c0 - rec["excluded_cpu"]
                    rec["status"] = status
                    with instr.lock:
                        instr.records.append(rec)

        runtime.LocalFunction.invoke = invoke

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {"records": list(self.records), "outside": dict(self.outside),
                    "elapsed": time.monotonic() - self.t0}
