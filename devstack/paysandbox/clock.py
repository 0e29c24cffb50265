"""Sandbox clock: wall time that tests can advance and demos can speed up."""
from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def iso(dt: datetime | None) -> str | None:
    """ISO-8601 UTC with milliseconds and a trailing Z, as the provider renders timestamps."""
    if dt is None:
        return None
    dt = dt.astimezone(timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def parse_iso(text: str) -> datetime:
    """Parse an ISO-8601 timestamp; a value without an offset is taken as UTC."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    dt = datetime.fromisoformat(value)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


class SandboxClock:
    """Sandbox time = anchor + (real elapsed time) * time_scale, plus manual jumps.

    ``advance()``/``set()`` notify the registered listeners (the ticker and the webhook worker)
    so that whatever became due runs promptly.
    """

    def __init__(self, start: datetime | None = None, time_scale: float = 1.0):
        if time_scale <= 0:
            raise ValueError("time_scale must be positive")
        self._lock = threading.Lock()
        self._initial_start = start
        self._scale = float(time_scale)
        self._anchor_sandbox = start or utc_now()
        self._anchor_real = time.monotonic()
        self._listeners: list = []

    # -- reading ---------------------------------------------------------------------------
    def now(self) -> datetime:
        """Current sandbox time, truncated to milliseconds (the precision the API renders)."""
        with self._lock:
            now = self._now_locked()
        return now.replace(microsecond=now.microsecond // 1000 * 1000)

    def _now_locked(self) -> datetime:
        elapsed = time.monotonic() - self._anchor_real
        return self._anchor_sandbox + timedelta(seconds=elapsed * self._scale)

    @property
    def time_scale(self) -> float:
        return self._scale

    def real_seconds(self, sandbox_seconds: float) -> float:
        """How many real seconds a span of sandbox time takes at the current scale."""
        return max(0.0, sandbox_seconds / self._scale)

    # -- changing --------------------------------------------------------------------------
    def advance(self, seconds: float) -> datetime:
        if seconds < 0:
            raise ValueError("the sandbox clock only moves forward")
        with self._lock:
            now = self._now_locked() + timedelta(seconds=seconds)
            self._anchor_sandbox, self._anchor_real = now, time.monotonic()
        self._notify()
        return now

    def set(self, when: datetime) -> datetime:
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        with self._lock:
            self._anchor_sandbox, self._anchor_real = when, time.monotonic()
        self._notify()
        return when

    def set_time_scale(self, scale: float) -> None:
        if scale <= 0:
            raise ValueError("time_scale must be positive")
        with self._lock:
            self._anchor_sandbox, self._anchor_real = self._now_locked(), time.monotonic()
            self._scale = float(scale)
        self._notify()

    def reset(self) -> None:
        """Back to real time (or the configured start), keeping the time scale."""
        with self._lock:
            self._anchor_sandbox = self._initial_start or utc_now()
            self._anchor_real = time.monotonic()
        self._notify()

    def add_listener(self, callback) -> None:
        self._listeners.append(callback)

    def _notify(self) -> None:
        for callback in list(self._listeners):
            callback()

    def snapshot(self) -> dict:
        return {"now": iso(self.now()), "time_scale": self._scale}
