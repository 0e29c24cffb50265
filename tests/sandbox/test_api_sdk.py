"""Every /v3 endpoint driven through the unmodified official SDK."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from yookassa import Payment, Refund
from yookassa.domain.exceptions import BadRequestError, NotFoundError

from .helpers import MONEY_RE, TS_RE, UUID_RE, capture, create_payment, key, paid_payment, refund


def test_create_one_stage_payment_shape(sandbox):
    p = create_payment("1500.5", capture=True, metadata={"booking_id": "B-1"},
                       return_url="https://shop.example/return")
    assert UUID_RE.match(p.id)
    assert p.status == "pending"
    assert p.paid is False
    assert p.refundable is False
    assert str(p.amount.value) == "1500.50" and p.amount.currency == "RUB"
    assert p.description == "Yoga class"
    assert p.metadata == {"booking_id": "B-1", "cms_name": "yookassa_sdk_python"}
    assert TS_RE.match(p.created_at)
    assert p.test is True
    assert p.confirmation.type == "redirect"
    assert p.confirmation.return_url == "https://shop.example/return"
    assert p.confirmation.confirmation_url == f"{sandbox.origin}/checkout/{p.id}"
    assert p.captured_at is None and p.expires_at is None and p.income_amount is None


def test_one_stage_payment_succeeds_when_customer_pays(sandbox, control):
    p = paid_payment(control, "100.00", capture=True)
    assert p.status == "succeeded"
    assert p.paid is True
    assert TS_RE.match(p.captured_at)
    assert p.refundable is True
    assert str(p.refunded_amount.value) == "0.00"
    assert str(p.income_amount.value) == "96.50"  # 3.5 % sandbox fee
    assert p.payment_method.type == "bank_card"
    assert p.confirmation is None


def test_two_stage_payment_full_capture(sandbox, control):
    p = paid_payment(control, "250.00", capture=False)
    assert p.status == "waiting_for_capture"
    assert p.paid is True
    assert p.captured_at is None
    assert p.refundable is False
    created = datetime.fromisoformat(p.created_at.replace("Z", "+00:00"))
    expires = datetime.fromisoformat(p.expires_at.replace("Z", "+00:00"))
    assert timedelta(days=7) - timedelta(seconds=5) < expires - created <= timedelta(days=7, seconds=5)
    captured = Payment.capture(p.id, idempotency_key=key())
    assert captured.status == "succeeded"
    assert str(captured.amount.value) == "250.00"
    assert captured.expires_at is None
    assert TS_RE.match(captured.captured_at)
    assert Payment.find_one(p.id).status == "succeeded"


def test_two_stage_partial_capture_changes_amount_and_income(sandbox, control):
    p = paid_payment(control, "1000.00", capture=False)
    captured = capture(p.id, "600.00")
    assert captured.status == "succeeded"
    assert str(captured.amount.value) == "600.00"
    assert str(captured.income_amount.value) == "579.00"
    with pytest.raises(BadRequestError):
        refund(p.id, "600.01")


def test_capture_more_than_authorised_is_rejected(sandbox, control):
    p = paid_payment(control, "100.00", capture=False)
    with pytest.raises(BadRequestError) as err:
        Payment.capture(p.id, {"amount": {"value": "100.01", "currency": "RUB"}}, idempotency_key=key())
    assert err.value.args[0]["code"] == "invalid_request"
    assert Payment.find_one(p.id).status == "waiting_for_capture"


def test_cancel_waiting_for_capture(sandbox, control, receiver):
    p = paid_payment(control, capture=False)
    canceled = Payment.cancel(p.id, idempotency_key=key())
    assert canceled.status == "canceled"
    assert canceled.cancellation_details.party == "merchant"
    assert canceled.cancellation_details.reason == "canceled_by_merchant"
    assert canceled.paid is True  # money was authorised, then released
    events = [b["event"] for b in receiver.wait(2)]
    assert events == ["payment.waiting_for_capture", "payment.canceled"]


def test_get_payment_and_unknown_payment(sandbox):
    p = create_payment()
    got = Payment.find_one(p.id)
    assert got.id == p.id and got.status == "pending"
    with pytest.raises(NotFoundError) as err:
        Payment.find_one("00000000-0000-4000-8000-000000000000")
    assert err.value.args[0]["code"] == "not_found"


def test_list_payments_pagination_with_next_cursor(sandbox):
    ids = [create_payment(f"{10 + i}.00").id for i in range(5)]
    page1 = Payment.list({"limit": 2})
    assert page1.type == "list"
    assert [x.id for x in page1.items] == [ids[4], ids[3]]  # newest first
    assert page1.next_cursor
    page2 = Payment.list({"limit": 2, "cursor": page1.next_cursor})
    assert [x.id for x in page2.items] == [ids[2], ids[1]]
    page3 = Payment.list({"limit": 2, "cursor": page2.next_cursor})
    assert [x.id for x in page3.items] == [ids[0]]
    assert page3.next_cursor is None


def test_list_payments_filters_by_status_and_created_at(sandbox, control):
    first = create_payment("10.00")
    control.advance(60)
    second = paid_payment(control, "20.00")
    control.advance(60)
    third = create_payment("30.00")
    assert [x.id for x in Payment.list({"status": "succeeded"}).items] == [second.id]
    assert [x.id for x in Payment.list({"status": "pending"}).items] == [third.id, first.id]
    assert [x.id for x in Payment.list({"created_at.gte": second.created_at}).items] == [third.id, second.id]
    assert [x.id for x in Payment.list({"created_at.gt": second.created_at}).items] == [third.id]
    assert [x.id for x in Payment.list({"created_at.lte": second.created_at}).items] == [second.id, first.id]
    assert [x.id for x in Payment.list({"created_at.lt": second.created_at}).items] == [first.id]
    window = Payment.list({"created_at.gt": first.created_at, "created_at.lt": third.created_at})
    assert [x.id for x in window.items] == [second.id]


def test_full_and_partial_refunds(sandbox, control, receiver):
    p = paid_payment(control, "300.00")
    r1 = Refund.create({"payment_id": p.id, "amount": {"value": "100.00", "currency": "RUB"},
                        "description": "one class missed"}, idempotency_key=key())
    assert UUID_RE.match(r1.id)
    assert r1.status == "succeeded" and r1.payment_id == p.id
    assert str(r1.amount.value) == "100.00"
    assert TS_RE.match(r1.created_at)
    after1 = Payment.find_one(p.id)
    assert str(after1.refunded_amount.value) == "100.00" and after1.refundable is True
    r2 = refund(p.id, "200.00")
    after2 = Payment.find_one(p.id)
    assert str(after2.refunded_amount.value) == "300.00"
    assert after2.refundable is False
    assert after2.status == "succeeded"
    with pytest.raises(BadRequestError) as err:
        refund(p.id, "0.01")
    assert err.value.args[0]["parameter"] == "amount.value"
    got = Refund.find_one(r2.id)
    assert got.id == r2.id and str(got.amount.value) == "200.00"
    events = [(b["event"], b["object"]["id"]) for b in receiver.wait(3)]
    assert ("refund.succeeded", r1.id) in events and ("refund.succeeded", r2.id) in events


def test_list_refunds_by_payment_id(sandbox, control):
    p1 = paid_payment(control, "100.00")
    p2 = paid_payment(control, "100.00")
    a = refund(p1.id, "10.00")
    b = refund(p2.id, "20.00")
    c = refund(p1.id, "30.00")
    assert [r.id for r in Refund.list({"payment_id": p1.id}).items] == [c.id, a.id]
    assert [r.id for r in Refund.list({"payment_id": p2.id}).items] == [b.id]
    page = Refund.list({"limit": 1})
    assert [r.id for r in page.items] == [c.id] and page.next_cursor
    assert [r.id for r in Refund.list({"limit": 1, "cursor": page.next_cursor}).items] == [b.id]


def test_unknown_refund_is_404(sandbox):
    with pytest.raises(NotFoundError):
        Refund.find_one("00000000-0000-4000-8000-000000000001")


def test_amounts_and_timestamps_format_everywhere(sandbox, control):
    p = paid_payment(control, "5", capture=True)
    raw = dict(p)
    for money in (raw["amount"], raw["income_amount"], raw["refunded_amount"]):
        assert MONEY_RE.match(money["value"])
    assert raw["amount"]["value"] == "5.00"
    for ts in (raw["created_at"], raw["captured_at"]):
        assert TS_RE.match(ts)


def test_other_currencies_accepted(sandbox, control):
    for currency in ("USD", "EUR"):
        p = create_payment("12.30", currency=currency)
        assert p.amount.currency == currency


def test_second_secret_key_is_accepted(sandbox):
    from yookassa import Configuration
    Configuration.configure("100500", "second_key", api_url=sandbox.base_url)
    assert create_payment().status == "pending"
