"""Per-operation cost of Holdfast, measured on the local stack (`python -m devstack.measure.bench --profile`).

Every Lambda invocation and every AWS call the handlers make are counted (devstack.measure.instrumentation:
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

REPO = Path(__file__).resolve().parents[2]

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
# State transitions on an execution's normal path (tests/unit/test_hold_scheduler.py walks the
# definitions and fails when these drift). Reconciliation: Wait, Task, Choice, Succeed. The
# platform's tick per bucket (issue 35), which expires holds, makes first reconciliation checks and
# sends reminders: Wait, then a Task for each.
TRANSITIONS_PER_EXECUTION = 4
TRANSITIONS_EXPIRY_TICK = 4


def execution_transitions(call: dict[str, Any]) -> int:
    if str(call.get("execution_name", "")).startswith("exp-"):
        return TRANSITIONS_EXPIRY_TICK
    return TRANSITIONS_PER_EXECUTION


def shared_execution(call: dict[str, Any]) -> bool:
    """An execution per time bucket (the tick; ``rec-`` where a function cannot start ticks), shared
    by every booking of its bucket, whatever the offering; ``pay-`` executions are one booking's own."""
    return str(call.get("execution_name", "")).startswith(("exp-", "rec-"))


SEED_HOLDS_PER_SECOND = 300
# The quiet shape (issue 35): the platform sees 1 hold/s spread over 100 offerings, every hold paid,
# so a booking is nearly always the only one of its offering in its bucket. Run for real on the
# local stack with short holds (and a reminder window short enough to fire inside the run), so every
# execution started in the window runs its tasks before the window closes.
QUIET_HOLDS_PER_SECOND = 1
QUIET_OFFERINGS = 100
QUIET_SECONDS = 40
QUIET_HOLD_SECONDS = 20
QUIET_REMINDER_SECONDS = 5
STARTEXECUTION_QUOTA = {"eu-central-1 (and every region but the three large ones)": {"bucket": 800, "refill": 150},
                        "us-east-1, us-west-2, eu-west-1": {"bucket": 1300, "refill": 300}}
# Step Functions developer guide, "Quotas related to API action throttling", standard workflows.
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
    """(operation, params, response) -> (write units, read units, index write units); the units of
    the last call on this thread by partition key are kept for ``keys_of_last`` (the hot-key table)."""

    def __init__(self) -> None:
        self._client = None
        import threading

        self._local = threading.local()

    def keys_of_last(self) -> list[tuple[str, str, float]] | None:
        """[(pk, "r" | "w", units)] of the last metered call on this thread."""
        return getattr(self._local, "keys", None)

    def _key(self, pk: Any, kind: str, units: float) -> None:
        value = pk.get("S") if isinstance(pk, dict) else pk
        self._local.keys.append((str(value), kind, units))

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
        self._local.keys = []
        wcu = rcu = iwcu = 0.0
        response = response or {}
        consistent = bool(params.get("ConsistentRead"))
        if op == "GetItem":
            rcu = self._read(item_size(response.get("Item")), consistent)
            self._key(params["Key"]["pk"], "r", rcu)
        elif op == "Query" or op == "Scan":
            rcu = self._read(sum(item_size(i) for i in response.get("Items", [])), consistent)
            if op == "Query" and "IndexName" not in params:
                self._key(next(iter(params.get("ExpressionAttributeValues", {}).values()), {}), "r", rcu)
        elif op == "BatchGetItem":
            for table, items in (response.get("Responses") or {}).items():
                c = bool(params["RequestItems"].get(table, {}).get("ConsistentRead"))
                rcu += sum(self._read(item_size(i), c) for i in items) or self._read(0, c)
                for i in items:
                    self._key(i["pk"], "r", self._read(item_size(i), c))
        elif op == "TransactGetItems":
            for entry in response.get("Responses", []):
                rcu += self._read(item_size(entry.get("Item")), True, 2.0)
        elif op == "PutItem":
            wcu, iwcu = self._write(params["TableName"], {}, params["Item"], 1)
            self._key(params["Item"]["pk"], "w", wcu)
        elif op in ("UpdateItem", "DeleteItem"):
            wcu, iwcu = self._write(params["TableName"], params["Key"], None if op == "UpdateItem" else {}, 1)
            self._key(params["Key"]["pk"], "w", wcu)
        elif op == "TransactWriteItems":
            for entry in params["TransactItems"]:
                (kind, spec), = entry.items()
                if kind == "Put":
                    w, i = self._write(spec["TableName"], {}, spec["Item"], 2)
                elif kind == "Update":
                    w, i = self._write(spec["TableName"], spec["Key"], None, 2)
                elif kind == "Delete":
                    w, i = self._write(spec["TableName"], spec["Key"], {}, 2)
                else:  # ConditionCheck: charged as a transactional read, and counted as a write below too
                    r = self._read(item_size(self._current(spec["TableName"], spec["Key"])), True, 2.0)
                    rcu += r
                    self._key(spec["Key"]["pk"], "r", r)
                    self._key(spec["Key"]["pk"], "w?", 2.0)   # if AWS charged it as a write (worst case)
                    continue
                wcu += w
                iwcu += i
                self._key((spec.get("Item") or spec["Key"])["pk"], "w", w)
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
                "PYTHONPATH": str(REPO / "layers" / "holdfast")})
    # with bytecode: any value of PYTHONDONTWRITEBYTECODE, "0" included, turns writing it off, so
    # the repeats after the first would have compiled every module again (make bench-coldstart
    # measures the no-bytecode case as Lambda has it; this figure is the warm-disk one)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
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


