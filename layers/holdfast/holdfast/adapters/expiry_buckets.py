"""Hold expiry by time bucket: the index of holds by the bucket their deadline falls in.

  EXPIRY#<bucket>#<nn>              <booking_id>   a hold due in that bucket, any offering (nn = 00..31)
  EXPIRY#<bucket>#SHARDS            <nn>#<writer>  a writer put holds of the bucket in shard nn
  EXPIRY#<bucket>#SHARDS            DUE#<writer>   a writer put a payment's check in the bucket
  EXPIRY#<event_id>#<bucket>#<nn>   <booking_id>   the same, per offering, as written before issue 35

``bucket`` is the end of the ``BUCKET_SECONDS`` window a hold's ``hold_expires_at`` falls in
(ISO-8601, UTC). The platform has one Step Functions execution per bucket, a tick shared by every
offering (statemachines/hold_expiry.asl.json): it waits until the bucket ends, expires every hold
of it that is still unpaid, makes the first reconciliation check of the payments due in it, then
reminds the holds of the bucket ``reminder_lead`` later. So a
hold expires at most ``BUCKET_SECONDS`` after its deadline plus the task's own time, and a quiet
sale's holds share their ticks with every other offering's instead of paying for one each. The
entry is written in the hold's own transaction (a hold without an entry does not exist), in the
shard of the store that writes it (below): at 3,000 holds/s a bucket's partition keys each take
~95 puts a second on average while the bucket fills (docs/performance.md). Entries expire by TTL a day later; nothing
reads a bucket after its tick, except the sweeper's own index (gsi1 ``DUE#``), which stays the
safety net for a hold whose tick never ran. The per-offering keys are read only for executions
started before the shared ticks (their input names the offering).

**A tick reads only the shards that hold something** (issues 47 and 49). A writer (one store, so
one Lambda container) puts all its holds of a bucket in one shard of its own (``ShardWriter``,
drawn at random when the store is made), and its first hold of each bucket also puts a marker
``EXPIRY#<bucket>#SHARDS / <nn>#<writer>`` in the same transaction; the writer remembers the bucket
only once that transaction committed. A tick then makes one strongly consistent query of the
bucket's ``SHARDS`` key and queries only the shards it names: an empty bucket costs one read, not
32, and a bucket of one container's holds two. Why this can miss nothing: an entry and the marker
of its shard are written by one transaction, or the marker by an earlier committed transaction of
the same writer (the entry's shard is the writer's, the bucket the one it remembered), so whenever
an entry is readable its marker is too; markers are never deleted before the entries (same TTL).
Why not one set of shards per bucket updated with ``ADD`` in every hold: every hold of the bucket
would write one item, and DynamoDB cancels a transaction that meets another one on the same item
(TransactionConflict), so the platform's holds of a bucket would queue on it; a marker per writer is
written once per bucket by one container, which makes one hold at a time. The load on a shard is
its writers' (a container makes at most ~100 holds/s; at 3,000 holds/s ~90 containers over 32
shards). A hold is never re-bucketed: ``hold_expires_at`` is set once, when the hold is made (a
capture in flight is left to the sweeper). A tick started before the markers existed has no
``index`` in its input and reads every shard, as before.

**Payment checks the same way.** A tick's first checks of payments read the ``DUE#`` index (8
shards of gsi1) for the bookings whose next look falls in the bucket. A booking write that sets a
payment's ``next_check_at`` (a new value, the payment not settled) also puts ``DUE#<writer>`` in
the markers of that moment's bucket, in the same transaction, once per writer and bucket as above;
a tick whose bucket has no such marker skips the 8 queries. A booking the check acts on has its
next check in the bucket (its due time, read from the index, is the earliest of its moments, and
the check needs the payment's to be at most the bucket's end), and the write that set that value
wrote the marker or followed a committed one of its writer.
"""
from __future__ import annotations

import math
import random
import re
from datetime import datetime, timedelta, timezone
from typing import Any

from ..clock import iso, parse_iso
from ..ports import Labelled
from .codec import Table, _attrs

BUCKET_SECONDS = 5
EXPIRY_SHARDS = 32
OFFERING_SHARDS = 16   # the per-offering keys' shards, before issue 35
RETENTION_SECONDS = 24 * 3600
#: The marker items' key part after the bucket (``EXPIRY#<bucket>#SHARDS``).
SHARDS = "SHARDS"
#: The marker of a payment check due in the bucket: ``DUE#<writer>`` (a shard's is ``<nn>#<writer>``).
CHECKS = "DUE"
#: A tick's input field (``"index": INDEXED``) that says its buckets' markers are written: the
#: ticks started before them read every shard.
INDEXED = "shards"


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


def shards_pk(bucket: str) -> str:
    """The key of the bucket's markers: one item per writer that put holds in the bucket."""
    return f"EXPIRY#{bucket}#{SHARDS}"


def marker_sk(shard: int, writer: str) -> str:
    return f"{shard:02d}#{writer}"


def check_marker_sk(writer: str) -> str:
    return f"{CHECKS}#{writer}"


def shards_named(markers: list[str]) -> list[int]:
    """The shards the markers' sort keys name (a check's marker names none)."""
    return sorted({int(head) for head, _, _ in (sk.partition("#") for sk in markers) if head.isdigit()})


def checks_named(markers: list[str]) -> bool:
    return any(sk.startswith(CHECKS + "#") for sk in markers)


