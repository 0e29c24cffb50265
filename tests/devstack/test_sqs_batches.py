"""The local SQS poller runs several batches of one mapping at once, as Lambda does, and keeps a
FIFO message group's order (devstack/aws/pollers.py SqsPoller). moto's queue is real; the
function is replaced by a recorder so the test sees which batches overlap."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Iterator

import boto3
import pytest
from moto import mock_aws

from devstack.aws.pollers import SqsPoller
from devstack.aws.runtime import LocalFunction


class LockedClient:
    """moto's backend is not safe under concurrent calls; the local stack serialises each call to
    it (runtime.serialised_call_action), and so does this wrapper."""

    def __init__(self, client: Any) -> None:
        self._client, self._lock = client, threading.Lock()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def locked(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return method(*args, **kwargs)
        return locked


class Recorder(SqsPoller):
    def __init__(self, *, hold_s: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.hold_s, self.lock = hold_s, threading.Lock()
        self.active: dict[str, int] = {}
        self.order: dict[str, list[str]] = {}
        self.overlap_in_group = 0
        self.peak = self.now = 0

    def _invoke(self, event: dict[str, Any]) -> tuple[Any, None]:
        groups = [r["attributes"].get("MessageGroupId", "-") for r in event["Records"]]
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
            for group in set(groups):   # one batch may carry several messages of a group, in order
                if group != "-" and self.active.get(group):
                    self.overlap_in_group += 1
                self.active[group] = self.active.get(group, 0) + 1
            for group, record in zip(groups, event["Records"]):
                self.order.setdefault(group, []).append(record["body"])
        time.sleep(self.hold_s)
        with self.lock:
            self.now -= 1
            for group in set(groups):
                self.active[group] -= 1
        return None, None


@pytest.fixture
def sqs():
    with mock_aws():
        yield boto3.client("sqs", region_name="eu-central-1", aws_access_key_id="test", aws_secret_access_key="test")


def _poller(sqs: Any, url: str, batches: int, batch_size: int = 1, **mapping: Any) -> Recorder:
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    fn = LocalFunction(logical_id="Consumer", function_name="consumer", arn="arn:aws:lambda:::function:consumer",
                       code_dir=None, handler="app.handler")  # type: ignore[arg-type]
    return Recorder(hold_s=0.05, queue_url=url, queue_arn=arn, client=LockedClient(sqs), uuid_="m-1", function=fn,
                    region="eu-central-1", mapping={"BatchSize": batch_size, **mapping}, poll_interval=0.02,
                    max_batches=batches)


def _drain(poller: Recorder, sqs: Any, url: str, expected: int, timeout: float = 20.0) -> None:
    poller.start()
    try:
        deadline = time.monotonic() + timeout
        while sum(len(v) for v in poller.order.values()) < expected and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.1)
    finally:
        poller.stop()
    left = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert (left["ApproximateNumberOfMessages"], left["ApproximateNumberOfMessagesNotVisible"]) == ("0", "0")


def _standard_queue(sqs: Any, name: str, messages: int) -> str:
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    for n in range(messages):
        sqs.send_message(QueueUrl=url, MessageBody=f"m{n:02d}")
    return url


def test_a_standard_queue_s_batches_run_side_by_side_each_message_once(sqs):
    url = _standard_queue(sqs, "notifications", 24)
    poller = _poller(sqs, url, batches=4)
    _drain(poller, sqs, url, 24)
    assert sorted(poller.order["-"]) == [f"m{n:02d}" for n in range(24)]
    assert poller.peak == 4 and poller.in_flight_peak == 4


def test_a_fifo_group_stays_in_order_and_one_at_a_time_while_groups_overlap(sqs):
    url = sqs.create_queue(QueueName="payment-events.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    for n in range(6):
        for group in ("pay-a", "pay-b", "pay-c"):
            sqs.send_message(QueueUrl=url, MessageBody=f"{group}/{n}", MessageGroupId=group,
                             MessageDeduplicationId=f"{group}-{n}")
    poller = _poller(sqs, url, batches=4, batch_size=2)
    _drain(poller, sqs, url, 18)
    for group in ("pay-a", "pay-b", "pay-c"):
        assert poller.order[group] == [f"{group}/{n}" for n in range(6)]
    assert poller.overlap_in_group == 0
    assert poller.peak >= 2   # different groups at once


def test_the_mapping_s_maximum_concurrency_caps_the_batches(sqs):
    url = _standard_queue(sqs, "capped", 12)
    poller = _poller(sqs, url, batches=4, ScalingConfig={"MaximumConcurrency": 2})
    assert poller.max_batches == 2
    _drain(poller, sqs, url, 12)
    assert poller.peak == 2


def test_one_batch_at_a_time_when_asked(sqs):
    url = _standard_queue(sqs, "serial", 6)
    poller = _poller(sqs, url, batches=1)
    _drain(poller, sqs, url, 6)
    assert poller.peak == 1 and len(poller.order["-"]) == 6


# An idle poller waits for the queue instead of asking it ten times a second (SqsPoller._idle).
# `idle_seconds` is set far beyond the tests' waits, so a message delivered within them was
# delivered by a wake-up, not by the fallback poll.

class CountingClient(LockedClient):
    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.receives = 0

    def __getattr__(self, name: str) -> Any:
        if name == "receive_message":
            self.receives += 1
        return super().__getattr__(name)


def _idle_poller(sqs: Any, url: str, batches: int = 1) -> tuple[Recorder, CountingClient]:
    poller = _poller(sqs, url, batches=batches)
    client = CountingClient(sqs)
    poller.client, poller.idle_seconds = client, 60.0
    return poller, client


@contextlib.contextmanager
def _running(poller: Recorder) -> Iterator[Recorder]:
    poller.start()
    try:
        yield poller
    finally:
        poller.stop()


def _wait_for(poller: Recorder, delivered: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while sum(len(v) for v in poller.order.values()) < delivered and time.monotonic() < deadline:
        time.sleep(0.02)


@pytest.mark.parametrize("batches", [1, 4])
def test_an_idle_poller_asks_the_queue_once_then_wakes_on_a_message(sqs, batches):
    url = sqs.create_queue(QueueName=f"quiet-{batches}")["QueueUrl"]
    poller, client = _idle_poller(sqs, url, batches)
    with _running(poller):
        time.sleep(1.0)   # fifty receives at the poll interval of 0.02 s
        assert client.receives <= 2
        sqs.send_message(QueueUrl=url, MessageBody="woken")
        _wait_for(poller, 1)
        assert poller.order.get("-") == ["woken"]


def test_a_delayed_message_is_delivered_when_it_turns_visible_without_another_arrival(sqs):
    url = sqs.create_queue(QueueName="delayed")["QueueUrl"]
    poller, client = _idle_poller(sqs, url)
    with _running(poller):
        sqs.send_message(QueueUrl=url, MessageBody="later", DelaySeconds=1)
        _wait_for(poller, 1)
        assert poller.order.get("-") == ["later"]
        assert client.receives <= 4


def test_a_fifo_group_s_next_message_follows_when_its_batch_ends(sqs):
    url = sqs.create_queue(QueueName="waking.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    for n in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=f"g/{n}", MessageGroupId="g", MessageDeduplicationId=f"g-{n}")
    poller, _ = _idle_poller(sqs, url, batches=4)
    with _running(poller):
        _wait_for(poller, 3)
        assert poller.order.get("g") == ["g/0", "g/1", "g/2"]


def test_stopping_an_idle_poller_does_not_wait_out_its_idle_time(sqs):
    url = sqs.create_queue(QueueName="stopping")["QueueUrl"]
    poller, _ = _idle_poller(sqs, url)
    poller.start()
    time.sleep(0.2)
    poller.stop(timeout=10.0)
    assert poller._thread is not None and not poller._thread.is_alive()