# ----------------------------------------------------------------------------------------------
# Hot partition keys: counted units per key, scaled to one offering's peak
# ----------------------------------------------------------------------------------------------

PEAK_HOLDS_PER_SECOND = 3000          # 10x the seed's 300 attempts/s, all on one offering
KEYLOAD_HOLDS = 120                   # holds counted key by key in the profile
PARTITION_LIMITS = {"r": 3000.0, "w": 1000.0}   # DynamoDB's per-partition read/write units per second
# Key classes: (pattern, class label, how the load spreads: a number of shards, "offering" for one
# key per offering, "request" for keys new with each request or per customer).
import re as _re  # noqa: E402

KEY_CLASSES = [
    (_re.compile(r"^INV#.+#POOL#\d+$"), "INV#<event>#POOL#<n> (pool)", "pools"),
    (_re.compile(r"^INV#.+#U\d+$"), "INV#<event>#U<kk> (seats)", 8),
    (_re.compile(r"^GATE#.+#\d+$"), "GATE#<event>#<nn> (sale gate)", "gate"),
    (_re.compile(r"^EXPIRY#.+#\d+$"), "EXPIRY#<bucket>#<nn>", "expiry"),
    (_re.compile(r"^EVENTBOOKINGS#.+#\d+$"), "EVENTBOOKINGS#<event>#<n>", "event_index"),
    (_re.compile(r"^EVENT#"), "EVENT#<event> (META, layout)", 1),
    (_re.compile(r"^WAITLIST#"), "WAITLIST#<event>", 1),
    (_re.compile(r"^QUEUE#"), "QUEUE#<event>", 1),
    (_re.compile(r"^(BOOKING|IDEM|SYSIDEM|CUSTOMER|RATE)#"), "per booking / customer", "request"),
]


def key_class(pk: str) -> tuple[str, Any]:
    for pattern, label, spread in KEY_CLASSES:
        if pattern.match(pk):
            return label, spread
    return pk, 1


