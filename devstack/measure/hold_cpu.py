"""`make bench-hold-cpu`: what Lambda bills for a hold, its function's own CPU, against a bare
transaction of the hold's own shape (issue 49, goal 1).

`make bench`'s CPU ratio divides every process's CPU (the emulators', the load generator's) by the
holds that got through; at 300 attempts/s it mostly counted the attempts the local stack throttled.
This measures one process instead, at a rate the stack always serves:

* **The hold.** The local stack (devstack/measure/bench.py's child process: DynamoDB Local, moto, the API
  Gateway stand-in) runs the hold function in **one** worker process (concurrency 1), and one
  client sends holds one after another, each for a new customer and key, so that no attempt is
  ever throttled and every one is a new hold (201). The figure is that worker process's CPU time
  (user + system, `/proc/<pid>/stat`) over the batch, divided by the new holds: the handler with
  everything it calls (its reads, the transaction, the expiry tick's `StartExecution` when a new
  bucket begins, Powertools' logging and metrics) and the worker's runtime loop, which stands for
  Lambda's runtime client. The stack's instrumentation runs in that process too (the call
  recorder, about a `json.dumps` of each call's key), and in the bare process as well.
* **The bare transaction.** A fresh process started the same way as a worker (`spawn`, the same
  environment variables and `sys.path`, the same call recorder) makes `boto3.client("dynamodb")`
  as the hold's store does, and sends the hold's own `TransactWriteItems` (the one the worker
  sampled: its items, expressions and conditions; devstack/measure/bench_bare.py gives the pool counter and
  the gate check seeded keys and every other item a fresh one) the same number of times, one after
  another, into the same DynamoDB Local. Its CPU time over those calls is the yardstick. The
  requests are built before the clock starts.

Both sides are process CPU time, which other work on a shared machine does not add to (it does
slow caches and the clock a little); each run takes a batch of each in turn, and the figure is
the median of the runs' ratios with their spread, printed with the load average around the runs.
`--doors` does the same for a door's scan (the doors API; first scans of confirmed tickets, each
admitted), against its own transaction; `--orders` for an order of `--order-lines` (2-4) lines,
each a place at its own event (POST /orders, the bookings function), against the order's one
transaction (a pool update and a gate check per line, on distinct seeded keys).

    .venv/bin/python -m devstack.measure.hold_cpu                       # 5 runs of 200 holds
    .venv/bin/python -m devstack.measure.hold_cpu --runs 7 --holds 300 --doors
    .venv/bin/python -m devstack.measure.hold_cpu --no-holds --orders --order-lines 3 --runs 3 --holds 100
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from devstack.measure import bench_bare
from devstack.measure.bench import HOLD_ROUTE, ORGANIZER_KEY, LocalTarget, _paths
from devstack.measure.bench_client import LeanHttp
from devstack.sample_events import days_ahead

REPO = Path(__file__).resolve().parents[2]
HOLD_FUNCTION = "BookingsApiFunction"
DOOR_FUNCTION = "DoorsApiFunction"
TIMEOUT = 600
DOOR_ROUTE = "POST /events/{event_id}/doors/{door_id}/scan"
ORDER_ROUTE = "POST /orders"


def _bare_process(environ: dict[str, str], sys_path: list[str], requests: list[list[dict[str, Any]]], warm: int,
                  queue: Any) -> None:
    """A worker's start without its handler: the function's environment, the recorder, the client."""
    os.environ.clear()
    os.environ.update(environ)
    for entry in reversed(sys_path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    import boto3

    from devstack.aws import calls
    from devstack.aws.workers import instrument_calls

    timings, _ = instrument_calls()
    calls.CURRENT_FUNCTION.set("bare")
    try:
        client = boto3.client("dynamodb")
        failed = 0
        for request in requests[:warm]:
            client.transact_write_items(TransactItems=request)
        timings.clear()
        c0 = time.process_time()
        for request in requests[warm:]:
            try:
                client.transact_write_items(TransactItems=request)
            except Exception:  # noqa: BLE001 - counted: a conflict would make the yardstick cheaper
                failed += 1
        queue.put({"cpu_s": time.process_time() - c0, "sent": len(requests) - warm, "failed": failed})
    except Exception as exc:  # noqa: BLE001 - told to the parent, which stops
        queue.put({"error": f"{type(exc).__name__}: {exc}"})


def bare_batch(environ: dict[str, str], sys_path: list[str], sample: dict[str, Any], count: int,
               hot_items: int, warm: int = 30) -> dict[str, Any]:
    """CPU seconds of ``count`` bare transactions of the sample's shape, in a fresh worker-like process."""
    import boto3

    items = bench_bare.shape(sample)
    # DynamoDB Local keeps tables per access key and region: the function's
    run = bench_bare.prepare(boto3.client(
        "dynamodb", endpoint_url=environ["AWS_ENDPOINT_URL_DYNAMODB"],
        region_name=environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION"),
        aws_access_key_id=environ.get("AWS_ACCESS_KEY_ID"), aws_secret_access_key=environ.get("AWS_SECRET_ACCESS_KEY"),
        aws_session_token=environ.get("AWS_SESSION_TOKEN")), items, hot_items)
    rng = random.Random(0)
    requests = [bench_bare._transaction(items, run, hot_items, rng) for _ in range(warm + count)]
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(target=_bare_process, args=(environ, sys_path, requests, warm, queue), daemon=True)
    process.start()
    try:
        answer = queue.get(timeout=TIMEOUT)
    finally:
        process.join(30)
    if "error" in answer:
        raise RuntimeError(f"the bare transactions failed: {answer['error']}")
    return answer


