"""Fiscal receipts (54-FZ): checked whenever sent, required when the shop says so, registered
pending -> succeeded (or canceled, late, or behind a 5xx by the fault knobs), listed and shown."""
from __future__ import annotations

import pytest
import requests
from yookassa import Payment, Receipt, Refund
from yookassa.domain.exceptions import BadRequestError, InternalServerError

from devstack.paysandbox import SandboxControlError

from .helpers import key


def receipt(*items, email="buyer@example.com", tax_system_code=1):
    return {"customer": {"email": email}, "tax_system_code": tax_system_code,
            "items": [dict(item) for item in items]}


def item(value="100.00", quantity="1", description="Concert, row 3", vat_code=4,
         payment_mode="full_prepayment"):
    return {"description": description, "quantity": quantity,
            "amount": {"value": value, "currency": "RUB"}, "vat_code": vat_code,
            "payment_mode": payment_mode, "payment_subject": "service"}


def pay_with_receipt(control, value="300.00", rcpt=None, capture=True):
    rcpt = rcpt or receipt(item("100.00", "3"))
    p = Payment.create({"amount": {"value": value, "currency": "RUB"}, "capture": capture,
                        "confirmation": {"type": "redirect", "return_url": "http://127.0.0.1:9/r"},
                        "receipt": rcpt}, idempotency_key=key())
    control.pay(p.id)
    return p


def error_of(api_answer) -> dict:
    assert api_answer.status_code == 400, api_answer.text
    body = api_answer.json()
    assert body["type"] == "error" and body["code"] == "invalid_request"
    return body


def post_payment(api, rcpt, value="300.00"):
    body = {"amount": {"value": value, "currency": "RUB"}, "capture": True}
    if rcpt is not None:
        body["receipt"] = rcpt
    return api("POST", "/payments", body, key=key())


# -- the receipt of a payment ---------------------------------------------------------------

def test_payment_receipt_is_registered_when_the_payment_succeeds(sandbox, control):
    p = Payment.create({"amount": {"value": "300.00", "currency": "RUB"}, "capture": True,
                        "confirmation": {"type": "redirect", "return_url": "http://127.0.0.1:9/r"},
                        "receipt": receipt(item("100.00", "2"), item("100.00", "1", "Parking"))},
                       idempotency_key=key())
    assert control.receipts(p.id) == []  # nothing is registered for money not taken
    control.pay(p.id)
    [pending] = control.receipts(p.id)
    assert pending["status"] == "pending" and pending["type"] == "payment"
    assert [i["description"] for i in pending["items"]] == ["Concert, row 3", "Parking"]
    control.advance(1)
    got = Receipt.find_one(pending["id"])
    assert got.status == "succeeded"
    assert got.payment_id == p.id
    assert got.registered_at and got.fiscal_document_number


def test_two_stage_payment_registers_its_receipt_at_capture(sandbox, control):
    p = pay_with_receipt(control, capture=False)
    assert control.receipts(p.id) == []
    Payment.capture(p.id, {"amount": {"value": "300.00", "currency": "RUB"}}, idempotency_key=key())
    assert [r["type"] for r in control.receipts(p.id)] == ["payment"]


def test_partial_capture_needs_the_receipt_of_what_it_captures(sandbox, control, api):
    p = pay_with_receipt(control, capture=False)
    answer = api("POST", f"/payments/{p.id}/capture", {"amount": {"value": "200.00", "currency": "RUB"}},
                 key=key())
    assert error_of(answer)["parameter"] == "receipt"
    answer = api("POST", f"/payments/{p.id}/capture",
                 {"amount": {"value": "200.00", "currency": "RUB"}, "receipt": receipt(item("100.00", "2"))},
                 key=key())
    assert answer.status_code == 200 and answer.json()["status"] == "succeeded"
    [r] = control.receipts(p.id)
    assert r["items"][0]["quantity"] == "2.00"


@pytest.mark.parametrize("rcpt,parameter", [
    (receipt(item("100.00", "2")), "receipt.items"),                                # 200 != 300
    (receipt(item("100.00", "3", description="x" * 129)), "receipt.items[0].description"),
    (receipt(item("100.00", "3", vat_code=13)), "receipt.items[0].vat_code"),
    (receipt(item("100.00", "3", vat_code=0)), "receipt.items[0].vat_code"),
    (receipt(item("100.00", "3"), tax_system_code=7), "receipt.tax_system_code"),
    ({"items": [item("100.00", "3")]}, "receipt.customer"),
    (receipt(item("100.00", "3"), email="not-an-address"), "receipt.customer.email"),
    ({"customer": {"email": "a@example.com"}, "items": []}, "receipt.items"),
    (receipt(item("100.00", "-3")), "receipt.items[0].quantity"),
    (receipt({**item("100.00", "3"), "payment_mode": "later"}), "receipt.items[0].payment_mode"),
    (receipt({**item("100.00", "3"), "amount": {"value": "100.00", "currency": "USD"}}),
     "receipt.items[0].amount.currency"),
    ("no", "receipt"),
])
def test_a_bad_receipt_is_refused_naming_the_parameter(sandbox, control, api, rcpt, parameter):
    body = error_of(post_payment(api, rcpt))
    assert body["parameter"] == parameter
    assert control.payments() == []  # refused: no payment was made


