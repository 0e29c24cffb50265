"""The sweeper on the local stack (finding 7 of issue 11): a booking whose reconciliation check
dies every time is restarted by the deployed SweepDueFunction under a fresh execution name each
time, a bounded number of times (the template's SweepMaxRestarts, 3 here: each restart waits
SweepGraceSeconds x 2^(n-1)), then goes to manual review and leaves the due index.

The check is made to die with the `reconcile.before_check` crash point. The state machine's retry
pauses (10 s, 30 s, 90 s before an execution gives up), the sweeper's grace and its schedule are
timers of the stack's clock, which the test moves three minutes at a time: the whole give-up is
some twenty minutes of the stack's time and seconds of the machine's."""
from __future__ import annotations

import uuid

import pytest

from holdfast import faults, wiring
from tests.integration.conftest import SWEEP_RESTARTS as MAX_RESTARTS

pytestmark = pytest.mark.integration


@pytest.fixture
def dying_checks(monkeypatch):
    faults.reset_crash_counts()
    monkeypatch.setenv("HOLDFAST_CRASH_POINTS", "reconcile.before_check")
    try:
        yield
    finally:
        faults.reset_crash_counts()


def reconcile_executions(stack, booking_id):
    client = stack.boto3_client("stepfunctions")
    machines = [m["stateMachineArn"] for m in client.list_state_machines()["stateMachines"]
                if "Reconcil" in m["name"]]
    found = {}
    for arn in machines:
        for page in client.get_paginator("list_executions").paginate(stateMachineArn=arn):
            found.update({e["name"]: e["status"] for e in page["executions"] if booking_id in e["name"]})
    return found


def test_a_check_that_always_dies_is_restarted_under_fresh_names_then_handed_to_an_operator(
        api, sandbox, system, dying_checks):
    stack = system["stack"]
    who = f"sw-{uuid.uuid4().hex[:10]}"
    event = api.create_event(capacity=3, hold_ttl_seconds=86_400)
    booking_id = api.book(event["event_id"], who, {"quantity": 2}).json()["booking_id"]
    assert api.pay(booking_id, who).status_code == 201

    # Each round: an execution's retry pauses run out (130 s), the scheduled sweeper finds the check
    # overdue and restarts it. Before the fix, the second sweep met ExecutionAlreadyExists, took it
    # for success, and the booking stayed PAYMENT_PENDING here for good.
    for _ in range(4 * (MAX_RESTARTS + 1)):
        if api.booking(booking_id, who)["status"] != "PAYMENT_PENDING":
            break
        stack.advance_clock(180)

    booking = api.booking(booking_id, who)
    assert booking["status"] == "MANUAL_REVIEW" and booking["review"]["reason"] == "reconciliation_stuck"
    journal = [entry["action"] for entry in booking["journal"]]
    assert journal.count("reconciliation_restarted") == MAX_RESTARTS
    names = reconcile_executions(stack, booking_id)
    restarts = sorted(name for name in names if "-sweep-" in name)
    assert len(restarts) == MAX_RESTARTS and len(set(restarts)) == MAX_RESTARTS, names
    assert all(len(name) <= 80 for name in names)
    assert booking_id not in wiring.store().due_bookings("9999")
    assert api.counts(event["event_id"]) == {"available": 3, "held": 0, "sold": 0}
    reviews = api.request("GET", "/admin/reviews", organizer=True).json()["reviews"]
    assert booking_id in {review["booking_id"] for review in reviews}
