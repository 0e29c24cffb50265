"""The load generator's lean HTTP client: one kept-alive connection per thread, a new one when the
server closed the idle one, a timeout that is a timeout, JSON both ways."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from devstack.measure.bench_client import Answer, ClientError, LeanHttp, Timeout


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    peers: list[int] = []

    def _answer(self) -> None:
        type(self).peers.append(self.client_address[1])
        length = int(self.headers.get("Content-Length") or 0)
        got = json.loads(self.rfile.read(length)) if length else None
        if self.path.startswith("/slow"):
            time.sleep(1.0)
        body = json.dumps({"method": self.command, "path": self.path, "got": got,
                           "key": self.headers.get("Idempotency-Key")}).encode()
        self.send_response(201 if self.command == "POST" else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Retry-After", "3")
        self.send_header("Content-Length", str(len(body)))
        if self.path.startswith("/close"):
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *_):
        pass


@pytest.fixture
def server():
    _Echo.peers = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_json_both_ways_on_one_kept_alive_connection(server):
    http = LeanHttp()
    first = http.post(server + "/events/e1/bookings?x=1", json={"quantity": 2}, headers={"Idempotency-Key": "k1"})
    second = http.get(server + "/bookings/b1")
    assert isinstance(first, Answer) and first.status_code == 201
    assert first.json() == {"method": "POST", "path": "/events/e1/bookings?x=1", "got": {"quantity": 2}, "key": "k1"}
    assert first.headers.get("retry-after") == "3"  # header names in any case
    assert second.status_code == 200 and second.json()["got"] is None
    assert len(set(_Echo.peers)) == 1  # the same connection twice


def test_a_closed_connection_is_reopened_for_the_next_request(server):
    http = LeanHttp()
    assert http.get(server + "/close").status_code == 200
    assert http.post(server + "/after", json={}).status_code == 201
    assert len(set(_Echo.peers)) == 2


def test_threads_do_not_share_connections(server):
    http = LeanHttp()
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(http.get(server + "/t").status_code)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [200] * 4 and len(set(_Echo.peers)) == 4


def test_a_slow_answer_is_a_timeout_and_a_refused_connection_an_error(server):
    http = LeanHttp()
    with pytest.raises(Timeout):
        http.get(server + "/slow", timeout=0.2)
    assert http.get(server + "/fine").status_code == 200  # the timed-out connection was dropped
    with pytest.raises(ClientError):
        http.get("http://127.0.0.1:9/nothing-listens", timeout=2)
    with pytest.raises(ClientError):
        Answer(500, {}, b"no").raise_for_status()
