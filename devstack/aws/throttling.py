"""API Gateway's request throttling, from the stage's `MethodSettings` (token buckets).

A REST API stage throttles each method with a token bucket: `ThrottlingRateLimit` tokens a
second, at most `ThrottlingBurstLimit` in the bucket; a request that finds it empty is answered
`429 Too Many Requests` before any integration runs. The setting for `ResourcePath: "/*"`,
`HttpMethod: "*"` is the stage's default for every method; a setting naming one resource path
(`/~1events~1{event_id}~1bookings`, `~1` standing for `/`) and method applies to that method
instead. Each method has a bucket of its own.
"""
from __future__ import annotations

import threading
import time
from typing import Any


class TokenBucket:
    def __init__(self, rate: float, burst: float, clock: Any = time.monotonic) -> None:
        self.rate, self.burst = float(rate), max(1.0, float(burst))
        self.clock = clock
        self.tokens = self.burst
        self.at = clock()
        self.lock = threading.Lock()

    def take(self) -> float | None:
        """None if a token was taken; else the seconds until one will be there."""
        with self.lock:
            now = self.clock()
            self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
            self.at = now
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return None
            return (1.0 - self.tokens) / self.rate if self.rate > 0 else 60.0


def _path(resource_path: str) -> str:
    # "/~1events~1{event_id}": the first "/" separates the setting's path parts; "~1" is an escaped "/"
    if resource_path.startswith("/~1"):
        resource_path = resource_path[1:]
    return resource_path.replace("~1", "/")


class StageThrottle:
    """Buckets per (resource, method) with the limits the stage's MethodSettings give them."""

    def __init__(self, method_settings: list[dict[str, Any]], clock: Any = time.monotonic) -> None:
        self.clock = clock
        self.default: tuple[float, float] | None = None
        self.specific: dict[tuple[str, str], tuple[float, float]] = {}
        for setting in method_settings or []:
            rate, burst = setting.get("ThrottlingRateLimit"), setting.get("ThrottlingBurstLimit")
            if rate is None and burst is None:
                continue
            limits = (float(rate if rate is not None else 10000), float(burst if burst is not None else 5000))
            path, method = _path(str(setting.get("ResourcePath", "/*"))), str(setting.get("HttpMethod", "*")).upper()
            if path == "/*" and method == "*":
                self.default = limits
            else:
                self.specific[(path, method)] = limits
        self._buckets: dict[tuple[str, str], TokenBucket | None] = {}
        self._lock = threading.Lock()

    def limits(self, resource: str, method: str) -> tuple[float, float] | None:
        return (self.specific.get((resource, method.upper())) or self.specific.get((resource, "*"))
                or self.default)

    def take(self, resource: str, method: str) -> float | None:
        key = (resource, method.upper())
        with self._lock:
            if key not in self._buckets:
                limits = self.limits(resource, method)
                self._buckets[key] = TokenBucket(*limits, clock=self.clock) if limits else None
            bucket = self._buckets[key]
        return None if bucket is None else bucket.take()