def hot_keys(records: list[dict[str, Any]], holds: int, seconds: float, pools: int) -> dict[str, Any]:
    """Units per key class per hold (counted), and what each key of the class takes at
    PEAK_HOLDS_PER_SECOND on one offering. Pool reads are the availability snapshot's refresh,
    at most once a second per container: they scale with containers, not with holds."""
    from holdfast.adapters.cancellation_store import EVENT_INDEX_SHARDS
    from holdfast.adapters.expiry_buckets import EXPIRY_SHARDS
    from holdfast.adapters.sale_gate import GATE_SHARDS

    spreads = {"pools": pools, "gate": GATE_SHARDS, "expiry": EXPIRY_SHARDS, "event_index": EVENT_INDEX_SHARDS}
    units: dict[tuple[str, str], float] = defaultdict(float)
    keys: dict[str, set[str]] = defaultdict(set)
    pool_read_calls = 0
    hold_records = [r for r in records if r["route"] == "POST /events/{event_id}/bookings"]
    for record in records:
        for call in record["calls"]:
            found = call.get("keys") or []
            if call["op"] == "BatchGetItem" and any(key_class(pk)[1] == "pools" for pk, _, _ in found):
                pool_read_calls += 1
            for pk, kind, amount in found:
                label, _ = key_class(pk)
                units[(label, kind)] += amount
                keys[label].add(pk)
    # Containers at the peak: concurrency = rate x a hold's duration on AWS (CPU + 6 ms per AWS call).
    hold_ms = statistics.median(r["cpu"] * 1000 + AWS_CALL_MS * sum(1 for c in r["calls"] if c["service"] != "provider")
                                for r in hold_records) if hold_records else 40.0
    containers = math.ceil(PEAK_HOLDS_PER_SECOND * hold_ms / 1000)
    rows = []
    for (label, kind), total in sorted(units.items()):
        spread = next((s for _, l, s in KEY_CLASSES if l == label), 1)
        shards = spreads.get(spread, spread) if not isinstance(spread, int) else spread
        per_hold = total / holds
        row = {"class": label, "kind": {"r": "read", "w": "write", "w?": "write (ConditionCheck, if charged so)"}[kind],
               "units_per_hold": round(per_hold, 4), "keys_seen": len(keys[label]), "keys": shards}
        if shards == "request":
            row["per_key_per_second"] = None
            row["note"] = "new key per request, or one per customer: not driven by the offering's rate"
        elif spread == "pools" and kind == "r":
            # snapshot refreshes: per container at most 1/s, each reading every pool once
            per_refresh = total / max(1, pool_read_calls) / max(1, shards)
            row["per_key_per_second"] = round(containers * per_refresh, 1)
            row["note"] = f"snapshot refresh: {containers} containers x 1/s x {per_refresh:.2f} units"
        else:
            row["per_key_per_second"] = round(per_hold * PEAK_HOLDS_PER_SECOND / shards, 1)
        if row["per_key_per_second"] is not None:
            limit = PARTITION_LIMITS["r" if kind == "r" else "w"]
            row["share_of_partition_limit"] = round(row["per_key_per_second"] / limit, 3)
        rows.append(row)
    hottest = max((row for row in rows if row.get("share_of_partition_limit") is not None),
                  key=lambda row: row["share_of_partition_limit"], default=None)
    return {"holds": holds, "seconds": round(seconds, 1), "peak_holds_per_second": PEAK_HOLDS_PER_SECOND,
            "hold_ms_on_aws_estimate": round(hold_ms, 1), "containers_at_peak": containers, "pools": pools,
            "snapshot_refreshes_seen": pool_read_calls, "classes": rows, "hottest": hottest}


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
            "sfn_shared_transitions": sum(execution_transitions(c) for c in calls if c["service"] == "stepfunctions"
                                          and c["op"] == "StartExecution" and shared_execution(c)),
            "start_executions": sum(1 for c in calls if c["service"] == "stepfunctions" and c["op"] == "StartExecution"),
            "provider_calls": sum(1 for c in calls if c["service"] == "provider"),
            "handler_cpu_ms": sum(r["cpu"] for r in records) * 1000,
            "handler_wall_ms": sum(r["wall"] for r in records) * 1000,
            "emulator_wall_ms": sum(c["wall"] for c in aws_calls) * 1000,
            "sdk_cpu_ms": sum(c["cpu"] for c in aws_calls) * 1000,
            "lambda_gb_s_aws_estimate": gb_s,
        })
        rows[-1]["bucket_task_usd_per_million"] = tasks_usd([r for r in records if r.get("bucket_task")]) * 1e6
    numeric = [k for k, v in rows[0].items() if isinstance(v, (int, float))]
    out: dict[str, Any] = {"samples": len(rows)}
    for key in numeric:
        out[key] = round(statistics.median(row[key] for row in rows), 3)
    out["by_function"] = dict(Counter({k: v for row in rows for k, v in row["by_function"].items()}))
    out["by_function"] = {k: round(v / len(rows), 2) for k, v in out["by_function"].items()}
    out["calls"] = {k: round(v / len(rows), 2) for k, v in
                    sum((row["calls"] for row in rows), Counter()).items()}
    return out