def test_description_of_exactly_128_characters_and_fractional_quantities_pass(sandbox, api):
    rcpt = receipt(item("99.99", "1.5", description="y" * 128), item("0.01", "1"))  # 149.985 -> 149.99
    answer = post_payment(api, rcpt, value="150.00")
    assert answer.status_code == 200, answer.text


def test_a_payment_without_receipt_passes_in_an_optional_shop(sandbox, control, api):
    assert control.shop()["receipts"] == "optional"
    assert post_payment(api, None).status_code == 200


# -- a shop that requires receipts ----------------------------------------------------------

def test_required_shop_refuses_a_payment_without_receipt(sandbox, control, api):
    assert control.set_receipts("required")["receipts"] == "required"
    body = error_of(post_payment(api, None))
    assert body["parameter"] == "receipt"
    assert body["description"] == "Receipt is missing or illegal"
    with pytest.raises(BadRequestError):  # the SDK sees the same 400
        Payment.create({"amount": {"value": "10.00", "currency": "RUB"}, "capture": True},
                       idempotency_key=key())
    assert post_payment(api, receipt(item("100.00", "3"))).status_code == 200


def test_required_shop_refuses_a_refund_without_receipt(sandbox, control, api):
    control.set_receipts("required")
    p = pay_with_receipt(control)
    body = error_of(api("POST", "/refunds", {"payment_id": p.id, "amount": {"value": "100.00", "currency": "RUB"}},
                        key=key()))
    assert body["parameter"] == "receipt"
    assert Payment.find_one(p.id).refunded_amount.value == 0


def test_reset_returns_the_shop_to_its_start_setting(sandbox, control, api):
    control.set_receipts("required")
    control.reset()
    assert control.shop()["receipts"] == "optional"


def test_shop_setting_is_checked(sandbox, control):
    for body in ({"receipts": "sometimes"}, {}, {"receipts": "required", "vat": 1}):
        with pytest.raises(SandboxControlError) as info:
            control._call("POST", "/shop", body)
        assert info.value.status == 400


# -- refunds ----------------------------------------------------------------------------------

def test_partial_refund_carries_the_refunded_part_only(sandbox, control, api):
    p = pay_with_receipt(control)
    wrong = api("POST", "/refunds", {"payment_id": p.id, "amount": {"value": "100.00", "currency": "RUB"},
                                     "receipt": receipt(item("100.00", "3"))}, key=key())
    assert error_of(wrong)["parameter"] == "receipt.items"
    r = Refund.create({"payment_id": p.id, "amount": {"value": "100.00", "currency": "RUB"},
                       "receipt": receipt(item("100.00", "1"))}, idempotency_key=key())
    by_refund = Receipt.list({"refund_id": r.id})
    assert [(x.type, x.refund_id) for x in by_refund.items] == [("refund", r.id)]
    by_payment = Receipt.list({"payment_id": p.id})
    assert sorted(x.type for x in by_payment.items) == ["payment", "refund"]  # the payment's and its refunds'


# -- receipts of their own: settlement ------------------------------------------------------

def settlement(payment_id, value="300.00", **over):
    body = {"type": "payment", "payment_id": payment_id, "send": True,
            "customer": {"email": "buyer@example.com"},
            "items": [item(value, "1", payment_mode="full_payment")],
            "settlements": [{"type": "prepayment", "amount": {"value": value, "currency": "RUB"}}]}
    body.update(over)
    return body


def test_settlement_receipt_through_the_sdk(sandbox, control):
    p = pay_with_receipt(control)
    made = Receipt.create(settlement(p.id), idempotency_key=key())
    assert made.status == "pending" and made.type == "payment"
    assert made.settlements[0].type == "prepayment"
    control.advance(1)
    assert Receipt.find_one(made.id).status == "succeeded"
    assert len(Receipt.list({"payment_id": p.id}).items) == 2


def test_settlement_receipt_is_idempotent_on_its_key(sandbox, control, api):
    p = pay_with_receipt(control)
    k = key()
    first = api("POST", "/receipts", settlement(p.id), key=k)
    again = api("POST", "/receipts", settlement(p.id), key=k)
    assert first.status_code == again.status_code == 200
    assert first.json()["id"] == again.json()["id"]
    assert len(control.receipts(p.id)) == 2
    other = api("POST", "/receipts", settlement(p.id, "100.00"), key=k)
    assert error_of(other)["parameter"] == "Idempotence-Key"