class Measure:
    def __init__(self, target: LocalTarget, api: str) -> None:
        self.target, self.api = target, api.rstrip("/")
        self.http = LeanHttp()

    def worker_cpu(self, function: str) -> float:
        return float(self.target.call("cpu_now").get(f"workers {function}", 0.0))

    def handler_cpu(self, function: str, route: str) -> list[float]:
        records = self.target.call("stats", timeout=120)["records"]
        return [r["cpu"] for r in records if r["function"] == function and r["route"] == route
                and isinstance(r["status"], int) and r["status"] < 300]

    def batch(self, function: str, route: str, send: Callable[[int], bool], count: int,
              pace: float) -> dict[str, Any]:
        """The function's worker CPU over ``count`` calls of ``send`` (True: the call did its work)."""
        self.target.call("reset")
        c0, done, failed = self.worker_cpu(function), 0, 0
        for n in range(count):
            t = time.monotonic()
            if send(n):
                done += 1
            else:
                failed += 1
            rest = pace - (time.monotonic() - t)
            if rest > 0:
                time.sleep(rest)
        cpu = self.worker_cpu(function) - c0
        handler = self.handler_cpu(function, route)
        return {"cpu_s": cpu, "done": done, "failed": failed,
                "handler_ms_median": round(statistics.median(handler) * 1000, 2) if handler else None}


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def compare(measure: Measure, label: str, function: str, route: str, send: Callable[[int], bool], args: Any,
            sample_of: Callable[[], dict[str, Any]], hot_items: int) -> dict[str, Any]:
    """Runs of (a batch of the function's calls, a batch of bare transactions), interleaved."""
    offset = [0]

    def numbered(n: int) -> bool:
        offset[0] += 1
        return send(offset[0])

    warm = measure.batch(function, route, numbered, args.warm, args.pace)     # the cold start and first bucket
    if warm["done"] == 0:
        raise RuntimeError(f"{label}: none of the warm-up calls succeeded")
    sample = sample_of()
    start = measure.target.call(("environ", function))
    runs = []
    for r in range(args.runs):
        own = measure.batch(function, route, numbered, args.count, args.pace)
        bare = bare_batch(start["environ"], start["sys_path"], sample, args.count, hot_items)
        own_ms = own["cpu_s"] * 1000 / max(1, own["done"])
        bare_ms = bare["cpu_s"] * 1000 / max(1, bare["sent"] - bare["failed"])
        runs.append({"own_ms": round(own_ms, 3), "bare_ms": round(bare_ms, 3), "ratio": round(own_ms / bare_ms, 3),
                     "done": own["done"], "failed": own["failed"], "bare_failed": bare["failed"],
                     "handler_ms_median": own["handler_ms_median"], "load": os.getloadavg()[0]})
        print(f"  {label} run {r + 1}: {own_ms:.2f} ms per call ({own['done']} done, {own['failed']} not; handler "
              f"median {own['handler_ms_median']} ms) / bare {bare_ms:.2f} ms = {own_ms / bare_ms:.2f}x "
              f"(load {os.getloadavg()[0]:.1f})", flush=True)
    return {"label": label, "function": function, "count_per_run": args.count, "runs": runs,
            "own_ms": _spread([r["own_ms"] for r in runs]), "bare_ms": _spread([r["bare_ms"] for r in runs]),
            "ratio": _spread([r["ratio"] for r in runs]),
            "shape": [f"{i['op']}({i['role']})" for i in bench_bare.shape(sample)]}


