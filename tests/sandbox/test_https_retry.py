"""The SDK's only retry path: urllib3 Retry on 202 for POST, mounted for https:// only."""
from __future__ import annotations

import pytest
from yookassa import Configuration, Payment

from devstack.paysandbox import SandboxControl, SandboxServer

from .conftest import SECRET, SHOP_ID
from .helpers import create_payment, key


@pytest.fixture(scope="module")
def https_server():
    with SandboxServer(port=0, shop_id=SHOP_ID, secret_keys=[SECRET], https=True) as srv:
        yield srv


@pytest.fixture
def https_sandbox(https_server):
    https_server.reset()
    # timeout=10 ms makes the SDK's backoff_factor 0.01 s; verify= trusts the self-signed cert
    Configuration.configure(SHOP_ID, SECRET, api_url=https_server.base_url, verify=https_server.cert_path,
                            timeout=10)
    yield https_server
    https_server.reset()


def test_https_serves_the_sdk(https_sandbox):
    assert https_sandbox.base_url.startswith("https://127.0.0.1:")
    p = create_payment()
    assert Payment.find_one(p.id).status == "pending"
    assert p.confirmation.confirmation_url.startswith("https://127.0.0.1:")


def test_sdk_retries_202_over_https_with_the_same_key(https_sandbox):
    control = SandboxControl(https_sandbox.control_url)
    fault = control.add_fault("accepted_202", "POST /v3/payments", times=2)
    p = create_payment(metadata={"booking_id": "B-https"}, idempotency_key=key())
    assert p.status == "pending"
    assert len(control.find_payments(booking_id="B-https")) == 1
    assert control.faults() == []  # both 202s were served, the third attempt went through
    assert fault["times_left"] == 2


def test_sdk_gives_up_after_repeated_202_over_https(https_sandbox):
    control = SandboxControl(https_sandbox.control_url)
    control.add_fault("accepted_202", "POST /v3/payments", times=10)
    with pytest.raises(AttributeError):  # urllib3 RetryError carries no response
        create_payment()
    assert control.payments() == []
    assert control.faults()[0]["times_left"] == 6  # 1 try + 3 retries


def test_sdk_resends_after_dropped_response_over_https(https_sandbox):
    control = SandboxControl(https_sandbox.control_url)
    control.add_fault("drop_response_after", "POST /v3/payments", times=1)
    p = create_payment(metadata={"booking_id": "B-drop-https"})
    # the Retry policy also covers read errors on POST: same key, so the replay comes back
    stored = control.find_payments(booking_id="B-drop-https")
    assert [x["id"] for x in stored] == [p.id]
