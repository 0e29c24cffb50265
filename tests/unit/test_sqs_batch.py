"""SQS partial batch failure without Powertools' batch utility (holdfast/entry/sqs_batch.py): the same
answers the consumers gave through ``process_partial_response``."""
from __future__ import annotations

import pytest

from holdfast.entry.sqs_batch import BatchFailed, SqsMessage, process_batch


def _event(*bodies: str) -> dict:
    return {"Records": [{"messageId": f"m{n}", "body": body, "eventSource": "aws:sqs"} for n, body in enumerate(bodies)]}


def _handler(seen: list[str]):
    def handle(message: SqsMessage) -> None:
        seen.append(message.message_id)
        if message.body == "bad":
            raise ValueError("cannot read it")
    return handle


def test_every_record_is_tried_and_only_the_failed_ones_go_back():
    seen: list[str] = []
    assert process_batch(_event("ok", "bad", "ok", "bad"), _handler(seen)) == {
        "batchItemFailures": [{"itemIdentifier": "m1"}, {"itemIdentifier": "m3"}]}
    assert seen == ["m0", "m1", "m2", "m3"]


def test_a_clean_batch_reports_no_failures_and_an_empty_one_too():
    assert process_batch(_event("ok", "ok"), _handler([])) == {"batchItemFailures": []}
    assert process_batch({"Records": []}, _handler([])) == {"batchItemFailures": []}


def test_a_batch_where_every_record_failed_fails_whole():
    seen: list[str] = []
    with pytest.raises(BatchFailed, match="all 2 records"):
        process_batch(_event("bad", "bad"), _handler(seen))
    assert seen == ["m0", "m1"]


def test_a_fifo_group_stops_at_its_failed_record_and_other_groups_go_on():
    records = [{"messageId": f"m{n}", "body": body, "attributes": {"MessageGroupId": group}}
               for n, (group, body) in enumerate([("a", "ok"), ("a", "bad"), ("b", "ok"), ("a", "ok"), ("b", "ok")])]
    seen: list[str] = []
    assert process_batch({"Records": records}, _handler(seen)) == {
        "batchItemFailures": [{"itemIdentifier": "m1"}, {"itemIdentifier": "m3"}]}
    assert seen == ["m0", "m1", "m2", "m4"]   # m3 waits behind m1, in its group's order
