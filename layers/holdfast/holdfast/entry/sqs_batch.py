"""SQS batches with partial failure (``batchItemFailures``), without Powertools' batch utility.

Both SQS consumers (the payment events, the notifier) used ``BatchProcessor`` and
``process_partial_response``, which cost their cold start the batch package, its event data
classes and ``asyncio`` (~0.1x of boto3's import, issue 15) for a loop this short. The semantics
are Powertools' for SQS: every record is tried; the ones that raised are reported by message id
and return to the queue; when every record of a batch failed, the batch fails as a whole
(``BatchFailed``), so Lambda retries it and the queue's redrive policy counts it.

FIFO queues (records carry ``attributes.MessageGroupId``): after a record of a message group
fails, the later records of that group in the batch are not handled but reported as failed too,
so they return to the queue behind it and the group keeps its order; other groups go on.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..observability import logger


@dataclass(frozen=True)
class SqsMessage:
    """One record of an SQS event: what the consumers read of it."""

    message_id: str
    body: str
    #: how many times the queue has handed this message out, this time included (SQS's
    #: ``ApproximateReceiveCount``; 1 when the record does not say)
    receive_count: int = 1

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> "SqsMessage":
        count = (record.get("attributes") or {}).get("ApproximateReceiveCount")
        return cls(str(record["messageId"]), str(record.get("body") or ""),
                   int(count) if str(count or "").isdigit() else 1)


class BatchFailed(Exception):
    """Every record of the batch failed: Lambda retries the whole batch."""


def process_batch(event: Mapping[str, Any], handle: Callable[[SqsMessage], Any]) -> dict[str, list[dict[str, str]]]:
    """``handle`` each record of an SQS event in order; ``{"batchItemFailures": [...]}`` names
    the records it raised on (their ids), and a batch where all of them raised fails whole."""
    records = list(event.get("Records") or [])
    failed: list[dict[str, str]] = []
    errors: list[str] = []
    stopped_groups: set[str] = set()
    for record in records:
        message_id = str(record.get("messageId", ""))
        group = (record.get("attributes") or {}).get("MessageGroupId")
        if group is not None and group in stopped_groups:
            failed.append({"itemIdentifier": message_id})   # behind a failed record of its group: not handled
            continue
        try:
            handle(SqsMessage.of(record))
        except Exception as exc:  # noqa: BLE001 - the record goes back to the queue; the others go on
            logger.exception("an SQS record failed; it returns to the queue", extra={"message_id": message_id})
            failed.append({"itemIdentifier": message_id})
            errors.append(type(exc).__name__)
            if group is not None:
                stopped_groups.add(group)
    if records and len(failed) == len(records):
        raise BatchFailed(f"all {len(records)} records of the batch failed: {', '.join(sorted(set(errors)))}")
    return {"batchItemFailures": failed}