def _holds(measure: Measure, args: Any) -> dict[str, Any]:
    total = args.warm + args.runs * args.count + 10
    run_id = uuid.uuid4().hex[:8]
    event = measure.http.post(measure.api + "/events", timeout=60, json={
        "name": f"Hold CPU {run_id}", "venue": "Bench hall", "city": "Moscow", "category": "club",
        "starts_at": days_ahead(60), "price": {"value": "1000.00", "currency": "RUB"},
        "capacity": total, "hold_ttl_seconds": 3600, "payment_mode": "one_stage"},
        headers={"X-Api-Key": ORGANIZER_KEY, "Idempotency-Key": f"hold-cpu-{run_id}"})
    event.raise_for_status()
    event_id = event.json()["event_id"]

    def send(n: int) -> bool:
        answer = measure.http.post(f"{measure.api}/events/{event_id}/bookings", json={"quantity": 1}, timeout=60,
                                   headers={"X-Customer-Id": f"cpu-{run_id}-{n}", "Idempotency-Key": f"k-{run_id}-{n}"})
        return answer.status_code == 201

    def sample() -> dict[str, Any]:
        return measure.target.call(("sample", HOLD_FUNCTION, HOLD_ROUTE))["transaction"]

    pools = max(1, -(-total // 25))   # the inventory's pools (adapters/inventory_store.py: 25 places each, 40 at most)
    return compare(measure, "hold", HOLD_FUNCTION, HOLD_ROUTE, send, args, sample, min(40, pools))


def _orders(measure: Measure, args: Any) -> dict[str, Any]:
    """Orders of ``--order-lines`` lines (POST /orders), each line a place at its own event, every
    order new (its customer and key): the order's own CPU against its one transaction."""
    total = args.warm + args.runs * args.count + 10
    run_id = uuid.uuid4().hex[:8]
    events = []
    for n in range(args.order_lines):
        event = measure.http.post(measure.api + "/events", timeout=60, json={
            "name": f"Order CPU {run_id} {n}", "venue": "Bench hall", "city": "Moscow", "category": "club",
            "starts_at": days_ahead(60), "price": {"value": "1000.00", "currency": "RUB"},
            "capacity": total, "hold_ttl_seconds": 3600, "payment_mode": "one_stage"},
            headers={"X-Api-Key": ORGANIZER_KEY, "Idempotency-Key": f"order-cpu-{run_id}-{n}"})
        event.raise_for_status()
        events.append(event.json()["event_id"])
    lines = [{"event_id": event_id, "quantity": 1} for event_id in events]

    def send(n: int) -> bool:
        answer = measure.http.post(f"{measure.api}/orders", json={"lines": lines}, timeout=60,
                                   headers={"X-Customer-Id": f"ocpu-{run_id}-{n}",
                                            "Idempotency-Key": f"o-{run_id}-{n}"})
        return answer.status_code == 201

    def sample() -> dict[str, Any]:
        return measure.target.call(("sample", HOLD_FUNCTION, ORDER_ROUTE))["transaction"]

    pools = max(1, -(-total // 25))
    return compare(measure, f"order of {args.order_lines} lines", HOLD_FUNCTION, ORDER_ROUTE, send, args, sample,
                   min(40, pools) * args.order_lines)


def _doors(measure: Measure, args: Any, control: str) -> dict[str, Any]:
    from devstack.measure.bench_doors import DoorRun, _ok, bare_shape

    run = DoorRun(measure.api, control, argparse.Namespace(tickets=args.warm + args.runs * args.count))
    tickets = run.tickets()
    door = _ok(measure.http.post(f"{measure.api}/events/{run.event_id}/doors", json={"name": "CPU door"},
                                 headers={"X-Api-Key": ORGANIZER_KEY}, timeout=30), 201)

    def send(n: int) -> bool:
        answer = measure.http.post(f"{measure.api}/events/{run.event_id}/doors/{door['door_id']}/scan",
                                   json={"event_id": f"scan-{n}", "token": tickets[n - 1]["token"]},
                                   headers={"X-Door-Key": door["door_key"]}, timeout=60)
        return answer.status_code == 200 and bool(answer.json().get("admitted"))

    def sample() -> dict[str, Any]:
        return bare_shape(measure.target.call(("sample", DOOR_FUNCTION, DOOR_ROUTE))["transaction"])

    return compare(measure, "door scan", DOOR_FUNCTION, DOOR_ROUTE, send, args, sample, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--holds", dest="count", type=int, default=200, help="calls per run (holds, or scans)")
    parser.add_argument("--warm", type=int, default=40, help="calls before the first run, not counted")
    parser.add_argument("--pace", type=float, default=0.02, help="at least this many seconds from call to call")
    parser.add_argument("--doors", action="store_true", help="door scans too")
    parser.add_argument("--no-holds", action="store_true", help="no single holds (door scans or orders only)")
    parser.add_argument("--orders", action="store_true", help="orders too (POST /orders, --order-lines lines)")
    parser.add_argument("--order-lines", type=int, default=3, choices=range(2, 5), metavar="2-4")
    parser.add_argument("--out", default=str(REPO / "bench-results"))
    args = parser.parse_args(argv)
    _paths()
    target = LocalTarget({"workers": True, "function_concurrency": {HOLD_FUNCTION: 1, DOOR_FUNCTION: 1}})
    load_before = os.getloadavg()
    results = []
    try:
        started = target.start()
        measure = Measure(target, started["api"])
        if not args.no_holds:
            results.append(_holds(measure, args))
        if args.orders:
            results.append(_orders(measure, args))
        if args.doors or (args.no_holds and not args.orders):
            results.append(_doors(measure, args, started["control"]))
    finally:
        target.stop()
    load_after = os.getloadavg()
    print(f"load average before {' '.join(f'{v:.1f}' for v in load_before)}, "
          f"after {' '.join(f'{v:.1f}' for v in load_after)} ({os.cpu_count()} cores)")
    for result in results:
        own, bare, ratio = result["own_ms"], result["bare_ms"], result["ratio"]
        print(f"{result['label']}: {own['median']} ms CPU per call in its function's process "
              f"({own['min']}-{own['max']}), bare transaction {bare['median']} ms ({bare['min']}-{bare['max']}): "
              f"**{ratio['median']}x** ({ratio['min']}-{ratio['max']}) over {len(result['runs'])} runs of "
              f"{result['count_per_run']}; shape {', '.join(result['shape'])}")
    Path(args.out).mkdir(exist_ok=True)
    path = Path(args.out) / f"hold-cpu-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps({"results": results, "load_before": load_before, "load_after": load_after,
                                "args": vars(args)}, indent=2))
    print(f"written {path}")
    return 0 if all(r["runs"] and all(x["failed"] == 0 for x in r["runs"]) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