def tasks_usd(records: list[dict[str, Any]]) -> float:
    """Lambda and the DynamoDB calls of some invocations (a bucket's tasks) at list prices; what
    they start is counted with the operation."""
    p, usd = PRICES, 0.0
    for r in records:
        calls = [c for c in r["calls"] if c["service"] != "provider"]
        provider = len(r["calls"]) - len(calls)
        ms = math.ceil(r["cpu"] * 1000 + len(calls) * AWS_CALL_MS + provider * PROVIDER_CALL_MS)
        usd += (r["memory_mb"] / 1024 * ms / 1000 * p["lambda_arm64_per_gb_second"]
                + p["lambda_per_million_requests"] / 1e6
                + sum(c.get("wcu", 0) + c.get("iwcu", 0) for c in calls) * p["dynamodb_on_demand_per_million_wru"] / 1e6
                + sum(c.get("rcu", 0) for c in calls) * p["dynamodb_on_demand_per_million_rru"] / 1e6)
    return usd


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
    from devstack.measure.instrumentation import Instrumentation
    from devstack.paysandbox import SandboxControl, SandboxServer
    from tests.support.api import BookingApi

    instr = Instrumentation(capacity_hook=CapacityMeter())
    instr.install()
    with SandboxServer(host="127.0.0.1", port=0) as sandbox:
        stack = EmbeddedStack(str(REPO), aws_port=0, api_port=0, parameters={
            # the first check 5 s after a payment starts: its bucket's tick runs after the
            # confirmation the profile sends at once, as a webhook mostly beats the first check
            "ProviderApiUrl": sandbox.base_url, "ReconcileScheduleSeconds": "5,3600",
            "SweepSchedule": "rate(1 hour)", "HoldReminderSeconds": str(QUIET_REMINDER_SECONDS)})
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
                # the tick of the payment's first check wakes 5-10 s after it and finds the payment
                # settled: the check is charged apart from the webhook -> queue -> consumer path (the
                # tick's other tasks stay with the confirmation, marked as the bucket's)
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
            # Hot keys: many holds on one offering, every unit counted by partition key.
            keyload = api.create_event(capacity=500, hold_ttl_seconds=3600)["event_id"]
            prof.quiet()
            prof.mark = len(instr.records)
            started_at = time.monotonic()
            for n in range(KEYLOAD_HOLDS):
                answer = api.book(keyload, f"keyload-{n}")
                assert answer.status_code == 201, answer.text
            keyload_seconds = time.monotonic() - started_at
            prof.quiet()
            keyload_records = list(instr.records[prof.mark:])
            ops["sweeper run (fixed, per schedule tick)"].append(
                prof.window(lambda: stack.invoke("SweepDueFunction", {})))
            ops["sweeper run (fixed, per schedule tick)"][-1] = [
                r for r in instr.records[prof.mark:] if r["function"] == "SweepDueFunction"] or [{
                    "function": "SweepDueFunction", "route": None, "calls": [], "cpu": 0.0, "wall": 0.0,
                    "memory_mb": 256}]
            quiet_records, quiet_bookings = quiet_load(prof, api, control)
        finally:
            stack.stop()
    summary = {name: summarise_op(samples_) for name, samples_ in ops.items()}
    summary["_hot_keys"] = hot_keys(keyload_records, KEYLOAD_HOLDS, keyload_seconds, pools=20)
    summary["_quiet"] = quiet_shape(quiet_records, quiet_bookings)
    return summary


