"""The local stack's moto speed-ups (devstack/aws/moto_speedups.py) do once what cannot change,
and nothing else: each test counts the expensive step, then checks the result is unchanged."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from devstack.aws import moto_speedups

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def _installed() -> None:
    moto_speedups.install()


def test_a_definition_is_parsed_once_and_each_execution_gets_fresh_components(monkeypatch):
    from moto.stepfunctions.parser.asl.antlr.runtime.ASLParser import ASLParser
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    parses = []
    original = ASLParser.state_machine

    def counting(self):
        parses.append(1)
        return original(self)

    monkeypatch.setattr(ASLParser, "state_machine", counting)
    # a text no other test parses, so the cache starts without it
    definition = (REPO_ROOT / "statemachines" / "hold_expiry.asl.json").read_text() + "\n"
    first, tree = AmazonStateLanguageParser.parse(definition)
    second, same_tree = AmazonStateLanguageParser.parse(definition)
    assert len(parses) == 1
    assert same_tree is tree
    assert first is not second  # evaluation components are never shared between executions
    assert type(first) is type(second)


def test_an_invalid_definition_still_fails_as_moto_reports_it():
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser, ASLParserException

    with pytest.raises(ASLParserException):
        AmazonStateLanguageParser.parse('{"StartAt": "A", "States": {"A": {"Type": ')


def test_jsonpath_compiled_once_per_text():
    import jsonpath_ng.ext

    expr = jsonpath_ng.ext.parse("$.detail.booking_id")
    assert jsonpath_ng.ext.parse("$.detail.booking_id") is expr
    assert [m.value for m in expr.find({"detail": {"booking_id": "b-1"}})] == ["b-1"]
    assert expr.find({"detail": {}}) == []


def test_sqs_clock_is_the_same_epoch_milliseconds():
    import datetime

    import moto.sqs.models as sqs_models
    from moto.core.utils import unix_time_millis

    fast = sqs_models.unix_time_millis
    assert getattr(fast, "_devstack_fast", False)
    assert abs(fast() - unix_time_millis()) < 50
    moment = datetime.datetime(2026, 12, 1, 8, 0, 0)
    assert fast(moment) == unix_time_millis(moment)
    assert abs(fast() / 1000.0 - time.time()) < 0.05


@pytest.fixture
def sqs():
    import boto3
    from moto import mock_aws

    with mock_aws():
        yield boto3.client("sqs", region_name="eu-central-1", aws_access_key_id="test", aws_secret_access_key="test")


def _queue(url: str):
    from moto.sqs.models import sqs_backends

    return sqs_backends["123456789012"]["eu-central-1"].get_queue(url.rsplit("/", 1)[-1])


def test_queue_attributes_read_as_moto_builds_them(sqs):
    from moto.sqs.models import Queue

    dlq = sqs.create_queue(QueueName="dead.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    fifo = sqs.create_queue(QueueName="events.fifo", Attributes={
        "FifoQueue": "true", "ContentBasedDeduplication": "true",
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 5})})["QueueUrl"]
    plain = sqs.create_queue(QueueName="plain", Attributes={"VisibilityTimeout": "180"})["QueueUrl"]
    for n in range(3):
        sqs.send_message(QueueUrl=fifo, MessageBody=f"m{n}", MessageGroupId="g")
        sqs.send_message(QueueUrl=plain, MessageBody=f"m{n}", DelaySeconds=n)
    sqs.receive_message(QueueUrl=plain, MaxNumberOfMessages=1)
    for url in (dlq, fifo, plain):
        queue = _queue(url)
        lazy = queue.attributes
        assert list(lazy) == list(Queue._devstack_eager_attributes.fget(queue))
        assert dict(lazy) == Queue._devstack_eager_attributes.fget(queue)
    counts = sqs.get_queue_attributes(QueueUrl=plain, AttributeNames=["All"])["Attributes"]
    assert (counts["ApproximateNumberOfMessages"], counts["ApproximateNumberOfMessagesDelayed"],
            counts["ApproximateNumberOfMessagesNotVisible"]) == ("0", "2", "1")
    assert json.loads(sqs.get_queue_attributes(QueueUrl=fifo, AttributeNames=["RedrivePolicy"])
                      ["Attributes"]["RedrivePolicy"])["maxReceiveCount"] == 5


def test_a_send_no_longer_counts_the_queue_s_messages(sqs, monkeypatch):
    from moto.sqs.models import Queue

    counted = []
    for name in ("approximate_number_of_messages", "approximate_number_of_messages_delayed",
                 "approximate_number_of_messages_not_visible"):
        real = getattr(Queue, name)
        monkeypatch.setattr(Queue, name, property(lambda q, real=real, name=name: counted.append(name) or real.fget(q)))
    fifo = sqs.create_queue(QueueName="webhooks.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    plain = sqs.create_queue(QueueName="notifications")["QueueUrl"]
    for n in range(20):
        sqs.send_message(QueueUrl=plain, MessageBody=f"m{n}")
        sqs.send_message(QueueUrl=fifo, MessageBody="same", MessageGroupId="g", MessageDeduplicationId="d")
    assert counted == []
    received = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10)["Messages"]
    assert len(received) == 1   # the FIFO queue still drops the repeated deduplication id
    assert sqs.get_queue_attributes(QueueUrl=plain, AttributeNames=["ApproximateNumberOfMessages"])[
        "Attributes"] == {"ApproximateNumberOfMessages": "20"}
    assert counted   # asked for, the count is computed
