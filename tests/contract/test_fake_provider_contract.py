"""FakeProvider (tests/support/fake_provider.py) is held to the provider by behaviour, not only by
its signature (tests/unit/test_ports.py): the same cases run on it and on the adapter the engine
deploys (holdfast/adapters/provider.py, the YooKassa SDK) against the payment sandbox, which keeps
the provider's rules (devstack/paysandbox). A case the fake answers otherwise fails here; the fix
goes into the fake, never the case.

What the services rely on: one payment per idempotence key (a reused key with another request is
refused), capture and cancel only of a payment waiting for capture, a one-stage payment succeeded
once paid, refunds never above what was paid and what they gave back reported on the payment,
payments found by their metadata within a creation window, and its times on the service's clock.
"""
from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any, Callable

import pytest

from holdfast.clock import iso, parse_iso, system_clock
from holdfast.ports import ProviderNotFound, ProviderRejected
from tests.support.fake_provider import FakeProvider

SHOP_ID, SECRET = "100500", "sandbox_secret_local_only"
RUB = "RUB"


class Provider:
    """A provider and the customer's own action at it (paying on its page)."""

    def __init__(self, name: str, api: Any, pay: Callable[[str], Any]) -> None:
        self.name, self.api, self.pay = name, api, pay


@pytest.fixture(scope="module")
def sandbox_server():
    from devstack.paysandbox import SandboxServer

    with SandboxServer(host="127.0.0.1", port=0, shop_id=SHOP_ID, secret_keys=[SECRET]) as server:
        yield server


@pytest.fixture(params=["fake", "sandbox"])
def provider(request) -> Provider:
    if request.param == "fake":
        fake = FakeProvider()
        return Provider("fake", fake, fake.pay)
    from devstack.paysandbox import SandboxControl
    from holdfast.adapters.provider import YooKassaProvider

    server = request.getfixturevalue("sandbox_server")
    control = SandboxControl(server.control_url)
    return Provider("sandbox", YooKassaProvider(server.base_url, SHOP_ID, SECRET, 5), control.pay)


def money(value: str) -> dict[str, str]:
    return {"value": value, "currency": RUB}


def create(provider: Provider, *, capture: bool = True, value: str = "1000.00", key: str | None = None,
           metadata: dict[str, str] | None = None) -> dict[str, Any]:
    return provider.api.create_payment(amount=money(value), description="Booking", capture=capture,
                                       metadata=metadata or {"booking_id": str(uuid.uuid4())},
                                       return_url="http://127.0.0.1/return", idempotence_key=key or str(uuid.uuid4()))


def key() -> str:
    return str(uuid.uuid4())


def test_a_payment_is_created_pending_once_per_key_and_a_reused_key_is_refused(provider):
    same = key()
    first = create(provider, key=same, metadata={"booking_id": "b-1"})
    assert first["status"] == "pending" and first["paid"] is False and first["amount"] == money("1000.00")
    # (the SDK adds its own "cms_name" to the metadata)
    assert first["metadata"]["booking_id"] == "b-1" and first["confirmation"]["confirmation_url"]
    again = create(provider, key=same, metadata={"booking_id": "b-1"})
    assert again["id"] == first["id"]
    with pytest.raises(ProviderRejected):
        create(provider, key=same, value="2000.00", metadata={"booking_id": "b-1"})
    assert provider.api.get_payment(first["id"])["status"] == "pending"
    with pytest.raises(ProviderNotFound):
        provider.api.get_payment(str(uuid.uuid4()))


def test_a_one_stage_payment_succeeds_when_paid_and_cannot_be_captured_or_cancelled(provider):
    payment = create(provider, capture=True)
    with pytest.raises(ProviderRejected):
        provider.api.capture_payment(payment["id"], money("1000.00"), key())   # pending: nothing to capture
    provider.pay(payment["id"])
    paid = provider.api.get_payment(payment["id"])
    assert paid["status"] == "succeeded" and paid["paid"] is True
    assert paid["refunded_amount"] == money("0.00")
    with pytest.raises(ProviderRejected):
        provider.api.cancel_payment(payment["id"], key())


def test_a_two_stage_payment_waits_for_capture_is_captured_once_or_cancelled(provider):
    captured = create(provider, capture=False)
    with pytest.raises(ProviderRejected):
        provider.api.cancel_payment(captured["id"], key())                 # pending: nothing to cancel
    provider.pay(captured["id"])
    assert provider.api.get_payment(captured["id"])["status"] == "waiting_for_capture"
    capture_key = key()
    done = provider.api.capture_payment(captured["id"], money("1000.00"), capture_key)
    assert done["status"] == "succeeded"
    assert provider.api.capture_payment(captured["id"], money("1000.00"), capture_key)["status"] == "succeeded"
    with pytest.raises(ProviderRejected):
        provider.api.capture_payment(captured["id"], money("1000.00"), key())   # a second capture
    cancelled = create(provider, capture=False)
    provider.pay(cancelled["id"])
    void = provider.api.cancel_payment(cancelled["id"], key())
    assert void["status"] == "canceled" and void["cancellation_details"]["party"] == "merchant"
    with pytest.raises(ProviderRejected):
        provider.api.capture_payment(cancelled["id"], money("1000.00"), key())


def test_refunds_never_exceed_what_was_paid_and_are_reported_on_the_payment(provider):
    payment = create(provider, capture=True, value="1000.00")
    with pytest.raises(ProviderRejected):
        provider.api.create_refund(payment["id"], money("100.00"), "Refund", key())   # not paid yet
    provider.pay(payment["id"])
    refund_key = key()
    first = provider.api.create_refund(payment["id"], money("400.00"), "Refund", refund_key)
    assert first["status"] == "succeeded" and first["amount"] == money("400.00")
    assert first["payment_id"] == payment["id"]
    assert provider.api.create_refund(payment["id"], money("400.00"), "Refund", refund_key)["id"] == first["id"]
    with pytest.raises(ProviderRejected):
        provider.api.create_refund(payment["id"], money("600.01"), "Refund", key())    # above the rest
    rest = provider.api.create_refund(payment["id"], money("600.00"), "Refund", key())
    assert provider.api.get_payment(payment["id"])["refunded_amount"] == money("1000.00")
    assert sorted(r["id"] for r in provider.api.list_refunds(payment["id"])) == sorted([first["id"], rest["id"]])
    assert provider.api.get_refund(first["id"])["amount"] == money("400.00")
    with pytest.raises(ProviderNotFound):
        provider.api.get_refund(str(uuid.uuid4()))


def test_payments_are_found_by_metadata_within_their_creation_window_on_the_service_clock(provider):
    booking = str(uuid.uuid4())
    before = system_clock() - timedelta(seconds=1)
    made = [create(provider, metadata={"booking_id": booking}) for _ in range(2)]
    create(provider, metadata={"booking_id": str(uuid.uuid4())})                   # another booking's
    after = system_clock() + timedelta(seconds=1)
    for payment in made:   # its times are the service's clock's, not a fixed or a counted date
        assert before <= parse_iso(payment["created_at"]) <= after, payment["created_at"]
    found = provider.api.find_payments(created_gte=iso(before), created_lte=iso(after),
                                       metadata={"booking_id": booking})
    assert sorted(p["id"] for p in found) == sorted(p["id"] for p in made)
    earlier = provider.api.find_payments(created_gte=iso(before - timedelta(hours=2)),
                                         created_lte=iso(before - timedelta(hours=1)), metadata={"booking_id": booking})
    assert earlier == []
