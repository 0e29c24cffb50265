"""Hold expiry by time bucket: the index of holds by the bucket their deadline falls in.

  EXPIRY#<event_id>#<bucket>#<nn>   <booking_id>   a hold due in that bucket (nn = 00..15)

``bucket`` is the end of the ``BUCKET_SECONDS`` window a hold's ``hold_expires_at`` falls in
(ISO-8601, UTC). One Step Functions execution per offering and bucket waits until that end and
expires every hold of the bucket that is still unpaid (statemachines/hold_expiry.asl.json), so a
hold expires at most ``BUCKET_SECONDS`` after its deadline plus the task's own time. The entry is
written in the hold's own transaction (a hold without an entry does not exist). The shard is
chosen by the booking id: at 3,000 holds/s on one offering a bucket's partition keys each take
~190 puts a second while the bucket fills (docs/performance.md). Entries expire by TTL a day later;
nothing reads a bucket after its execution, except the sweeper's own index (gsi1 ``DUE#``), which
stays the safety net for a hold whose execution never ran.
"""
from __future__ import annotations

import hashlib
import math
import re
import zlib
from datetime import datetime, timedelta, timezone

from ..clock import iso, parse_iso
from ..ports import Labelled
from .codec import Table, _attrs

BUCKET_SECONDS = 5
EXPIRY_SHARDS = 16
RETENTION_SECONDS = 24 * 3600
_NAME_SAFE = re.compile(r"^[A-Za-z0-9_-]{1,54}$")


def bucket_of(hold_expires_at: str) -> str:
    """The end of the window the deadline falls in (a deadline on a boundary is its own end)."""
    deadline = parse_iso(hold_expires_at)
    seconds = math.ceil(deadline.timestamp() / BUCKET_SECONDS) * BUCKET_SECONDS
    return iso(datetime.fromtimestamp(seconds, timezone.utc))


def shard_pk(event_id: str, bucket: str, shard: int) -> str:
    return f"EXPIRY#{event_id}#{bucket}#{shard:02d}"


def index_put(table: str, event_id: str, booking_id: str, hold_expires_at: str) -> Labelled:
    bucket = bucket_of(hold_expires_at)
    ttl = int((parse_iso(bucket) + timedelta(seconds=RETENTION_SECONDS)).timestamp())
    return ("expiry_bucket", {"Put": {"TableName": table, "Item": _attrs({
        "pk": shard_pk(event_id, bucket, zlib.crc32(booking_id.encode()) % EXPIRY_SHARDS), "sk": booking_id,
        "booking_id": booking_id, "ttl": ttl})}})


def bucket_stamp(bucket: str) -> str:
    """``20300101T121005`` for ``2030-01-01T12:10:05.000Z``: a bucket as part of a name."""
    return re.sub(r"[^0-9T]", "", bucket)[:15]


def execution_name(event_id: str, bucket: str) -> str:
    """Deterministic, so every container that starts it starts the same one (at most 80 chars)."""
    stamp = bucket_stamp(bucket)
    name = event_id if _NAME_SAFE.match(event_id) else hashlib.sha256(event_id.encode()).hexdigest()[:32]
    return f"exp-{name}-{stamp}"


class ExpiryIndex:
    """The expiry buckets and the due index, on the shared table handle."""

    def __init__(self, db: Table) -> None:
        self.db = db

    def due_in_bucket(self, bucket: str) -> list[str]:
        """Bookings whose next look (gsi1 ``DUE#``: a hold's deadline or a payment's next check)
        falls in the bucket ending at ``bucket``: one query per due shard."""
        from .booking_items import DUE_BUCKETS

        start = iso(parse_iso(bucket) - timedelta(seconds=BUCKET_SECONDS))
        ids: list[str] = []
        for shard in range(DUE_BUCKETS):
            ids += [item["pk"].removeprefix("BOOKING#") for item in self.db._query_all({
                "TableName": self.db.table, "IndexName": "gsi1",
                "KeyConditionExpression": "gsi1pk = :due AND gsi1sk BETWEEN :start AND :end",
                "ExpressionAttributeValues": _attrs({":due": f"DUE#{shard}", ":start": start + "#",
                                                     ":end": bucket + "#~"}),
            })]
        return sorted(set(ids))

    def bucket_booking_ids(self, event_id: str, bucket: str) -> list[str]:
        """Every hold due in the bucket: one query per shard (per bucket, not per hold)."""
        ids: list[str] = []
        for shard in range(EXPIRY_SHARDS):
            ids += [item["sk"] for item in self.db._query_prefix(shard_pk(event_id, bucket, shard), "", projection="sk")]
        return sorted(ids)
