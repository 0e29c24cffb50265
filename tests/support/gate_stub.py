"""What a gate controller talks to in tests: an HTTP server on 127.0.0.1 that a test can cut.

``stop()`` is a partition (connection refused), ``start()`` heals it on the same port. Faults on
the sync route: ``drop`` loses those sequence numbers from the next sync batch on the way (a
batch's middle gone missing) and ``lose_next_answer`` lets the next sync be carried out but never
brings its answer back; ``busy`` answers the next requests (any route) with those statuses (a 429
or a 5xx, ``Retry-After: 0``) instead, or every request while ``always_busy`` is set. What it saw is kept for the test: ``requests`` (action and body as the
controller sent them), ``synced`` (the sequence numbers of each sync batch after the drop) and
``sync_answers`` (every sync answer, lost ones included).

Two ways of answering:

- ``FakeGateBackend`` answers config, entry, exit and sync for one lot and gate itself; sync runs
  the real sequencing service (products/parking/services/gate_sync.py) on the store the test gives it;
- ``GateProxy`` relays every request to the local API (the integration tests).
"""
from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from holdfast.clock import system_clock
from holdfast.products.parking.gate_sync_schemas import GateSyncIn
from holdfast.products.parking.services.gate_sync import GateSync

ROUTE = re.compile(r"^/(?:lots/(?P<lot>[^/]+)/gates/(?P<gate>[^/]+)|events/[^/]+/doors/[^/]+)"
                   r"/(?P<action>config|entry|exit|scan|sync)$")


class GateStub:
    """The server, the faults and the record; subclasses say how a request is answered."""

    def __init__(self) -> None:
        self.port = 0
        self.drop: set[int] = set()
        self.lose_next_answer = False
        self.busy: list[int] = []
        self.always_busy: int | None = None
        self.requests: list[tuple[str, Any]] = []
        self.synced: list[list[int]] = []
        self.sync_answers: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                stub._handle(self, None)

            def do_POST(self) -> None:
                stub._handle(self, json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}"))

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self._server = server

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def answer(self, request: BaseHTTPRequestHandler, action: str | None, body: Any) -> tuple[int, bytes]:
        raise NotImplementedError

    def _handle(self, request: BaseHTTPRequestHandler, body: Any) -> None:
        match = ROUTE.match(request.path)
        action = match["action"] if match else None
        if action is not None:
            self.requests.append((action, body))
        if self.busy or self.always_busy:
            status = self.busy.pop(0) if self.busy else self.always_busy
            data = _json({"error": {"code": "busy", "message": "try again"}})
            request.send_response(status)
            request.send_header("Retry-After", "0")
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(data)))
            request.end_headers()
            request.wfile.write(data)
            return
        if action == "sync" and body:
            body = {**body, "events": [event for event in body["events"] if event["seq"] not in self.drop]}
            self.drop = set()
            self.synced.append([event["seq"] for event in body["events"]])
        status, data = self.answer(request, action, body)
        if action == "sync" and status == 200:
            self.sync_answers.append(json.loads(data))
            if self.lose_next_answer:
                self.lose_next_answer = False
                request.close_connection = True
                return
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)


class FakeGateBackend(GateStub):
    """The backend's gate routes for one lot and gate, answered here."""

    def __init__(self, lot_id: str, gate_id: str, gate_key: str, sync_service: GateSync, applier: Any) -> None:
        super().__init__()
        self.lot_id, self.gate_id, self.gate_key = lot_id, gate_id, gate_key
        self.sync_service, self.applier = sync_service, applier
        self.config: dict[str, Any] = {}

    def answer(self, request: BaseHTTPRequestHandler, action: str | None, body: Any) -> tuple[int, bytes]:
        match = ROUTE.match(request.path)
        if not match or (match["lot"], match["gate"]) != (self.lot_id, self.gate_id):
            return 404, _json({"error": {"code": "not_found", "message": "no such gate"}})
        if request.headers.get("X-Gate-Key") != self.gate_key:
            return 401, _json({"error": {"code": "unauthorized", "message": "bad gate key"}})
        if action == "config":
            return 200, _json(self.config)
        if action in ("entry", "exit"):
            event = {**body, "kind": action}
            return 200, _json(self.applier(self.lot_id, self.gate_id, event, at=system_clock(),
                                           offline=False))
        events = [item.as_event() for item in GateSyncIn.model_validate({"events": body["events"]}).events]
        return 200, _json(self.sync_service.sync(self.lot_id, self.gate_id, events))


class GateProxy(GateStub):
    """A relay to the API at ``upstream``."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream.rstrip("/")

    def answer(self, request: BaseHTTPRequestHandler, action: str | None, body: Any) -> tuple[int, bytes]:
        headers = {name: request.headers[name] for name in ("X-Gate-Key", "X-Door-Key", "Content-Type")
                   if request.headers[name]}
        data = None if request.command == "GET" else json.dumps(body).encode()
        forwarded = urllib.request.Request(self.upstream + request.path, data=data, method=request.command,
                                           headers=headers)
        try:
            with urllib.request.urlopen(forwarded, timeout=60) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()


def _json(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()
