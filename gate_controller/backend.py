"""The gate's HTTP client for the backend's gate routes (standard library only).

Every failure is sorted into one of two kinds, because the gate acts differently on each:
``Unreachable`` (no connection, a timeout, a 5xx or 429: the backend may or may not have acted, so the
gate decides offline and reports the pass later under the same event_id) and ``Refused`` (a 4xx:
the backend heard the pass and said no, for a reason the gate can show).
"""
from __future__ import annotations

import http.client
import ipaddress
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any


class Unreachable(Exception):
    """No usable answer: connection refused or reset, a timeout, or a server error.
    ``maybe_heard``: the request may have reached the backend (all but a refused connection)."""

    def __init__(self, detail: str, maybe_heard: bool = True) -> None:
        super().__init__(detail)
        self.maybe_heard = maybe_heard


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

    def __init__(self, api: str, lot_id: str, gate_id: str, gate_key: str, timeout: float = 3.0) -> None:
        self.base = checked_api_url(api).rstrip('/') + self.PATH.format(scope=lot_id, device=gate_id)
        self.gate_key = gate_key
        self.timeout = timeout

    def config(self) -> dict[str, Any]:
        return self._call("GET", "/config")

    def entry(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/entry", body)

    def exit(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/exit", body)

    def sync(self, events: list[dict[str, Any]]) -> dict[str, Any]:
        return self._call("POST", "/sync", {"events": events})

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={self.KEY_HEADER: self.gate_key, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            if exc.code >= 500:
                raise Unreachable(f"server error {exc.code}") from None
            if exc.code == 429:   # throttled or busy: nothing was done, as good as unreachable for now
                raise Unreachable("too busy (429)", maybe_heard=False) from None
            raise Refused(exc.code, *_error(exc)) from None
        except (OSError, http.client.HTTPException, json.JSONDecodeError) as exc:   # refused, reset, timeout
            refused = isinstance(getattr(exc, "reason", exc), ConnectionRefusedError)
            raise Unreachable(str(exc), maybe_heard=not refused) from None


class DoorBackend(Backend):
    """An event's door: the same calls under /events/{event_id}/doors/{door_id}, with X-Door-Key."""

    PATH, KEY_HEADER = "/events/{scope}/doors/{device}", "X-Door-Key"

    def scan(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/scan", body)


def _error(exc: urllib.error.HTTPError) -> tuple[str, str]:
    try:
        error = json.loads(exc.read()).get("error", {})
        return str(error.get("code", "refused")), str(error.get("message", ""))
    except (ValueError, AttributeError, OSError):
        return "refused", ""
