"""The local webhook receiver (devstack/aws/webhook_receiver.py) on its own: it records what
arrives on the clock it is given, answers each receiver's mode, and its page checks signatures
with a secret sent in the form's body, escaping whatever arrived."""
from __future__ import annotations

import json

from devstack.aws.webhook_receiver import WebhookReceiver
from holdfast.domain import webhooks as rules

SECRET = "whsec_test"


def post(receiver, path, body, at=1_000):
    headers = {rules.DELIVERY_HEADER: "dlv_1", rules.EVENT_TYPE_HEADER: "order.confirmed",
               rules.SIGNATURE_HEADER: rules.signature_header(SECRET, at, body)}
    return receiver.page("POST", path, headers, {}, body.encode())


def test_each_receiver_answers_its_mode_and_records_the_request_on_the_stacks_clock():
    receiver = WebhookReceiver(now=lambda: 1_000.0)
    assert post(receiver, "/dev/webhooks/receiver/a", "{}")[0] == 200
    status, _, _ = receiver.page("POST", "/dev/webhooks/mode", {}, {}, json.dumps({"receiver": "a", "status": 503}).encode())
    assert status == 200
    assert post(receiver, "/dev/webhooks/receiver/a", "{}")[0] == 503
    assert post(receiver, "/dev/webhooks/receiver", "{}")[0] == 200          # another receiver keeps answering 200
    assert [(a["receiver"], a["answered"], a["at"]) for a in receiver.arrivals("a")] == [("a", 200, 1000.0),
                                                                                        ("a", 503, 1000.0)]
    assert receiver.page("POST", "/dev/webhooks/mode", {}, {}, b'{"status": 99}')[0] == 400
    assert receiver.page("GET", "/dev/webhooks/receiver", {}, {}, b"")[0] == 405


def test_the_page_checks_signatures_with_the_secret_in_the_forms_body_and_escapes_the_body():
    receiver = WebhookReceiver(now=lambda: 1_000.0)
    post(receiver, "/dev/webhooks/receiver", '{"x": "<script>alert(1)</script>"}')
    _, headers, page = receiver.page("POST", "/dev/webhooks", {}, {}, f"secret={SECRET}".encode())
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert b"<script>alert" not in page and b"valid" in page
    _, _, wrong = receiver.page("POST", "/dev/webhooks", {}, {}, b"secret=whsec_other")
    assert b"does not match" in wrong
