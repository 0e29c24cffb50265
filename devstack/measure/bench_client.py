"""The load generator's HTTP client: http.client on one kept-alive connection per thread and host.

The bench's clients share two cores with the system they measure, so what a request costs on the
client side is taken from the stack. `requests` spends about a millisecond of CPU per call on
sessions, hooks, adapters and urllib3's pool; a bare kept-alive HTTP/1.1 connection a fraction of
that. Only what the bench uses is here: JSON bodies, headers, a timeout, the answer's status,
headers and JSON.
"""
from __future__ import annotations

import http.client
import json as jsonlib
import socket
import threading
from typing import Any
from urllib.parse import urlsplit


class Timeout(Exception):
    """No answer within the request's timeout."""


class ClientError(Exception):
    """The connection failed (refused, reset, closed before an answer)."""


class Answer:
    def __init__(self, status: int, headers: Any, body: bytes) -> None:
        self.status_code = status
        self.headers = headers  # http.client's message: .get() ignores the name's case
        self.content = body

    def json(self) -> Any:
        return jsonlib.loads(self.content)

    def raise_for_status(self) -> None:
        if self.status_code >= 400:
            raise ClientError(f"HTTP {self.status_code}: {self.content[:200]!r}")


class LeanHttp:
    """`post(url, json=..., headers=..., timeout=...)` and `get(...)`, thread-safe by keeping each
    thread's connections to itself."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _connections(self) -> dict[str, http.client.HTTPConnection]:
        found = getattr(self._local, "connections", None)
        if found is None:
            found = self._local.connections = {}
        return found

    def request(self, method: str, url: str, *, json: Any = None, headers: dict[str, str] | None = None,
                timeout: float = 30.0) -> Answer:
        parts = urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        body = None if json is None else jsonlib.dumps(json).encode()
        sent = dict(headers or {})
        if body is not None:
            sent.setdefault("Content-Type", "application/json")
        elif method in ("POST", "PUT", "PATCH"):
            sent.setdefault("Content-Length", "0")
        connections = self._connections()
        for attempt in range(2):
            conn = connections.get(parts.netloc)
            reused = conn is not None
            if conn is None:
                conn = connections[parts.netloc] = http.client.HTTPConnection(parts.hostname, parts.port or 80,
                                                                              timeout=timeout)
            else:
                conn.timeout = timeout
                if conn.sock is not None:
                    conn.sock.settimeout(timeout)
            try:
                conn.request(method, path, body=body, headers=sent)
                answer = conn.getresponse()
                data = answer.read()
            except (TimeoutError, socket.timeout):
                self._drop(parts.netloc)
                raise Timeout(f"{method} {url}: no answer within {timeout:g} s") from None
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                self._drop(parts.netloc)
                if reused and attempt == 0:
                    continue  # the server closed the idle kept-alive connection: one new one, as urllib3 does
                raise ClientError(f"{method} {url}: {type(exc).__name__}") from None
            except (OSError, http.client.HTTPException) as exc:
                self._drop(parts.netloc)
                raise ClientError(f"{method} {url}: {type(exc).__name__}") from None
            if answer.will_close:
                self._drop(parts.netloc)
            return Answer(answer.status, answer.headers, data)
        raise ClientError(f"{method} {url}: the connection closed twice")  # pragma: no cover - loop returns

    def _drop(self, netloc: str) -> None:
        conn = self._connections().pop(netloc, None)
        if conn is not None:
            conn.close()

    def post(self, url: str, **kwargs: Any) -> Answer:
        return self.request("POST", url, **kwargs)

    def get(self, url: str, **kwargs: Any) -> Answer:
        return self.request("GET", url, **kwargs)
