"""`make bench`: an open-loop load test of the booking path, on this machine.

By default it starts the payment sandbox and the embedded AWS stack in a child process on free
ports (as `make run` does, with the server side instrumented), or it targets a running `make run`
with `--api URL --sandbox-control URL` (client-side figures only).

It creates one general-admission event, then schedules booking attempts at a fixed offered rate
whatever the answers (open loop: an arrival is never delayed by a slow response; latency is
measured from the scheduled time as well as from the send time, so queueing is not hidden).
A share of the attempts are retries that repeat an earlier attempt's Idempotency-Key. Each new
hold is paid (POST /bookings/{id}/payment, then the sandbox's `pay` as the customer), and at the
end it waits, bounded, for the confirmations. Results go to bench-results/ as JSON and PNG.

`python -m devstack.measure.bench --profile` measures the per-operation cost instead (devstack/measure/costs.py).
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import random
import statistics
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from devstack.measure.bench_client import ClientError, LeanHttp, Timeout
from devstack.measure.instrumentation import Instrumentation
from devstack.sample_events import days_ahead

REPO = Path(__file__).resolve().parents[2]
ORGANIZER_KEY = "local-organizer-key"
HOLD_ENDPOINT = "POST /events/{id}/bookings"
PAY_ENDPOINT = "POST /bookings/{id}/payment"
SANDBOX_PAY = "sandbox POST /payments/{id}/pay"
GET_BOOKING = "GET /bookings/{id}"
HOLD_ROUTE = "POST /events/{event_id}/bookings"
DYNAMODB_LOCAL = "DynamoDB Local (java)"  # its process's group in the CPU split
# The hold function's environments. A hold now spends ~5 ms of its ~0.3 s on this loaded machine
# in its own CPU and the rest waiting for DynamoDB Local, so its environments, not the emulator's
# throughput, bounded the served rate at 4 (docs/performance.md has the runs at 4, 8 and 16).
HOLD_CONCURRENCY = 16


def _paths() -> None:
    for entry in (str(REPO), str(REPO / "layers" / "holdfast")):
        if entry not in sys.path:
            sys.path.insert(0, entry)


# ----------------------------------------------------------------------------------------------
# Server side (runs where the stack runs; in-process runs count with devstack.measure.instrumentation)
# ----------------------------------------------------------------------------------------------


def _quiet_disconnects() -> None:
    """A client that timed out has closed its socket: the servers' replies then fail with a broken
    pipe, which socketserver prints as a traceback. Count those instead; print anything else."""
    import socketserver

    original = socketserver.BaseServer.handle_error
    counter = Counter()

    def handle_error(server: Any, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, (BrokenPipeError, ConnectionResetError)):
            counter[type(error).__name__] += 1
            return
        original(server, request, client_address)

    socketserver.BaseServer.handle_error = handle_error


def _pool_snapshot(stack: Any, t0: float) -> dict[str, Any]:
    """Per-invocation records of the functions' worker pools, in the Instrumentation's shape."""
    records = []
    pools = {}
    for logical_id, fn in stack.functions.items():
        if fn.pool is None:
            continue
        pools[logical_id] = fn.pool.stats()
        with fn.pool._cond:
            taken = [r for r in fn.pool.records if r.started >= t0]
        for r in taken:
            records.append({"function": r.function, "route": r.route, "status": r.status, "pid": r.pid, "cold": r.cold,
                            "start": r.started - t0, "lock_wait": r.started - r.queued, "wall": r.wall, "cpu": r.cpu,
                            "occupied": r.ended - r.started,
                            "calls": [{"service": svc, "op": op, "wall": wall, "cpu": 0.0} for svc, op, wall in r.aws_calls]})
    return {"records": records, "outside": {}, "elapsed": time.monotonic() - t0, "pools": pools}


def _process_split(stack: Any, since: dict[str, Any] | None, sandbox: Any = None) -> dict[str, Any]:
    """CPU seconds of the stack process, each function's workers, DynamoDB Local and the payment
    sandbox when it runs apart (since `since`)."""
    from devstack.measure.sampler import process_cpu

    groups: dict[str, list[int]] = {"stack process": [os.getpid()]}
    if getattr(sandbox, "pid", None):
        groups["payment sandbox"] = [sandbox.pid]
    for logical_id, fn in stack.functions.items():
        if fn.pool is not None:
            groups[f"workers {logical_id}"] = [p.pid for p in multiprocessing.active_children()
                                               if p.name == f"lambda-{logical_id}"]
    ddb = getattr(stack, "_dynamodb_local", None)
    if getattr(ddb, "pid", None):
        groups[DYNAMODB_LOCAL] = [ddb.pid]
    now = {name: sum(process_cpu(pids).values()) for name, pids in groups.items()}
    if since is None:
        return now
    return {name: round(value - since.get(name, 0.0), 1) for name, value in now.items()}


def _stack_process(conn: Any, options: dict[str, Any]) -> None:
    """Child process: sandbox + local stack; answers 'stats', 'reset', 'sample' and 'stop' on the pipe.

    With worker processes (the default) each function runs in execution environments of its own
    and the pools record every invocation; in-process (`--in-process`), the Instrumentation
    wraps the one-at-a-time invocations instead."""
    _paths()
    import logging

    logging.disable(logging.WARNING)
    from devstack.aws import EmbeddedStack
    from devstack.paysandbox import SandboxControl, SandboxServer

    workers = options.get("workers", True)
    instr = None
    if not workers:
        instr = Instrumentation()
        instr.install()
    _quiet_disconnects()
    if options.get("sandbox_in_stack"):
        sandbox = SandboxServer(host="127.0.0.1", port=0)
    else:
        # a provider of its own: in the stack's process its threads would wait on that process's
        # interpreter lock (devstack/paysandbox/process.py); it delivers several notifications at once
        from devstack.paysandbox.process import SandboxProcess

        sandbox = SandboxProcess(webhook_workers=options.get("webhook_workers", 4))
    sandbox.start()
    stack = EmbeddedStack(str(REPO), aws_port=0, api_port=0, parameters={"ProviderApiUrl": sandbox.base_url},
                          lambda_workers=workers, default_concurrency=options.get("concurrency"),
                          concurrency=options.get("function_concurrency") or (
                              {"BookingsApiFunction": options["hold_concurrency"]}
                              if options.get("hold_concurrency") else None),
                          dynamodb=options.get("dynamodb", "local"), worker_output=False)
    t0 = time.monotonic()
    sampler = None
    try:
        stack.start()
        SandboxControl(sandbox.control_url).set_webhooks([stack.api_url + "/webhooks/payments"])
        conn.send({"api": stack.api_url, "control": sandbox.control_url, "dynamodb": stack.dynamodb_endpoint})
        while True:
            message = conn.recv()
            if message == "stats":
                snapshot = instr.snapshot() if instr else _pool_snapshot(stack, t0)
                if sampler is not None:
                    snapshot["stack_cpu"] = sampler.stop()
                    snapshot["stack_cpu"]["processes"] = _process_split(stack, cpu0, sandbox)
                    sampler = None
                conn.send(snapshot)
            elif message == "reset":
                if instr:
                    with instr.lock:
                        instr.records.clear()
                        instr.outside.clear()
                        instr.t0 = time.monotonic()
                t0 = time.monotonic()
                if options.get("sample_stack"):
                    from devstack.measure.sampler import CpuSampler

                    sampler = CpuSampler()
                    sampler.start()
                    cpu0 = _process_split(stack, None, sandbox)
                conn.send("ok")
            elif message == "cpu":   # the processes' CPU so far in this window, the sampler left running
                conn.send(_process_split(stack, cpu0, sandbox) if sampler is not None else None)
            elif message == "cpu_now":   # every process's CPU seconds since it started (devstack/measure/hold_cpu.py)
                conn.send(_process_split(stack, None, sandbox))
            elif isinstance(message, tuple) and message[0] == "environ":   # (environ, function): its workers' start
                pool = stack.functions[message[1]].pool
                conn.send({"environ": {**pool.environ, **pool.fn.environment}, "sys_path": pool.sys_path})
            elif message == "dynamodb_cpu":
                conn.send(_process_split(stack, None, sandbox).get(DYNAMODB_LOCAL))
            elif isinstance(message, tuple) and message[0] == "sample":   # (sample, function, route)
                fn = stack.functions.get(message[1])
                conn.send({"transaction": (fn.pool.transactions.get(message[2]) if fn and fn.pool else None),
                           "workers": fn.pool.concurrency if fn and fn.pool else 1})
            elif message == "sample":
                fn = stack.functions.get("BookingsApiFunction")
                conn.send({"transaction": (fn.pool.transactions.get(HOLD_ROUTE) if fn and fn.pool else None),
                           "workers": fn.pool.concurrency if fn and fn.pool else 1})
            else:
                break
    finally:
        stack.stop()
        sandbox.stop()
        conn.send("stopped")


class LocalTarget:
    """The stack in a child process, so that the load generator does not share its interpreter."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        # not a daemon: its Lambda workers are child processes of its own
        self.process = ctx.Process(target=_stack_process, args=(child, options or {}), daemon=False)

    def start(self, timeout: float = 180) -> dict[str, str]:
        self.process.start()
        if not self.conn.poll(timeout):
            self.stop()
            raise RuntimeError("the local stack did not start in time")
        return self.conn.recv()

    def call(self, message: str, timeout: float = 60) -> Any:
        self.conn.send(message)
        if not self.conn.poll(timeout):
            raise RuntimeError(f"the stack process did not answer {message!r}")
        return self.conn.recv()

    def stop(self) -> None:
        if self.process.is_alive():
            try:
                self.conn.send("stop")
                self.conn.poll(30) and self.conn.recv()
            except (OSError, EOFError):
                pass
            self.process.join(15)
            if self.process.is_alive():
                self.process.terminate()
                self.process.join(5)


