"""The sale's business metrics over HTTP on the local stack: what the functions emit (EMF lines the
stack keeps in its emulated CloudWatch Logs) is what `python -m devstack.admin metrics` (holdfast.tools.cli aimed at the local stack) reads, with
the values the requests caused.

The stack is shared by the whole integration session and its timers run in the background, so each
check reads the totals before and after and waits for the difference."""
from __future__ import annotations

import http.client
import json
import time
from urllib.parse import urlparse

import pytest

from devstack import admin
from holdfast.tools.metrics_report import collect
from tests.support.flows import actions, booked_and_paying, customer

pytestmark = pytest.mark.integration


class Metrics:
    def __init__(self, stack):
        self.client = stack.boto3_client("logs")
        self.stack = stack.stack_name
        self.since = int(time.time() * 1000) - 1000
        self.before = self.now()

    def now(self):
        return collect(self.client, self.stack, self.since)

    def delta(self, name: str) -> float:
        before = self.before.get(name)
        after = self.now().get(name)
        return (after.total if after else 0) - (before.total if before else 0)

    def new_samples(self, name: str) -> list[float]:
        before = self.before.get(name)
        after = self.now().get(name)
        return (after.values if after else [])[len(before.values) if before else 0:]

    def wait(self, name: str, expected: float, timeout: float = 10) -> float:
        deadline = time.monotonic() + timeout
        while (got := self.delta(name)) < expected and time.monotonic() < deadline:
            time.sleep(0.1)
        return got


def post_from(api_url: str, source: str, path: str, body: dict) -> int:
    """POST from another loopback address (the whole 127/8 is this machine)."""
    url = urlparse(api_url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10, source_address=(source, 0))
    try:
        connection.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        return connection.getresponse().status
    finally:
        connection.close()


def test_a_sale_is_counted_as_it_happens(api, sandbox, system, capsys):
    metrics = Metrics(system["stack"])
    # a hold shorter than the package's 15 s reconciliation limit (so it ends EXPIRED, not
    # PAYMENT_FAILED), long enough for the second booking below to find it on a busy machine
    event = api.create_event(capacity=1, hold_ttl_seconds=10)
    who = customer()
    booking_id, payment_id = booked_and_paying(api, event, who)
    refused = api.book(event["event_id"], customer())
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "sold_out"
    assert metrics.wait("HoldsMade", 1) == 1
    assert metrics.wait("SoldOutAnswers", 1) == 1

    # the timer releases the unpaid hold: counted with how long after its deadline that happened
    # (the stack's clock moved past the deadline rather than waited for)
    from holdfast.clock import parse_iso, system_clock

    hold_ends = parse_iso(api.booking(booking_id, who)["hold_expires_at"])
    system["stack"].advance_clock(max(0.0, (hold_ends - system_clock()).total_seconds()) + 1)
    api.wait_status(booking_id, who, "EXPIRED", timeout=15)
    assert metrics.wait("HoldsExpired", 1) >= 1
    lags = metrics.new_samples("ExpiryLagSeconds")
    assert lags and all(0 <= lag < 60 for lag in lags)

    # paid after the release, the place still free: a late payment that took the place again
    sandbox.pay(payment_id)
    confirmed = api.wait_status(booking_id, who, "CONFIRMED")
    assert "late_payment_places_retaken" in actions(confirmed)
    assert metrics.wait("LatePaymentsRetaken", 1) == 1
    assert metrics.wait("Confirmations", 1) == 1
    assert metrics.delta("PaymentsSucceeded") == 1

    # a notification from a network that is not the provider's
    status = post_from(api.base, "127.0.0.2", "/webhooks/payments",
                       {"type": "notification", "event": "payment.succeeded", "object": {"id": payment_id}})
    assert status == 403
    assert metrics.wait("WebhooksRefused", 1) == 1

    # the operators' tool reads the same totals from the stack's endpoint
    capsys.readouterr()
    assert admin.main(["metrics", "--endpoint", system["stack"].aws_endpoint, "--minutes", "5", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["WebhooksRefused"]["sum"] >= 1 and printed["HoldsMade"]["unit"] == "Count"
    assert printed["ExpiryLagSeconds"]["unit"] == "Seconds"

    # the operator page's local read beside the pages: the same numbers, to the organizer only
    page_read = api.request("GET", "/_local/metrics?minutes=5", organizer=True)
    assert page_read.status_code == 200, page_read.text
    shown = page_read.json()["metrics"]
    for name in ("HoldsMade", "SoldOutAnswers", "Confirmations", "LatePaymentsRetaken", "WebhooksRefused"):
        assert shown[name]["sum"] >= printed[name]["sum"], name
    assert shown["ExpiryLagSeconds"]["max"] >= printed["ExpiryLagSeconds"]["max"]


def test_the_local_metrics_read_is_the_organizers_and_checks_its_window(api):
    assert api.request("GET", "/_local/metrics").json()["error"]["code"] == "unauthorized"
    assert api.request("GET", "/_local/metrics", headers={"X-Api-Key": "wrong"}).status_code == 401
    for bad in ("0", "-5", "nan", "many", "100000000"):
        answer = api.request("GET", f"/_local/metrics?minutes={bad}", organizer=True)
        assert (answer.status_code, answer.json()["error"]["code"]) == (400, "minutes_invalid"), bad
    assert api.request("POST", "/_local/metrics", organizer=True).status_code == 404


def test_waitlist_offers_and_waiting_room_admissions_are_counted(api, sandbox, system):
    metrics = Metrics(system["stack"])
    event = api.create_event(capacity=1)
    eid = event["event_id"]
    owner, waiting = customer(), customer()
    held = api.book(eid, owner).json()
    assert api.request("POST", f"/events/{eid}/waitlist", customer=waiting, json={"quantity": 1}).status_code == 200
    assert api.cancel(held["booking_id"], owner).status_code == 200
    assert metrics.wait("WaitlistOffersMade", 1) == 1
    offer = api.request("GET", f"/events/{eid}/waitlist", customer=waiting).json()["offer"]
    paying = api.pay(offer["booking_id"], waiting)
    assert paying.status_code == 201, paying.text
    sandbox.pay(paying.json()["payment_id"])
    api.wait_status(offer["booking_id"], waiting, "CONFIRMED")
    assert metrics.wait("WaitlistOffersTaken", 1) == 1
    assert metrics.delta("HoldsMade") == 1  # the owner's; the offer is counted as an offer

    surge = api.create_event(capacity=5, high_demand=True)["event_id"]
    who = customer()
    answer = api.request("POST", f"/events/{surge}/queue", customer=who)
    deadline = time.monotonic() + 20
    while answer.status_code == 429 or answer.json()["status"] != "admitted":
        assert time.monotonic() < deadline, answer.text
        # the queue routes are rate limited here, on the stack's clock: move it past the Retry-After
        system["stack"].advance_clock(float(answer.headers.get("Retry-After", 1)))
        answer = api.request("GET", f"/events/{surge}/queue", customer=who)
    assert metrics.wait("WaitingRoomAdmissions", 1) == 1
