"""The sandbox under a sale's volume: expiry by a deadline index, several webhook deliveries at
once, and the sandbox in a process of its own (what the bench runs)."""
from __future__ import annotations

import json
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from devstack.paysandbox import SandboxControl
from devstack.paysandbox.faults import FaultRegistry
from devstack.paysandbox.notifier import Notifier
from devstack.paysandbox.process import SandboxProcess
from devstack.paysandbox.store import Store


class _Clock:
    def __init__(self) -> None:
        self.at = datetime(2031, 6, 1, tzinfo=timezone.utc)

    def now(self) -> datetime:
        return self.at

    def add_listener(self, _fn) -> None:
        pass

    def real_seconds(self, seconds: float) -> float:
        return seconds


def _store(clock: _Clock) -> Store:
    return Store(threading.RLock(), clock, shop_id="100500", checkout_origin="http://127.0.0.1",
                 pending_expiry_seconds=60, capture_expiry_seconds=600, idempotence_ttl_seconds=300)


def _pay_body(n: int, capture: bool = True) -> dict:
    return {"amount": {"value": f"{n}.00", "currency": "RUB"}, "capture": capture}


def test_expiry_cancels_exactly_the_due_payments_in_creation_order():
    clock = _Clock()
    store = _store(clock)
    created = [store.create_payment(_pay_body(n)) for n in range(1, 201)]
    paid = {p["id"] for p in created[::3]}
    for payment_id in paid:
        store.customer_pays(payment_id)
    clock.at += timedelta(seconds=59)
    assert store.tick() == []
    clock.at += timedelta(seconds=1)
    events = store.tick()
    expected = [p["id"] for p in created if p["id"] not in paid]
    assert [obj["id"] for _, obj in events] == expected
    assert {name for name, _ in events} == {"payment.canceled"}
    assert all(obj["cancellation_details"]["reason"] == "expired_on_confirmation" for _, obj in events)
    assert store.tick() == []  # each expires once
    assert all(store.get_payment(pid)["status"] == "succeeded" for pid in paid)


def test_a_payment_waiting_for_capture_expires_at_its_own_later_deadline():
    clock = _Clock()
    store = _store(clock)
    two_stage = store.create_payment(_pay_body(5, capture=False))
    clock.at += timedelta(seconds=30)
    store.customer_pays(two_stage["id"])  # now due at +630 s, not at the pending deadline (+60)
    clock.at += timedelta(seconds=31)
    assert store.tick() == []
    clock.at += timedelta(seconds=569)
    events = store.tick()
    assert [(name, obj["id"], obj["cancellation_details"]["reason"]) for name, obj in events] == [
        ("payment.canceled", two_stage["id"], "expired_on_capture")]


def test_old_idempotence_keys_are_forgotten_and_in_flight_ones_kept():
    clock = _Clock()
    store = _store(clock)
    _, old_done = store.idem_begin("old-done", "f")
    store.idem_finish("old-done", old_done, 200, b"{}")
    store.idem_begin("old-in-flight", "f")
    clock.at += timedelta(seconds=200)
    _, young = store.idem_begin("young", "f")
    store.idem_finish("young", young, 200, b"{}")
    clock.at += timedelta(seconds=100)
    store.tick()
    assert set(k for _, k in store.keys) == {"old-in-flight", "young"}


class _SlowReceiver(BaseHTTPRequestHandler):
    lock = threading.Lock()
    active = 0
    most = 0
    bodies: list[dict] = []

    def do_POST(self):  # noqa: N802
        cls = type(self)
        with cls.lock:
            cls.active += 1
            cls.most = max(cls.most, cls.active)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        time.sleep(0.2)
        with cls.lock:
            cls.active -= 1
            cls.bodies.append(body)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_):
        pass


def _deliver(workers: int) -> tuple[int, float, int]:
    _SlowReceiver.active = _SlowReceiver.most = 0
    _SlowReceiver.bodies = []
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), _SlowReceiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    lock = threading.RLock()
    clock = _Clock()
    notifier = Notifier(lock, clock, FaultRegistry(lock), urls=[f"http://127.0.0.1:{receiver.server_address[1]}/"],
                        workers=workers)
    notifier.start()
    try:
        started = time.monotonic()
        notifier.enqueue([("payment.succeeded", {"id": f"p{n}", "status": "succeeded"}) for n in range(8)])
        deadline = time.monotonic() + 20
        while len(_SlowReceiver.bodies) < 8 and time.monotonic() < deadline:
            time.sleep(0.02)
        return len(_SlowReceiver.bodies), time.monotonic() - started, _SlowReceiver.most
    finally:
        notifier.stop()
        receiver.shutdown()
        receiver.server_close()


def test_one_worker_delivers_one_notification_at_a_time():
    delivered, _took, most = _deliver(workers=1)
    assert (delivered, most) == (8, 1)
    assert [b["object"]["id"] for b in _SlowReceiver.bodies] == [f"p{n}" for n in range(8)]


def test_several_workers_deliver_at_once_and_each_notification_once():
    delivered, took, most = _deliver(workers=4)
    assert delivered == 8 and most > 1
    assert sorted(b["object"]["id"] for b in _SlowReceiver.bodies) == sorted(f"p{n}" for n in range(8))
    assert took < 8 * 0.2  # serially it takes 1.6 s at least


def test_the_sandbox_in_a_process_of_its_own_serves_the_api_and_stops():
    with SandboxProcess(webhook_workers=2) as sandbox:
        assert sandbox.base_url.startswith("http://127.0.0.1:") and sandbox.base_url.endswith("/v3")
        control = SandboxControl(sandbox.control_url)
        assert control.health()
        process = sandbox.process
    assert process is not None and process.poll() is not None
