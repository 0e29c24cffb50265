"""The one execution per hold: its input carries the reminder time when there is one to send."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import boto3
import pytest
from moto import mock_aws

from holdfast.adapters.aws import HoldExpiryScheduler


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


def started_input(client, arn, booking_id):
    execution = arn.replace(":stateMachine:", ":execution:") + f":hold-{booking_id}"
    return json.loads(client.describe_execution(executionArn=execution)["input"])


NOW = datetime(2030, 1, 1, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("deadline, reminder_seconds, remind_at", [
    ("2030-01-01T12:10:00.000Z", 120, "2030-01-01T12:08:00.000Z"),   # a 10-minute hold: reminded 2 min before
    ("2030-01-01T12:01:00.000Z", 120, None),                          # shorter than the window: no reminder
    ("2030-01-01T12:02:00.000Z", 120, None),                          # the reminder would be now: none
    ("2030-01-01T12:10:00.000Z", 0, None),                            # reminders turned off
])
def test_the_reminder_rides_on_the_hold_s_execution(sfn, deadline, reminder_seconds, remind_at):
    client, arn = sfn
    scheduler = HoldExpiryScheduler(arn, client, reminder_seconds=reminder_seconds, clock=lambda: NOW)
    scheduler.schedule("b-1", deadline)
    expected = {"booking_id": "b-1", "hold_expires_at": deadline}
    if remind_at:
        expected["remind_at"] = remind_at
    assert started_input(client, arn, "b-1") == expected
