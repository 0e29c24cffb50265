"""Fixtures for the payment sandbox tests: one sandbox per module, reset before every test."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from requests.adapters import HTTPAdapter
from yookassa import Configuration
from yookassa.client import ApiClient

from devstack.paysandbox import SandboxControl, SandboxServer

SHOP_ID = "100500"
SECRET = "sandbox_secret_local_only"
SDK_TIMEOUT = 5.0


class _TimeoutAdapter(HTTPAdapter):
    """The SDK sets no timeout; give every request one so a dropped response cannot hang."""

    def send(self, request, **kwargs):
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = SDK_TIMEOUT
        return super().send(request, **kwargs)


@pytest.fixture(scope="session", autouse=True)
def sdk_timeouts():
    original = ApiClient.get_session

    def get_session(self):
        session = original(self)  # keeps the SDK's own https Retry(202) policy
        https_retry = session.adapters["https://"].max_retries
        session.mount("https://", _TimeoutAdapter(max_retries=https_retry))
        session.mount("http://", _TimeoutAdapter(max_retries=0))
        return session

    ApiClient.get_session = get_session
    yield
    ApiClient.get_session = original


@pytest.fixture(scope="module")
def server():
    with SandboxServer(host="127.0.0.1", port=0, shop_id=SHOP_ID, secret_keys=[SECRET, "second_key"],
                       redelivery_base_seconds=10) as srv:
        yield srv


@pytest.fixture
def sandbox(server):
    """A clean sandbox with the SDK pointed at it (always with api_url: no production fallback)."""
    server.reset()
    Configuration.configure(SHOP_ID, SECRET, api_url=server.base_url)
    yield server
    server.reset()


@pytest.fixture
def control(sandbox):
    return SandboxControl(sandbox.control_url)


@pytest.fixture
def api(sandbox):
    """Raw HTTP access to /v3 with the shop's credentials (for what the SDK cannot express)."""
    session = requests.Session()
    session.auth = (SHOP_ID, SECRET)

    def call(method, path, body=None, key=None, raw=None, headers=None, timeout=5, **kw):
        hdrs = dict(headers or {})
        if key is not None:
            hdrs["Idempotence-Key"] = key
        url = sandbox.base_url + path
        if raw is not None:
            hdrs.setdefault("Content-Type", "application/json")
            return session.request(method, url, data=raw, headers=hdrs, timeout=timeout, **kw)
        return session.request(method, url, json=body, headers=hdrs, timeout=timeout, **kw)

    yield call
    session.close()


class Receiver:
    """A tiny notification receiver on 127.0.0.1 that records what it got.

    ``codes`` is a list of HTTP statuses to answer in order; after it runs out it answers 200.
    """

    def __init__(self):
        self.received: list[dict] = []
        self.codes: list[int] = []
        self.sleep = 0.0  # seconds the receiver takes to answer
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if receiver.sleep:
                    time.sleep(receiver.sleep)
                with receiver.lock:
                    code = receiver.codes.pop(0) if receiver.codes else 200
                    receiver.received.append({"body": json.loads(body), "client": self.client_address[0],
                                              "code": code, "content_type": self.headers.get("Content-Type")})
                self.send_response(code)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hooks/yookassa"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def bodies(self) -> list[dict]:
        with self.lock:
            return [r["body"] for r in self.received]

    def wait(self, count: int, timeout: float = 5.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.received) >= count:
                    break
            time.sleep(0.01)
        return self.bodies()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def receiver(control):
    rcv = Receiver()
    control.set_webhooks([rcv.url])
    yield rcv
    rcv.close()


def settle(seconds: float = 0.3) -> None:
    """A short real-time pause for asserting that something did NOT happen."""
    time.sleep(seconds)
