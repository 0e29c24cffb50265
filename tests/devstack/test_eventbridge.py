"""EventBridge on the local stack: a custom bus and a pattern rule whose SQS target receives the
matching events put on the bus (the notifications path: relay -> bus -> queue -> notifier)."""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.timeout(120)


def test_pattern_rule_delivers_matching_events_to_its_queue(stub_stack):
    s = stub_stack
    assert s.resources["ChangesBus"] == "stub-changes"
    assert s.attributes["ChangesBus"]["Arn"].endswith(":event-bus/stub-changes")
    events = s.boto3_client("events")
    answer = events.put_events(Entries=[
        {"EventBusName": "stub-changes", "Source": "stub.changes", "DetailType": "thing.changed",
         "Detail": json.dumps({"n": 1})},
        {"EventBusName": "stub-changes", "Source": "other.source", "DetailType": "ignored", "Detail": "{}"},
    ])
    assert answer["FailedEntryCount"] == 0
    sqs = s.boto3_client("sqs")
    messages = sqs.receive_message(QueueUrl=s.resources["ChangesQueue"], MaxNumberOfMessages=10,
                                   WaitTimeSeconds=1).get("Messages", [])
    bodies = [json.loads(m["Body"]) for m in messages]
    assert [(b["detail-type"], b["detail"]) for b in bodies] == [("thing.changed", {"n": 1})]
    policy = sqs.get_queue_attributes(QueueUrl=s.resources["ChangesQueue"], AttributeNames=["Policy"])
    assert "events.amazonaws.com" in policy["Attributes"]["Policy"]
