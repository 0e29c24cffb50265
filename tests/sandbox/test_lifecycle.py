"""Lifecycle rules: customer actions, expiries on the sandbox clock, final states, refund rules."""
from __future__ import annotations

import pytest
from yookassa import Payment
from yookassa.domain.exceptions import BadRequestError

from devstack.paysandbox import SandboxControlError

from .helpers import create_payment, key, paid_payment, refund


def test_pending_until_customer_acts(sandbox, control):
    p = create_payment()
    control.advance(3599)
    assert Payment.find_one(p.id).status == "pending"


def test_pending_payment_expires_on_confirmation(sandbox, control, receiver):
    p = create_payment()
    control.advance(3600)
    got = Payment.find_one(p.id)
    assert got.status == "canceled"
    assert got.paid is False
    assert got.cancellation_details.party == "yoo_money"
    assert got.cancellation_details.reason == "expired_on_confirmation"
    body = receiver.wait(1)[0]
    assert body["event"] == "payment.canceled"
    assert body["object"]["cancellation_details"]["reason"] == "expired_on_confirmation"


def test_background_ticker_expires_without_any_api_access(sandbox, control, receiver):
    p = create_payment()
    sandbox.clock.advance(3601)  # directly on the clock: no request triggers the lazy path
    bodies = receiver.wait(1)
    assert [(b["event"], b["object"]["id"]) for b in bodies] == [("payment.canceled", p.id)]


def test_waiting_for_capture_expires_on_capture(sandbox, control, receiver):
    p = paid_payment(control, capture=False)
    control.advance(7 * 86400 - 1)
    assert Payment.find_one(p.id).status == "waiting_for_capture"
    control.advance(1)
    got = Payment.find_one(p.id)
    assert got.status == "canceled"
    assert got.cancellation_details.reason == "expired_on_capture"
    assert got.cancellation_details.party == "yoo_money"
    assert got.expires_at is None
    with pytest.raises(BadRequestError):
        Payment.capture(p.id, idempotency_key=key())
    events = [b["event"] for b in receiver.wait(2)]
    assert events == ["payment.waiting_for_capture", "payment.canceled"]


@pytest.mark.parametrize("reason,party", [("card_expired", "payment_network"),
                                          ("permission_revoked", "yoo_money"),
                                          ("insufficient_funds", "payment_network"),
                                          ("fraud_suspected", "yoo_money")])
def test_customer_declines_with_real_reason_names(sandbox, control, reason, party):
    p = create_payment()
    out = control.decline(p.id, reason=reason)
    assert out["status"] == "canceled"
    got = Payment.find_one(p.id)
    assert (got.cancellation_details.party, got.cancellation_details.reason) == (party, reason)


def test_decline_default_and_unknown_reason(sandbox, control):
    p = create_payment()
    with pytest.raises(SandboxControlError) as err:
        control.decline(p.id, reason="bored")
    assert err.value.status == 400
    assert control.decline(p.id)["cancellation_details"] == {"party": "payment_network",
                                                             "reason": "general_decline"}


def test_cancel_pending_is_rejected(sandbox):
    p = create_payment(capture=False)
    with pytest.raises(BadRequestError) as err:
        Payment.cancel(p.id, idempotency_key=key())
    assert err.value.args[0]["code"] == "invalid_request"
    assert Payment.find_one(p.id).status == "pending"


def test_capture_pending_or_one_stage_is_rejected(sandbox, control):
    pending = create_payment(capture=False)
    with pytest.raises(BadRequestError):
        Payment.capture(pending.id, idempotency_key=key())
    succeeded = paid_payment(control, capture=True)
    with pytest.raises(BadRequestError):
        Payment.capture(succeeded.id, idempotency_key=key())
    assert Payment.find_one(pending.id).status == "pending"


def test_final_states_never_change(sandbox, control):
    done = paid_payment(control, capture=True)
    gone = create_payment()
    control.decline(gone.id)
    for pid in (done.id, gone.id):
        with pytest.raises(SandboxControlError):
            control.pay(pid)
        with pytest.raises(SandboxControlError):
            control.decline(pid)
        with pytest.raises(BadRequestError):
            Payment.cancel(pid, idempotency_key=key())
        with pytest.raises(BadRequestError):
            Payment.capture(pid, idempotency_key=key())
    control.advance(30 * 86400)
    assert Payment.find_one(done.id).status == "succeeded"
    got = Payment.find_one(gone.id)
    assert got.status == "canceled" and got.cancellation_details.reason == "general_decline"


def test_refunds_only_on_succeeded(sandbox, control):
    pending = create_payment()
    waiting = paid_payment(control, capture=False)
    canceled = create_payment()
    control.decline(canceled.id)
    for p in (pending, waiting, canceled):
        with pytest.raises(BadRequestError) as err:
            refund(p.id, "1.00")
        assert err.value.args[0]["parameter"] == "payment_id"
    assert control.refunds() == []


def test_refund_never_exceeds_paid_total(sandbox, control):
    p = paid_payment(control, "100.00")
    refund(p.id, "99.99")
    with pytest.raises(BadRequestError):
        refund(p.id, "0.02")
    refund(p.id, "0.01")
    got = Payment.find_one(p.id)
    assert got.refunded_amount.value == got.amount.value
    assert got.refundable is False
    assert len(control.refunds(p.id)) == 2


def test_refund_currency_must_match(sandbox, control):
    p = paid_payment(control, "100.00")
    with pytest.raises(BadRequestError) as err:
        refund(p.id, "1.00", "USD")
    assert err.value.args[0]["parameter"] == "amount.currency"


def test_time_scale_makes_sandbox_time_run_faster(sandbox, control):
    before = control.clock()
    control.set_time_scale(3600)  # one real second = one sandbox hour
    try:
        p = create_payment()
        import time
        deadline = time.monotonic() + 3
        while Payment.find_one(p.id).status == "pending" and time.monotonic() < deadline:
            time.sleep(0.05)
        got = Payment.find_one(p.id)
        assert got.status == "canceled"
        assert got.cancellation_details.reason == "expired_on_confirmation"
    finally:
        control.set_time_scale(1)
    assert control.clock()["time_scale"] == 1.0
    assert before["time_scale"] == 1.0


def test_clock_set_and_reset(sandbox, control):
    control.set_clock("2030-01-01T00:00:00Z")
    p = create_payment()
    assert p.created_at.startswith("2030-01-01T00:00:0")
    control.reset()
    assert not control.clock()["now"].startswith("2030")
    assert control.payments() == []
