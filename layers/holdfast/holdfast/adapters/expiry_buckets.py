"""Hold expiry by time bucket: the index of holds by the bucket their deadline falls in.

  EXPIRY#<bucket>#<nn>              <booking_id>   a hold due in that bucket, any offering (nn = 00..31)
  EXPIRY#<event_id>#<bucket>#<nn>   <booking_id>   the same, per offering, as written before issue 35

``bucket`` is the end of the ``BUCKET_SECONDS`` window a hold's ``hold_expires_at`` falls in
(ISO-8601, UTC). The platform has one Step Functions execution per bucket, a tick shared by every
offering (statemachines/hold_expiry.asl.json): it waits until the bucket ends, expires every hold
of it that is still unpaid, makes the first reconciliation check of the payments due in it, then
reminds the holds of the bucket ``reminder_lead`` later. So a
hold expires at most ``BUCKET_SECONDS`` after its deadline plus the task's own time, and a quiet
sale's holds share their ticks with every other offering's instead of paying for one each. The
entry is written in the hold's own transaction (a hold without an entry does not exist). The
shard is chosen by the booking id: at 3,000 holds/s a bucket's partition keys each take ~95 puts
a second while the bucket fills (docs/performance.md). Entries expire by TTL a day later; nothing
reads a bucket after its tick, except the sweeper's own index (gsi1 ``DUE#``), which stays the
safety net for a hold whose tick never ran. The per-offering keys are read only for executions
started before the shared ticks (their input names the offering).
"""
from __future__ import annotations

import math
import re
import zlib
from datetime import datetime, timedelta, timezone

from ..clock import iso, parse_iso
from ..ports import Labelled
from .codec import Table, _attrs

BUCKET_SECONDS = 5
EXPIRY_SHARDS = 32
OFFERING_SHARDS = 16   # the per-offering keys' shards, before issue 35
RETENTION_SECONDS = 24 * 3600


def bucket_of(hold_expires_at: str) -> str:
    """The end of the window the deadline falls in (a deadline on a boundary is its own end)."""
    deadline = parse_iso(hold_expires_at)
    seconds = math.ceil(deadline.timestamp() / BUCKET_SECONDS) * BUCKET_SECONDS
    return iso(datetime.fromtimestamp(seconds, timezone.utc))


def shard_pk(bucket: str, shard: int) -> str:
    return f"EXPIRY#{bucket}#{shard:02d}"


def offering_shard_pk(event_id: str, bucket: str, shard: int) -> str:
    """The key before issue 35 (16 shards per offering), for executions started before it."""
    return f"EXPIRY#{event_id}#{bucket}#{shard:02d}"


def shard_of(booking_id: str) -> int:
    return zlib.crc32(booking_id.encode()) % EXPIRY_SHARDS


def index_put(table: str, event_id: str, booking_id: str, hold_expires_at: str) -> Labelled:
    bucket = bucket_of(hold_expires_at)
    ttl = int((parse_iso(bucket) + timedelta(seconds=RETENTION_SECONDS)).timestamp())
    return ("expiry_bucket", {"Put": {"TableName": table, "Item": _attrs({
        "pk": shard_pk(bucket, shard_of(booking_id)), "sk": booking_id,
        "booking_id": booking_id, "event_id": event_id, "ttl": ttl})}})


def reminder_lead(reminder_seconds: int) -> int:
    """Seconds between a reminder's tick and the end of the bucket it reminds: the reminder window
    rounded up to whole buckets, so that a reminder rides on a tick of the grid (and a hold is
    reminded at least ``reminder_seconds`` before its bucket ends); 0 turns reminders off."""
    return math.ceil(max(0, reminder_seconds) / BUCKET_SECONDS) * BUCKET_SECONDS


def shifted(bucket: str, seconds: int) -> str:
    return iso(parse_iso(bucket) + timedelta(seconds=seconds))


def bucket_stamp(bucket: str) -> str:
    """``20300101T121005`` for ``2030-01-01T12:10:05.000Z``: a bucket as part of a name."""
    return re.sub(r"[^0-9T]", "", bucket)[:15]


def execution_name(bucket: str) -> str:
    """The bucket's tick: deterministic, so every container that starts it starts the same one."""
    return f"exp-{bucket_stamp(bucket)}"


class DynamoExpiryIndex:
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

    def bucket_booking_ids(self, bucket: str, event_id: str | None = None) -> list[str]:
        """Every hold due in the bucket, of every offering: one query per shard (per bucket, not
        per hold). With ``event_id``, the offering's own keys of before issue 35."""
        keys = ([offering_shard_pk(event_id, bucket, shard) for shard in range(OFFERING_SHARDS)] if event_id
                else [shard_pk(bucket, shard) for shard in range(EXPIRY_SHARDS)])
        ids: list[str] = []
        for key in keys:
            ids += [item["sk"] for item in self.db._query_prefix(key, "", projection="sk")]
        return sorted(ids)
