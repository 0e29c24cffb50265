"""An HTTP relay on 127.0.0.1 between a gate controller and the local API, which a test can cut:
``stop()`` is a partition (connection refused), ``start()`` heals it on the same port. While it
relays, ``drop`` loses sequence numbers from the next sync batch on the way (a batch's middle
gone missing) and ``lose_next_answer`` lets the next sync reach the API but never brings its
answer back. Every sync body it forwarded, and every answer, is kept for the test to read."""
from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class GateProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.port = 0
        self.drop: set[int] = set()
        self.lose_next_answer = False
        self.synced: list[list[int]] = []
        self.answers: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        proxy = self

        class Relay(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                proxy._relay(self, None)

            def do_POST(self) -> None:
                proxy._relay(self, self.rfile.read(int(self.headers.get("Content-Length", 0))))

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Relay)
        self.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self._server = server

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def _relay(self, request: BaseHTTPRequestHandler, body: bytes | None) -> None:
        syncing = request.path.endswith("/sync")
        if syncing and body:
            batch = json.loads(body)
            batch["events"] = [event for event in batch["events"] if event["seq"] not in self.drop]
            self.drop = set()
            self.synced.append([event["seq"] for event in batch["events"]])
            body = json.dumps(batch).encode()
        headers = {name: request.headers[name] for name in ("X-Gate-Key", "Content-Type") if request.headers[name]}
        forwarded = urllib.request.Request(self.upstream + request.path, data=body, method=request.command,
                                           headers=headers)
        try:
            with urllib.request.urlopen(forwarded, timeout=60) as answer:
                status, data = answer.status, answer.read()
        except urllib.error.HTTPError as exc:
            status, data = exc.code, exc.read()
        if syncing and status == 200:
            self.answers.append(json.loads(data))
            if self.lose_next_answer:
                self.lose_next_answer = False
                request.close_connection = True
                return
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)
