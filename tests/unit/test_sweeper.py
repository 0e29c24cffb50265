"""The sweeper on the in-memory store, with Step Functions really executing on moto (what is
tested of it is the adapter's naming against Step Functions' rules): a reconciliation whose
check keeps failing is restarted under a fresh execution name each time (a closed execution's name
cannot be used again), a bounded number of times, then handed to an operator; one booking that
cannot be handled never stops the others; a stuck booking does not hold the top of the due index."""
from __future__ import annotations

import json
import time

import boto3
import pytest
from moto import mock_aws

from holdfast.adapters.aws import StepFunctionsReconciliationStarter
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services.reconciliation import ReconciliationService
from holdfast.services.sweeper import MAX_RESTARTS, sweep
from tests.unit.conftest import event_request

#: The reconcile machine's shape where it matters here: its check task fails, so the execution ends
#: FAILED without settling anything (as when the reconcile function raises past its retries).
FAILING_CHECK = {"StartAt": "CheckPayment", "States": {
    "CheckPayment": {"Type": "Fail", "Error": "States.TaskFailed", "Cause": "the reconcile task raised"}}}
GRACE = 60


@pytest.fixture
def aws(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        yield


@pytest.fixture
def store(fake_store):
    return fake_store


@pytest.fixture
def long_event(catalog):
    """Holds last a day: the payments here stay open while the sweeper works on them."""
    return catalog.create_event(event_request(hold_ttl_seconds=86_400))


@pytest.fixture
def machine(aws):
    client = boto3.client("stepfunctions", region_name="eu-central-1")
    arn = client.create_state_machine(name="reconcile-payment", roleArn="arn:aws:iam::123456789012:role/sfn",
                                      definition=json.dumps(FAILING_CHECK))["stateMachineArn"]
    return client, arn


def executions(client, arn) -> dict[str, str]:
    """Name -> status of every execution, once none is running any more."""
    deadline = time.monotonic() + 10
    while True:
        found = {e["name"]: e["status"] for e in client.list_executions(stateMachineArn=arn)["executions"]}
        if "RUNNING" not in found.values() or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def run_sweep(store, clock, bookings, payments, starter, limit=100):
    return sweep(store, clock, bookings.expire, starter.start,
                 give_up=lambda booking, reason: payments.open_review(booking, reason, "sweeper", {}),
                 grace_seconds=GRACE, limit=limit)


def paying(bookings, payments, event, customer):
    booking = bookings.create_booking(event["event_id"], customer, "k", BookingIn(quantity=1)).booking
    payments.start_payment(booking.booking_id, customer, "p")
    return booking.booking_id


def test_a_check_that_keeps_failing_is_restarted_under_fresh_names_then_reviewed(
        machine, store, bookings, payments, long_event, clock):
    client, arn = machine
    starter = StepFunctionsReconciliationStarter(arn, client)
    booking_id = paying(bookings, payments, long_event, "bob")
    clock.advance(200)   # the first check was due at +30 s; its execution never ran it

    assert run_sweep(store, clock, bookings, payments, starter)["reconciling"] == 1
    first = executions(client, arn)
    assert list(first.values()) == ["FAILED"]

    for restart in range(2, MAX_RESTARTS + 1):
        clock.advance(GRACE * 2 ** restart)
        assert run_sweep(store, clock, bookings, payments, starter)["reconciling"] == 1
        # Before: the same name again, ExecutionAlreadyExists taken as success, nothing restarted.
        assert len(executions(client, arn)) == restart, executions(client, arn)
    assert all(status == "FAILED" for status in executions(client, arn).values())
    assert all(len(name) <= 80 for name in executions(client, arn))

    clock.advance(GRACE * 2 ** (MAX_RESTARTS + 1))
    counts = run_sweep(store, clock, bookings, payments, starter)
    assert counts["gave_up"] == 1 and counts["reconciling"] == 0
    booking = store.get_booking(booking_id)
    assert booking.status is BookingStatus.MANUAL_REVIEW and booking.review["reason"] == "reconciliation_stuck"
    assert booking_id not in store.due_bookings("9999")
    journal = [entry.action for entry in store.get_booking_with_journal(booking_id)[1]]
    assert journal.count("reconciliation_restarted") == MAX_RESTARTS
    assert len(executions(client, arn)) == MAX_RESTARTS   # nothing started after giving up
    clock.advance(3600)
    assert run_sweep(store, clock, bookings, payments, starter) == \
        {"expired": 0, "reconciling": 0, "skipped": 0, "failed": 0, "gave_up": 0}


def test_a_check_that_runs_again_resets_the_restart_count(machine, store, bookings, payments, provider, long_event,
                                                          clock):
    client, arn = machine
    booking_id = paying(bookings, payments, long_event, "bob")
    clock.advance(200)
    run_sweep(store, clock, bookings, payments, StepFunctionsReconciliationStarter(arn, client))
    assert store.get_booking(booking_id).payment.restarts == 1
    reconciler = ReconciliationService(store, provider, payments, clock, schedule_seconds=(30,))
    assert reconciler.check(booking_id)["outcome"] == "pending"
    assert store.get_booking(booking_id).payment.restarts == 0


def test_one_booking_that_fails_does_not_stop_the_sweep(store, bookings, payments, ga_event, clock):
    holds = [bookings.create_booking(ga_event["event_id"], f"c{i}", "k", BookingIn(quantity=1)).booking.booking_id
             for i in range(3)]
    clock.advance(700)   # every hold is past its 600 s deadline

    def expire(booking_id):
        if booking_id == holds[1]:
            raise RuntimeError("this one cannot be expired right now")
        return bookings.expire(booking_id)

    counts = sweep(store, clock, expire, lambda *_: None, give_up=lambda *_: None, grace_seconds=GRACE)

    assert counts["expired"] == 2 and counts["failed"] == 1
    assert [store.get_booking(b).status for b in holds] == \
        [BookingStatus.EXPIRED, BookingStatus.HELD, BookingStatus.EXPIRED]


def test_a_stuck_booking_does_not_hold_the_top_of_the_due_index(machine, store, bookings, payments, ga_event,
                                                                 long_event, clock):
    client, arn = machine
    starter = StepFunctionsReconciliationStarter(arn, client)
    stuck = paying(bookings, payments, long_event, "bob")           # due at +30 s
    clock.advance(100)
    later = bookings.create_booking(ga_event["event_id"], "carl", "k", BookingIn(quantity=1)).booking.booking_id
    clock.advance(700)                                            # carl's hold is overdue too

    # The sweeper reads one booking per run here (100 in production): the stuck one first.
    assert run_sweep(store, clock, bookings, payments, starter, limit=1)["reconciling"] == 1
    counts = run_sweep(store, clock, bookings, payments, starter, limit=1)
    # Before: the stuck booking stayed first in line, and carl's hold was never reached.
    assert counts["expired"] == 1
    assert store.get_booking(later).status is BookingStatus.EXPIRED
    assert store.get_booking(stuck).status is BookingStatus.PAYMENT_PENDING