# ----------------------------------------------------------------------------------------------
# The load generator
# ----------------------------------------------------------------------------------------------


def percentiles(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "p50": None, "p95": None, "p99": None, "max": None}
    ordered = sorted(values)

    def pick(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))] * 1000, 1)

    return {"n": len(ordered), "p50": pick(0.50), "p95": pick(0.95), "p99": pick(0.99),
            "max": round(ordered[-1] * 1000, 1)}


class LoadRun:
    def __init__(self, api: str, control: str, args: argparse.Namespace) -> None:
        self.api = api.rstrip("/")
        self.control_url = control.rstrip("/")
        self.http = LeanHttp()  # cheap per request: the clients share the cores with the stack
        self.args = args
        self.lock = threading.Lock()
        self.attempts: list[dict[str, Any]] = []
        self.payments: list[dict[str, Any]] = []
        self.run_id = uuid.uuid4().hex[:8]
        #: called once the sale is over, before the bench reads every booking back to check it
        self.before_final_reads: Any = None
        #: the one discount code every attempt names (``--code-uses``; None: no code)
        self.code: str | None = None

    def create_event(self, capacity: int | None = None, label: str = "") -> dict[str, Any]:
        body = {"name": f"Bench night {self.run_id}{label}", "venue": "Bench hall", "city": "Moscow",
                "category": "club", "starts_at": days_ahead(60), "price": {"value": "1000.00", "currency": "RUB"},
                "capacity": capacity or self.args.capacity, "hold_ttl_seconds": self.args.hold_seconds,
                "payment_mode": "one_stage"}
        answer = self.http.post(self.api + "/events", json=body, timeout=30,
                                headers={"X-Api-Key": ORGANIZER_KEY, "Idempotency-Key": f"bench-{self.run_id}{label}"})
        answer.raise_for_status()
        return answer.json()

    # -- one attempt --------------------------------------------------------------------------
    def attempt(self, index: int, scheduled: float, customer: str, key: str, original: int | None) -> None:
        row: dict[str, Any] = {"i": index, "key": key, "customer": customer, "retry_of": original,
                               "scheduled": scheduled, "sent": None, "done": None, "status": None,
                               "outcome": None, "booking_id": None, "replayed": None}
        try:
            now = time.monotonic()
            if now - scheduled > self.args.timeout:
                row["outcome"] = "timeout_client_backlog"  # waited longer than the timeout for a free worker
                return
            row["sent"] = now
            lines = self.order_lines(index if original is None else original)
            row["lines"] = len(lines) if lines else 0
            main = with_code({"quantity": self.args.quantity}, self.code, index if original is None else original)
            try:
                if lines:   # an order (--orders): the main event's places and 0-3 other events', in one hold
                    answer = self.http.post(f"{self.api}/orders", json={"lines": lines}, timeout=self.args.timeout,
                                            headers={"X-Customer-Id": customer, "Idempotency-Key": key})
                else:
                    answer = self.http.post(f"{self.api}/events/{self.event_id}/bookings",
                                            json=main, timeout=self.args.timeout,
                                            headers={"X-Customer-Id": customer, "Idempotency-Key": key})
            except Timeout:
                row["outcome"] = "timeout"
                return
            except ClientError as exc:
                row["outcome"] = "connection_error"
                row["error"] = type(exc).__name__
                return
            row["done"] = time.monotonic()
            row["status"] = answer.status_code
            code = None
            try:
                payload = answer.json()
            except ValueError:
                payload = {}
            if answer.status_code == 201:
                row["booking_id"] = payload.get("booking_id") or payload.get("order_id")
                row["replayed"] = answer.headers.get("Idempotent-Replayed") == "true"
                row["outcome"] = "201_replayed" if row["replayed"] else "201_new"
            elif answer.status_code >= 500:
                row["outcome"] = "5xx"
            elif answer.status_code == 429:
                row["outcome"] = "429"
                row["code"] = (payload.get("error") or {}).get("code") if isinstance(payload, dict) else None
            else:
                code = (payload.get("error") or {}).get("code") if isinstance(payload, dict) else None
                row["outcome"] = "409_sold_out" if (answer.status_code == 409 and code == "sold_out") else "other_4xx"
                row["code"] = code
        finally:
            with self.lock:
                self.attempts.append(row)
            if row["outcome"] == "201_new" and row["booking_id"] and self.pays(row["booking_id"]):
                self.pay_pool.submit(self.pay, row["booking_id"], customer)

    def order_lines(self, index: int) -> list[dict[str, Any]] | None:
        """With ``--orders``: whether attempt ``index`` (a retry: its original's) is an order, and
        its lines: the main event's quantity first, then one place of 0-3 side events (each roomy,
        so only the main event sells out). Decided from the index, so a retry repeats the body."""
        share = self.args.orders
        if share <= 0 or (index * 2654435761 % 1000) >= share * 1000:
            return None
        least, most = order_line_range(self.args.order_lines)
        extra = least - 1 + index % (most - least + 1)   # further lines beyond the main event's
        return [with_code({"event_id": self.event_id, "quantity": self.args.quantity}, self.code, index),
                *({"event_id": side, "quantity": 1} for side in self.side_events[:extra])]

    def create_code(self) -> None:
        """The run's one discount code on the main event (``--code-uses`` uses, 10 % off)."""
        self.code = f"BENCH{self.run_id.upper()}"
        answer = self.http.post(f"{self.api}/events/{self.event_id}/codes", timeout=30,
                                json={"code": self.code, "kind": "percent", "value": 10,
                                      "max_uses": self.args.code_uses},
                                headers={"X-Api-Key": ORGANIZER_KEY})
        answer.raise_for_status()

    def code_uses(self) -> int | None:
        """The code's ``uses`` as its organizer's list shows them (held and sold)."""
        answer = self.http.get(f"{self.api}/events/{self.event_id}/codes", timeout=60,
                               headers={"X-Api-Key": ORGANIZER_KEY})
        if answer.status_code != 200:
            return None
        found = [c for c in answer.json().get("codes", []) if str(c.get("code", "")).upper() == self.code]
        return int(found[0]["uses"]) if found else None

    def pays(self, booking_id: str) -> bool:
        """Whether this hold's customer goes on to pay (`--pay-share`, decided by the booking id)."""
        share = self.args.pay_share
        return share >= 1 or (share > 0 and uuid.UUID(booking_id).int % 1000 < share * 1000)

    def pay(self, booking_id: str, customer: str) -> None:
        row: dict[str, Any] = {"booking_id": booking_id, "customer": customer, "start_status": None,
                               "start_latency": None, "pay_latency": None, "paid": False}
        try:
            t0 = time.monotonic()
            while True:
                answer = self.http.post(f"{self.api}/bookings/{booking_id}/payment", timeout=self.args.timeout,
                                        headers={"X-Customer-Id": customer, "Idempotency-Key": f"pay-{booking_id}"})
                # a customer told 429 comes back after Retry-After (same key), for a bounded while
                if answer.status_code != 429 or time.monotonic() - t0 > self.args.pay_retry_seconds:
                    break
                row["throttled"] = row.get("throttled", 0) + 1
                time.sleep(float(answer.headers.get("Retry-After", "1")) * (1 + random.random()))
            row["start_latency"] = time.monotonic() - t0
            row["start_status"] = answer.status_code
            if answer.status_code != 201:
                return
            payment_id = answer.json()["payment_id"]
            t1 = time.monotonic()
            paid = self.http.post(f"{self.control_url}/payments/{payment_id}/pay", json={}, timeout=self.args.timeout)
            if paid.status_code != 200:
                raise RuntimeError(f"the sandbox answered {paid.status_code} to pay: {paid.content[:200]!r}")
            row["pay_latency"] = time.monotonic() - t1
            row["paid"] = True
        except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
            row["error"] = f"{type(exc).__name__}: {exc}"[:200]
        finally:
            with self.lock:
                self.payments.append(row)

    # -- the run ------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        args = self.args
        rng = random.Random(args.seed)
        event = self.create_event()
        self.event_id = event["event_id"]
        if args.code_uses:
            self.create_code()
        # the other events an order's further lines take a place of (--orders)
        self.side_events = [self.create_event(capacity=5000, label=f"-side{n}")["event_id"]
                            for n in range(3)] if args.orders > 0 else []
        total = int(round(args.rate * args.duration))
        self.pool = ThreadPoolExecutor(max_workers=args.workers, thread_name_prefix="attempt")
        self.pay_pool = ThreadPoolExecutor(max_workers=max(4, args.workers // 8), thread_name_prefix="pay")
        originals: list[tuple[int, str, str]] = []
        start = time.monotonic() + 0.2
        self.start = start
        lag_max = 0.0
        self.progress_stop = threading.Event()
        threading.Thread(target=self.progress, args=(start, total), name="progress", daemon=True).start()
        for index in range(total):
            scheduled = start + index / args.rate
            delay = scheduled - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                lag_max = max(lag_max, -delay)
            if originals and rng.random() < args.retry_share:
                # a client retry: repeats one of the originals of the last two seconds
                window = max(1, int(args.rate * 2))
                original, customer, key = originals[rng.randrange(max(0, len(originals) - window), len(originals))]
                self.pool.submit(self.attempt, index, scheduled, customer, key, original)
            else:
                customer, key = f"bench-{self.run_id}-c{index}", f"bench-{self.run_id}-k{index}"
                originals.append((index, customer, key))
                self.pool.submit(self.attempt, index, scheduled, customer, key, None)
        offered_end = time.monotonic()
        self.pool.shutdown(wait=True)  # bounded: every attempt ends by its timeout
        self.progress_stop.set()
        load_end = time.monotonic()
        self.pay_pool.shutdown(wait=True)
        pay_end = time.monotonic()
        confirmation = self.wait_for_confirmations()
        return self.summarise(total, start, offered_end, load_end, pay_end, lag_max, confirmation)

    def warm_up(self, workers: int) -> None:
        """Start the hold function's execution environments before the clock runs (each cold start
        takes seconds on a busy 2-core machine; AWS would start them in parallel, elsewhere)."""
        print(f"==> warming {workers} execution environments of the hold function", flush=True)
        barrier = threading.Barrier(workers)

        def one(_: int) -> int:
            barrier.wait()
            return self.http.get(f"{self.api}/bookings/{uuid.uuid4()}", timeout=120,
                                 headers={"X-Customer-Id": "bench-warm-up"}).status_code

        for _ in range(2):
            with ThreadPoolExecutor(max_workers=workers) as warm:
                list(warm.map(one, range(workers)))
        # Then holds on an event of their own: each environment's first hold path (its first
        # transaction, Step Functions bucket, snapshot) and DynamoDB Local's JIT for transactions
        # are paid before the clock, as a sale's first seconds on AWS would not pay them.
        warm_event = self.create_event(capacity=4 * workers, label="-warm-up")["event_id"]

        def hold(i: int) -> int:
            barrier.wait()
            return self.http.post(f"{self.api}/events/{warm_event}/bookings", json={"quantity": 1}, timeout=120,
                                  headers={"X-Customer-Id": f"bench-warm-up-{i}",
                                           "Idempotency-Key": f"warm-{self.run_id}-{i}"}).status_code

        for round_ in range(2):
            with ThreadPoolExecutor(max_workers=workers) as warm:
                list(warm.map(hold, range(round_ * workers, (round_ + 1) * workers)))

    def progress(self, start: float, total: int, every: float = 5.0) -> None:
        """A line every few seconds: offered so far, answered, the status mix and the last window's latency."""
        seen = 0
        while not self.progress_stop.wait(every):
            with self.lock:
                rows = list(self.attempts)
            now = time.monotonic()
            offered = min(total, int((now - start) * self.args.rate))
            mix = Counter(r["outcome"] for r in rows)
            window = sorted(r["done"] - r["sent"] for r in rows[seen:] if r["done"] is not None)
            seen = len(rows)
            p = percentiles(window)
            print(f"  [{now - start:5.1f}s] offered {offered:6d}  answered {len(rows):6d}  "
                  f"201 {mix['201_new'] + mix['201_replayed']:5d}  409 {mix['409_sold_out']:5d}  429 {mix['429']:5d}  "
                  f"5xx {mix['5xx']:3d}  timeouts {mix['timeout'] + mix['timeout_client_backlog']:3d}  "
                  f"latency p50 {p['p50']} p95 {p['p95']} ms", flush=True)

    def wait_for_confirmations(self) -> dict[str, Any]:
        paid = [p for p in self.payments if p["paid"]]
        deadline = time.monotonic() + self.args.confirm_timeout
        t0 = time.monotonic()
        counts: dict[str, int] = {}
        expected = len(paid) * self.args.quantity
        while True:
            try:
                counts = self.http.get(f"{self.api}/events/{self.event_id}", timeout=60).json()["counts"]
            except Exception:  # noqa: BLE001
                counts = counts or {}
            if counts.get("sold", 0) >= expected or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        waited = time.monotonic() - t0
        if self.before_final_reads is not None:
            self.before_final_reads()
        # the bookings themselves, a few at a time (bounded by the number of holds)
        statuses: Counter[str] = Counter()
        latencies: list[float] = []

        def fetch(row: dict[str, Any]) -> None:
            t = time.monotonic()
            try:
                answer = self.http.get(f"{self.api}/bookings/{row['booking_id']}", timeout=30,
                                       headers={"X-Customer-Id": row["customer"]})
                status = answer.json().get("status", f"http_{answer.status_code}")
            except Exception as exc:  # noqa: BLE001
                status = f"error_{type(exc).__name__}"
            with self.lock:
                statuses[status] += 1
                latencies.append(time.monotonic() - t)

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(fetch, [a for a in self.attempts if a["outcome"] == "201_new"]))
        return {"counts": counts, "waited_s": round(waited, 2), "paid": len(paid),
                "booking_statuses": dict(statuses), "get_latencies": latencies}

    def summarise(self, total: int, start: float, offered_end: float, load_end: float, pay_end: float,
                  lag_max: float, confirmation: dict[str, Any]) -> dict[str, Any]:
        args = self.args
        attempts = sorted(self.attempts, key=lambda a: a["i"])
        outcomes = Counter(a["outcome"] for a in attempts)
        for name in ("201_new", "201_replayed", "409_sold_out", "429", "other_4xx", "5xx", "timeout",
                     "timeout_client_backlog", "connection_error"):
            outcomes.setdefault(name, 0)
        seconds = int(math.ceil(max(args.duration, (load_end - start)))) + 1
        offered = [0] * seconds
        achieved = [0] * seconds
        for a in attempts:
            offered[min(seconds - 1, int(a["scheduled"] - start))] += 1
            if a["done"] is not None:
                achieved[min(seconds - 1, max(0, int(a["done"] - start)))] += 1
        mix_names = ("201_new", "201_replayed", "409_sold_out", "429", "other_4xx", "5xx")
        mix = {name: [0] * seconds for name in mix_names + ("timeout",)}
        by_second: list[list[float]] = [[] for _ in range(seconds)]
        for a in attempts:
            if a["done"] is not None:
                second = min(seconds - 1, max(0, int(a["done"] - start)))
                by_second[second].append(a["done"] - a["sent"])
                if a["outcome"] in mix:
                    mix[a["outcome"]][second] += 1
            elif a["outcome"] in ("timeout", "timeout_client_backlog", "connection_error"):
                mix["timeout"][min(seconds - 1, int(a["scheduled"] - start))] += 1
        latency_over_time = {q: [percentiles(v)[q] for v in by_second] for q in ("p50", "p95", "p99")}
        answered = [a for a in attempts if a["done"] is not None]
        achieved_rate = len(answered) / max(1e-9, (max(a["done"] for a in answered) - start)) if answered else 0.0

        latency = {
            HOLD_ENDPOINT + " (from send)": percentiles([a["done"] - a["sent"] for a in answered]),
            HOLD_ENDPOINT + " (from schedule)": percentiles([a["done"] - a["scheduled"] for a in answered]),
            PAY_ENDPOINT: percentiles([p["start_latency"] for p in self.payments if p["start_latency"] is not None]),
            SANDBOX_PAY: percentiles([p["pay_latency"] for p in self.payments if p["pay_latency"] is not None]),
            GET_BOOKING: percentiles(confirmation.pop("get_latencies")),
        }
        by_outcome_latency = {name: percentiles([a["done"] - a["sent"] for a in answered if a["outcome"] == name])
                              for name in ("201_new", "201_replayed", "409_sold_out")}
        # --orders: single holds beside orders of 1-4 lines (their latency, how each ended)
        by_lines: dict[str, Any] = {}
        if args.orders > 0:
            for lines in sorted({a.get("lines", 0) for a in attempts}):
                rows = [a for a in answered if a.get("lines", 0) == lines]
                by_lines["single hold" if lines == 0 else f"order of {lines} line(s)"] = {
                    "attempts": sum(1 for a in attempts if a.get("lines", 0) == lines),
                    "outcomes": dict(Counter(a["outcome"] for a in attempts if a.get("lines", 0) == lines)),
                    "latency_ms": percentiles([a["done"] - a["sent"] for a in rows]),
                    "new_latency_ms": percentiles([a["done"] - a["sent"] for a in rows if a["outcome"] == "201_new"])}

        # correctness: one booking per idempotency key, replays answer the original's booking
        by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for a in attempts:
            by_key[a["key"]].append(a)
        replay_mismatches = 0
        keys_with_two_new = 0
        for rows in by_key.values():
            ids = {a["booking_id"] for a in rows if a["booking_id"]}
            replay_mismatches += max(0, len(ids) - 1)
            keys_with_two_new += sum(1 for a in rows if a["outcome"] == "201_new") > 1
        new_ids = {a["booking_id"] for a in attempts if a["outcome"] == "201_new"}
        counts = confirmation["counts"]
        held_sold = counts.get("held", 0) + counts.get("sold", 0)
        booked_places = len(new_ids) * args.quantity
        oversold = max(0, held_sold - args.capacity, booked_places - args.capacity)
        statuses = confirmation["booking_statuses"]
        confirmed = statuses.get("CONFIRMED", 0)
        payments_started = sum(1 for p in self.payments if p["start_status"] == 201)
        window = max(1e-9, max((a["done"] for a in answered), default=start) - start)
        served = sum(1 for a in answered if a["outcome"] in ("201_new", "201_replayed", "409_sold_out"))
        new_holds = [a for a in answered if a["outcome"] == "201_new"]
        # Holds can only be made while places last: once the event answers sold out, the rate of new
        # holds is over the time until the last one (on 500 places a sale is over in seconds).
        sold_out = any(a["outcome"] == "409_sold_out" for a in answered)
        holds_window = max(1e-9, max(a["done"] for a in new_holds) - start) if (sold_out and new_holds) else window
        result = {
            "served_per_second": round(served / window, 1),
            "new_holds_per_second": round(len(new_holds) / holds_window, 1),
            "new_holds_window_s": round(holds_window, 2),
            "sold_out": sold_out,
            "config": {"api": self.api, "rate": args.rate, "duration_s": args.duration, "capacity": args.capacity,
                       "quantity": args.quantity, "retry_share": args.retry_share, "workers": args.workers,
                       "timeout_s": args.timeout, "seed": args.seed, "event_id": self.event_id},
            "attempts": total,
            "offered_rate": args.rate,
            "achieved_rate": round(achieved_rate, 2),
            "scheduler_max_lag_s": round(lag_max, 3),
            "durations_s": {"offered": round(offered_end - start, 2), "until_last_answer": round(load_end - start, 2),
                            "payments_drained": round(pay_end - start, 2),
                            "confirmation_wait": confirmation["waited_s"]},
            "rates_per_second": {"offered": offered, "achieved": achieved, "status_mix": mix,
                                 "latency_ms": latency_over_time},
            "outcomes": dict(outcomes),
            "latency_ms": latency,
            "hold_latency_by_outcome_ms": by_outcome_latency,
            "orders": by_lines,
            "payments": {"started": payments_started, "paid_in_sandbox": confirmation["paid"],
                         "start_failures": Counter(str(p["start_status"]) for p in self.payments
                                                   if p["start_status"] != 201)},
            "confirmed": confirmed,
            "booking_statuses": statuses,
            "event_counts": counts,
            "correctness": {"new_bookings": len(new_ids), "booked_places": booked_places,
                            "held_plus_sold": held_sold, "capacity": args.capacity,
                            "oversold_places": oversold, "replay_mismatches": replay_mismatches,
                            "keys_with_two_new_bookings": keys_with_two_new,
                            "counts_consistent": counts.get("available", 0) + held_sold == args.capacity},
        }
        result["payments"]["start_failures"] = dict(result["payments"]["start_failures"])
        if args.code_uses:
            result["code"] = self.code_summary(attempts, len(new_ids), confirmed)
        return result

    def code_summary(self, attempts: list[dict[str, Any]], holds: int, confirmed: int) -> dict[str, Any]:
        """``--code-uses``: every attempt named the one code, so every new hold and order used it;
        its confirmed uses must be exactly its ``max_uses`` (every hold is paid, none lapses in the
        run), never more, and the organizer's list must show as many."""
        answers = Counter(a["outcome"] if a["status"] is None else
                          f"{a['status']} {'replayed' if a['replayed'] else 'new'}" if a["status"] == 201 else
                          f"{a['status']} {a.get('code') or ''}".strip() for a in attempts)
        return {"code": self.code, "max_uses": self.args.code_uses, "answers": dict(answers.most_common()),
                "holds_using_it": holds, "confirmed_uses": confirmed, "uses_listed": self.code_uses(),
                "oversold_uses": max(0, holds - self.args.code_uses, confirmed - self.args.code_uses)}


# ----------------------------------------------------------------------------------------------
# Where the time goes (server side, local target only)
# ----------------------------------------------------------------------------------------------


def _by_op(recs: list[dict[str, Any]]) -> dict[str, list[float]]:
    ops: dict[str, list[float]] = defaultdict(list)
    for rec in recs:
        for call in rec["calls"]:
            ops[f"{call['service']}:{call['op']}"].append(call["wall"])
    return ops


def server_breakdown(snapshot: dict[str, Any], window: float) -> dict[str, Any]:
    records = snapshot["records"]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        groups[rec["route"] or rec["function"]].append(rec)
    per: dict[str, Any] = {}
    busy = 0.0
    for name, recs in sorted(groups.items(), key=lambda kv: -sum(r["wall"] for r in kv[1])):
        walls = [r["wall"] for r in recs]
        aws = [sum(c["wall"] for c in r["calls"] if c["service"] != "provider") for r in recs]
        provider = [sum(c["wall"] for c in r["calls"] if c["service"] == "provider") for r in recs]
        cpus = [r["cpu"] for r in recs]
        busy += sum(walls)
        per[name] = {
            "invocations": len(recs),
            "handler_wall_ms_median": round(statistics.median(walls) * 1000, 1),
            "handler_cpu_ms_median": round(statistics.median(cpus) * 1000, 1),
            "aws_calls_per_invocation": round(statistics.mean(len([c for c in r["calls"] if c["service"] != "provider"])
                                                              for r in recs), 2),
            "aws_call_wall_ms_median": round(statistics.median(aws) * 1000, 1),
            "provider_wall_ms_median": round(statistics.median(provider) * 1000, 1),
            "lock_wait_ms_median": round(statistics.median(r["lock_wait"] for r in recs) * 1000, 1),
            "lock_wait_ms_p95": percentiles([r["lock_wait"] for r in recs])["p95"],
            "busy_share_of_run": round(sum(walls) / max(window, 1e-9), 3),
            # from taking an environment to giving it back, as the stack's pool saw it: the handler
            # plus the hand-over both ways (pipe, pickling, the stack process's turn to read it)
            **({"environment_ms_median": round(statistics.median(r["occupied"] for r in recs) * 1000, 1),
                "environment_busy_share_of_run": round(sum(r["occupied"] for r in recs) / max(window, 1e-9), 3)}
               if all("occupied" in r for r in recs) else {}),
            "aws_op_ms_median": {op: round(statistics.median(ws) * 1000, 1) for op, ws in sorted(_by_op(recs).items())},
            "aws_op_calls": {op: len(ws) for op, ws in sorted(_by_op(recs).items())},
        }
    # every DynamoDB request the functions made (the hold's transaction is one kind among them)
    dynamodb = Counter(call["op"] for rec in records for call in rec["calls"] if call["service"] == "dynamodb")
    return {"by_route": per, "invocation_lock_busy_share": round(busy / max(window, 1e-9), 3),
            "window_s": round(window, 1), "calls_outside_handlers": snapshot["outside"],
            "dynamodb_requests": dict(dynamodb.most_common())}


def cpu_per_new_hold(result: dict[str, Any]) -> dict[str, float] | None:
    """Milliseconds of CPU per new hold in each process group over the run (the stack's process,
    each function's environments, DynamoDB Local, the sandbox, the load generator), largest first.
    Unlike a rate, it does not move with what else the machine runs; with the bare transaction's
    own figure it says what share of a hold's cost is the transaction."""
    processes = (result.get("stack_cpu") or {}).get("processes")
    holds = result["outcomes"]["201_new"]
    if not processes or not holds:
        return None
    groups = {name.removeprefix("workers "): cpu for name, cpu in processes.items() if cpu}
    groups["load generator"] = result.get("load_generator_cpu_s", 0.0)
    split = {name: round(cpu * 1000 / holds, 2) for name, cpu in sorted(groups.items(), key=lambda kv: -kv[1])}
    split["total"] = round(sum(groups.values()) * 1000 / holds, 2)
    return split


def with_code(body: dict[str, Any], code: str | None, index: int) -> dict[str, Any]:
    """The main event's body (a hold's, an order's line) naming the run's one code (``--code-uses``),
    written in upper or lower case by turns (codes are case-insensitive); decided from the attempt's
    index, so a retry repeats the body."""
    return body if code is None else {**body, "code": code if index % 2 else code.lower()}


def order_line_range(text: str) -> tuple[int, int]:
    """``--order-lines`` ("2-4", or "3" for one size): the least and most lines of an order, each
    1-4 (the main event's line and up to three side events')."""
    low, _, high = str(text).partition("-")
    least, most = int(low), int(high or low)
    if not 1 <= least <= most <= 4:
        raise ValueError(f"--order-lines is a range within 1-4, not {text!r}")
    return least, most


def explain(result: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for kind, figures in (result.get("orders") or {}).items():
        latency, new = figures["latency_ms"], figures["new_latency_ms"]
        lines.append(f"{kind}: {figures['attempts']} attempts, {figures['outcomes']}; answered in p50 "
                     f"{latency['p50']} ms / p95 {latency['p95']} ms (new holds p50 {new['p50']} ms, p95 {new['p95']} ms).")
    offered, achieved = result["offered_rate"], result["achieved_rate"]
    if achieved < 0.95 * offered:
        lines.append(f"SHORTFALL: offered {offered}/s, achieved {achieved}/s answered "
                     f"({achieved / offered:.0%}). This machine's emulator cannot sustain the offered rate.")
    server = result.get("server")
    if server:
        hold = server["by_route"].get("POST /events/{event_id}/bookings")
        pools = server.get("pools") or {}
        if pools:
            busy = {name: p for name, p in pools.items() if p["invocations"]}
            lines.append("Functions run in worker processes: " + ", ".join(
                f"{name} {p['workers']}/{p['concurrency']} workers ({p['cold_starts']} cold starts, "
                f"{p['throttles']} throttled)" for name, p in busy.items()))
            wait = "waited for a free worker"
        else:
            lines.append(f"The stack runs one Lambda invocation at a time: the invocation lock was busy "
                         f"{server['invocation_lock_busy_share']:.0%} of the run, so its ceiling is about "
                         f"1 / (handler time) per second.")
            wait = "waited for the invocation lock"
        if hold:
            lines.append(f"A hold attempt (median over {hold['invocations']}): {hold['handler_wall_ms_median']} ms in the "
                         f"handler, of which {hold['aws_call_wall_ms_median']} ms waiting on emulator calls "
                         f"({hold['aws_calls_per_invocation']} calls) and {hold['handler_cpu_ms_median']} ms CPU; it "
                         f"{wait} {hold['lock_wait_ms_median']} ms (p95 {hold['lock_wait_ms_p95']} ms).")
    requests = (server or {}).get("dynamodb_requests")
    holds = result["outcomes"]["201_new"]
    if requests and holds:
        total, tx = sum(requests.values()), requests.get("TransactWriteItems", 0)
        lines.append(f"DynamoDB requests from the functions during the run: {total} ({tx} transactions), "
                     f"{total / holds:.1f} per new hold ({tx / holds:.1f} transactions); the holds' own "
                     f"transactions are {holds / max(tx, 1):.0%} of the transactions: the rest (payments, "
                     f"confirmations, outbox, reconciliation, reads) shares DynamoDB Local with them.")
    if result.get("bare_transactions"):
        bare = result["bare_transactions"]
        lines.append(f"Bare DynamoDB Local transactions of the hold's shape ({', '.join(bare['shape'])}) from "
                     f"{bare['clients']} clients, {bare['hot_items']} pool counters: {bare['per_second']}/s (mean of "
                     + ", ".join(f"{r['per_second']} {r['when']}" for r in bare.get("runs", [])) +
                     f"); served attempts/s to that: {result['ratio_to_bare']}, new holds/s"
                     + (f" (over the {result['new_holds_window_s']} s the places lasted)" if result.get("sold_out") else "")
                     + f": {result.get('holds_ratio_to_bare')}.")
    split = result.get("cpu_ms_per_new_hold")
    if split:
        top = ", ".join(f"{name} {ms}" for name, ms in list(split.items())[:6] if name != "total")
        line = f"CPU per new hold, all processes: {split['total']} ms ({top}, ...)"
        bare_cpu = result.get("cpu_ms_per_bare_transaction")
        if bare_cpu:
            line += (f"; a bare transaction costs {bare_cpu['total']} ms (DynamoDB Local {bare_cpu['DynamoDB Local']}, "
                     f"its client {bare_cpu['clients']}): {result['cpu_ratio_to_bare']} of a hold's")
        sale = result.get("cpu_ms_per_new_hold_before_final_reads")
        if sale:
            line += (f"; before the bench read every booking back, {sale['total']} ms per new hold"
                     + (f" (ratio {result['cpu_ratio_to_bare_before_final_reads']})" if bare_cpu else ""))
        lines.append(line + ".")
    elif achieved < 0.95 * offered:
        lines.append("Server-side breakdown is only available when the bench starts the stack itself.")
    return lines


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    rates = result["rates_per_second"]
    seconds = list(range(len(rates["offered"])))
    ax = axes[0][0]
    ax.plot(seconds, rates["offered"], label="offered (scheduled)")
    ax.plot(seconds, rates["achieved"], label="answered")
    ax.set_xlabel("second of run")
    ax.set_ylabel("booking attempts / s")
    ax.set_title("Offered vs answered per second")
    ax.legend()

    ax = axes[0][1]
    bottom = [0] * len(seconds)
    for name, values in rates["status_mix"].items():
        if any(values):
            ax.bar(seconds, values, bottom=bottom, label=name, width=1.0)
            bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xlabel("second of run (by answer)")
    ax.set_ylabel("answers / s")
    ax.set_title("Status mix over time")
    ax.legend(fontsize=7)

    ax = axes[1][0]
    for q, values in rates["latency_ms"].items():
        ax.plot(seconds, [v if v is not None else float("nan") for v in values], label=q)
    ax.set_xlabel("second of run (by answer)")
    ax.set_ylabel("ms from send")
    ax.set_yscale("log")
    ax.set_title("Hold latency percentiles over time")
    ax.legend()

    ax = axes[1][1]
    ax.axis("off")
    bare = result.get("bare_transactions") or {}
    c = result["correctness"]
    lines = [f"attempts {result['attempts']}, answered {sum(rates['achieved'])}",
             f"served (201/409) {result['served_per_second']}/s, new holds {result['new_holds_per_second']}/s"
             + (f" (while places lasted, {result.get('new_holds_window_s')} s)" if result.get("sold_out") else ""),
             f"outcomes: " + ", ".join(f"{k} {v}" for k, v in result["outcomes"].items() if v),
             f"oversold {c['oversold_places']}, replay mismatches {c['replay_mismatches']}",
             f"paid {result['payments']['paid_in_sandbox']}, confirmed {result['confirmed']}"]
    if bare:
        lines.append(f"bare DynamoDB Local transactions ({bare['clients']} clients): {bare['per_second']}/s")
        lines.append(f"served / bare = {result.get('ratio_to_bare')}, new holds / bare = "
                     f"{result.get('holds_ratio_to_bare')}")
    ax.text(0.02, 0.95, "\n".join(lines), va="top", family="monospace", fontsize=9)
    fig.suptitle(f"Holdfast bench: {result['offered_rate']}/s offered for {result['config']['duration_s']} s, "
                 f"capacity {result['config']['capacity']}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=300.0, help="offered booking attempts per second")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of offered load")
    parser.add_argument("--capacity", type=int, default=500, help="places in the event")
    parser.add_argument("--quantity", type=int, default=1, help="places per booking attempt")
    parser.add_argument("--retry-share", type=float, default=0.2, help="share of attempts that repeat a key")
    parser.add_argument("--hold-seconds", type=int, default=3600, help="hold time (no expiry during the run)")
    parser.add_argument("--workers", type=int, default=256, help="client threads (bounded)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="per-request timeout, seconds (API Gateway answers 504 at 29)")
    parser.add_argument("--concurrency", type=int, default=4, help="worker processes per function")
    parser.add_argument("--hold-concurrency", type=int, default=HOLD_CONCURRENCY,
                        help="worker processes of the hold function (BookingsApiFunction); 0: --concurrency")
    parser.add_argument("--in-process", action="store_true",
                        help="run the handlers in the stack's process, one at a time (the old local stack)")
    parser.add_argument("--moto-dynamodb", action="store_true", help="DynamoDB on moto instead of DynamoDB Local")
    parser.add_argument("--sandbox-in-stack", action="store_true",
                        help="run the payment sandbox in the stack's process (before issue 15's last round) "
                             "instead of a process of its own")
    parser.add_argument("--webhook-workers", type=int, default=4,
                        help="notifications the sandbox delivers at once (its own process only)")
    parser.add_argument("--pay-share", type=float, default=1.0,
                        help="share of new holds whose customer pays (the rest let the hold lapse)")
    parser.add_argument("--pay-retry-seconds", type=float, default=60.0,
                        help="how long a payment start told 429 keeps retrying after Retry-After")
    parser.add_argument("--bare-seconds", type=float, default=10.0,
                        help="seconds of bare DynamoDB Local transactions before and after the load (0: skip)")
    parser.add_argument("--confirm-timeout", type=float, default=120.0, help="bounded wait for confirmations")
    parser.add_argument("--orders", type=float, default=0.0,
                        help="share of attempts that are orders (POST /orders) of 1-4 lines: the main event's "
                             "places and one place of up to three other events each")
    parser.add_argument("--order-lines", default="1-4",
                        help="with --orders: how many lines an order has, a range within 1-4 (\"2-4\": mixed "
                             "orders of two to four lines), spread evenly over the orders")
    parser.add_argument("--code-uses", type=int, default=0,
                        help="every attempt names one discount code with this max_uses (0: none); the run "
                             "checks that exactly that many confirmed bookings and orders use it")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--api", help="target a running stack (make run) instead of starting one")
    parser.add_argument("--sandbox-control", help="the sandbox control URL, with --api")
    parser.add_argument("--out", default=str(REPO / "bench-results"), help="directory for the JSON and PNG")
    parser.add_argument("--sample-stack", action="store_true",
                        help="CPU-sample the stack process's threads during the load (devstack/measure/sampler.py)")
    parser.add_argument("--mode", choices=("holds", "doors"), default="holds",
                        help="doors: scans at one event's door instead of holds (devstack/measure/bench_doors.py)")
    parser.add_argument("--tickets", type=int, default=5000, help="with --mode doors: confirmed tickets scanned")
    parser.add_argument("--double-share", type=float, default=0.2,
                        help="with --mode doors: share of the tickets scanned a second time (a new pass id)")
    parser.add_argument("--profile", action="store_true", help="per-operation cost instead (devstack/measure/costs.py)")
    parser.add_argument("--samples", type=int, default=10, help="with --profile: samples per operation")
    args = parser.parse_args(argv)
    if bool(args.api) != bool(args.sandbox_control):
        parser.error("--api and --sandbox-control go together")
    if not 0 <= args.retry_share < 1:
        parser.error("--retry-share must be in [0, 1)")
    try:
        order_line_range(args.order_lines)
    except ValueError as error:
        parser.error(str(error))
    return args


def run(args: argparse.Namespace) -> dict[str, Any]:
    _paths()
    target = None
    if args.api:
        api, control = args.api, args.sandbox_control
    else:
        print("==> starting the payment sandbox and the local stack (child process)", flush=True)
        target = LocalTarget({"workers": not args.in_process, "concurrency": args.concurrency,
                              "dynamodb": "moto" if args.moto_dynamodb else "local",
                              "hold_concurrency": args.hold_concurrency,
                              "sandbox_in_stack": args.sandbox_in_stack, "webhook_workers": args.webhook_workers,
                              "sample_stack": args.sample_stack})
        urls = target.start()
        api, control = urls["api"], urls["control"]
    try:
        if args.mode == "doors":
            return _doors(target, urls if target else {}, api, control, args)
        print(f"==> {args.rate:g} attempts/s for {args.duration:g} s against {api} "
              f"(capacity {args.capacity}, retries {args.retry_share:.0%})", flush=True)
        load = LoadRun(api, control, args)
        if target and not args.in_process:
            load.warm_up(args.hold_concurrency or args.concurrency)
        bare_runs: list[dict[str, Any]] = []
        if target and urls.get("dynamodb") and args.bare_seconds > 0:
            bare_runs.append(_bare(target, urls["dynamodb"], args, "before the load"))
        if target:
            target.call("reset")
        t0, cpu0 = time.monotonic(), time.process_time()
        sale_cpu: dict[str, Any] = {}
        if target and args.sample_stack:
            # the sale's CPU apart from the bench's own check (a GET of every booking afterwards)
            load.before_final_reads = lambda: sale_cpu.update(
                processes=target.call("cpu"), load_generator=round(time.process_time() - cpu0, 1))
        result = load.run()
        result["load_generator_cpu_s"] = round(time.process_time() - cpu0, 1)  # this process: clients, payments
        if target:
            snapshot = target.call("stats")
            result["server"] = server_breakdown(snapshot, time.monotonic() - t0)
            result["server"]["pools"] = snapshot.get("pools", {})
            if snapshot.get("stack_cpu"):
                result["stack_cpu"] = snapshot["stack_cpu"]
            if bare_runs:
                bare_runs.append(_bare(target, urls["dynamodb"], args, "after the load"))
                result["bare_transactions"] = bare = dict(bare_runs[-1])
                # the mean of the two, so neither moment's load on a shared machine decides alone
                bare["per_second"] = round(sum(r["per_second"] for r in bare_runs) / len(bare_runs), 1)
                bare["runs"] = [{"when": r["when"], "per_second": r["per_second"], "failed": r["failed"]}
                                for r in bare_runs]
                if bare["per_second"]:
                    result["ratio_to_bare"] = round(result["served_per_second"] / bare["per_second"], 2)
                    result["holds_ratio_to_bare"] = round(result["new_holds_per_second"] / bare["per_second"], 2)
        split = cpu_per_new_hold(result)
        if split:
            result["cpu_ms_per_new_hold"] = split
            bare_cpu = [r.get("cpu_ms_per_transaction") for r in bare_runs if r.get("cpu_ms_per_transaction")]
            if bare_cpu:
                result["cpu_ms_per_bare_transaction"] = {
                    key: round(statistics.median(c[key] for c in bare_cpu), 2) for key in bare_cpu[0]}
                result["cpu_ratio_to_bare"] = round(result["cpu_ms_per_bare_transaction"]["total"] / split["total"], 2)
        if split and sale_cpu.get("processes"):
            sale = cpu_per_new_hold({**result, "stack_cpu": {"processes": sale_cpu["processes"]},
                                     "load_generator_cpu_s": sale_cpu["load_generator"]})
            result["cpu_ms_per_new_hold_before_final_reads"] = sale
            if sale and result.get("cpu_ms_per_bare_transaction"):
                result["cpu_ratio_to_bare_before_final_reads"] = round(
                    result["cpu_ms_per_bare_transaction"]["total"] / sale["total"], 2)
        result["where_the_time_goes"] = explain(result)
        result["machine"] = {"cpus": multiprocessing.cpu_count(), "python": sys.version.split()[0],
                             "target": "remote (--api)" if args.api else "local stack in a child process"}
        return result
    finally:
        if target:
            target.stop()


def _doors(target: "LocalTarget | None", urls: dict[str, str], api: str, control: str,
           args: argparse.Namespace) -> dict[str, Any]:
    """The door mode: scans at one door, then bare transactions of the sampled scan's shape."""
    from devstack.measure import bench_bare, bench_doors

    print(f"==> door mode: {args.tickets} tickets, {args.rate:g} scans/s for {args.duration:g} s against {api} "
          f"({args.double_share:.0%} scanned twice)", flush=True)
    result = bench_doors.DoorRun(api, control, args).run()
    if target and urls.get("dynamodb") and args.bare_seconds > 0:
        sample = target.call(("sample", "DoorsApiFunction", bench_doors.SCAN_ROUTE))
        print(f"==> bare DynamoDB Local transactions of the scan's shape, {sample['workers']} clients, "
              f"{args.bare_seconds:g} s", flush=True)
        bare = bench_bare.measure(urls["dynamodb"], bench_doors.bare_shape(sample["transaction"]), sample["workers"],
                                  args.bare_seconds, server_cpu=lambda: target.call("dynamodb_cpu"))
        result["bare_transactions"] = {k: bare.get(k) for k in ("per_second", "failed", "clients")}
        if bare.get("per_second"):
            result["ratio_to_bare"] = round(result["scans_per_second"] / bare["per_second"], 2)
    result["machine"] = {"cpus": multiprocessing.cpu_count(), "python": sys.version.split()[0]}
    return result


def _bare(target: "LocalTarget", endpoint: str, args: argparse.Namespace, when: str) -> dict[str, Any]:
    """Bare transactions of the sampled hold's shape (devstack/measure/bench_bare.py), as many pools as the event."""
    from devstack.measure import bench_bare
    from holdfast.domain.inventory import pool_sizes

    sample = target.call("sample")
    print(f"==> bare DynamoDB Local transactions of the hold's shape, {sample['workers']} clients, "
          f"{args.bare_seconds:g} s, {when}", flush=True)
    bare = bench_bare.measure(endpoint, sample["transaction"], sample["workers"], args.bare_seconds,
                              hot_items=len(pool_sizes(args.capacity)), server_cpu=lambda: target.call("dynamodb_cpu"))
    print(f"    {bare['per_second']}/s ({bare['failed']} failed)", flush=True)
    return {**bare, "when": when}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.profile:
        _paths()
        from devstack.measure import costs

        return costs.main(args)
    result = run(args)
    if args.mode == "doors":
        from devstack.measure.bench_doors import passed

        print(json.dumps(result, indent=2, default=str))
        print(f"==> {'PASS' if passed(result) else 'FAIL'}: door mode")
        return 0 if passed(result) else 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    json_path, png_path = out / f"bench-{stamp}.json", out / f"bench-{stamp}.png"
    json_path.write_text(json.dumps(result, indent=2, default=str))
    plot(result, png_path)
    result["files"] = {"json": str(json_path), "png": str(png_path)}
    json_path.write_text(json.dumps(result, indent=2, default=str))
    print(json.dumps({k: result.get(k) for k in ("attempts", "offered_rate", "achieved_rate", "served_per_second",
                                                "new_holds_per_second", "bare_transactions", "ratio_to_bare",
                                                "holds_ratio_to_bare",
                                                "outcomes", "confirmed", "payments", "correctness", "code", "latency_ms",
                                                "durations_s")}, indent=2, default=str))
    for line in result["where_the_time_goes"]:
        print(line)
    print(f"==> wrote {json_path} and {png_path}")
    c, o = result["correctness"], result["outcomes"]
    ok = c["oversold_places"] == 0 and c["replay_mismatches"] == 0
    unanswered = o["5xx"] + o["timeout"] + o["timeout_client_backlog"] + o["connection_error"]
    print(f"==> {'PASS' if ok and not unanswered else 'FAIL'}: oversold {c['oversold_places']}, replay mismatches "
          f"{c['replay_mismatches']}, 5xx {o['5xx']}, timeouts {o['timeout'] + o['timeout_client_backlog']}, "
          f"connection errors {o['connection_error']}; paid {result['payments']['paid_in_sandbox']}, "
          f"confirmed {result['confirmed']}")
    ok = ok and not unanswered
    if args.code_uses:
        code = result["code"]
        exact = code["confirmed_uses"] == code["max_uses"] == code["uses_listed"] and not code["oversold_uses"]
        print(f"==> code {code['code']} (max_uses {code['max_uses']}): {result['achieved_rate']} attempts/s answered "
              f"of {result['offered_rate']:g} offered; answers {code['answers']}")
        print(f"==> {'PASS' if exact else 'FAIL'}: holds using it {code['holds_using_it']}, confirmed uses "
              f"{code['confirmed_uses']}, uses listed {code['uses_listed']}, oversold uses {code['oversold_uses']}")
        ok = ok and exact
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