@pytest.mark.parametrize("change,parameter", [
    ({"send": False}, "send"),
    ({"type": "sale"}, "type"),
    ({"customer": {}}, "customer"),
    ({"settlements": []}, "settlements"),
    ({"settlements": [{"type": "prepayment", "amount": {"value": "299.00", "currency": "RUB"}}]}, "items"),
    ({"settlements": [{"type": "barter", "amount": {"value": "300.00", "currency": "RUB"}}]},
     "settlements[0].type"),
    ({"payment_id": "6c1f0a55-000f-5000-9000-000000000000"}, "payment_id"),
])
def test_bad_settlement_receipts_are_refused(sandbox, control, api, change, parameter):
    p = pay_with_receipt(control)
    body = {**settlement(p.id), **change}
    assert error_of(api("POST", "/receipts", body, key=key()))["parameter"] == parameter
    assert len(control.receipts(p.id)) == 1


def test_a_receipt_for_an_unpaid_payment_is_refused(sandbox, api):
    p = Payment.create({"amount": {"value": "300.00", "currency": "RUB"}, "capture": True},
                       idempotency_key=key())
    assert error_of(api("POST", "/receipts", settlement(p.id), key=key()))["parameter"] == "payment_id"


def test_refund_receipt_of_its_own_names_the_refund(sandbox, control, api):
    p = pay_with_receipt(control)
    r = Refund.create({"payment_id": p.id, "amount": {"value": "300.00", "currency": "RUB"}},
                      idempotency_key=key())
    body = settlement(p.id, type="refund", refund_id=r.id)
    answer = api("POST", "/receipts", body, key=key())
    assert answer.status_code == 200, answer.text
    assert answer.json()["refund_id"] == r.id and answer.json()["payment_id"] == p.id


def test_receipt_lists_filter_and_unknown_ids(sandbox, control, api):
    p = pay_with_receipt(control)
    assert api("GET", "/receipts/6c1f0a55-000f-5000-9000-000000000000").status_code == 404
    assert api("GET", "/receipts?status=lost").status_code == 400
    assert api("GET", "/receipts?order=1").status_code == 400
    assert [r["status"] for r in api("GET", f"/receipts?payment_id={p.id}&status=pending").json()["items"]] \
        == ["pending"]


# -- fault knobs --------------------------------------------------------------------------------

def test_receipt_fault_canceled_and_delay(sandbox, control):
    control.add_fault("canceled", route="receipt")
    control.add_fault("delay", route="receipt", seconds=600)
    p = pay_with_receipt(control)
    [r] = control.receipts(p.id)
    control.advance(599)
    assert Receipt.find_one(r["id"]).status == "pending"
    control.advance(2)
    assert Receipt.find_one(r["id"]).status == "canceled"
    q = Receipt.create(settlement(p.id), idempotency_key=key())  # the knobs were used up
    control.advance(1)
    assert Receipt.find_one(q.id).status == "succeeded"


def test_receipt_api_routes_take_the_payment_knobs(sandbox, control, api):
    p = pay_with_receipt(control)
    control.add_fault("error_500_before", route="POST /v3/receipts")
    k = key()
    with pytest.raises(InternalServerError):
        Receipt.create(settlement(p.id), idempotency_key=k)
    assert len(control.receipts(p.id)) == 1  # before: nothing registered
    control.add_fault("error_500_after", route="POST /v3/receipts")
    with pytest.raises(InternalServerError):
        Receipt.create(settlement(p.id), idempotency_key=k)
    assert len(control.receipts(p.id)) == 2  # after: registered, the answer lost
    again = Receipt.create(settlement(p.id), idempotency_key=k)  # the same key: the same receipt
    assert len(control.receipts(p.id)) == 2
    assert again.id == control.receipts(p.id)[1]["id"]


def test_unknown_receipt_fault_kind_is_refused(sandbox, control):
    with pytest.raises(SandboxControlError) as info:
        control.add_fault("drop_once", route="receipt")
    assert info.value.status == 400


# -- pages ----------------------------------------------------------------------------------------

def test_ledger_page_lists_receipts_beside_payments(sandbox, control):
    p = pay_with_receipt(control, rcpt=receipt(item("300.00", "1", description="Jazz <night>")))
    Receipt.create(settlement(p.id), idempotency_key=key())
    page = requests.get(sandbox.control_url + "/ledger", timeout=5)
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    assert p.id in page.text
    assert "Jazz &lt;night&gt;" in page.text
    assert page.text.count("<tr><td>payment") == 2
    assert "settles a prepayment" in page.text
    checkout = requests.get(f"{sandbox.origin}/checkout/{p.id}", timeout=5)
    assert "Fiscal receipts" in checkout.text
