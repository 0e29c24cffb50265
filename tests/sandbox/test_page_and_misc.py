"""The payment page, request logs, the CLI, and the control client's inspection calls."""
from __future__ import annotations

import logging
import re
import subprocess
import sys
import time

import requests
from yookassa import Payment

from devstack.paysandbox import DEFAULT_PORT, DEFAULT_SECRET_KEY, DEFAULT_SHOP_ID
from devstack.paysandbox.__main__ import build_parser

from .helpers import create_payment, key


def test_payment_page_shows_amount_description_and_buttons(sandbox):
    p = create_payment("1234.50", description="Pottery <b>workshop</b>")
    resp = requests.get(p.confirmation.confirmation_url, timeout=5)
    assert resp.status_code == 200
    assert resp.headers["Content-Type"].startswith("text/html")
    assert "1234.50 RUB" in resp.text
    assert "Pottery &lt;b&gt;workshop&lt;/b&gt;" in resp.text
    assert f'action="/checkout/{p.id}/pay"' in resp.text
    assert f'action="/checkout/{p.id}/decline"' in resp.text


def test_pay_button_redirects_to_return_url(sandbox, receiver):
    p = create_payment(return_url="http://127.0.0.1:9/booking/42/return", capture=False)
    resp = requests.post(p.confirmation.confirmation_url + "/pay", allow_redirects=False, timeout=5)
    assert resp.status_code == 303
    assert resp.headers["Location"] == "http://127.0.0.1:9/booking/42/return"
    assert Payment.find_one(p.id).status == "waiting_for_capture"
    assert receiver.wait(1)[0]["event"] == "payment.waiting_for_capture"


def test_decline_button_without_return_url(sandbox):
    p = create_payment()  # with confirmation
    bare = Payment.create({"amount": {"value": "10.00", "currency": "RUB"}}, idempotency_key=key())
    assert bare.confirmation is None
    resp = requests.post(f"{sandbox.origin}/checkout/{bare.id}/decline", allow_redirects=False, timeout=5)
    assert resp.status_code == 200 and "declined" in resp.text
    got = Payment.find_one(bare.id)
    assert got.status == "canceled" and got.cancellation_details.reason == "general_decline"
    assert Payment.find_one(p.id).status == "pending"


def test_page_after_final_state_and_unknown(sandbox, control):
    p = create_payment()
    control.pay(p.id)
    page = requests.get(f"{sandbox.origin}/checkout/{p.id}", timeout=5)
    assert "succeeded" in page.text and "/pay" not in page.text
    again = requests.post(f"{sandbox.origin}/checkout/{p.id}/pay", allow_redirects=False, timeout=5)
    assert again.status_code == 409
    missing = requests.get(f"{sandbox.origin}/checkout/00000000-0000-4000-8000-000000000000", timeout=5)
    assert missing.status_code == 404


def test_request_log_lines_never_contain_secrets_or_payloads(sandbox, caplog):
    caplog.set_level(logging.INFO, logger="paysandbox")
    k = "abcdefgh-SECRETPART-0000"
    create_payment(idempotency_key=k, description="very private description", metadata={"email": "a@b.c"})
    lines = [r.getMessage() for r in caplog.records if r.name == "paysandbox"]
    assert any(re.fullmatch(r"POST /v3/payments 200 key=abcdefgh", line) for line in lines), lines
    text = "\n".join(lines)
    for secret in (DEFAULT_SECRET_KEY, "SECRETPART", "very private", "a@b.c"):
        assert secret not in text


def test_control_inspection_by_metadata(sandbox, control):
    for booking in ("B-1", "B-1", "B-2"):
        create_payment(metadata={"booking_id": booking})
    assert len(control.find_payments(booking_id="B-1")) == 2
    assert len(control.find_payments(booking_id="B-2")) == 1
    assert control.find_payments(booking_id="B-3") == []
    one = control.find_payments(booking_id="B-2")[0]
    assert control.payment(one["id"])["metadata"]["booking_id"] == "B-2"
    control.pay(one["id"])
    assert [p["id"] for p in control.payments(status="succeeded")] == [one["id"]]
    health = control.health()
    assert health["status"] == "ok" and health["base_url"] == sandbox.base_url


def test_reset_clears_everything(sandbox, control, receiver):
    create_payment()
    control.add_fault("delay", "GET /v3/payments", seconds=0.1)
    control.advance(50)
    control.reset()
    assert control.payments() == [] and control.faults() == []
    assert control.deliveries() == [] and control.refunds() == []
    assert control.webhooks()["urls"] == []  # back to the start-up configuration


def test_cli_defaults():
    args = build_parser().parse_args([])
    assert (args.host, args.port, args.shop_id) == ("127.0.0.1", DEFAULT_PORT, DEFAULT_SHOP_ID)
    assert DEFAULT_PORT == 8090 and DEFAULT_SHOP_ID == "100500"
    assert args.secret_keys is None and args.webhook_urls == []
    args = build_parser().parse_args(["--webhook-url", "http://127.0.0.1:1/a", "--webhook-url",
                                      "http://127.0.0.1:1/b", "--time-scale", "60", "--https",
                                      "--pending-expiry-seconds", "900"])
    assert args.webhook_urls == ["http://127.0.0.1:1/a", "http://127.0.0.1:1/b"]
    assert (args.time_scale, args.https, args.pending_expiry_seconds) == (60.0, True, 900.0)


def test_module_entry_point_starts_and_stops():
    cmd = [sys.executable, "-m", "devstack.paysandbox", "--port", "0", "--log-level", "WARNING"]
    proc = subprocess.Popen(cmd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"API (http://127\.0\.0\.1:\d+/v3)", line)
        assert m, line
        resp = requests.get(m.group(1) + "/payments", auth=(DEFAULT_SHOP_ID, DEFAULT_SECRET_KEY), timeout=5)
        assert resp.status_code == 200 and resp.json() == {"type": "list", "items": []}
    finally:
        proc.terminate()
        started = time.monotonic()
        proc.wait(timeout=10)
    assert time.monotonic() - started < 5
    assert proc.returncode == 0
