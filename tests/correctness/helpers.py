"""Shared pieces of the correctness tests: a controllable clock, event bodies, a thread-safe
provider wrapper, and the invariant checker that reads the whole table back.

The checker never trusts the services' own reads: it scans the test's table (one table per test)
and compares the inventory items (pool counters, seat units) with the bookings and their journals.
"""
from __future__ import annotations

import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer

from holdfast.adapters.dynamo import booking_from_item
from holdfast.domain.booking import Booking, JournalEntry
from holdfast.domain.statuses import HOLDING, OCCUPYING, RELEASED, SOLD, TRANSITIONS, BookingStatus
from holdfast.schemas import EventIn

_deserializer = TypeDeserializer()
START = datetime(2030, 1, 1, 12, 0, tzinfo=timezone.utc)


class ManualClock:
    """Time that moves only when a test says so (reads are safe from many threads)."""

    def __init__(self, start: datetime = START) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += timedelta(seconds=seconds)


def event_request(**overrides: Any) -> EventIn:
    body: dict[str, Any] = {
        "name": "Club night", "venue": "Hall", "city": "Moscow", "category": "club",
        "starts_at": "2030-02-01T20:00:00Z", "price": {"value": "1500.00", "currency": "RUB"}, "capacity": 10,
        "hold_ttl_seconds": 600,
    }
    body.update(overrides)
    return EventIn.model_validate(body)


class LockedProvider:
    """Serialises every call into a FakeProvider (which keeps plain dicts and is not thread-safe)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if not callable(attribute):
            return attribute

        def locked(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                return attribute(*args, **kwargs)

        return locked


# ------------------------------------------------------------------------------------ snapshot

@dataclass
class Snapshot:
    """Everything in one test table, as plain values."""

    bookings: dict[str, Booking] = field(default_factory=dict)
    journals: dict[str, list[tuple[int, JournalEntry]]] = field(default_factory=lambda: defaultdict(list))
    pools: dict[str, dict[str, dict[str, int]]] = field(default_factory=lambda: defaultdict(dict))
    units: dict[str, dict[str, dict[str, Any]]] = field(default_factory=lambda: defaultdict(dict))
    events: dict[str, dict[str, Any]] = field(default_factory=dict)
    idempotency: dict[str, dict[str, Any]] = field(default_factory=dict)

    def of_event(self, event_id: str) -> list[Booking]:
        return [b for b in self.bookings.values() if b.event_id == event_id]

    def counts(self, event_id: str) -> dict[str, int]:
        totals = {"available": 0, "held": 0, "sold": 0}
        if self.pools.get(event_id):
            for pool in self.pools[event_id].values():
                for key in totals:
                    totals[key] += pool[key]
        else:
            for unit in self.units.get(event_id, {}).values():
                totals[unit["state"]] += 1
        return totals


def _number(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else value
    return value


def snapshot(client: Any, table: str) -> Snapshot:
    """Read the whole table with consistent scans (any backend, over its API)."""
    # Outbox items are the relay's business, not an invariant's: leave them on the server.
    kwargs: dict[str, Any] = {"TableName": table, "ConsistentRead": True,
                              "FilterExpression": "NOT begins_with(sk, :outbox)",
                              "ExpressionAttributeValues": {":outbox": {"S": "OUTBOX#"}}}
    items: list[dict[str, Any]] = []
    while True:
        answer = client.scan(**kwargs)
        items.extend({key: _deserializer.deserialize(value) for key, value in raw.items()}
                     for raw in answer.get("Items", []))
        if "LastEvaluatedKey" not in answer:
            break
        kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
    return snapshot_of(items)


def snapshot_in_process(table: str, region: str = "eu-central-1") -> Snapshot:
    """The same read for moto in-process (``mock_aws``), straight from its memory: the stateful
    test checks every step, and a scan's response serialisation would dominate its run time."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    items = dynamodb_backends[DEFAULT_ACCOUNT_ID][region].get_table(table).all_items()
    return snapshot_of(item.to_regular_json() for item in items)


def snapshot_of(items: Any) -> Snapshot:
    snap = Snapshot()
    for plain in items:
        item = {key: _number(value) for key, value in plain.items()}
        pk, sk = item["pk"], item["sk"]
        if pk.startswith("BOOKING#"):
            booking_id = pk.removeprefix("BOOKING#")
            if sk == "META":
                snap.bookings[booking_id] = booking_from_item(item)
            elif sk.startswith("JOURNAL#"):
                snap.journals[booking_id].append((int(sk.removeprefix("JOURNAL#")), JournalEntry(
                    at=item["at"], action=item["action"], actor=item["actor"], from_status=item.get("from_status"),
                    to_status=item["to_status"], decision=item["decision"], ids=dict(item.get("ids") or {}))))
        elif pk.startswith("EVENT#"):
            event_id = pk.removeprefix("EVENT#")
            if sk == "META":
                snap.events[event_id] = item
            elif sk.startswith("POOL#"):
                snap.pools[event_id][sk] = {k: int(item[k]) for k in ("capacity", "available", "held", "sold")}
            elif sk.startswith("UNIT#"):
                snap.units[event_id][sk.removeprefix("UNIT#")] = item
        elif pk.startswith("IDEM#"):
            snap.idempotency[pk] = item
    for entries in snap.journals.values():
        entries.sort(key=lambda pair: pair[0])
    return snap


