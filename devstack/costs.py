"""Per-operation cost of Holdfast, measured on the local stack (`python -m devstack.bench --profile`).

Every Lambda invocation and every AWS call the handlers make are counted (devstack.bench.Instrumentation:
botocore's `BaseClient._make_api_call` and the in-process `LocalFunction.invoke` are wrapped). The
operations are run one at a time, and everything that happens until the system is quiet again
(the API handler, the stream-triggered outbox relay, the queue consumer, the Step Functions task)
is charged to that operation.

DynamoDB capacity: moto answers ReturnConsumedCapacity with constants (1.0 or 0.5 whatever the item),
so capacity is COMPUTED from item sizes: each written item (read back after the call) rounded up to
1 KB, doubled inside transactions; reads rounded up to 4 KB per item (GetItem, BatchGetItem) or per
response (Query), halved for eventually consistent reads, doubled for transactional reads. A write
of an item that carries the keys-only gsi1 keys adds 1 index write unit (a lower bound: moving an
item between gsi1 keys costs 2). A ConditionCheck is charged as a transactional read of the item.

Cold starts: each functions/*/app.py is imported in a fresh interpreter (the layer on sys.path,
the same environment variables), five times; the median is reported.
"""
from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

# AWS list prices assumed, region eu-central-1 (Frankfurt, the template's local region), as read
# on 2026-11-29. Check https://aws.amazon.com/<service>/pricing/ before quoting them.
PRICES = {
    "region": "eu-central-1",
    "as_of": "2026-11-29",
    "lambda_arm64_per_gb_second": 0.0000133334,
    "lambda_per_million_requests": 0.20,
    "api_gateway_rest_per_million": 3.70,
    "dynamodb_on_demand_per_million_wru": 0.7625,
    "dynamodb_on_demand_per_million_rru": 0.1525,
    "sqs_fifo_per_million_requests": 0.50,
    "step_functions_standard_per_1000_transitions": 0.025,
}
# Assumptions to turn local timings into AWS durations (the emulator's latency is not AWS's).
AWS_CALL_MS = 6.0        # one in-region DynamoDB / SQS / Step Functions call from Lambda
PROVIDER_CALL_MS = 250.0  # one call to the payment provider's API over the internet
# State transitions on an execution's normal path. Reconciliation: Wait, Task, Choice, Succeed.
# Hold expiry: Choice, Wait, Task, Choice, Succeed; with a reminder also a Wait and a Task first.
TRANSITIONS_PER_EXECUTION = 4
TRANSITIONS_HOLD = 5
TRANSITIONS_HOLD_WITH_REMINDER = 7


def execution_transitions(call: dict[str, Any]) -> int:
    if call.get("with_reminder"):
        return TRANSITIONS_HOLD_WITH_REMINDER
    if str(call.get("execution_name", "")).startswith("hold-"):
        return TRANSITIONS_HOLD
    return TRANSITIONS_PER_EXECUTION
SQS_CONSUMER_REQUESTS_PER_MESSAGE = 2  # the event source mapping's ReceiveMessage + DeleteMessage (batch of 1)


# ----------------------------------------------------------------------------------------------
# DynamoDB item sizes and capacity units
# ----------------------------------------------------------------------------------------------


def value_size(value: dict[str, Any]) -> int:
    (kind, inner), = value.items()
    if kind == "S":
        return len(inner.encode())
    if kind == "N":
        digits = len(inner.lstrip("-").replace(".", "").strip("0")) or 1
        return math.ceil(digits / 2) + 1
    if kind == "B":
        return len(inner) if isinstance(inner, (bytes, bytearray)) else len(inner.encode())
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("SS", "NS", "BS"):
        return sum(value_size({kind[0]: x}) for x in inner)
    if kind == "M":
        return 3 + sum(len(k.encode()) + value_size(v) + 1 for k, v in inner.items())
    if kind == "L":
        return 3 + sum(value_size(v) + 1 for v in inner)
    return 0


def item_size(item: dict[str, Any] | None) -> int:
    if not item:
        return 0
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


