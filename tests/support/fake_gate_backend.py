"""A small stand-in for the backend's gate routes on 127.0.0.1, for the gate controller's tests.

It serves config, entry, exit and sync for one lot and gate. Sync runs the real sequencing
service (services/gate_sync.py) on the DynamoDB store the test gives it, with a FakeApplier.
Faults a test can switch on: ``stop()``/``start()`` (a partition: connection refused), ``drop``
(sequence numbers the next sync request loses on the way, as if a batch's middle went missing)
and ``lose_next_answer`` (the sync is carried out, the answer never arrives).
"""
from __future__ import annotations

import json
import re
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from holdfast.gate_sync_schemas import GateSyncIn
from holdfast.services.gate_sync import GateSync

ROUTE = re.compile(r"^/lots/(?P<lot>[^/]+)/gates/(?P<gate>[^/]+)/(?P<action>config|entry|exit|sync)$")


class FakeGateBackend:
    def __init__(self, lot_id: str, gate_id: str, gate_key: str, sync_service: GateSync, applier: Any) -> None:
        self.lot_id, self.gate_id, self.gate_key = lot_id, gate_id, gate_key
        self.sync_service, self.applier = sync_service, applier
        self.config: dict[str, Any] = {}
        self.drop: set[int] = set()
        self.lose_next_answer = False
        self.requests: list[tuple[str, Any]] = []
        self.sync_answers: list[dict[str, Any]] = []   # lost ones included
        self.port = 0
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        backend = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                backend._handle(self, None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                backend._handle(self, json.loads(self.rfile.read(length) or b"{}"))

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self._server = server

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def _handle(self, request: BaseHTTPRequestHandler, body: Any) -> None:
        match = ROUTE.match(request.path)
        if not match or (match["lot"], match["gate"]) != (self.lot_id, self.gate_id):
            return _answer(request, 404, {"error": {"code": "not_found", "message": "no such gate"}})
        if request.headers.get("X-Gate-Key") != self.gate_key:
            return _answer(request, 401, {"error": {"code": "unauthorized", "message": "bad gate key"}})
        action = match["action"]
        self.requests.append((action, body))
        if action == "config":
            return _answer(request, 200, self.config)
        if action in ("entry", "exit"):
            event = {**body, "kind": action}
            return _answer(request, 200, self.applier(self.lot_id, self.gate_id, event,
                                                      at=datetime.now(timezone.utc), offline=False))
        kept = [event for event in body["events"] if event["seq"] not in self.drop]
        self.drop = set()
        answer = self.sync_service.sync(self.lot_id, self.gate_id, GateSyncIn.model_validate({"events": kept}).events)
        self.sync_answers.append(answer)
        if self.lose_next_answer:
            self.lose_next_answer = False
            request.close_connection = True
            return None
        return _answer(request, 200, answer)


def _answer(request: BaseHTTPRequestHandler, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    request.send_response(status)
    request.send_header("Content-Type", "application/json")
    request.send_header("Content-Length", str(len(data)))
    request.end_headers()
    request.wfile.write(data)
