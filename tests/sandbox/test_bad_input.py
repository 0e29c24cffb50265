"""Bad input gets the provider's error shape and a 4xx, never a 500 unless injected."""
from __future__ import annotations

import pytest
import requests

from .helpers import UUID_RE, create_payment, key, paid_payment

GOOD = {"amount": {"value": "10.00", "currency": "RUB"}, "capture": True}


def assert_error(resp, status, code, parameter=None):
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["type"] == "error"
    assert UUID_RE.match(body["id"])
    assert body["code"] == code
    assert isinstance(body["description"], str) and body["description"]
    if parameter is not None:
        assert body.get("parameter") == parameter
    return body


def test_malformed_json(sandbox, api):
    assert_error(api("POST", "/payments", raw=b'{"amount": {', key=key()), 400, "invalid_request")


def test_body_must_be_an_object(sandbox, api):
    assert_error(api("POST", "/payments", raw=b'[1, 2]', key=key()), 400, "invalid_request")


def test_empty_body(sandbox, api):
    assert_error(api("POST", "/payments", raw=b"", key=key()), 400, "invalid_request")


@pytest.mark.parametrize("amount,parameter", [
    (None, "amount"),
    ({"currency": "RUB"}, "amount.value"),
    ({"value": "0", "currency": "RUB"}, "amount.value"),
    ({"value": "0.00", "currency": "RUB"}, "amount.value"),
    ({"value": "-5.00", "currency": "RUB"}, "amount.value"),
    ({"value": "1.005", "currency": "RUB"}, "amount.value"),
    ({"value": "ten", "currency": "RUB"}, "amount.value"),
    ({"value": "1e3", "currency": "RUB"}, "amount.value"),
    ({"value": True, "currency": "RUB"}, "amount.value"),
    ({"value": "10.00"}, "amount.currency"),
    ({"value": "10.00", "currency": "XYZ"}, "amount.currency"),
    ({"value": "10.00", "currency": "rub"}, "amount.currency"),
])
def test_bad_amounts_on_payment(sandbox, api, control, amount, parameter):
    body = {"capture": True}
    if amount is not None:
        body["amount"] = amount
    assert_error(api("POST", "/payments", body, key=key()), 400, "invalid_request", parameter)
    assert control.payments() == []


def test_numeric_amount_value_is_accepted_and_rendered_with_two_decimals(sandbox, api):
    resp = api("POST", "/payments", {"amount": {"value": 12.5, "currency": "EUR"}}, key=key())
    assert resp.status_code == 200
    assert resp.json()["amount"] == {"value": "12.50", "currency": "EUR"}


@pytest.mark.parametrize("field,value,parameter", [
    ("description", "x" * 129, "description"),
    ("description", 5, "description"),
    ("metadata", {"a": {"nested": 1}}, "metadata"),
    ("metadata", "not-an-object", "metadata"),
    ("metadata", {f"k{i}": "v" for i in range(17)}, "metadata"),
    ("capture", "yes", "capture"),
    ("confirmation", {"type": "qr"}, "confirmation.type"),
    ("confirmation", {"type": "redirect", "return_url": "javascript:alert(1)"}, "confirmation.return_url"),
])
def test_bad_payment_fields(sandbox, api, field, value, parameter):
    body = dict(GOOD, **{field: value})
    assert_error(api("POST", "/payments", body, key=key()), 400, "invalid_request", parameter)


def test_refund_bad_inputs(sandbox, api, control):
    p = paid_payment(control, "10.00")
    assert_error(api("POST", "/refunds", {"amount": {"value": "1.00", "currency": "RUB"}}, key=key()),
                 400, "invalid_request", "payment_id")
    for value in ("10.01", "1.234"):
        body = {"payment_id": p.id, "amount": {"value": value, "currency": "RUB"}}
        assert_error(api("POST", "/refunds", body, key=key()), 400, "invalid_request", "amount.value")
    assert_error(api("POST", "/refunds", {"payment_id": "00000000-0000-4000-8000-000000000000",
                                          "amount": {"value": "1.00", "currency": "RUB"}}, key=key()),
                 404, "not_found")
    assert control.refunds() == []


def test_unknown_ids_are_404(sandbox, api):
    missing = "00000000-0000-4000-8000-00000000abcd"
    assert_error(api("GET", f"/payments/{missing}"), 404, "not_found")
    assert_error(api("GET", "/payments/not-a-uuid"), 404, "not_found")
    assert_error(api("GET", f"/refunds/{missing}"), 404, "not_found")
    assert_error(api("POST", f"/payments/{missing}/capture", key=key()), 404, "not_found")
    assert_error(api("POST", f"/payments/{missing}/cancel", key=key()), 404, "not_found")


