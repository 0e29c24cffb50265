"""Idempotence-Key: replay, conflict, missing/oversized keys, concurrency, 24 h retention."""
from __future__ import annotations

import threading

import pytest
from yookassa import Payment, Refund
from yookassa.domain.exceptions import BadRequestError

from .helpers import create_payment, key, paid_payment, refund

BODY = {"amount": {"value": "100.00", "currency": "RUB"}, "capture": True,
        "confirmation": {"type": "redirect", "return_url": "http://127.0.0.1:9/r"}}


def test_same_key_same_request_replays_first_response_verbatim(sandbox, api, control):
    k = key()
    first = api("POST", "/payments", BODY, key=k)
    second = api("POST", "/payments", BODY, key=k)
    assert first.status_code == second.status_code == 200
    assert first.content == second.content
    assert len(control.payments()) == 1


def test_replay_through_sdk_returns_same_payment(sandbox, control):
    k = key()
    a = create_payment(idempotency_key=k)
    control.pay(a.id)  # state moves on; the replay is still the stored first answer
    b = create_payment(idempotency_key=k)
    assert a.id == b.id
    assert b.status == "pending"
    assert len(control.payments()) == 1


def test_body_key_order_does_not_matter(sandbox, api, control):
    k = key()
    a = api("POST", "/payments", raw='{"amount":{"value":"1.00","currency":"RUB"},"capture":true}', key=k)
    reordered = '{"capture": true, "amount": {"currency": "RUB", "value": "1.00"}}'
    b = api("POST", "/payments", raw=reordered, key=k)
    assert a.json()["id"] == b.json()["id"]


def test_same_key_different_body_is_conflict(sandbox, api):
    k = key()
    assert api("POST", "/payments", BODY, key=k).status_code == 200
    other = dict(BODY, description="different")
    resp = api("POST", "/payments", other, key=k)
    assert resp.status_code == 400
    body = resp.json()
    assert body["type"] == "error" and body["code"] == "invalid_request"
    assert body["parameter"] == "Idempotence-Key"


def test_same_key_different_path_is_conflict(sandbox, control):
    p = paid_payment(control, capture=False)
    k = key()
    Payment.capture(p.id, idempotency_key=k)
    with pytest.raises(BadRequestError) as err:
        Refund.create({"payment_id": p.id, "amount": {"value": "1.00", "currency": "RUB"}}, idempotency_key=k)
    assert err.value.args[0]["parameter"] == "Idempotence-Key"


def test_capture_replay_does_not_capture_twice(sandbox, control, receiver):
    p = paid_payment(control, capture=False)
    k = key()
    a = Payment.capture(p.id, {"amount": {"value": "40.00", "currency": "RUB"}}, idempotency_key=k)
    b = Payment.capture(p.id, {"amount": {"value": "40.00", "currency": "RUB"}}, idempotency_key=k)
    assert a.status == b.status == "succeeded"
    assert a.captured_at == b.captured_at
    bodies = receiver.wait(2)
    control.wait_for_deliveries(2)
    assert [x["event"] for x in bodies] == ["payment.waiting_for_capture", "payment.succeeded"]


def test_error_responses_are_replayed_too(sandbox, api):
    k = key()
    bad = {"amount": {"value": "0", "currency": "RUB"}}
    a = api("POST", "/payments", bad, key=k)
    b = api("POST", "/payments", bad, key=k)
    assert a.status_code == b.status_code == 400
    assert a.json()["id"] == b.json()["id"]


def test_missing_key_is_rejected(sandbox, api, control):
    resp = api("POST", "/payments", BODY)
    assert resp.status_code == 400
    assert resp.json()["parameter"] == "Idempotence-Key"
    assert control.payments() == []


def test_key_longer_than_64_is_rejected(sandbox, api, control):
    assert api("POST", "/payments", BODY, key="k" * 64).status_code == 200
    resp = api("POST", "/payments", BODY, key="k" * 65)
    assert resp.status_code == 400
    assert resp.json()["parameter"] == "Idempotence-Key"
    assert len(control.payments()) == 1


def test_keys_are_forgotten_after_24_sandbox_hours(sandbox, api, control):
    k = key()
    first = api("POST", "/payments", BODY, key=k).json()
    control.advance(86399)
    assert api("POST", "/payments", BODY, key=k).json()["id"] == first["id"]
    control.advance(1)
    third = api("POST", "/payments", BODY, key=k).json()
    assert third["id"] != first["id"]
    assert len(control.payments()) == 2


def test_concurrent_requests_with_one_key_have_one_effect(sandbox, control):
    k = key()
    control.add_fault("delay", "POST /v3/payments", seconds=0.3, times=1)  # first one is slow
    results, errors = [], []
    barrier = threading.Barrier(8)

    def worker():
        barrier.wait()
        try:
            results.append(create_payment(idempotency_key=k).id)
        except Exception as exc:  # pragma: no cover - surfaced by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert errors == []
    assert len(results) == 8 and len(set(results)) == 1
    assert len(control.payments()) == 1


def test_concurrent_refunds_with_distinct_keys_never_over_refund(sandbox, control):
    p = paid_payment(control, "100.00")
    outcomes = []
    barrier = threading.Barrier(6)

    def worker():
        barrier.wait()
        try:
            refund(p.id, "30.00")
            outcomes.append("ok")
        except BadRequestError:
            outcomes.append("rejected")

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(outcomes) == ["ok"] * 3 + ["rejected"] * 3
    assert str(Payment.find_one(p.id).refunded_amount.value) == "90.00"