class CapacityMeter:
    """(operation, params, response) -> (write units, read units, index write units)."""

    def __init__(self) -> None:
        self._client = None

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3

            self._client = boto3.client("dynamodb")
        return self._client

    def _current(self, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return self.client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
        except Exception:  # noqa: BLE001 - the table may be gone; a size of 0 rounds up to 1 unit
            return None

    def _write(self, table: str, key: dict[str, Any], put: dict[str, Any] | None, factor: int) -> tuple[float, float]:
        item = put if put is not None else self._current(table, key)
        units = factor * max(1, math.ceil(item_size(item) / 1024))
        index = 1 if item and "gsi1pk" in item else 0
        return units, index

    @staticmethod
    def _read(size: int, consistent: bool, factor: float = 1.0) -> float:
        return factor * max(1, math.ceil(size / 4096)) * (1.0 if consistent else 0.5)

    def __call__(self, op: str, params: dict[str, Any], response: Any) -> tuple[float, float, float]:
        wcu = rcu = iwcu = 0.0
        response = response or {}
        consistent = bool(params.get("ConsistentRead"))
        if op == "GetItem":
            rcu = self._read(item_size(response.get("Item")), consistent)
        elif op == "Query" or op == "Scan":
            rcu = self._read(sum(item_size(i) for i in response.get("Items", [])), consistent)
        elif op == "BatchGetItem":
            for table, items in (response.get("Responses") or {}).items():
                c = bool(params["RequestItems"].get(table, {}).get("ConsistentRead"))
                rcu += sum(self._read(item_size(i), c) for i in items) or self._read(0, c)
        elif op == "TransactGetItems":
            for entry in response.get("Responses", []):
                rcu += self._read(item_size(entry.get("Item")), True, 2.0)
        elif op == "PutItem":
            wcu, iwcu = self._write(params["TableName"], {}, params["Item"], 1)
        elif op in ("UpdateItem", "DeleteItem"):
            wcu, iwcu = self._write(params["TableName"], params["Key"], None if op == "UpdateItem" else {}, 1)
        elif op == "TransactWriteItems":
            for entry in params["TransactItems"]:
                (kind, spec), = entry.items()
                if kind == "Put":
                    w, i = self._write(spec["TableName"], {}, spec["Item"], 2)
                elif kind == "Update":
                    w, i = self._write(spec["TableName"], spec["Key"], None, 2)
                elif kind == "Delete":
                    w, i = self._write(spec["TableName"], spec["Key"], {}, 2)
                else:  # ConditionCheck
                    rcu += self._read(item_size(self._current(spec["TableName"], spec["Key"])), True, 2.0)
                    continue
                wcu += w
                iwcu += i
        elif op == "BatchWriteItem":
            for table, requests in params["RequestItems"].items():
                for request in requests:
                    put = request.get("PutRequest", {}).get("Item")
                    w, i = self._write(table, {}, put if put is not None else {}, 1)
                    wcu += w
                    iwcu += i
        return wcu, rcu, iwcu


# ----------------------------------------------------------------------------------------------
# Cold starts
# ----------------------------------------------------------------------------------------------

_IMPORT_PROBE = r"""
import importlib.util, sys, time
t0 = time.perf_counter()
spec = importlib.util.spec_from_file_location("app", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(time.perf_counter() - t0)
"""


def cold_starts(repeats: int = 5) -> dict[str, float]:
    env = dict(os.environ)
    env.update({"AWS_DEFAULT_REGION": "eu-central-1", "AWS_REGION": "eu-central-1", "AWS_ACCESS_KEY_ID": "test",
                "AWS_SECRET_ACCESS_KEY": "test", "POWERTOOLS_TRACE_DISABLED": "true",
                "PYTHONPATH": str(REPO / "layers" / "holdfast"), "PYTHONDONTWRITEBYTECODE": "0"})
    result = {}
    for app in sorted((REPO / "functions").glob("*/app.py")):
        times = []
        for _ in range(repeats):
            out = subprocess.run([sys.executable, "-c", _IMPORT_PROBE, str(app)], env=env, cwd=app.parent,
                                 capture_output=True, text=True, timeout=120)
            if out.returncode != 0:
                times = [float("nan")]
                break
            times.append(float(out.stdout.strip().splitlines()[-1]))
        result[app.parent.name] = round(statistics.median(times) * 1000, 1)
    return result


# ----------------------------------------------------------------------------------------------
# The profile
# ----------------------------------------------------------------------------------------------


class Profiler:
    def __init__(self, instr: Any, stack: Any, control: Any, api: Any) -> None:
        self.instr, self.stack, self.control, self.api = instr, stack, control, api

    def quiet(self, until: Any = None, settle: float = 0.6, timeout: float = 20.0) -> None:
        """Wait until `until(new records)` holds (if given) and no invocation happened for `settle` s."""
        from devstack.aws import runtime

        deadline = time.monotonic() + timeout
        last_count, last_change = -1, time.monotonic()
        while time.monotonic() < deadline:
            count = len(self.instr.records)
            if count != last_count or runtime._INVOCATION_LOCK.locked():
                last_count, last_change = count, time.monotonic()
            ready = until is None or until(self.instr.records[self.mark:])
            if ready and time.monotonic() - last_change >= settle:
                return
            time.sleep(0.05)
        raise RuntimeError("the system did not become quiet in time")

    def window(self, action: Any, until: Any = None) -> list[dict[str, Any]]:
        self.quiet()
        self.mark = len(self.instr.records)
        action()
        self.quiet(until)
        return [r for r in self.instr.records[self.mark:] if r["function"] != "SweepDueFunction"]


def _has(function: str) -> Any:
    return lambda records: any(r["function"] == function for r in records)


def summarise_op(samples: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """Per-sample totals, then the median over samples."""
    rows = []
    for records in samples:
        calls = [c for r in records for c in r["calls"]]
        api = sum(1 for r in records if r["route"])
        sqs_sends = sum(1 for c in calls if c["service"] == "sqs" and c["op"].startswith("SendMessage"))
        aws_calls = [c for c in calls if c["service"] != "provider"]
        gb_s = 0.0
        for r in records:
            n_aws = sum(1 for c in r["calls"] if c["service"] != "provider")
            n_provider = sum(1 for c in r["calls"] if c["service"] == "provider")
            aws_ms = math.ceil(r["cpu"] * 1000 + n_aws * AWS_CALL_MS + n_provider * PROVIDER_CALL_MS)
            gb_s += r["memory_mb"] / 1024 * aws_ms / 1000
        rows.append({
            "invocations": len(records),
            "by_function": Counter(r["function"] for r in records),
            "api_requests": api,
            "calls": Counter(f"{c['service']}:{c['op']}" for c in calls),
            "aws_calls": len(aws_calls),
            "dynamodb_writes": sum(1 for c in calls if c["service"] == "dynamodb" and "Write" in c["op"]
                                   or c["op"] in ("PutItem", "UpdateItem", "DeleteItem")),
            "wru": sum(c.get("wcu", 0) + c.get("iwcu", 0) for c in calls),
            "rru": sum(c.get("rcu", 0) for c in calls),
            "sqs_requests": sum(1 for c in calls if c["service"] == "sqs") + sqs_sends * SQS_CONSUMER_REQUESTS_PER_MESSAGE,
            "sfn_transitions": sum(execution_transitions(c) for c in calls
                                   if c["service"] == "stepfunctions" and c["op"] == "StartExecution"),
            "provider_calls": sum(1 for c in calls if c["service"] == "provider"),
            "handler_cpu_ms": sum(r["cpu"] for r in records) * 1000,
            "handler_wall_ms": sum(r["wall"] for r in records) * 1000,
            "emulator_wall_ms": sum(c["wall"] for c in aws_calls) * 1000,
            "sdk_cpu_ms": sum(c["cpu"] for c in aws_calls) * 1000,
            "lambda_gb_s_aws_estimate": gb_s,
        })
    numeric = [k for k, v in rows[0].items() if isinstance(v, (int, float))]
    out: dict[str, Any] = {"samples": len(rows)}
    for key in numeric:
        out[key] = round(statistics.median(row[key] for row in rows), 3)
    out["by_function"] = dict(Counter({k: v for row in rows for k, v in row["by_function"].items()}))
    out["by_function"] = {k: round(v / len(rows), 2) for k, v in out["by_function"].items()}
    out["calls"] = {k: round(v / len(rows), 2) for k, v in
                    sum((row["calls"] for row in rows), Counter()).items()}
    return out


def price(op: dict[str, Any]) -> float:
    p = PRICES
    return (op["lambda_gb_s_aws_estimate"] * p["lambda_arm64_per_gb_second"]
            + op["invocations"] * p["lambda_per_million_requests"] / 1e6
            + op["api_requests"] * p["api_gateway_rest_per_million"] / 1e6
            + op["wru"] * p["dynamodb_on_demand_per_million_wru"] / 1e6
            + op["rru"] * p["dynamodb_on_demand_per_million_rru"] / 1e6
            + op["sqs_requests"] * p["sqs_fifo_per_million_requests"] / 1e6
            + op["sfn_transitions"] * p["step_functions_standard_per_1000_transitions"] / 1e3)


def profile(samples: int) -> dict[str, Any]:
    import logging

    logging.disable(logging.WARNING)
    from devstack.aws import EmbeddedStack
    from devstack.bench import Instrumentation
    from devstack.paysandbox import SandboxControl, SandboxServer
    from tests.support.api import BookingApi

    instr = Instrumentation(capacity_hook=CapacityMeter())
    instr.install()
    with SandboxServer(host="127.0.0.1", port=0) as sandbox:
        stack = EmbeddedStack(str(REPO), aws_port=0, api_port=0, parameters={
            "ProviderApiUrl": sandbox.base_url, "ReconcileScheduleSeconds": "2,3600",
            "SweepSchedule": "rate(1 hour)"})
        stack.start()
        try:
            control = SandboxControl(sandbox.control_url)
            control.set_webhooks([stack.api_url + "/webhooks/payments"])
            api = BookingApi(stack.api_url)
            prof = Profiler(instr, stack, control, api)
            ops: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)
            big = api.create_event(capacity=1000, hold_ttl_seconds=3600)["event_id"]
            small = api.create_event(capacity=1, hold_ttl_seconds=3600)["event_id"]
            short = api.create_event(capacity=100, hold_ttl_seconds=3)["event_id"]
            assert api.book(small, "filler").status_code == 201
            for n in range(samples):
                customer = f"profile-{n}"
                held: dict[str, Any] = {}

                key = f"hold-{n}"

                def hold() -> None:
                    answer = api.book(big, customer, key=key)
                    assert answer.status_code == 201, answer.text
                    held.update(answer.json())

                ops["hold (new, 201)"].append(prof.window(hold))
                ops["hold replay (same key, 201)"].append(prof.window(lambda: api.book(big, customer, key=key)))
                ops["sold-out rejection (409)"].append(
                    prof.window(lambda: api.book(small, customer).status_code == 409 or None))
                started: dict[str, Any] = {}

                def start_payment() -> None:
                    answer = api.pay(held["booking_id"], customer)
                    assert answer.status_code == 201, answer.text
                    started.update(answer.json())

                ops["payment start"].append(prof.window(start_payment))
                # the reconciliation execution started with the payment wakes up 2 s after it and
                # finds the payment settled: charged apart from the webhook -> queue -> consumer path
                both = prof.window(lambda: control.pay(started["payment_id"]),
                                   until=lambda rs: _has("PaymentEventsFunction")(rs) and _has("ReconcilePaymentFunction")(rs))
                ops["payment confirmation (webhook, queue, consumer)"].append(
                    [r for r in both if r["function"] != "ReconcilePaymentFunction"])
                ops["reconciliation check of a settled payment"].append(
                    [r for r in both if r["function"] == "ReconcilePaymentFunction"])
                prof.quiet()
                answer = api.book(short, customer)
                assert answer.status_code == 201, answer.text
                prof.quiet()
                ops["hold expiry (timer, task, outbox)"].append(prof.window(
                    lambda: None, until=_has("ExpireHoldFunction")))
            ops["sweeper run (fixed, per schedule tick)"].append(
                prof.window(lambda: stack.invoke("SweepDueFunction", {})))
            ops["sweeper run (fixed, per schedule tick)"][-1] = [
                r for r in instr.records[prof.mark:] if r["function"] == "SweepDueFunction"] or [{
                    "function": "SweepDueFunction", "route": None, "calls": [], "cpu": 0.0, "wall": 0.0,
                    "memory_mb": 256}]
        finally:
            stack.stop()
    return {name: summarise_op(samples_) for name, samples_ in ops.items()}


def report(samples: int) -> dict[str, Any]:
    ops = profile(samples)
    print("==> cold starts (import of each functions/*/app.py in a fresh interpreter, median of 5)", flush=True)
    cold = cold_starts()
    per_op_cost = {name: price(op) for name, op in ops.items()}
    booking = ["hold (new, 201)", "payment start", "payment confirmation (webhook, queue, consumer)",
               "reconciliation check of a settled payment"]
    per_booking = sum(per_op_cost[name] for name in booking)
    breakdown = defaultdict(float)
    for name in booking:
        op, p = ops[name], PRICES
        breakdown["lambda"] += (op["lambda_gb_s_aws_estimate"] * p["lambda_arm64_per_gb_second"]
                                + op["invocations"] * p["lambda_per_million_requests"] / 1e6)
        breakdown["api_gateway"] += op["api_requests"] * p["api_gateway_rest_per_million"] / 1e6
        breakdown["dynamodb"] += (op["wru"] * p["dynamodb_on_demand_per_million_wru"]
                                  + op["rru"] * p["dynamodb_on_demand_per_million_rru"]) / 1e6
        breakdown["sqs"] += op["sqs_requests"] * p["sqs_fifo_per_million_requests"] / 1e6
        breakdown["step_functions"] += op["sfn_transitions"] * p["step_functions_standard_per_1000_transitions"] / 1e3
    return {"prices": PRICES, "assumptions": {"aws_call_ms": AWS_CALL_MS, "provider_call_ms": PROVIDER_CALL_MS,
                                              "transitions_per_execution": {
                                                  "reconciliation": TRANSITIONS_PER_EXECUTION, "hold": TRANSITIONS_HOLD,
                                                  "hold_with_reminder": TRANSITIONS_HOLD_WITH_REMINDER},
                                              "sqs_consumer_requests_per_message": SQS_CONSUMER_REQUESTS_PER_MESSAGE,
                                              "capacity": "computed from item sizes (moto's ConsumedCapacity is a constant)"},
            "operations": ops, "usd_per_operation": per_op_cost,
            "usd_per_1000_completed_bookings": round(per_booking * 1000, 4),
            "usd_per_1000_completed_bookings_by_service": {k: round(v * 1000, 4) for k, v in breakdown.items()},
            "cold_start_import_ms": cold}


def print_table(result: dict[str, Any]) -> None:
    cols = [("invocations", "inv"), ("api_requests", "apigw"), ("aws_calls", "aws"), ("dynamodb_writes", "ddb wr"),
            ("wru", "WRU"), ("rru", "RRU"), ("sqs_requests", "sqs"), ("sfn_transitions", "sfn tr"),
            ("provider_calls", "prov"), ("handler_cpu_ms", "cpu ms"), ("emulator_wall_ms", "emu ms"),
            ("lambda_gb_s_aws_estimate", "GB-s")]
    print(f"{'operation (median per op)':50}" + "".join(f"{h:>8}" for _, h in cols) + f"{'USD/1M ops':>12}")
    for name, op in result["operations"].items():
        cells = "".join(f"{op[k]:>8.4g}" for k, _ in cols)
        print(f"{name:50}{cells}{result['usd_per_operation'][name] * 1e6:>12.2f}")
    print()
    for name, op in result["operations"].items():
        print(f"  {name}: {op['calls']}")
    print()
    print(f"USD per 1,000 completed bookings (hold + payment start + confirmation + reconciliation check): "
          f"{result['usd_per_1000_completed_bookings']}  by service: {result['usd_per_1000_completed_bookings_by_service']}")
    print(f"prices: {result['prices']}")
    print(f"cold start imports (ms, median): {result['cold_start_import_ms']}")


def main(args: Any) -> int:
    samples = getattr(args, "samples", None) or 10
    result = report(samples)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"profile-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(result, indent=2, default=str))
    print_table(result)
    print(f"==> wrote {path}")
    return 0
