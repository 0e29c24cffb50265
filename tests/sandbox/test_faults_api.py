"""API fault knobs, as the official SDK experiences them over plain http."""
from __future__ import annotations

import time

import pytest
import requests
from yookassa import Payment
from yookassa.domain.exceptions import InternalServerError, ResponseProcessingError, TooManyRequestsError

from devstack.paysandbox import SandboxControlError

from .helpers import create_payment, key, paid_payment, refund


def test_error_500_before_means_nothing_happened(sandbox, control):
    control.add_fault("error_500_before", "POST /v3/payments", times=1)
    k = key()
    with pytest.raises(InternalServerError) as err:
        create_payment(idempotency_key=k)
    assert err.value.args[0]["code"] == "internal_server_error"
    assert err.value.args[0]["type"] == "error"
    assert control.payments() == []
    p = create_payment(idempotency_key=k)  # the same key is free: nothing was stored
    assert [x["id"] for x in control.payments()] == [p.id]


def test_error_500_after_means_effect_happened_and_replay_returns_it(sandbox, control):
    control.add_fault("error_500_after", "POST /v3/payments", times=1)
    k = key()
    with pytest.raises(InternalServerError):
        create_payment(idempotency_key=k, metadata={"booking_id": "B-500"})
    stored = control.find_payments(booking_id="B-500")
    assert len(stored) == 1
    again = create_payment(idempotency_key=k, metadata={"booking_id": "B-500"})
    assert again.id == stored[0]["id"]
    assert len(control.find_payments(booking_id="B-500")) == 1


def test_drop_response_after_raises_bare_attribute_error(sandbox, control):
    control.add_fault("drop_response_after", "POST /v3/payments", times=1)
    k = key()
    with pytest.raises(AttributeError):
        create_payment(idempotency_key=k, metadata={"booking_id": "B-drop"})
    stored = control.find_payments(booking_id="B-drop")
    assert len(stored) == 1
    assert create_payment(idempotency_key=k, metadata={"booking_id": "B-drop"}).id == stored[0]["id"]


def test_drop_response_after_on_capture(sandbox, control):
    p = paid_payment(control, capture=False)
    control.add_fault("drop_response_after", "POST /v3/payments/{id}/capture")
    k = key()
    with pytest.raises(AttributeError):
        Payment.capture(p.id, idempotency_key=k)
    assert Payment.find_one(p.id).status == "succeeded"
    assert Payment.capture(p.id, idempotency_key=k).status == "succeeded"


def test_delay_knob(sandbox, control, api):
    control.add_fault("delay", "GET /v3/payments/{id}", seconds=0.4)
    p = create_payment()
    started = time.monotonic()
    assert Payment.find_one(p.id).id == p.id
    assert time.monotonic() - started >= 0.4
    control.add_fault("delay", "GET /v3/payments/{id}", seconds=1.0)
    with pytest.raises(requests.exceptions.ReadTimeout):
        api("GET", f"/payments/{p.id}", timeout=0.3)


def test_too_many_requests_knob(sandbox, control):
    control.add_fault("too_many_requests", "POST /v3/refunds", retry_after=2)
    p = paid_payment(control)
    with pytest.raises(TooManyRequestsError) as err:
        refund(p.id, "1.00")
    assert err.value.args[0]["code"] == "too_many_requests"
    assert err.value.args[0]["retry_after"] == 2
    assert control.refunds() == []


def test_accepted_202_over_http_is_response_processing_error(sandbox, control):
    control.add_fault("accepted_202", "POST /v3/payments", retry_after=1800)
    with pytest.raises(ResponseProcessingError) as err:
        create_payment()
    assert err.value.args[0]["type"] == "processing"
    assert err.value.args[0]["retry_after"] == 1800
    assert control.payments() == []


def test_html_502_knob_breaks_the_sdk_json_parsing(sandbox, control, api):
    control.add_fault("html_502", "GET /v3/payments", times=2)
    with pytest.raises(requests.exceptions.JSONDecodeError):
        Payment.list()
    resp = api("GET", "/payments")
    assert resp.status_code == 502
    assert resp.headers["Content-Type"].startswith("text/html")
    assert "502 Bad Gateway" in resp.text
    assert Payment.list().type == "list"


def test_times_n_then_success_and_route_isolation(sandbox, control):
    control.add_fault("error_500_before", "GET /v3/payments/{id}", times=2)
    p = create_payment()  # POST route is not affected
    for _ in range(2):
        with pytest.raises(InternalServerError):
            Payment.find_one(p.id)
    assert Payment.find_one(p.id).id == p.id
    assert control.faults() == []


def test_wildcard_route(sandbox, control):
    control.add_fault("error_500_before", "*", times=1)
    with pytest.raises(InternalServerError):
        Payment.list()
    assert Payment.list().type == "list"


def _pattern(control, p_id, seed):
    control.clear_faults()
    control.add_fault("error_500_before", "GET /v3/payments/{id}", probability=0.5, seed=seed)
    out = []
    for _ in range(24):
        try:
            Payment.find_one(p_id)
            out.append(".")
        except InternalServerError:
            out.append("X")
    control.clear_faults()
    return "".join(out)


def test_probability_with_seed_is_reproducible(sandbox, control):
    p = create_payment()
    a = _pattern(control, p.id, seed=42)
    b = _pattern(control, p.id, seed=42)
    c = _pattern(control, p.id, seed=7)
    assert a == b
    assert "X" in a and "." in a
    assert a != c


def test_faults_list_remove_clear(sandbox, control):
    f1 = control.add_fault("delay", "GET /v3/refunds", seconds=0.1, times=3)
    f2 = control.add_fault("duplicate", count=2)
    listed = control.faults()
    assert [f["id"] for f in listed] == [f1["id"], f2["id"]]
    assert listed[0]["times_left"] == 3 and listed[0]["params"] == {"seconds": 0.1}
    assert listed[1]["route"] == "webhook"
    control.remove_fault(f1["id"])
    assert [f["id"] for f in control.faults()] == [f2["id"]]
    control.clear_faults()
    assert control.faults() == []
    with pytest.raises(SandboxControlError) as err:
        control.remove_fault(999)
    assert err.value.status == 404


@pytest.mark.parametrize("spec", [
    {"kind": "explode", "route": "POST /v3/payments"},
    {"kind": "delay", "route": "POST /v3/nowhere"},
    {"kind": "drop_once", "route": "POST /v3/payments"},
    {"kind": "error_500_before", "route": "POST /v3/payments", "probability": 2},
    {"kind": "error_500_before", "route": "POST /v3/payments", "times": 0},
    {"kind": "delay", "route": "GET /v3/payments", "seconds": -1},
    {"kind": "forge", "event": "payment.maybe"},
])
def test_bad_fault_specs_are_rejected(sandbox, control, spec):
    with pytest.raises(SandboxControlError) as err:
        control._call("POST", "/faults", spec)
    assert err.value.status == 400
    assert err.value.body["code"] == "invalid_request"
