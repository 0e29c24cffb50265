"""The gate's HTTP client for the backend's gate routes (standard library only).

Every failure is sorted into one of three kinds, because the gate acts differently on each:
``Unreachable`` (no connection, a timeout: the backend may or may not have acted, so the gate decides
offline and reports the pass later under the same event_id), ``Busy`` (the backend, or the web ACL
and the gateway in front of it, answered 429 or a 5xx: it is there but will not decide now; the call
is retried with backoff, and if it stays busy the gate admits only what it knows from a fresh
configuration, never an unknown pass: a 429 is something a stranger can cause) and ``Refused`` (a
4xx: the backend heard the pass and said no, for a reason the gate can show).
"""
from __future__ import annotations

import http.client
import ipaddress
import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable

#: Retries of a call answered busy, and the longest one wait between them (seconds): a driver is at
#: the barrier, so a busy backend gets about three seconds in all before the gate decides.
BUSY_RETRIES = 3
BUSY_FIRST_WAIT, BUSY_LONGEST_WAIT = 0.25, 1.5


class Unreachable(Exception):
    """No usable answer: connection refused or reset, a timeout, or a server error.
    ``maybe_heard``: the request may have reached the backend (all but a refused connection)."""

    def __init__(self, detail: str, maybe_heard: bool = True) -> None:
        super().__init__(detail)
        self.maybe_heard = maybe_heard


class Busy(Unreachable):
    """The backend answered that it will not decide now: 429 (throttled, the web ACL's limit, a
    busy pass) or a 5xx. Unlike a lost connection, this is something anyone can cause, so it never
    lets the gate admit by its most permissive offline rules (controller.py)."""

    def __init__(self, status: int, retry_after: float | None) -> None:
        # a 5xx may come after the backend acted (a function that timed out); a 429 did nothing
        super().__init__(f"busy ({status})", maybe_heard=status >= 500)
        self.status, self.retry_after = status, retry_after


class Refused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


def checked_api_url(api: str) -> str:
    """The backend's URL, refused unless it is https: the gate key travels in every request, and the
    lot key and the passes in the answers. Plain http only to this machine (a local stack)."""
    parts = urllib.parse.urlsplit(api)
    if parts.scheme == "https" and parts.hostname:
        return api
    if parts.scheme == "http" and parts.hostname:
        host = parts.hostname
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if loopback:
            return api
    raise ValueError(f"the backend URL must be https:// (plain http only to this machine): {api!r}")


class Backend:
    #: the device's routes under the API and the header its key goes in (a lot's gate; DoorBackend)
    PATH, KEY_HEADER = "/lots/{scope}/gates/{device}", "X-Gate-Key"

    def __init__(self, api: str, lot_id: str, gate_id: str, gate_key: str, timeout: float = 3.0,
                 retries: int = BUSY_RETRIES, sleep: Callable[[float], None] = time.sleep,
                 jitter: Callable[[], float] = random.random) -> None:
        self.base = checked_api_url(api).rstrip('/') + self.PATH.format(scope=lot_id, device=gate_id)
        self.gate_key = gate_key
        self.timeout = timeout
        self.retries, self.sleep, self.jitter = retries, sleep, jitter

    def config(self) -> dict[str, Any]:
        return self._call("GET", "/config")

    def entry(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/entry", body)

    def exit(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/exit", body)

    def sync(self, events: list[dict[str, Any]]) -> dict[str, Any]:
        return self._call("POST", "/sync", {"events": events})

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """One call; answered busy, it is made again after a growing wait (jittered, so a site's
        devices do not come back at once; at least what ``Retry-After`` asks, within the longest
        wait). Every device call is safe to repeat: a pass carries its event_id, a sync its numbers."""
        attempt = 0
        while True:
            try:
                return self._call_once(method, path, body)
            except Busy as exc:
                if attempt >= self.retries:
                    raise
                wait = min(BUSY_LONGEST_WAIT, BUSY_FIRST_WAIT * 2 ** attempt)
                wait = wait / 2 + wait / 2 * self.jitter()
                if exc.retry_after is not None:
                    wait = max(wait, min(exc.retry_after, BUSY_LONGEST_WAIT))
                self.sleep(wait)
                attempt += 1

    def _call_once(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={self.KEY_HEADER: self.gate_key, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            if exc.code >= 500 or exc.code == 429:
                raise Busy(exc.code, _retry_after(exc)) from None
            raise Refused(exc.code, *_error(exc)) from None
        except (OSError, http.client.HTTPException, json.JSONDecodeError) as exc:   # refused, reset, timeout
            refused = isinstance(getattr(exc, "reason", exc), ConnectionRefusedError)
            raise Unreachable(str(exc), maybe_heard=not refused) from None


class DoorBackend(Backend):
    """An event's door: the same calls under /events/{event_id}/doors/{door_id}, with X-Door-Key."""

    PATH, KEY_HEADER = "/events/{scope}/doors/{device}", "X-Door-Key"

    def scan(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/scan", body)


def _retry_after(exc: urllib.error.HTTPError) -> float | None:
    try:
        return max(0.0, float(exc.headers.get("Retry-After", "")))
    except (TypeError, ValueError, AttributeError):
        return None


def _error(exc: urllib.error.HTTPError) -> tuple[str, str]:
    try:
        error = json.loads(exc.read()).get("error", {})
        return str(error.get("code", "refused")), str(error.get("message", ""))
    except (ValueError, AttributeError, OSError):
        return "refused", ""
