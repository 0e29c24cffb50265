"""Shared helpers for the sandbox tests."""
from __future__ import annotations

import re
import uuid

from yookassa import Payment

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
MONEY_RE = re.compile(r"^\d+\.\d{2}$")


def key() -> str:
    return str(uuid.uuid4())


def create_payment(value: str = "100.00", capture: bool = True, currency: str = "RUB",
                   metadata: dict | None = None, idempotency_key: str | None = None,
                   return_url: str | None = "http://127.0.0.1:9/return", description: str = "Yoga class"):
    params = {"amount": {"value": value, "currency": currency}, "capture": capture,
              "description": description}
    if return_url:
        params["confirmation"] = {"type": "redirect", "return_url": return_url}
    if metadata:
        params["metadata"] = metadata
    return Payment.create(params, idempotency_key=idempotency_key or key())


def paid_payment(control, value: str = "100.00", capture: bool = True, **kw):
    p = create_payment(value=value, capture=capture, **kw)
    control.pay(p.id)
    return Payment.find_one(p.id)


def refund(payment_id: str, value: str, currency: str = "RUB", idempotency_key: str | None = None,
           **extra):
    """Refund.create through the SDK with an explicit key."""
    from yookassa import Refund
    params = {"payment_id": payment_id, "amount": {"value": value, "currency": currency}, **extra}
    return Refund.create(params, idempotency_key=idempotency_key or key())


def capture(payment_id: str, value: str | None = None, currency: str = "RUB",
            idempotency_key: str | None = None):
    params = {"amount": {"value": value, "currency": currency}} if value else None
    return Payment.capture(payment_id, params, idempotency_key=idempotency_key or key())