def quiet_load(prof: Profiler, api: Any, control: Any) -> tuple[list[dict[str, Any]], int]:
    """QUIET_SECONDS of the quiet shape, every hold paid, and everything it sets off (the payment's
    notification, the first reconciliation check, each expiry execution's tasks) until the last
    hold's bucket has ended and the system is quiet again."""
    import random

    from holdfast.adapters.expiry_buckets import BUCKET_SECONDS

    rng = random.Random(35)
    offerings = [api.create_event(capacity=50, hold_ttl_seconds=QUIET_HOLD_SECONDS)["event_id"]
                 for _ in range(QUIET_OFFERINGS)]
    prof.quiet()
    prof.mark = len(prof.instr.records)
    start = time.monotonic()
    holds = QUIET_SECONDS * QUIET_HOLDS_PER_SECOND
    for n in range(holds):
        time.sleep(max(0.0, start + n / QUIET_HOLDS_PER_SECOND - time.monotonic()))
        customer = f"quiet-{n}"
        held = api.book(rng.choice(offerings), customer)
        assert held.status_code == 201, held.text
        started = api.pay(held.json()["booking_id"], customer)
        assert started.status_code == 201, started.text
        control.pay(started.json()["payment_id"])
    settled_at = time.monotonic() + QUIET_HOLD_SECONDS + 2 * BUCKET_SECONDS
    prof.quiet(until=lambda _records: time.monotonic() > settled_at, settle=1.0,
               timeout=QUIET_HOLD_SECONDS + 10 * BUCKET_SECONDS)
    records = [r for r in prof.instr.records[prof.mark:] if r["function"] != "SweepDueFunction"]
    return records, holds


def quiet_shape(records: list[dict[str, Any]], bookings: int) -> dict[str, Any]:
    """USD per 1,000 completed bookings of the quiet run: every counted call of the window at list
    prices, and the state transitions of each execution started in it, counted once per execution
    (a second start of the same name, by another container, is no execution of its own)."""
    row = summarise_op([records])
    executions: dict[str, int] = {}
    for record in records:
        for call in record["calls"]:
            if call["service"] == "stepfunctions" and call["op"] == "StartExecution":
                executions.setdefault(call["execution_name"], execution_transitions(call))
    kinds: Counter[str] = Counter(name.split("-", 1)[0] for name in executions)
    row["start_executions"] = len(executions)
    row["sfn_transitions"] = sum(executions.values())
    usd = price(row)
    sfn = row["sfn_transitions"] * PRICES["step_functions_standard_per_1000_transitions"] / 1e3
    return {"holds_per_second": QUIET_HOLDS_PER_SECOND, "offerings": QUIET_OFFERINGS, "seconds": QUIET_SECONDS,
            "hold_seconds": QUIET_HOLD_SECONDS, "completed_bookings": bookings,
            "executions": dict(kinds), "transitions": row["sfn_transitions"],
            "transitions_per_booking": round(row["sfn_transitions"] / bookings, 3),
            "usd_per_1000_completed_bookings": round(usd / bookings * 1000, 4),
            "usd_per_1000_step_functions": round(sfn / bookings * 1000, 4),
            "usd_per_1000_everything_else": round((usd - sfn) / bookings * 1000, 4),
            "invocations_per_booking": round(row["invocations"] / bookings, 2),
            "wru_per_booking": round(row["wru"] / bookings, 2), "rru_per_booking": round(row["rru"] / bookings, 2)}


def at_load(ops: dict[str, Any], per_op_cost: dict[str, float], booking: list[str]) -> dict[str, Any]:
    """The same completed booking at the seed's rate, 300 holds/s on one offering (each hold paid):
    an execution per time bucket, and its tasks' own calls, are shared by the bookings of its
    bucket, and each container asks Step Functions once per bucket."""
    from holdfast.adapters.expiry_buckets import BUCKET_SECONDS

    per_bucket = SEED_HOLDS_PER_SECOND * BUCKET_SECONDS
    price_transition = PRICES["step_functions_standard_per_1000_transitions"] / 1e3
    usd = 0.0
    for name in booking:
        op = ops[name]
        # the bucket's executions and their tasks' invocations and queries are the bucket's, not
        # the booking's: shared by the bucket's bookings
        shared = op["sfn_shared_transitions"] * price_transition + op["bucket_task_usd_per_million"] / 1e6
        saved = shared * (1 - 1 / per_bucket)
        usd += per_op_cost[name] - saved

    def containers(name: str, route_ms: float) -> int:
        return math.ceil(SEED_HOLDS_PER_SECOND * route_ms / 1000)

    hold_ms = ops["hold (new, 201)"]["handler_cpu_ms"] + AWS_CALL_MS * ops["hold (new, 201)"]["aws_calls"]
    pay_ms = (ops["payment start"]["handler_cpu_ms"] + AWS_CALL_MS * ops["payment start"]["aws_calls"]
              + PROVIDER_CALL_MS * ops["payment start"]["provider_calls"])
    starts = {"hold expiry ticks (per bucket, its expiry and its reminder, once each per container)":
              2 * containers("hold", hold_ms) / BUCKET_SECONDS,
              "first reconciliation checks (per bucket, once per container)": containers("pay", pay_ms) / BUCKET_SECONDS}
    total = sum(starts.values())
    return {"holds_per_second": SEED_HOLDS_PER_SECOND, "bucket_seconds": BUCKET_SECONDS, "bookings_per_bucket": per_bucket,
            "usd_per_1000_completed_bookings": round(usd * 1000, 4),
            "start_execution_per_second": {k: round(v, 1) for k, v in starts.items()},
            "start_execution_per_second_total": round(total, 1),
            "start_execution_quota": STARTEXECUTION_QUOTA,
            "share_of_smallest_refill": round(total / 150, 3)}