def test_capture_of_non_capturable_payment(sandbox, api):
    p = create_payment(capture=True)
    assert_error(api("POST", f"/payments/{p.id}/capture", {}, key=key()), 400, "invalid_request")


def test_capture_bad_amount(sandbox, api, control):
    p = paid_payment(control, capture=False)
    assert_error(api("POST", f"/payments/{p.id}/capture", {"amount": {"value": "-1", "currency": "RUB"}},
                     key=key()), 400, "invalid_request", "amount.value")
    assert_error(api("POST", f"/payments/{p.id}/capture", {"amount": {"value": "1.00", "currency": "USD"}},
                     key=key()), 400, "invalid_request", "amount.currency")


def test_unknown_routes_and_methods(sandbox, api):
    assert_error(api("GET", "/nothing"), 404, "not_found")
    assert_error(api("DELETE", "/payments"), 404, "not_found")
    assert_error(api("POST", "/payments/x/refund", {}, key=key()), 404, "not_found")
    resp = requests.get(sandbox.origin + "/favicon.ico", timeout=5)
    assert_error(resp, 404, "not_found")


@pytest.mark.parametrize("query,parameter", [
    ({"limit": "0"}, "limit"), ({"limit": "101"}, "limit"), ({"limit": "many"}, "limit"),
    ({"cursor": "garbage!"}, "cursor"), ({"status": "paid"}, "status"),
    ({"created_at.gte": "yesterday"}, "created_at.gte"), ({"colour": "red"}, "colour"),
])
def test_bad_list_queries(sandbox, api, query, parameter):
    assert_error(api("GET", "/payments", params=query), 400, "invalid_request", parameter)


def test_bad_refund_list_query(sandbox, api):
    assert_error(api("GET", "/refunds", params={"status": "done"}), 400, "invalid_request", "status")


@pytest.mark.parametrize("auth", [None, ("100500", "wrong"), ("999", "sandbox_secret_local_only")])
def test_bad_credentials(sandbox, auth):
    resp = requests.post(sandbox.base_url + "/payments", json=GOOD, auth=auth,
                         headers={"Idempotence-Key": key()}, timeout=5)
    assert_error(resp, 401, "invalid_credentials")
    resp = requests.get(sandbox.base_url + "/payments", auth=auth, timeout=5)
    assert_error(resp, 401, "invalid_credentials")


def test_garbage_authorization_header(sandbox):
    resp = requests.get(sandbox.base_url + "/payments", headers={"Authorization": "Basic %%%"}, timeout=5)
    assert_error(resp, 401, "invalid_credentials")


def test_oversized_body(sandbox, api):
    resp = api("POST", "/payments", raw=b"{" + b" " * (1 << 20) + b"}", key=key())
    assert_error(resp, 400, "invalid_request")


def test_unhandled_exception_gives_provider_500_and_server_survives(sandbox, api, monkeypatch):
    p = create_payment()

    def boom(_pid):
        raise RuntimeError("bug")

    monkeypatch.setattr(sandbox.store, "get_payment", boom)
    assert_error(api("GET", f"/payments/{p.id}"), 500, "internal_server_error")
    monkeypatch.undo()
    assert api("GET", f"/payments/{p.id}").json()["id"] == p.id


def test_unhandled_exception_in_post_frees_the_idempotence_key(sandbox, api, monkeypatch, control):
    calls = []
    original = sandbox.store.create_payment

    def flaky(body):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("bug")
        return original(body)

    monkeypatch.setattr(sandbox.store, "create_payment", flaky)
    k = key()
    assert_error(api("POST", "/payments", GOOD, key=k), 500, "internal_server_error")
    assert api("POST", "/payments", GOOD, key=k).status_code == 200
    assert len(control.payments()) == 1


def test_control_api_errors(sandbox, control):
    from devstack.paysandbox import SandboxControlError
    with pytest.raises(SandboxControlError) as err:
        control._call("GET", "/nope")
    assert err.value.status == 404
    with pytest.raises(SandboxControlError) as err:
        control.advance(-5)
    assert err.value.status == 400
    with pytest.raises(SandboxControlError) as err:
        control.pay("00000000-0000-4000-8000-000000000000")
    assert err.value.status == 404
    with pytest.raises(SandboxControlError) as err:
        control.set_webhooks(["ftp://x"])
    assert err.value.status == 400
    with pytest.raises(SandboxControlError) as err:
        control.set_clock("not a time")
    assert err.value.status == 400
