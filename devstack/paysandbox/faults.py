"""Fault injection rules for API routes and for webhook deliveries."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from .models import EVENTS, invalid

API_ROUTES = (
    "POST /v3/payments",
    "GET /v3/payments",
    "GET /v3/payments/{id}",
    "POST /v3/payments/{id}/capture",
    "POST /v3/payments/{id}/cancel",
    "POST /v3/refunds",
    "GET /v3/refunds",
    "GET /v3/refunds/{id}",
    "POST /v3/receipts",
    "GET /v3/receipts",
    "GET /v3/receipts/{id}",
)
WEBHOOK_ROUTE = "webhook"
#: the register's side of a receipt: how long it stays pending and how it ends
RECEIPT_ROUTE = "receipt"

# API knobs. "before": nothing happened; "after": the effect happened, the answer is lost/broken.
API_BEFORE = {"error_500_before", "too_many_requests", "accepted_202", "html_502"}
API_AFTER = {"error_500_after", "drop_response_after"}
API_KINDS = API_BEFORE | API_AFTER | {"delay"}
WEBHOOK_KINDS = {"drop_once", "drop_forever", "duplicate", "delay", "hold", "forge"}
RECEIPT_KINDS = {"canceled", "delay"}


@dataclass
class Fault:
    id: int
    kind: str
    route: str
    times: int | None            # remaining hits; None = unlimited
    probability: float | None
    seed: int
    params: dict = field(default_factory=dict)
    match: dict = field(default_factory=dict)
    hits: int = 0

    def __post_init__(self):
        self.rng = random.Random(self.seed)

    def describe(self) -> dict:
        return {"id": self.id, "kind": self.kind, "route": self.route, "times_left": self.times,
                "probability": self.probability, "seed": self.seed, "params": dict(self.params),
                "match": dict(self.match), "hits": self.hits}

    def matches_object(self, event: str, obj: dict) -> bool:
        want_event = self.match.get("event")
        if want_event and want_event != event:
            return False
        want_id = self.match.get("object_id")
        if want_id and want_id not in (obj.get("id"), obj.get("payment_id")):
            return False
        return True


class FaultRegistry:
    def __init__(self, lock, seed: int = 0):
        self.lock = lock
        self.base_seed = seed
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.rules: list[Fault] = []
            self._next_id = 1

    def add(self, spec: dict) -> dict:
        if not isinstance(spec, dict):
            raise invalid("fault must be an object")
        kind = spec.get("kind")
        route = spec.get("route", WEBHOOK_ROUTE if kind in WEBHOOK_KINDS - API_KINDS else None)
        if route == WEBHOOK_ROUTE:
            if kind not in WEBHOOK_KINDS:
                raise invalid(f"Unknown webhook fault kind; use one of {sorted(WEBHOOK_KINDS)}", "kind")
        elif route == RECEIPT_ROUTE:
            if kind not in RECEIPT_KINDS:
                raise invalid(f"Unknown receipt fault kind; use one of {sorted(RECEIPT_KINDS)}", "kind")
        elif route == "*" or route in API_ROUTES:
            if kind not in API_KINDS:
                raise invalid(f"Unknown API fault kind; use one of {sorted(API_KINDS)}", "kind")
        else:
            raise invalid(f"Unknown route; use one of {list(API_ROUTES)}, '*', 'webhook' or 'receipt'",
                          "route")
        probability = spec.get("probability")
        times = spec.get("times")
        if probability is not None:
            if isinstance(probability, bool) or not isinstance(probability, (int, float)) \
                    or not 0 <= probability <= 1:
                raise invalid("probability must be a number from 0 to 1", "probability")
            probability = float(probability)
        if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 1):
            raise invalid("times must be a positive integer", "times")
        if times is None and probability is None and kind != "drop_forever":
            times = 1
        params = {}
        for name in ("seconds", "retry_after", "count", "event", "status"):
            if name in spec:
                params[name] = spec[name]
        if kind == "delay":
            s = params.get("seconds", 1)
            if isinstance(s, bool) or not isinstance(s, (int, float)) or s < 0:
                raise invalid("seconds must be a non-negative number", "seconds")
            params["seconds"] = s
        if kind in ("too_many_requests", "accepted_202"):
            params.setdefault("retry_after", 1)
        if kind == "duplicate":
            c = params.get("count", 1)
            if isinstance(c, bool) or not isinstance(c, int) or c < 1:
                raise invalid("count must be a positive integer", "count")
            params["count"] = c
        if kind == "forge":
            ev = params.get("event", "payment.succeeded")
            if ev not in EVENTS:
                raise invalid(f"event must be one of {list(EVENTS)}", "event")
            params["event"] = ev
        match = spec.get("match") or {}
        if not isinstance(match, dict) or set(match) - {"event", "object_id"}:
            raise invalid("match may only contain event and object_id", "match")
        with self.lock:
            seed = spec.get("seed")
            if seed is None:
                seed = self.base_seed * 1000 + self._next_id
            fault = Fault(id=self._next_id, kind=kind, route=route, times=times,
                          probability=probability, seed=int(seed), params=params, match=match)
            self._next_id += 1
            self.rules.append(fault)
            return fault.describe()

    def remove(self, fault_id: int) -> bool:
        with self.lock:
            before = len(self.rules)
            self.rules = [f for f in self.rules if f.id != fault_id]
            return len(self.rules) != before

    def list(self) -> list[dict]:
        with self.lock:
            return [f.describe() for f in self.rules]

    def _fire(self, fault: Fault) -> bool:
        """Decide whether a matching rule triggers now; consume one use if it does."""
        if fault.probability is not None and fault.rng.random() >= fault.probability:
            return False
        fault.hits += 1
        if fault.times is not None:
            fault.times -= 1
            if fault.times <= 0:
                self.rules.remove(fault)
        return True

    def pick_api(self, route: str) -> tuple[Fault | None, float]:
        """Return (terminal fault or None, delay seconds) for one API call."""
        with self.lock:
            terminal, delay = None, 0.0
            for fault in list(self.rules):
                if fault.route not in (route, "*"):
                    continue
                if fault.kind == "delay":
                    if self._fire(fault):
                        delay += float(fault.params["seconds"])
                elif terminal is None and self._fire(fault):
                    terminal = fault
            return terminal, delay

    def pick_receipt(self) -> tuple[bool, float]:
        """(ends canceled?, extra pending seconds in sandbox time) for a receipt being registered."""
        with self.lock:
            canceled, delay = False, 0.0
            for fault in list(self.rules):
                if fault.route != RECEIPT_ROUTE:
                    continue
                if fault.kind == "delay":
                    if self._fire(fault):
                        delay += float(fault.params["seconds"])
                elif not canceled and self._fire(fault):
                    canceled = True
            return canceled, delay

    def pick_webhook(self, kinds: set[str], event: str, obj: dict) -> list[Fault]:
        """Return the webhook rules of the given kinds that trigger for this notification."""
        with self.lock:
            fired = []
            for fault in list(self.rules):
                if fault.route != WEBHOOK_ROUTE or fault.kind not in kinds:
                    continue
                if not fault.matches_object(event, obj):
                    continue
                if fault.kind == "drop_forever" and fault.probability is None and fault.times is None:
                    fault.hits += 1
                    fired.append(fault)
                elif self._fire(fault):
                    fired.append(fault)
            return fired
