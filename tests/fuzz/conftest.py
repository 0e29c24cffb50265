"""The whole local system for the fuzz run: the embedded AWS stack deployed from template.yaml and the
payment sandbox, both on loopback ports chosen by the OS.

Module scope on purpose: only one LocalStack may live in a process at a time, and the integration
suite's session-scoped ``system`` would otherwise outlive this one when both run in one session.
The sandbox stays up (no fault knobs), so the payment route has no reason to answer 503.
"""
from __future__ import annotations

import uuid

import pytest

from devstack.aws import LocalStack
from devstack.paysandbox import SandboxControl, SandboxServer
from tests.support.api import BookingApi
from tests.support.handlers import REPO

FUZZ_CUSTOMER = "fuzz-customer"
OTHER_CUSTOMER = "fuzz-other"


@pytest.fixture(scope="module")
def live():
    from aws_lambda_powertools.utilities import parameters

    from holdfast import wiring

    with SandboxServer(host="127.0.0.1", port=0) as sandbox:
        stack = LocalStack(str(REPO), aws_port=0, api_port=0, parameters={
            "ProviderApiUrl": sandbox.base_url,
            "ProviderTimeoutSeconds": "3",
        })
        stack.start()
        try:
            wiring.reset()
            parameters.clear_caches()
            SandboxControl(sandbox.control_url).set_webhooks([stack.api_url + "/webhooks/payments"])
            api = BookingApi(stack.api_url)
            yield {"base_url": stack.api_url, "api": api, "ids": _seed(api)}
        finally:
            stack.stop()
            wiring.reset()


def _seed(api: BookingApi) -> dict[str, list[str]]:
    """Real ids for the path parameters, so generated requests reach past the 404s."""
    counted = api.create_event(name="Fuzz GA", capacity=100_000, max_per_booking=50)["event_id"]
    seated = api.create_event(name="Fuzz seated", capacity=None, max_per_booking=50,
                              seat_map={"rows": [{"name": "A", "seats": 40}, {"name": "B", "seats": 40}]})["event_id"]
    bookings = []
    for body, event in (({"quantity": 2}, counted), ({"quantity": 1}, counted), ({"seats": ["A-1", "A-2"]}, seated)):
        answer = api.book(event, FUZZ_CUSTOMER, body)
        assert answer.status_code == 201, answer.text
        bookings.append(answer.json()["booking_id"])
    paid = api.pay(bookings[1], FUZZ_CUSTOMER)
    assert paid.status_code == 201, paid.text
    foreign = api.book(counted, OTHER_CUSTOMER, {"quantity": 1}, key=str(uuid.uuid4()))
    assert foreign.status_code == 201, foreign.text
    return {"event_id": [counted, seated], "booking_id": bookings + [foreign.json()["booking_id"]]}