def report(samples: int) -> dict[str, Any]:
    ops = profile(samples)
    keys = ops.pop("_hot_keys")
    quiet = ops.pop("_quiet")
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
                                                  "reconciliation": TRANSITIONS_PER_EXECUTION,
                                                  "expiry_tick": TRANSITIONS_EXPIRY_TICK},
                                              "sqs_consumer_requests_per_message": SQS_CONSUMER_REQUESTS_PER_MESSAGE,
                                              "capacity": "computed from item sizes (moto's ConsumedCapacity is a constant)"},
            "operations": ops, "usd_per_operation": per_op_cost,
            "usd_per_1000_completed_bookings": round(per_booking * 1000, 4),
            "usd_per_1000_completed_bookings_by_service": {k: round(v * 1000, 4) for k, v in breakdown.items()},
            "cold_start_import_ms": cold, "hot_keys": keys, "at_load": at_load(ops, per_op_cost, booking),
            "quiet": quiet}


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
    load = result["at_load"]
    print(f"At the seed's rate ({load['holds_per_second']} holds/s on one offering, every hold paid; "
          f"{load['bookings_per_bucket']} bookings share a {load['bucket_seconds']} s bucket's executions): "
          f"USD per 1,000 completed bookings {load['usd_per_1000_completed_bookings']}")
    quiet = result["quiet"]
    print(f"Quiet ({quiet['holds_per_second']} hold/s over {quiet['offerings']} offerings, every hold paid; "
          f"{quiet['completed_bookings']} bookings in {quiet['seconds']} s, run and counted): USD per 1,000 completed "
          f"bookings {quiet['usd_per_1000_completed_bookings']} (Step Functions {quiet['usd_per_1000_step_functions']}: "
          f"{quiet['transitions_per_booking']} transitions a booking, executions {quiet['executions']}; "
          f"everything else {quiet['usd_per_1000_everything_else']})")
    print(f"StartExecution per second at that rate: {load['start_execution_per_second']} = "
          f"{load['start_execution_per_second_total']}/s, {load['share_of_smallest_refill']:.0%} of the 150/s refill "
          f"(eu-central-1; 300/s in the three large regions)")
    print(f"prices: {result['prices']}")
    print(f"cold start imports (ms, median): {result['cold_start_import_ms']}")
    keys = result["hot_keys"]
    print()
    print(f"Hot partition keys: {keys['holds']} holds on one offering ({keys['pools']} pools) counted key by key, "
          f"scaled to {keys['peak_holds_per_second']} holds/s ({keys['containers_at_peak']} containers at "
          f"~{keys['hold_ms_on_aws_estimate']} ms a hold)")
    print(f"  {'key class':40}{'units':>22}{'per hold':>10}{'keys':>8}{'per key /s':>12}{'of limit':>10}")
    for row in keys["classes"]:
        per_key = row["per_key_per_second"]
        share = row.get("share_of_partition_limit")
        print(f"  {row['class']:40}{row['kind']:>22}{row['units_per_hold']:>10.3f}{str(row['keys']):>8}"
              f"{'-' if per_key is None else per_key:>12}{'-' if share is None else f'{share:.0%}':>10}"
              + (f"  ({row['note']})" if row.get("note") else ""))
    hottest = keys["hottest"]
    if hottest:
        print(f"  hottest key: {hottest['class']} ({hottest['kind']}), {hottest['share_of_partition_limit']:.0%} "
              f"of its partition's limit")


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