# ---------------------------------------------------------------------------------- invariants

def check_invariants(snap: Snapshot) -> None:
    """Raise AssertionError naming the first broken invariant (docs/invariants.md, I1-I5)."""
    for event_id in snap.events:
        check_capacity(snap, event_id)
    for booking in snap.bookings.values():
        check_journal(snap, booking)


def check_capacity(snap: Snapshot, event_id: str) -> None:
    event = snap.events[event_id]
    bookings = snap.of_event(event_id)
    capacity = int(event["capacity"])
    occupying = sum(b.places.quantity for b in bookings if b.status in OCCUPYING)
    # I1: confirmed + unreleased holds never exceed capacity.
    assert occupying <= capacity, f"I1 oversold: {occupying} places occupied of {capacity}"
    if snap.pools.get(event_id):
        held: Counter[str] = Counter()
        sold: Counter[str] = Counter()
        for booking in bookings:
            for pool_id, count in booking.places.pools:
                if booking.status in HOLDING:
                    held[pool_id] += count
                elif booking.status in SOLD:
                    sold[pool_id] += count
        total = 0
        for pool_id, pool in snap.pools[event_id].items():
            assert min(pool["available"], pool["held"], pool["sold"]) >= 0, f"I2 negative counter {pool_id}: {pool}"
            assert pool["available"] + pool["held"] + pool["sold"] == pool["capacity"], f"I2 {pool_id}: {pool}"
            assert pool["held"] == held[pool_id], f"I2 {pool_id} held {pool['held']} != bookings {held[pool_id]}"
            assert pool["sold"] == sold[pool_id], f"I2 {pool_id} sold {pool['sold']} != bookings {sold[pool_id]}"
            total += pool["capacity"]
        assert total == capacity, f"I2 pools add up to {total}, not {capacity}"
        assert set(held) | set(sold) <= set(snap.pools[event_id]), "I2 booking names an unknown pool"
        return
    # Named units: I3, one seat in at most one unreleased booking, and the unit says which.
    owners: dict[str, list[Booking]] = defaultdict(list)
    for booking in bookings:
        if booking.status in OCCUPYING:
            for unit in booking.places.units:
                owners[unit].append(booking)
    units = snap.units[event_id]
    assert len(units) == capacity
    for unit_id, unit in units.items():
        mine = owners.get(unit_id, [])
        assert len(mine) <= 1, f"I3 seat {unit_id} in {len(mine)} unreleased bookings"
        if not mine:
            assert unit["state"] == "available" and "booking_id" not in unit, f"I3 seat {unit_id}: {unit} owned by nobody"
            continue
        owner = mine[0]
        expected = "held" if owner.status in HOLDING else "sold"
        assert unit["state"] == expected and unit.get("booking_id") == owner.booking_id, \
            f"I3 seat {unit_id}: {unit} but booking {owner.booking_id} is {owner.status}"


def check_journal(snap: Snapshot, booking: Booking) -> None:
    """I5: version == number of journal entries, entries 1..version chain, each step allowed."""
    entries = snap.journals.get(booking.booking_id, [])
    versions = [version for version, _ in entries]
    assert versions == list(range(1, booking.version + 1)), \
        f"I5 booking {booking.booking_id} v{booking.version} has journal versions {versions}"
    previous: str | None = None
    for version, entry in entries:
        assert entry.from_status == previous, f"I5 v{version}: from {entry.from_status}, previous was {previous}"
        if previous is None:
            assert entry.to_status == BookingStatus.HELD.value
        elif entry.to_status != previous:
            source, target = BookingStatus(previous), BookingStatus(entry.to_status)
            assert target in TRANSITIONS[source], f"I4 {booking.booking_id}: {source} -> {target} is not allowed"
        previous = entry.to_status
    assert previous == booking.status.value, f"I5 last journal status {previous} != {booking.status}"


def status_path(snap: Snapshot, booking_id: str) -> list[str]:
    """The booking's statuses in order, repeats collapsed (HELD, PAYMENT_PENDING, ...)."""
    path: list[str] = []
    for _, entry in snap.journals[booking_id]:
        if not path or path[-1] != entry.to_status:
            path.append(entry.to_status)
    return path


def actions(snap: Snapshot, booking_id: str) -> list[str]:
    return [entry.action for _, entry in snap.journals[booking_id]]


__all__ = [
    "HOLDING", "LockedProvider", "ManualClock", "OCCUPYING", "RELEASED", "SOLD", "Snapshot", "actions",
    "check_capacity", "check_invariants", "check_journal", "event_request", "snapshot", "snapshot_in_process",
    "snapshot_of", "status_path",
]