def retention(bucket: str) -> int:
    return int((parse_iso(bucket) + timedelta(seconds=RETENTION_SECONDS)).timestamp())


class ShardWriter:
    """One writer's place in the expiry index: the shard it puts its holds in, its name in the
    markers, and the buckets whose marker a committed transaction of its own wrote (so a later hold
    of the bucket needs none). Remembering is only ever after a commit: a hold whose transaction
    failed or whose outcome is unknown leaves the bucket unremembered, and the next hold writes
    the marker again (a repeated marker is the same item)."""

    REMEMBERED = 4096

    def __init__(self, rng: random.Random | None = None) -> None:
        rng = rng or random.Random()
        self.shard = rng.randrange(EXPIRY_SHARDS)
        self.name = f"{rng.getrandbits(48):012x}"
        self.marked: set[str] = set()
        #: the buckets whose payment check marker (``DUE#<name>``) a committed write of ours put
        self.checks_marked: set[str] = set()

    def needs_marker(self, bucket: str) -> bool:
        return bucket not in self.marked

    def committed(self, bucket: str) -> None:
        _remember(self.marked, bucket, self.REMEMBERED)

    def committed_check(self, bucket: str) -> None:
        _remember(self.checks_marked, bucket, self.REMEMBERED)


def _remember(buckets: set[str], bucket: str, most: int) -> None:
    if len(buckets) >= most:   # buckets only move forward: the old ones are done
        buckets.clear()
    buckets.add(bucket)


def check_buckets(before: Any, after: Any) -> list[str]:
    """The buckets whose ticks read the payment check a booking write sets (``after``'s
    ``next_check_at``, new and the payment unsettled): its own, and the next one too for a moment
    on a boundary (the ``DUE#`` range of a bucket includes its start); none when the write sets no check."""
    payment = after.payment if after is not None else None
    if payment is None or not payment.next_check_at or after.settled:
        return []
    earlier = before.payment if before is not None else None
    if earlier is not None and earlier.next_check_at == payment.next_check_at and not before.settled:
        return []   # set by an earlier write, which marked it
    bucket = bucket_of(payment.next_check_at)
    on_boundary = parse_iso(bucket) == parse_iso(payment.next_check_at)
    return [bucket, shifted(bucket, BUCKET_SECONDS)] if on_boundary else [bucket]


def check_items(table: str, writer: ShardWriter, buckets: list[str]) -> list[Labelled]:
    """The checks' markers this writer has not committed for their buckets yet."""
    return [(f"check_marker@{bucket}", {"Put": {"TableName": table, "Item": _attrs({
        "pk": shards_pk(bucket), "sk": check_marker_sk(writer.name), "ttl": retention(bucket)})}})
        for bucket in buckets if bucket not in writer.checks_marked]


def index_items(table: str, writer: ShardWriter, event_id: str, booking_id: str,
                hold_expires_at: str) -> list[Labelled]:
    """The hold's entry in its bucket, in the writer's shard, and the shard's marker when this
    writer has not committed one for the bucket yet."""
    bucket = bucket_of(hold_expires_at)
    items: list[Labelled] = [("expiry_bucket", {"Put": {"TableName": table, "Item": _attrs({
        "pk": shard_pk(bucket, writer.shard), "sk": booking_id,
        "booking_id": booking_id, "event_id": event_id, "ttl": retention(bucket)})}})]
    if writer.needs_marker(bucket):
        items.append(("expiry_shard", {"Put": {"TableName": table, "Item": _attrs({
            "pk": shards_pk(bucket), "sk": marker_sk(writer.shard, writer.name), "ttl": retention(bucket)})}}))
    return items


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


def bucket_markers(db: Table, bucket: str) -> list[str]:
    """The sort keys of the bucket's markers (one strongly consistent query)."""
    return [item["sk"] for item in db._query_prefix(shards_pk(bucket), "", projection="sk")]


class DynamoExpiryIndex:
    """The expiry buckets and the due index, on the shared table handle."""

    def __init__(self, db: Table) -> None:
        self.db = db

    def due_in_bucket(self, bucket: str, indexed: bool = False) -> list[str]:
        """Bookings whose next look (gsi1 ``DUE#``: a hold's deadline or a payment's next check)
        falls in the bucket ending at ``bucket``: one query per due shard. With ``indexed`` (a tick
        started since the markers) none at all when no payment check was put in the bucket: a
        caller that acts on a payment's check only (the tick's) misses nothing."""
        from .booking_items import DUE_BUCKETS

        if indexed and not checks_named(bucket_markers(self.db, bucket)):
            return []
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

    def bucket_booking_ids(self, bucket: str, event_id: str | None = None, indexed: bool = False) -> list[str]:
        """Every hold due in the bucket, of every offering: with ``indexed`` (a tick started since
        the markers) one query of its markers and one per shard they name, else one query per
        shard. With ``event_id``, the offering's own keys of before issue 35."""
        if event_id:
            keys = [offering_shard_pk(event_id, bucket, shard) for shard in range(OFFERING_SHARDS)]
        else:
            shards = shards_named(bucket_markers(self.db, bucket)) if indexed else range(EXPIRY_SHARDS)
            keys = [shard_pk(bucket, shard) for shard in shards]
        ids: list[str] = []
        for key in keys:
            ids += [item["sk"] for item in self.db._query_prefix(key, "", projection="sk")]
        return sorted(ids)
