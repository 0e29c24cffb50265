"""The sale gate: an event's cancellation, enforced inside every hold transaction.

  GATE#<event_id>#<nn>       GATE   ``cancelled_at`` once the event is cancelled (nn = 00..31);
                                    ``terms_version``: the offering's version when what a hold
                                    decides on (its start) last changed

A hold's transaction carries a ``ConditionCheck`` that its gate shard has no ``cancelled_at``;
the cancellation writes ``cancelled_at`` on every shard in the very transaction that sets the
event's flag. DynamoDB serialises the two transactions on the shard the hold checks, so a hold
either commits before the cancellation (and its ``EVENTBOOKINGS#`` entry, written in the same
transaction, is there when the cancellation job lists the event's bookings, which it does only
after the flag is set) or fails its check and writes nothing. A missing shard (an event created
before the gate existed, or never cancelled) passes the check.

The same check carries the version of the offering the hold decided on (a container keeps its
copy of the offering): a change of its start writes ``terms_version`` on every shard in the
transaction that changes it, so a hold on an older copy fails here, with no read of the offering's
item per hold, and the hold path reads the offering again.

The shard is chosen by the booking id, so no single item is read by every hold: at 3,000 holds/s
on one event each shard sees ~94 checks a second (docs/performance.md).
"""
from __future__ import annotations

import zlib

from ..ports import Labelled
from .codec import _attrs

GATE_SHARDS = 32
GATE = "sale_gate"


def gate_key(event_id: str, shard: int) -> dict[str, str]:
    return {"pk": f"GATE#{event_id}#{shard:02d}", "sk": "GATE"}


def gate_shard(booking_id: str) -> int:
    return zlib.crc32(booking_id.encode()) % GATE_SHARDS


def gate_check(table: str, event_id: str, booking_id: str, offering_version: int | None = None) -> Labelled:
    """The shard's check; with ``offering_version`` (the version of the offering the hold decided
    on), also that the offering's terms have not moved past it."""
    check: dict = {"TableName": table, "Key": _attrs(gate_key(event_id, gate_shard(booking_id))),
                   "ConditionExpression": "attribute_not_exists(cancelled_at)"}
    if offering_version is not None:
        check["ConditionExpression"] += " AND (attribute_not_exists(terms_version) OR terms_version <= :seen)"
        check["ExpressionAttributeValues"] = _attrs({":seen": offering_version})
    return (GATE, {"ConditionCheck": check})


def move_terms(table: str, event_id: str, version: int) -> list[Labelled]:
    """Every shard's ``terms_version``, for the transaction that changes what a hold decides on
    (domain/offering.py ``HOLD_TERMS``): a hold that decided on an older copy fails its check and
    reads the offering again."""
    return [(f"{GATE}:{shard:02d}", {"Update": {
        "TableName": table, "Key": _attrs(gate_key(event_id, shard)),
        "UpdateExpression": "SET terms_version = :version, event_id = :event",
        "ExpressionAttributeValues": _attrs({":version": version, ":event": event_id}),
    }}) for shard in range(GATE_SHARDS)]


def close_gates(table: str, event_id: str, at: str) -> list[Labelled]:
    """Every shard's ``cancelled_at``, for the cancellation's own transaction."""
    return [(f"{GATE}:{shard:02d}", {"Update": {
        "TableName": table, "Key": _attrs(gate_key(event_id, shard)),
        "UpdateExpression": "SET cancelled_at = :at, event_id = :event",
        "ExpressionAttributeValues": _attrs({":at": at, ":event": event_id}),
    }}) for shard in range(GATE_SHARDS)]
