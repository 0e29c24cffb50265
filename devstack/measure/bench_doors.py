"""`make bench`'s door mode (issue 32): one door of one event scanned at a steady offered rate on
the local stack, beside bare DynamoDB Local transactions of a scan's own shape in the same run.

The event has ``--tickets`` places sold and paid (bookings of 50, confirmed through the sandbox)
before the clock starts. The offered load is ``rate x duration`` scans, in this order of kinds,
interleaved at random but each ticket's first scan before its second:

* each ticket's first scan (a new pass id): admitted, once;
* a second new scan, with its own pass id, of ``--double-share`` of the tickets: never admitted
  (``already_checked_in``);
* the rest of the slots: a scan's pass id sent again (a door resending after a lost answer),
  which must get the first answer back, byte for byte.

Every scan must be answered: 200, or 429 with ``Retry-After`` (nothing done; counted apart). The
run fails on an unanswered scan, a ticket admitted twice, a repeat answered otherwise than first,
or a check-in count that is not the number of tickets admitted.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from devstack.measure.bench_client import LeanHttp
from devstack.sample_events import days_ahead

SCAN_ROUTE = "POST /events/{event_id}/doors/{door_id}/scan"
#: the local stack's organizer (devstack/measure/bench.py's, seeded by the stack)
ORGANIZER_KEY = "local-organizer-key"
PER_BOOKING = 50


def _ok(answer: Any, status: int = 200) -> dict[str, Any]:
    if answer.status_code != status:
        raise RuntimeError(f"{answer.status_code}: {answer.content[:300]!r}")
    return answer.json()


def _until_ok(call: Any, status: int = 200, attempts: int = 40) -> dict[str, Any]:
    """Setup's calls, each under its own Idempotency-Key: a 429, a 5xx or a timeout is asked again
    (a cold or loaded stack), so the tickets exist before the clock starts."""
    last = "no answer"
    for attempt in range(attempts):
        try:
            answer = call()
        except Exception as exc:  # noqa: BLE001 - a timeout: asked again under the same key
            answer, last = None, type(exc).__name__
        if answer is not None and (answer.status_code == status or answer.status_code < 429):
            return _ok(answer, status)
        if answer is not None:
            last = f"{answer.status_code}: {answer.content[:200]!r}"
        time.sleep(min(5.0, 0.5 * 2 ** attempt))
    raise RuntimeError(f"the stack kept refusing the door bench's setup (last: {last})")


class DoorRun:
    def __init__(self, api: str, control: str, args: argparse.Namespace) -> None:
        self.api, self.control = api.rstrip("/"), control.rstrip("/")
        self.args = args
        self.http = LeanHttp()
        self.lock = threading.Lock()
        self.rows: list[dict[str, Any]] = []
        self.run_id = uuid.uuid4().hex[:8]

    # -- before the clock --------------------------------------------------------------------
    def tickets(self) -> list[dict[str, Any]]:
        """``--tickets`` confirmed tickets of a new event (bookings of 50, paid in the sandbox)."""
        body = {"name": f"Door bench {self.run_id}", "venue": "Bench hall", "city": "Moscow", "category": "club",
                "starts_at": days_ahead(60), "price": {"value": "1000.00", "currency": "RUB"},
                "capacity": self.args.tickets, "hold_ttl_seconds": 3600, "payment_mode": "one_stage",
                "max_per_booking": PER_BOOKING}
        event = _ok(self.http.post(self.api + "/events", json=body, timeout=30, headers={
            "X-Api-Key": ORGANIZER_KEY, "Idempotency-Key": f"door-bench-{self.run_id}"}), 201)
        self.event_id = event["event_id"]
        sizes = [PER_BOOKING] * (self.args.tickets // PER_BOOKING) + \
            ([self.args.tickets % PER_BOOKING] if self.args.tickets % PER_BOOKING else [])

        def buy(n: int) -> list[dict[str, Any]]:
            who = f"door-bench-{self.run_id}-{n}"
            headers = {"X-Customer-Id": who}
            booking = _until_ok(lambda: self.http.post(
                f"{self.api}/events/{self.event_id}/bookings", json={"quantity": sizes[n]}, timeout=60,
                headers={**headers, "Idempotency-Key": f"b-{who}"}), 201)
            payment = _until_ok(lambda: self.http.post(f"{self.api}/bookings/{booking['booking_id']}/payment",
                                                       timeout=60, headers={**headers, "Idempotency-Key": f"p-{who}"}),
                                201)
            _until_ok(lambda: self.http.post(f"{self.control}/payments/{payment['payment_id']}/pay", json={}, timeout=60))
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                view = _until_ok(lambda: self.http.get(f"{self.api}/bookings/{booking['booking_id']}", timeout=60,
                                                       headers=headers))
                if view.get("tickets"):
                    return view["tickets"]
                time.sleep(0.2)
            raise RuntimeError(f"booking {booking['booking_id']} was not confirmed in time")

        with ThreadPoolExecutor(max_workers=4) as pool:
            return [ticket for batch in pool.map(buy, range(len(sizes))) for ticket in batch]

    def schedule(self, tickets: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
        total = int(round(self.args.rate * self.args.duration))
        doubles = rng.sample(range(len(tickets)), int(len(tickets) * self.args.double_share))
        fresh = [{"kind": "first", "ticket": n} for n in range(len(tickets))]
        rng.shuffle(fresh)
        # a ticket's second scan comes after its first: slotted in the second half of its place
        order: list[dict[str, Any]] = list(fresh)
        position = {item["ticket"]: i for i, item in enumerate(order)}
        for n in sorted(doubles, key=lambda t: position[t], reverse=True):
            at = rng.randrange(position[n] + 1, len(order) + 1)
            order.insert(at, {"kind": "second", "ticket": n})
        # the rest: earlier scans' pass ids sent again, each after its first sending
        repeats = max(0, total - len(order))
        for _ in range(repeats):
            at = rng.randrange(1, len(order) + 1)
            order.insert(at, {"kind": "repeat", "of": rng.randrange(at)})
        scans, names = [], {}
        for i, item in enumerate(order):
            if item["kind"] == "repeat":
                original = item["of"]
                while order[original]["kind"] == "repeat":
                    original = order[original]["of"]
                scans.append({**item, "pass_id": names[original], "ticket": order[original]["ticket"]})
            else:
                names[i] = f"scan-{i}"
                scans.append({**item, "pass_id": names[i]})
        for scan in scans:
            scan["token"] = tickets[scan["ticket"]]["token"]
        return scans

    # -- the load ------------------------------------------------------------------------------
    def scan(self, door: dict[str, Any], item: dict[str, Any], scheduled: float) -> None:
        row = {**{k: item[k] for k in ("kind", "ticket", "pass_id")}, "status": None, "latency": None}
        try:
            sent = time.monotonic()
            answer = self.http.post(f"{self.api}/events/{self.event_id}/doors/{door['door_id']}/scan",
                                    json={"event_id": item["pass_id"], "token": item["token"]},
                                    headers={"X-Door-Key": door["door_key"]}, timeout=self.args.timeout)
            row.update(status=answer.status_code, latency=time.monotonic() - sent, late=sent - scheduled,
                       retry_after=answer.headers.get("Retry-After"))
            if answer.status_code == 200:
                row["answer"] = answer.json()
            elif answer.status_code == 429:
                payload = answer.json() if answer.content else {}
                row["code"] = ((payload.get("error") or {}).get("code") or payload.get("message")
                               if isinstance(payload, dict) else None)
        except Exception as exc:  # noqa: BLE001 - an unanswered scan is what the run counts
            row["error"] = type(exc).__name__
        finally:
            with self.lock:
                self.rows.append(row)

    def run(self) -> dict[str, Any]:
        rng = random.Random(self.args.seed)
        t_setup = time.monotonic()
        tickets = self.tickets()
        setup_s = time.monotonic() - t_setup
        door = _ok(self.http.post(f"{self.api}/events/{self.event_id}/doors", json={"name": "Bench door"},
                                  headers={"X-Api-Key": ORGANIZER_KEY}, timeout=30), 201)
        scans = self.schedule(tickets, rng)
        interval = 1.0 / self.args.rate
        start = time.monotonic() + 0.2
        with ThreadPoolExecutor(max_workers=self.args.workers, thread_name_prefix="scan") as pool:
            for i, item in enumerate(scans):
                at = start + i * interval
                delay = at - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                pool.submit(self.scan, door, item, at)
            offered_end = time.monotonic()
        load_end = time.monotonic()
        checkins = _ok(self.http.get(f"{self.api}/events/{self.event_id}/checkins",
                                     headers={"X-Api-Key": ORGANIZER_KEY}, timeout=60))
        return self.summarise(tickets, scans, start, offered_end, load_end, setup_s, checkins)

    def summarise(self, tickets: list[dict[str, Any]], scans: list[dict[str, Any]], start: float, offered_end: float,
                  load_end: float, setup_s: float, checkins: dict[str, Any]) -> dict[str, Any]:
        rows = self.rows
        answered = [r for r in rows if r["status"] == 200]
        busy = [r for r in rows if r["status"] == 429]
        unanswered = [r for r in rows if r["status"] not in (200, 429)]
        admitted: dict[int, set[str]] = {}
        first_answer: dict[str, str] = {}
        mismatched = 0
        for r in sorted(answered, key=lambda r: r["kind"] == "repeat"):
            if r["answer"]["admitted"]:
                admitted.setdefault(r["ticket"], set()).add(r["pass_id"])
            text = json.dumps(r["answer"], sort_keys=True)
            if r["kind"] == "repeat" and r["pass_id"] in first_answer and first_answer[r["pass_id"]] != text:
                mismatched += 1
            first_answer.setdefault(r["pass_id"], text)
        reasons: dict[str, int] = {}
        for r in answered:
            key = f"{r['kind']}:{r['answer']['reason']}"
            reasons[key] = reasons.get(key, 0) + 1
        latencies = sorted(r["latency"] for r in answered if r["latency"] is not None)

        def pick(q: float) -> float | None:
            return round(1000 * latencies[min(len(latencies) - 1, int(q * len(latencies)))], 1) if latencies else None

        window = max(load_end - start, 1e-9)
        return {
            "mode": "doors", "tickets": len(tickets), "scans_offered": len(scans),
            "offered_rate": round(len(scans) / max(offered_end - start, 1e-9), 1),
            "scans_per_second": round(len(answered) / window, 1),
            "answered_200": len(answered), "answered_429": len(busy),
            "429_without_retry_after": sum(1 for r in busy if not r.get("retry_after")),
            "429_codes": dict(Counter(str(r.get("code")) for r in busy)),
            "unanswered": len(unanswered), "reasons": dict(sorted(reasons.items())),
            "admitted_tickets": len(admitted), "admitted_twice": sum(1 for ids in admitted.values() if len(ids) > 1),
            "repeat_answers_differing": mismatched, "checked_in_by_the_api": checkins.get("checked_in"),
            "latency_ms": {"p50": pick(0.5), "p95": pick(0.95), "p99": pick(0.99), "max": pick(1.0)},
            "durations_s": {"setup": round(setup_s, 1), "load": round(load_end - start, 1)},
        }


def passed(result: dict[str, Any]) -> bool:
    return (result["unanswered"] == 0 and result["admitted_twice"] == 0 and result["repeat_answers_differing"] == 0
            and result["429_without_retry_after"] == 0
            and result["checked_in_by_the_api"] == result["admitted_tickets"])


def bare_shape(sample: dict[str, Any] | None) -> dict[str, Any] | None:
    """The sampled scan's transaction for bench_bare, its booking's version check dropped: there
    every item gets a fresh key, and ``#version = :expected`` on a fresh key would always fail.
    The check-in's and the pass record's ``attribute_not_exists`` stay (true on a fresh key)."""
    if not sample:
        return None
    shaped = json.loads(json.dumps(sample))
    for item in shaped.get("TransactItems") or []:
        for body in item.values():
            condition = body.get("ConditionExpression", "")
            if not condition or condition.startswith("attribute_not_exists"):
                continue
            body.pop("ConditionExpression")
            rest = json.dumps({k: v for k, v in body.items() if k not in ("ExpressionAttributeNames",
                                                                          "ExpressionAttributeValues")})
            for field in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
                kept = {k: v for k, v in (body.get(field) or {}).items()
                        if re.search(re.escape(k) + r"(?![A-Za-z0-9_])", rest)}
                if kept:
                    body[field] = kept
                else:
                    body.pop(field, None)
    return shaped
