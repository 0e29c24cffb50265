"""Hold expiry by bucket: one execution per offering and bucket, started at most once per bucket
by a container; its input carries the reminder time when there is one to send."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import boto3
import pytest
from moto import mock_aws

from holdfast.adapters.aws import HoldExpiryScheduler
from holdfast.adapters.expiry_buckets import bucket_of, execution_name


@pytest.fixture
def sfn(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("stepfunctions")
        arn = client.create_state_machine(
            name="hold-expiry", roleArn="arn:aws:iam::123456789012:role/sfn",
            definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}))["stateMachineArn"]
        yield client, arn


def started_input(client, arn, event_id, bucket):
    execution = arn.replace(":stateMachine:", ":execution:") + ":" + execution_name(event_id, bucket)
    return json.loads(client.describe_execution(executionArn=execution)["input"])


NOW = datetime(2030, 1, 1, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("deadline, bucket", [
    ("2030-01-01T12:10:00.000Z", "2030-01-01T12:10:00.000Z"),   # on a boundary: its own bucket
    ("2030-01-01T12:10:00.001Z", "2030-01-01T12:10:05.000Z"),
    ("2030-01-01T12:10:04.999Z", "2030-01-01T12:10:05.000Z"),
])
def test_a_deadline_falls_in_the_bucket_that_ends_at_or_after_it(deadline, bucket):
    assert bucket_of(deadline) == bucket


def test_execution_names_are_deterministic_and_valid():
    name = execution_name("0b9f3c1e-8a4d-4f0e-9a51-7c2d5e6f7a8b", "2030-01-01T12:10:05.000Z")
    assert name == "exp-0b9f3c1e-8a4d-4f0e-9a51-7c2d5e6f7a8b-20300101T121005" and len(name) <= 80
    odd = execution_name("an id with spaces/and:colons", "2030-01-01T12:10:05.000Z")
    assert odd.startswith("exp-") and " " not in odd and ":" not in odd and len(odd) <= 80


@pytest.mark.parametrize("deadline, reminder_seconds, remind_at", [
    ("2030-01-01T12:10:00.000Z", 120, "2030-01-01T12:08:00.000Z"),   # a 10-minute hold: reminded 2 min before
    ("2030-01-01T12:01:00.000Z", 120, None),                          # shorter than the window: no reminder
    ("2030-01-01T12:02:00.000Z", 120, None),                          # the reminder would be now: none
    ("2030-01-01T12:10:00.000Z", 0, None),                            # reminders turned off
])
def test_the_reminder_rides_on_the_bucket_s_execution(sfn, deadline, reminder_seconds, remind_at):
    client, arn = sfn
    scheduler = HoldExpiryScheduler(arn, client, reminder_seconds=reminder_seconds, clock=lambda: NOW)
    assert scheduler.schedule("e-1", deadline) is True
    expected = {"event_id": "e-1", "bucket": bucket_of(deadline)}
    if remind_at:
        expected["remind_at"] = remind_at
    assert started_input(client, arn, "e-1", bucket_of(deadline)) == expected


def test_one_start_per_bucket_whatever_the_holds_and_containers(sfn, monkeypatch):
    client, arn = sfn
    calls = []
    original = client.start_execution
    monkeypatch.setattr(client, "start_execution", lambda **kw: calls.append(kw["name"]) or original(**kw))
    first, second = (HoldExpiryScheduler(arn, client, clock=lambda: NOW) for _ in range(2))   # two containers
    for n in range(50):   # 50 holds of one offering due within one bucket
        assert first.schedule("e-1", f"2030-01-01T12:10:0{n % 4 + 1}.{n:03d}Z") is (n == 0)
    assert len(calls) == 1
    # Another container asks once (the same name and input: Step Functions answers with the running
    # execution, or ExecutionAlreadyExists once it ended: both mean it runs), then remembers.
    assert second.schedule("e-1", "2030-01-01T12:10:03.000Z") is True
    assert second.schedule("e-1", "2030-01-01T12:10:04.000Z") is False and len(calls) == 2
    assert first.schedule("e-2", "2030-01-01T12:10:03.000Z") is True    # another offering: its own
    assert first.schedule("e-1", "2030-01-01T12:10:05.001Z") is True    # the next bucket
    executions = client.list_executions(stateMachineArn=arn)["executions"]
    assert len(executions) == 3


def test_first_reconciliation_checks_share_one_execution_per_bucket(sfn, monkeypatch):
    from holdfast.adapters.aws import ReconciliationBuckets, ReconciliationStarter

    client, arn = sfn
    calls = []
    original = client.start_execution
    monkeypatch.setattr(client, "start_execution", lambda **kw: calls.append(kw) or original(**kw))
    buckets = ReconciliationBuckets(ReconciliationStarter(arn, client), clock=lambda: NOW)
    for n in range(20):   # twenty payments started in the same moment: their first checks share a bucket
        buckets.start(f"b-{n}", "initial", 2)
    assert [c["name"] for c in calls] == ["rec-20300101T120005"]
    assert json.loads(calls[0]["input"]) == {"bucket": "2030-01-01T12:00:05.000Z", "wait_seconds": 5}
    buckets.start("b-1", "refund-cancelled", 2)   # any other watch: the booking's own execution
    assert calls[-1]["name"] == "pay-b-1-refund-cancelled"
