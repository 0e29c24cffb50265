"""The webhook's notification check (holdfast/entry/provider_notification.py), by hand rather than a
pydantic model: what it accepts and what it refuses."""
from __future__ import annotations

import pytest

from holdfast.entry.provider_notification import Notification, parse_notification


def _body(**obj) -> dict:
    return {"type": "notification", "event": "payment.succeeded",
            "object": {"id": "2d0f-abc_1", "status": "succeeded", **obj}, "extra_field": {"ignored": True}}


def test_a_payment_notification_and_a_refund_notification():
    assert parse_notification(_body()) == Notification("payment.succeeded", "2d0f-abc_1", "succeeded")
    assert parse_notification(_body()).about_payment == "2d0f-abc_1"
    refund = parse_notification({**_body(payment_id="pay-9"), "event": "refund.succeeded"})
    assert (refund.object_id, refund.about_payment) == ("2d0f-abc_1", "pay-9")
    # a payment's own notification is about the object itself, whatever else it carries
    assert parse_notification(_body(payment_id="pay-9")).about_payment == "2d0f-abc_1"


@pytest.mark.parametrize("data", [
    None, [], "notification", {},
    {**_body(), "type": "other"},
    {**_body(), "event": "payment"}, {**_body(), "event": "Payment.succeeded"}, {**_body(), "event": 7},
    {**_body(), "event": "payment.succeeded\n"}, {**_body(), "event": "a." + "b" * 63},
    {**_body(), "object": "2d0f"}, {k: v for k, v in _body().items() if k != "object"},
    _body(id=""), _body(id="x" * 65), _body(id="a/b"), _body(id=5),
    _body(status=""), _body(status="Succeeded"), _body(status="s" * 33),
    _body(payment_id=""), _body(payment_id="a b"), _body(payment_id=12),
])
def test_what_is_not_a_notification_is_refused(data):
    with pytest.raises(ValueError):
        parse_notification(data)
