"""Shared pieces of the correctness tests: a controllable clock, event bodies, a thread-safe
provider wrapper, and the invariant checker that reads the whole table back.

The checker never trusts the services' own reads: it scans the test's table (one table per test)
and compares the inventory items (pool counters, seat units) with the bookings and their journals.
"""
from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import ClientError

from holdfast.adapters.booking_items import booking_from_item
from holdfast.adapters.cancellation_store import SOLD as SOLD_INDEX
from holdfast.adapters.inventory_store import inventory_entry, split_item
from holdfast.clock import parse_iso
from holdfast.domain.booking import Booking, JournalEntry
from holdfast.domain.codes import COMPS_POOL, is_code_pool
from holdfast.products.events.commands import CreateEvent
from holdfast.domain import lifecycle
from holdfast.products.appointments.timeslots import parse_granule_key
from holdfast.domain.statuses import HOLDING, OCCUPYING, RELEASED, SOLD, TRANSITIONS, BookingStatus
from holdfast.products.events.schemas import EventIn

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


def event_request(**overrides: Any) -> CreateEvent:
    body: dict[str, Any] = {
        "name": "Club night", "venue": "Hall", "city": "Moscow", "category": "club",
        "starts_at": "2030-02-01T20:00:00Z", "price": {"value": "1500.00", "currency": "RUB"}, "capacity": 10,
        "hold_ttl_seconds": 600,
    }
    body.update(overrides)
    return EventIn.model_validate(body).command()


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


# ------------------------------------------------------------------------- moto without botocore

WRITING_OPERATIONS = frozenset({"put_item", "update_item", "delete_item", "transact_write_items", "batch_write_item",
                                "create_table", "delete_table", "update_table"})


class DirectDynamoDB:
    """A DynamoDB client with boto3's call shape that hands each request straight to moto's own
    DynamoDB request handler (the code behind ``mock_aws`` and the moto server), skipping botocore's
    signing, HTTP round trip and response parsing: about 100 times less overhead per call.

    Same backend, same conditions, same transaction semantics (and the devstack's transaction
    replacement when installed). Requests and answers go through JSON, as on the wire, so nothing
    is shared with moto's items by reference. Errors come back as botocore ``ClientError`` with the
    code and extra fields (``CancellationReasons``) where boto3 puts them. What it does not do is
    botocore's client-side parameter validation, so ``test_direct_client_matches_boto3`` replays
    histories on both clients and requires identical results. Single-threaded use only (moto's
    in-process backend is exact only there).
    """

    def __init__(self, region: str = "eu-central-1") -> None:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.responses import DynamoHandler

        self._handler = DynamoHandler()
        self._handler.current_account = DEFAULT_ACCOUNT_ID
        self._handler.region = region
        self.writes = 0   # how many writing calls so far: a snapshot is still current if none came since

    def __getattr__(self, operation: str) -> Any:
        action = getattr(self._handler, operation)

        def call(**params: Any) -> dict[str, Any]:
            from moto.core.exceptions import JsonRESTError

            handler = self._handler
            if operation in WRITING_OPERATIONS:
                self.writes += 1
            handler.body = handler.params = json.loads(json.dumps(params))
            try:
                result = action()
            except JsonRESTError as exc:
                body = json.loads(exc.description) if exc.description.startswith("{") else {}
                code = (body.get("__type") or exc.error_type).rsplit("#", 1)[-1]
                message = body.get("message") or body.get("Message") or exc.message
                extra = {key: value for key, value in body.items() if key not in ("__type", "message", "Message")}
                raise ClientError({"Error": {"Code": code, "Message": message}, **extra}, operation) from None
            return json.loads(json.dumps(result.result if hasattr(result, "result") else result, default=str))

        return call


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
    #: Time granules of resources (appointment slots), by (resource id, "YYYY-MM-DDTHH:MM").
    granules: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    #: Parking tickets by id (a drive-up's own granule claims; a reservation's ride on its booking).
    tickets: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Counters of codes' uses (a code's own and its customers' allowances), by offering and pool id.
    codes: dict[str, dict[str, dict[str, int]]] = field(default_factory=lambda: defaultdict(dict))
    #: The organizer's blocks (places kept out of sale), by offering and block id.
    blocks: dict[str, dict[str, dict[str, Any]]] = field(default_factory=lambda: defaultdict(dict))
    #: The live holds counted per network address and offering (adapters/hold_limits.py), by
    #: (address key, offering id).
    address_holds: dict[tuple[str, str], int] = field(default_factory=dict)
    #: The bookings each offering's sales index lists (gsi1 ``SOLD#<offering>#<shard>``: the
    #: operator's sales page), by offering id.
    sales: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def of_event(self, event_id: str) -> list[Booking]:
        """The bookings that take places of the event: an order counts as each of its lines, each
        line the order's status with the line's own places (products/orders/lines.py)."""
        from holdfast.products.orders.lines import is_order, lines_of

        found = []
        for booking in self.bookings.values():
            if is_order(booking):
                found += [line.as_booking(booking) for line in lines_of(booking) if line.offering_id == event_id]
            elif booking.event_id == event_id:
                found.append(booking)
        return found

    def counts(self, event_id: str) -> dict[str, int]:
        totals = {"available": 0, "held": 0, "sold": 0}
        if (self.events.get(event_id) or {}).get("inventory_kind") == "slots":
            return self._session_counts(event_id)
        if (self.events.get(event_id) or {}).get("inventory_kind") == "parking":
            return self._space_counts(event_id)
        if self.pools.get(event_id):
            for pool in self.pools[event_id].values():
                for key in totals:
                    totals[key] += pool[key]
        else:
            for unit in self.units.get(event_id, {}).values():
                totals[unit["state"]] += 1
        return totals


    def _space_counts(self, event_id: str) -> dict[str, int]:
        """A lot's spaces by state over every window claimed: held or sold where any of a space's
        granules is, available otherwise."""
        totals = {"available": 0, "held": 0, "sold": 0}
        for space in self.events[event_id]["settings"]["spaces"]:
            items = [item for (resource, _), item in self.granules.items() if resource == f"{event_id}|{space['space_id']}"]
            state = ("held" if any(int(i.get("held", 0)) for i in items)
                     else "sold" if any(int(i.get("sold", 0)) for i in items) else "available")
            totals[state] += 1
        return totals

    def _session_counts(self, event_id: str) -> dict[str, int]:
        """A group service's seats summed over its sessions that have granule items; every granule
        of a session carries the same counters (checked here), so one stands for the session."""
        capacity = int(self.events[event_id]["capacity"])
        sessions: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for item in self.granules.values():
            if str(item.get("session", "")).startswith(f"S#{event_id}#"):
                sessions[item["session"]].append(item)
        totals = {"available": 0, "held": 0, "sold": 0}
        for session, items in sessions.items():
            states = {(int(i.get("held", 0)), int(i.get("sold", 0))) for i in items}
            assert len(states) == 1, f"session {session} has granules with different counters: {states}"
            [(held, sold)] = states
            totals["held"] += held
            totals["sold"] += sold
            totals["available"] += capacity - held - sold
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
        elif (entry := inventory_entry(item)) is not None:
            event_id, shape, item_id = entry
            if shape == "pool" and is_code_pool(item_id):
                snap.codes[event_id][item_id] = {k: int(item[k]) for k in ("capacity", "available", "held", "sold")}
            elif shape == "pool":
                snap.pools[event_id][item_id] = {k: int(item.get(k, 0)) for k in ("capacity", "available", "held",
                                                                                  "sold", "blocked")}
            else:
                snap.units[event_id][item_id] = item
        elif pk.startswith("EVENT#") and sk == "META":
            snap.events[pk.removeprefix("EVENT#")] = item
        elif pk.startswith("EVENT#") and sk.startswith("BLOCK#"):
            snap.blocks[pk.removeprefix("EVENT#")][sk.removeprefix("BLOCK#")] = item
        elif pk.startswith("IDEM#"):
            snap.idempotency[pk] = item
        elif pk.startswith("RES#"):
            resource, day = pk.removeprefix("RES#").rsplit("#", 1)
            snap.granules[(resource, f"{day}T{sk.removeprefix('G#')}")] = item
        elif pk.startswith("PARK#"):   # a lot's spaces share its day partition: "G#<HH:MM>#<space>"
            lot, day = pk.removeprefix("PARK#").rsplit("#", 1)
            _, at, space = sk.split("#", 2)
            snap.granules[(f"{lot}|{space}", f"{day}T{at}")] = item
        elif pk.startswith("TICKET#") and sk == "META":
            snap.tickets[pk.removeprefix("TICKET#")] = item
        elif str(item.get("gsi1pk", "")).startswith(SOLD_INDEX) and pk.startswith("EVENTBOOKINGS#"):
            snap.sales[item["gsi1pk"].removeprefix(SOLD_INDEX).rpartition("#")[0]].add(sk)
        elif pk.startswith("HOLDS#ADDR#") and sk.startswith("EVENT#"):
            snap.address_holds[(pk.removeprefix("HOLDS#ADDR#"), sk.removeprefix("EVENT#"))] = \
                int(item.get("live_holds", 0))
    for entries in snap.journals.values():
        entries.sort(key=lambda pair: pair[0])
    return snap


# ---------------------------------------------------------------------------------- invariants

def check_invariants(snap: Snapshot) -> None:
    """Raise AssertionError naming the first broken invariant (docs/invariants.md, I1-I5, I9, I10)."""
    for event_id in snap.events:
        if snap.events[event_id].get("inventory_kind") in ("slots", "parking"):
            continue   # places are time granules (of resources, of spaces): check_granules
        check_capacity(snap, event_id)
    check_granules(snap)
    check_parking(snap)
    check_codes(snap)
    check_comps(snap)
    for booking in snap.bookings.values():
        check_journal(snap, booking)
        check_booking(snap, booking)
    check_hold_cap(snap)
    check_address_holds(snap)
    check_sales(snap)


def check_sales(snap: Snapshot) -> None:
    """XC4: a confirmed booking is listed among the sales of each offering it has places of, and
    of no other (an exchange to another offering moves it; the sales page skips a listed booking
    that is no longer CONFIRMED, so only confirmed ones are held to it)."""
    for booking in snap.bookings.values():
        if booking.status is not BookingStatus.CONFIRMED:
            continue
        listed = {offering for offering, ids in snap.sales.items() if booking.booking_id in ids}
        assert listed == set(booking.offerings), \
            f"XC4 confirmed booking {booking.booking_id} of {sorted(booking.offerings)} is listed on the sales " \
            f"pages of {sorted(listed)}"


def check_codes(snap: Snapshot) -> None:
    """C1: every counter of a code's uses (its own, a customer's allowance of it) adds up to its
    capacity, none below zero, and holds and sells exactly what the unreleased bookings naming it
    hold and have bought: so no code is ever used more than its ``max_uses`` (nor by one customer
    more than its ``per_customer``) by holds and confirmed bookings together."""
    held: Counter[tuple[str, str]] = Counter()
    sold: Counter[tuple[str, str]] = Counter()
    for booking in snap.bookings.values():
        for pool_id, count in booking.places.pools:
            if is_code_pool(pool_id):
                counter = split_item(booking.event_id, pool_id)   # an order's: "<offering>/CODE#..."
                if booking.status in HOLDING:
                    held[counter] += count
                elif booking.status in SOLD:
                    sold[counter] += count
    for event_id, counters in snap.codes.items():
        for pool_id, counter in counters.items():
            assert min(counter.values()) >= 0, f"C1 negative code counter {pool_id}: {counter}"
            assert counter["available"] + counter["held"] + counter["sold"] == counter["capacity"], \
                f"C1 code counter {pool_id} does not add up: {counter}"
            assert counter["held"] == held[(event_id, pool_id)], \
                f"C1 {pool_id} holds {counter['held']} uses, bookings hold {held[(event_id, pool_id)]}"
            assert counter["sold"] == sold[(event_id, pool_id)], \
                f"C1 {pool_id} sold {counter['sold']} uses, bookings bought {sold[(event_id, pool_id)]}"
    named = set(held) | set(sold)
    assert named <= {(event_id, pool_id) for event_id, counters in snap.codes.items() for pool_id in counters}, \
        "C1 a booking names a code counter that does not exist"


def check_comps(snap: Snapshot) -> None:
    """Z1: a booking costs nothing exactly when it counts its places among its offering's comps
    (one claim of each line's comps counter, as many as the line's places), and no booking that
    costs nothing ever asks the provider for a payment: so a comp is confirmed without one, the sales view's
    ``comps`` (the counters' sold, whose consistency with the bookings C1 holds) counts exactly
    the places of confirmed comps, and nothing is given away that someone was asked to pay for."""
    for booking in snap.bookings.values():
        comps = sum(count for pool_id, count in booking.places.pools
                    if pool_id.rpartition("/")[2] == COMPS_POOL)
        free = booking.amount.value == 0
        if free:
            # (a stray payment someone made at the provider naming it is the engine's to give back: M1-M5)
            asked = [entry.action for _, entry in snap.journals.get(booking.booking_id, [])
                     if entry.action in ("payment_requested", "payment_retried")]
            assert not asked, f"Z1 comp {booking.booking_id} (nothing to pay) asked for a payment: {asked}"
            lines = (booking.kind_details or {}).get("lines")
            # (a line given up on its own gave its places back, its comps among them: O5)
            expected = sum(int(line["quantity"]) for line in lines
                           if not line.get("status") or lifecycle.occupies(str(line["status"]))) \
                if lines else booking.places.quantity
            assert comps == expected, \
                f"Z1 comp {booking.booking_id} counts {comps} comps for {expected} place(s)"
        elif not (booking.kind_details or {}).get("lines"):
            assert comps == 0, f"Z1 booking {booking.booking_id} costs {booking.amount.text} but counts {comps} comps"
        if booking.status is BookingStatus.CONFIRMED and booking.payment is None:
            assert free, f"Z1 booking {booking.booking_id} CONFIRMED without a payment costs {booking.amount.text}"


#: The per-customer cap of active holds when the event sets none (issue 11, finding 13).
DEFAULT_HOLDS_PER_CUSTOMER = 4


def check_hold_cap(snap: Snapshot) -> None:
    """H1: per event, a customer's active holds (HELD or PAYMENT_PENDING bookings), their own and
    the waitlist's offers to them together, never exceed the event's ``max_holds_per_customer``
    (default 4). W3: a waitlist offer is held no longer than the offering holds a customer's own
    hold (its ``hold_ttl_seconds``)."""
    holds: Counter[tuple[str, str]] = Counter()
    for booking in snap.bookings.values():
        entries = snap.journals.get(booking.booking_id) or []
        first = entries[0][1] if entries else None
        if booking.status in HOLDING and first is not None and first.actor in ("customer", "waitlist"):
            holds[(booking.event_id, booking.customer_id)] += 1
        event = snap.events.get(booking.event_id) or {}
        if first is not None and first.actor == "waitlist" and booking.status is BookingStatus.HELD \
                and event.get("hold_ttl_seconds"):
            held_for = (parse_iso(booking.hold_expires_at) - parse_iso(booking.created_at)).total_seconds()
            assert held_for <= int(event["hold_ttl_seconds"]), \
                f"W3 waitlist offer {booking.booking_id} held for {held_for:.0f} s, longer than the " \
                f"offering's hold of {int(event['hold_ttl_seconds'])} s"
    for (event_id, customer_id), count in holds.items():
        event = snap.events.get(event_id) or {}
        limit = int(event.get("max_holds_per_customer") or DEFAULT_HOLDS_PER_CUSTOMER)
        assert count <= limit, f"H1 customer {customer_id} holds {count} active bookings (own and waitlist " \
            f"offers) for event {event_id}, more than the cap of {limit}"


def check_address_holds(snap: Snapshot) -> None:
    """AH1 (issue 42, finding 13): per network address and offering, the counter of live holds
    equals the bookings from that address that hold the offering's places (HELD or PAYMENT_PENDING,
    an order once toward each of its offerings), never below zero; and a capped offering
    (``max_holds_per_address``) never has more live holds from one address than its cap."""
    live: Counter[tuple[str, str]] = Counter()
    for booking in snap.bookings.values():
        if booking.counted_address and booking.status in HOLDING:
            for offering in booking.counted_offerings or (booking.event_id,):
                live[(booking.counted_address, offering)] += 1
    for key in set(live) | set(snap.address_holds):
        counted = snap.address_holds.get(key, 0)
        assert counted == live[key], \
            f"AH1 address {key[0][:8]} counts {counted} live holds of {key[1]}, but {live[key]} bookings hold"
        cap = (snap.events.get(key[1]) or {}).get("max_holds_per_address")
        assert not cap or live[key] <= int(cap), \
            f"AH1 address {key[0][:8]} holds {live[key]} bookings of {key[1]}, more than its cap of {int(cap)}"


def check_granules(snap: Snapshot) -> None:
    """Appointment slots (docs/appointments.md): G1 a granule of a resource is used by one session
    at a time (no resource used by two parties at once); G2 its counters add up and never pass the
    session's capacity; G3 they equal the seats the unreleased bookings claim on it."""
    claimed: dict[tuple[str, str], dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    capacity: dict[tuple[str, str], int] = {}
    for booking in snap.bookings.values():
        if booking.status not in OCCUPYING and not lifecycle.occupies(booking.status):
            continue
        state = "held" if booking.status in HOLDING else "sold"
        for granule in booking.places.granules:
            key = (granule.resource_id, granule.at)
            claimed[key][granule.session or f"B#{booking.booking_id}"][state] += granule.seats
            capacity[key] = granule.capacity
    for ticket_id, ticket in snap.tickets.items():   # a drive-up's space, sold to the ticket while open
        if ticket["status"] == "OPEN":
            for at in ticket.get("granules") or ():
                key = (f"{ticket['lot_id']}|{ticket['space_id']}", at)
                claimed[key][f"B#{ticket_id}"]["sold"] += 1
                capacity[key] = 1
    for key, sessions in claimed.items():
        assert len(sessions) == 1, f"G1 granule {key} used by {len(sessions)} sessions at once: {dict(sessions)}"
        assert key in snap.granules, f"G3 bookings claim granule {key}, which has no item"
    for key, item in snap.granules.items():
        taken, held, sold = (int(item.get(name, 0)) for name in ("taken", "held", "sold"))
        assert min(taken, held, sold) >= 0 and taken == held + sold, f"G2 granule {key}: {item}"
        sessions = claimed.get(key, {})
        if taken == 0:
            assert not sessions, f"G3 granule {key} is free but claimed by {dict(sessions)}"
            continue
        assert taken <= capacity.get(key, 0), f"G2 granule {key}: {taken} seats taken of {capacity.get(key)}"
        [(session, counts)] = sessions.items()
        assert item["session"] == session, f"G3 granule {key} names {item['session']}, bookings {session}"
        assert (held, sold) == (counts["held"], counts["sold"]), f"G3 granule {key}: {item} vs {dict(counts)}"


def check_parking(snap: Snapshot) -> None:
    """Parking (docs/parking.md): P1 no space is in two unreleased reservations or open tickets
    whose windows overlap; P2 occupancy is never negative and a space holds at most one open
    ticket, a plate at most one per lot."""
    owners: dict[tuple[str, str], set[str]] = defaultdict(set)
    for booking in snap.bookings.values():
        if str(booking.places.kind) == "parking" and (booking.status in OCCUPYING or lifecycle.occupies(booking.status)):
            for granule in booking.places.granules:
                owners[(granule.resource_id, granule.at)].add(booking.booking_id)
    inside: Counter[tuple[str, str]] = Counter()
    plates: Counter[tuple[str, str]] = Counter()
    for ticket_id, ticket in snap.tickets.items():
        if ticket["status"] != "OPEN":
            continue
        inside[(ticket["lot_id"], ticket["space_id"])] += 1
        plates[(ticket["lot_id"], ticket["plate"])] += 1
        for at in ticket.get("granules") or ():
            owners[(f"{ticket['lot_id']}|{ticket['space_id']}", at)].add(ticket_id)
    for key, holders in owners.items():
        assert len(holders) == 1, f"Z1 space granule {key} given to {sorted(holders)}"
    assert all(count == 1 for count in inside.values()), f"P2 a space holds two open tickets: {inside}"
    assert all(count == 1 for count in plates.values()), f"P2 a plate is inside twice: {plates}"
    for key, item in snap.granules.items():
        if "|" in key[0]:
            assert min(int(item.get(name, 0)) for name in ("taken", "held", "sold")) >= 0, f"P2 negative: {key} {item}"


def check_booking(snap: Snapshot, booking: Booking) -> None:
    """I9: a customer's own cancellation is final: once the customer cancelled, no later entry
    makes the booking CONFIRMED (a payment that still arrives is refunded or voided).
    I10: places are pinned for a capture (``places_secured``) only while the booking holds them;
    a confirmation or a release clears the pin in the same write."""
    cancelled_at = None
    for version, entry in snap.journals.get(booking.booking_id, []):
        if entry.actor == "customer" and entry.to_status == BookingStatus.CANCELLED.value \
                and entry.from_status != BookingStatus.CANCELLED.value:
            cancelled_at = version
        elif cancelled_at is not None and entry.to_status == BookingStatus.CONFIRMED.value:
            raise AssertionError(f"I9 booking {booking.booking_id} was cancelled by its customer (v{cancelled_at}) "
                                 f"and then confirmed (v{version}: {entry.action}, {entry.decision!r})")
    assert not booking.places_secured or booking.status in HOLDING, \
        f"I10 booking {booking.booking_id} is {booking.status} with places_secured still set"
    check_slot_start(snap, booking)
    check_lines_given_up(booking)
    check_line_refunds_refused(snap, booking)


def check_line_refunds_refused(snap: Snapshot, booking: Booking) -> None:
    """O6: an order line's refund the provider refused for good is an operator's case until one
    settles it: the write that recorded the refusal opened a review on the order, and every later
    write keeps one open (whatever becomes of the order: cancelled, refunded, reviewed) until an
    operator's close marks the line's refund ``settled``."""
    refused = booking.refused_line_refunds
    if not refused:
        return
    journal = [entry for _, entry in sorted(snap.journals.get(booking.booking_id, []), key=lambda pair: pair[0])]
    assert any(entry.action == "line_refund_rejected" for entry in journal), \
        f"O6 order {booking.booking_id}'s line refund was refused with no journal entry saying so"
    assert booking.review, \
        f"O6 order {booking.booking_id}'s line refund was refused and no review is open ({booking.status})"


def check_lines_given_up(booking: Booking) -> None:
    """O5: a confirmed order's line in a state of its own that gives its places back (REFUNDED at
    its no-show, a kept NO_SHOW, COMPLETED once its car left) is no longer among the order's
    places: they went back in the write that recorded it (so I2, I3 and G3 find them free), not
    at the order's end."""
    from holdfast.products.orders.lines import is_order, lines_of, merged

    if not is_order(booking) or booking.status is not BookingStatus.CONFIRMED:
        return
    for line in lines_of(booking):
        if not line.status or lifecycle.occupies(line.status):
            continue
        own = merged([(line.offering_id, line.places)])
        kept = ({pool for pool, _ in own.pools} & {pool for pool, _ in booking.places.pools}) \
            | (set(own.units) & set(booking.places.units)) | (set(own.granules) & set(booking.places.granules))
        assert not kept, f"O5 order {booking.booking_id}'s line {line.line_id} is {line.status} " \
                         f"and still claims {sorted(map(str, kept))[:3]}"


def check_slot_start(snap: Snapshot, booking: Booking) -> None:
    """T1: an appointment slot is never confirmed once it has begun, nor a parking window once it
    has ended, unless the booking held those places without a break since before that moment (a
    hold made in time and paid within it). A late payment's retake, a re-hold for a capture and a
    conflict case's alternative all hold anew, so each must happen before it."""
    granules = booking.places.granules
    if booking.places.kind not in ("slots", "parking") or not granules:
        return
    # A slot may not start in the past; a parking window may begin in the current half hour.
    starts = parse_granule_key(granules[0].at) if booking.places.kind == "slots" \
        else parse_granule_key(granules[-1].at) + timedelta(minutes=30)
    holding = {status.value for status in HOLDING}   # a kind's own statuses are plain strings here
    confirmed = BookingStatus.CONFIRMED.value
    holding_since: datetime | None = None
    for version, entry in snap.journals.get(booking.booking_id, []):
        if entry.to_status in holding and entry.from_status not in holding:
            holding_since = parse_iso(entry.at)
        elif entry.to_status == confirmed and entry.from_status != confirmed:
            held_before = entry.from_status in holding and holding_since is not None and holding_since < starts
            assert parse_iso(entry.at) < starts or held_before, \
                f"T1 booking {booking.booking_id} CONFIRMED at {entry.at} (v{version}: {entry.action}) for a " \
                f"{'slot that started' if booking.places.kind == 'slots' else 'parking window that ended'} at " \
                f"{iso_minute(starts)}, without holding it since before then"
        if entry.to_status not in holding:
            holding_since = None


def iso_minute(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%MZ")


def check_capacity(snap: Snapshot, event_id: str) -> None:
    event = snap.events[event_id]
    bookings = snap.of_event(event_id)
    capacity = int(event["capacity"])
    occupying = sum(b.places.quantity for b in bookings if b.status in OCCUPYING)
    # I1: confirmed + unreleased holds never exceed capacity.
    assert occupying <= capacity, f"I1 oversold: {occupying} places occupied of {capacity}"
    # B1: nor do they with the organizer's blocks: sold + held + blocked <= capacity, a block's
    # places are exactly what the items count blocked, and no place is in a block and a booking.
    blocks = snap.blocks.get(event_id, {})
    blocked = sum(int(block["quantity"]) for block in blocks.values())
    assert occupying + blocked <= capacity, \
        f"B1 oversold: {occupying} places occupied and {blocked} blocked of {capacity}"
    block_pools: Counter[str] = Counter()
    block_units: dict[str, str] = {}
    for block_id, block in blocks.items():
        for pool_id, count in (block.get("pools") or {}).items():
            block_pools[pool_id] += int(count)
        for unit in block.get("units") or ():
            assert unit not in block_units, f"B1 seat {unit} in two blocks ({block_units[unit]}, {block_id})"
            block_units[unit] = block_id
    if snap.pools.get(event_id):
        assert not snap.units.get(event_id), f"I2 counted event {event_id} has seat items {sorted(snap.units[event_id])[:3]}"
        held: Counter[str] = Counter()
        sold: Counter[str] = Counter()
        for booking in bookings:
            for pool_id, count in booking.places.pools:
                if is_code_pool(pool_id):
                    continue   # a code's use: check_codes
                if booking.status in HOLDING:
                    held[pool_id] += count
                elif booking.status in SOLD:
                    sold[pool_id] += count
        total = 0
        for pool_id, pool in snap.pools[event_id].items():
            assert min(pool["available"], pool["held"], pool["sold"]) >= 0, f"I2 negative counter {pool_id}: {pool}"
            assert pool["available"] + pool["held"] + pool["sold"] + pool["blocked"] == pool["capacity"], \
                f"I2 {pool_id}: {pool}"
            assert pool["blocked"] == block_pools[pool_id], \
                f"B1 {pool_id} blocks {pool['blocked']}, the live blocks {block_pools[pool_id]}"
            assert pool["held"] == held[pool_id], f"I2 {pool_id} held {pool['held']} != bookings {held[pool_id]}"
            assert pool["sold"] == sold[pool_id], f"I2 {pool_id} sold {pool['sold']} != bookings {sold[pool_id]}"
            total += pool["capacity"]
        assert total == capacity, f"I2 pools add up to {total}, not {capacity}"
        assert set(held) | set(sold) <= set(snap.pools[event_id]), "I2 booking names an unknown pool"
        return
    # Named units: I3, one seat in at most one unreleased booking, and the unit says which.
    assert not snap.pools.get(event_id), f"I3 seated event {event_id} has pool items {sorted(snap.pools[event_id])}"
    owners: dict[str, list[Booking]] = defaultdict(list)
    for booking in bookings:
        if booking.status in OCCUPYING:
            for unit in booking.places.units:
                owners[unit].append(booking)
    units = snap.units[event_id]
    assert len(units) == capacity, f"I3 seated event {event_id} has {len(units)} seat items for capacity {capacity}"
    for unit_id, unit in units.items():
        mine = owners.get(unit_id, [])
        assert len(mine) <= 1, f"I3 seat {unit_id} in {len(mine)} unreleased bookings"
        if unit_id in block_units:
            assert not mine, f"B1 seat {unit_id} blocked by {block_units[unit_id]} and in booking {mine[0].booking_id}"
            assert unit["state"] == "blocked" and unit.get("booking_id") == block_units[unit_id], \
                f"B1 seat {unit_id}: {unit}, but block {block_units[unit_id]} keeps it"
            continue
        assert unit["state"] != "blocked", f"B1 seat {unit_id} is blocked by no live block: {unit}"
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
        elif entry.to_status == previous:
            # A journalled note (a review opened on a booking that stays, a payment recorded): no
            # status move, in a built-in status or a kind's own alike.
            continue
        elif lifecycle.declared(entry.to_status) is not None:
            # A kind's own status (parking's NO_SHOW, CANCELLED_NO_REFUND): the kind says from where, and who.
            assert lifecycle.allows(booking.places.kind, previous, entry.to_status, entry.actor), \
                f"I4 {booking.booking_id}: {previous} -> {entry.to_status} by {entry.actor} ({entry.action}) is not allowed"
        elif entry.to_status != previous:
            assert lifecycle.declared(previous) is None, \
                f"I4 {booking.booking_id}: {previous} -> {entry.to_status} is not allowed (out of a kind's status)"
            source, target = BookingStatus(previous), BookingStatus(entry.to_status)
            assert target in TRANSITIONS[source], f"I4 {booking.booking_id}: {source} -> {target} is not allowed"
        previous = entry.to_status
    assert previous == booking.status.value, f"I5 last journal status {previous} != {booking.status}"


# ---------------------------------------------------------------------------------- money (I6)

#: Statuses in which the booking's own payment may be refunded at the provider.
REFUND_STATUSES = (BookingStatus.REFUNDED, BookingStatus.REFUND_PENDING)


def _value(amount: dict[str, Any]) -> Decimal:
    return Decimal(str(amount["value"]))


def own_payment_ids(snap: Snapshot, provider: Any) -> dict[str, str]:
    """Each booking's own payment at the provider: the one created under the booking's payment key
    (``hf-pay-<booking>``, the provider's record of who asked), else the id the booking recorded.
    Any other payment naming the booking in its metadata is a stray (a second payment)."""
    own: dict[str, str] = {}
    for key, (_, answer) in getattr(provider, "keys", {}).items():
        if key.startswith("hf-pay-") and isinstance(answer, dict) and answer.get("id"):
            own[key.removeprefix("hf-pay-")] = answer["id"]
    for booking in snap.bookings.values():
        if booking.booking_id not in own and booking.payment is not None and booking.payment.payment_id:
            own[booking.booking_id] = booking.payment.payment_id
    return own


def in_review(booking: Booking) -> bool:
    return booking.status is BookingStatus.MANUAL_REVIEW or bool(booking.review)


def kept_after_confirmation(booking: Booking) -> bool:
    """CONFIRMED, or a state a kind declares after it that keeps the places sold or was reached
    with the money kept (every declared state is entered from CONFIRMED or a later one)."""
    return booking.status is BookingStatus.CONFIRMED or lifecycle.declared(str(booking.status)) is not None


def _asked_back(booking: Booking, paid: Decimal, is_own: bool) -> Decimal:
    """What the refund of a payment is to give back: for a booking's own payment the amount its
    refund recorded (a cancellation policy's share, issue 45), or after an exchange gave a
    difference back, what is left (the booking's amount); else the whole payment."""
    stored = ((booking.payment.refund if booking.payment else None) or {}).get("amount") if is_own else None
    if stored:
        return _value(stored)
    if is_own and booking.paid_by_differences.value:   # a dearer exchange's share went back from its own payment
        return booking.amount.value - booking.paid_by_differences.value
    return booking.amount.value if is_own and _differences(booking) else paid


def _differences(booking: Booking, payment_id: str | None = None) -> list[dict[str, Any]]:
    """The part refunds the booking's exchanges (and refunded lines) asked of its payments (issue
    45); with ``payment_id``, of that payment alone (a record naming none is of the booking's own)."""
    own = booking.payment.payment_id if booking.payment else None
    return [entry for entry in (booking.payment.exchange_refunds if booking.payment else None) or []
            if payment_id is None or (entry.get("payment_id") or own) == payment_id]


def difference_refund_ids(provider: Any) -> set[str]:
    """The provider's refunds made under an exchange difference's key (``rf-<payment>-xc...``):
    counted apart from the one refund of what is left (M1, M2, M5, S1)."""
    return {answer["id"] for key, (_, answer) in getattr(provider, "keys", {}).items()
            if key.startswith("rf-") and "-xc" in key and isinstance(answer, dict) and answer.get("id")}


def check_money(snap: Snapshot, provider: Any, settled: bool) -> None:
    """The money rule (docs/invariants.md, I6), against the provider's own records.

    Always, after every step:
      M1 each payment is refunded at most once, and never by more than was paid; in total the
         refunds never exceed the money taken.
      M2 no booking is CONFIRMED without captured money: its own payment is ``succeeded`` at the
         provider, unrefunded, and the booking records that payment.
      M3 no booking is REFUNDED without a succeeded refund of its own payment, the one it recorded.
      M4 if a booking's own payment is refunded, the booking is REFUNDED or REFUND_PENDING (the
         refund's answer was lost), or MANUAL_REVIEW (reconciliation gave the refund up after its
         limit, or a review opened while the answer was lost); S1 requires REFUNDED once settled.
      M5 no refund is asked for a payment whose money was already returned (a second refund under
         another key); needs the model's provider, which logs such requests.
    Once settled (every payment and refund notification delivered, every unsettled booking
    reconciled, every pending refund retried, no faults):
      S1 every succeeded payment is exactly one of: the own payment of a CONFIRMED booking,
         unrefunded; refunded exactly once, and if it is the booking's own the booking is REFUNDED;
         unrefunded with its booking in MANUAL_REVIEW, or (a stray second payment) with an open
         review on a booking that stands.
      S2 no authorisation is left in ``waiting_for_capture`` unless its booking is in review.
      S3 no booking is left REFUND_PENDING.
    The mid-flight states the "always" forms allow (REFUND_PENDING with a refund made, a succeeded
    payment whose booking is still EXPIRED or CANCELLED) are exactly the ones a delivery or a
    retry settles; S1-S3 say that they do.
    """
    own = own_payment_ids(snap, provider)
    owner_of = {payment_id: booking_id for booking_id, payment_id in own.items()}
    differences = difference_refund_ids(provider)
    taken = Decimal("0")
    returned = Decimal("0")
    for payment in provider.payments.values():
        payment_id = payment["id"]
        given_back = provider.refunds_for(payment_id)
        # an exchange's difference refunds are XC2's; the rules below count the refund of the rest
        refunds = [r for r in given_back if r["id"] not in differences]
        back_for_less = sum((_value(r["amount"]) for r in given_back if r["id"] in differences
                             and r.get("status") == "succeeded"), Decimal("0"))
        refunded = sum((_value(r["amount"]) for r in given_back if r.get("status") == "succeeded"), Decimal("0"))
        paid = _value(payment["amount"]) if payment["status"] == "succeeded" else Decimal("0")
        taken += paid
        returned += refunded
        assert len(refunds) <= 1, f"M1 payment {payment_id} refunded {len(refunds)} times"
        assert refunded <= paid, f"M1 payment {payment_id}: refunded {refunded} of {paid} taken ({payment['status']})"
        if payment["metadata"].get("exchange_of"):
            _check_difference_payment(snap, payment, given_back, differences, paid, refunded, settled)
            continue
        booking_id = payment["metadata"]["booking_id"]
        booking = snap.bookings.get(booking_id)
        assert booking is not None, f"M0 payment {payment_id} names no booking ({booking_id})"
        is_own = owner_of.get(payment_id) == booking_id
        if is_own and refunds:
            # In review mid-flight: reconciliation gave the refund up after its limit, or a review
            # opened (a stray payment) while the refund's answer was lost; S1 says how it settles.
            gave_up = booking.status is BookingStatus.MANUAL_REVIEW
            assert booking.status in REFUND_STATUSES or gave_up, \
                f"M4 payment {payment_id} refunded but its booking is {booking.status}" \
                f" (review: {(booking.review or {}).get('reason')})"
        if not settled:
            continue
        if payment["status"] == "succeeded":
            outcomes = {
                # A kind's states after CONFIRMED (parking: CHECKED_IN, COMPLETED, a no-show the
                # lot keeps) keep the money as CONFIRMED does, unless a refund moved it back.
                "confirmed": is_own and kept_after_confirmation(booking) and not refunds,
                # the whole of it, or (its own payment) the share a cancellation policy gave back
                "refunded": len(refunds) == 1 and refunded == _asked_back(booking, paid, is_own) + back_for_less
                and (not is_own or booking.status is BookingStatus.REFUNDED),
                "in review": not refunds and (booking.status is BookingStatus.MANUAL_REVIEW
                                              or not is_own and in_review(booking)),
            }
            assert list(outcomes.values()).count(True) == 1, \
                f"S1 succeeded payment {payment_id} ({'own' if is_own else 'stray'}) of booking {booking_id}: " \
                f"booking {booking.status}, {len(refunds)} refund(s), review {(booking.review or {}).get('reason')}; " \
                f"matches {[name for name, ok in outcomes.items() if ok] or 'none'} of confirmed/refunded/in review"
            if is_own and _differences(booking, payment_id):   # XC2: every difference went back, exactly
                # (but a line's refund the provider refused for good: an operator's case, O6)
                asked = sum((_value(entry["amount"]) for entry in _differences(booking, payment_id)
                             if not (entry.get("line_id") and entry.get("status") in ("rejected", "settled"))),
                            Decimal("0"))
                assert back_for_less == asked, \
                    f"XC2 payment {payment_id} of booking {booking_id}: {back_for_less} of differences {asked} given back"
        if payment["status"] == "waiting_for_capture":
            assert in_review(booking), f"S2 authorisation {payment_id} left hanging, booking {booking.status}"
    assert returned <= taken, f"M1 refunded {returned} in total, more than the {taken} taken"
    for booking in snap.bookings.values():
        payment_id = own.get(booking.booking_id)
        payment = provider.payments.get(payment_id) if payment_id else None
        refunds = [r for r in provider.refunds_for(payment_id) if r["id"] not in differences] if payment_id else []
        if booking.status is BookingStatus.CONFIRMED and booking.comp:
            continue   # a comp: confirmed without a payment (check_comps)
        if booking.status is BookingStatus.CONFIRMED:
            recorded = booking.payment.payment_id if booking.payment else None
            assert payment is not None and recorded == payment_id, \
                f"M2 booking {booking.booking_id} CONFIRMED on payment {recorded}, its own payment is {payment_id}"
            assert payment["status"] == "succeeded" and not refunds, \
                f"M2 booking {booking.booking_id} CONFIRMED but its payment is {payment['status']}" \
                f" with {len(refunds)} refund(s)"
        if booking.status is BookingStatus.REFUNDED:
            recorded = (booking.payment.refund or {}).get("refund_id") if booking.payment else None
            succeeded = [r["id"] for r in refunds if r.get("status") == "succeeded"]
            assert succeeded, f"M3 booking {booking.booking_id} REFUNDED but its payment {payment_id} has no refund"
            assert recorded in succeeded, \
                f"M3 booking {booking.booking_id} REFUNDED by refund {recorded}, not a refund of its payment {succeeded}"
        if settled:
            assert booking.status is not BookingStatus.REFUND_PENDING, \
                f"S3 booking {booking.booking_id} still REFUND_PENDING after every retry"
    for payment_id, key in getattr(provider, "second_refunds", []):
        raise AssertionError(f"M5 a second refund (key {key}) was asked for payment {payment_id}, already refunded")


def _check_difference_payment(snap: Snapshot, payment: dict[str, Any], given_back: list[dict[str, Any]],
                              differences: set[str], paid: Decimal, refunded: Decimal, settled: bool) -> None:
    """XC3, the money of a dearer exchange's difference payment (issue 45): never refunded by more
    than it took; the part refunds a cheaper exchange since gave back of it (keys ``-xc``) are
    counted apart, as for a booking's own payment, and besides them it is refunded at most once.
    Once settled, a succeeded one either backs the exchange (its record ``paid``, the booking on the
    new places, unrefunded beyond its part refunds unless the booking was cancelled afterwards and
    is REFUNDED, or nothing of it left to back) or was refunded once (its record ``refunded``), and
    its part refunds are exactly those the booking recorded against it (XC2)."""
    booking = snap.bookings.get(payment["metadata"]["exchange_of"])
    payment_id = payment["id"]
    assert booking is not None, f"M0 difference payment {payment_id} names no booking"
    entry = next((e for e in booking.differences or () if e["exchange_key"] == payment["metadata"]["exchange_key"]),
                 None)
    assert entry is not None, f"M0 difference payment {payment_id} names no exchange of {booking.booking_id}"
    refunds = [r for r in given_back if r["id"] not in differences]
    parts = sum((_value(r["amount"]) for r in given_back if r["id"] in differences and r.get("status") == "succeeded"),
                Decimal("0"))
    assert len(refunds) <= 1, f"M1 difference payment {payment_id} refunded {len(refunds)} times"
    assert refunded <= paid, f"M1 difference payment {payment_id}: refunded {refunded} of {paid}"
    if not settled or payment["status"] != "succeeded":
        return
    asked = sum((_value(e["amount"]) for e in _differences(booking, payment_id)), Decimal("0"))
    assert parts == asked, f"XC2 difference payment {payment_id} of {booking.booking_id}: {parts} of parts {asked} given back"
    backs = entry["state"] == "paid" and not refunds and (kept_after_confirmation(booking) or parts == paid)
    given = entry["state"] == "refunded" and len(refunds) == 1 and refunded - parts == _value(
        entry.get("refund_amount") or entry["amount"])
    assert backs != given, \
        f"S1 difference payment {payment_id} of booking {booking.booking_id} ({booking.status}, {entry['state']}, " \
        f"{len(refunds)} refund(s)) neither backs the exchange nor was given back (or both)"


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
    "DirectDynamoDB", "HOLDING", "LockedProvider", "ManualClock", "OCCUPYING", "RELEASED", "SOLD", "Snapshot",
    "actions", "check_booking", "check_sales", "check_capacity", "check_granules", "check_parking", "check_hold_cap", "check_invariants", "check_journal", "check_money",
    "event_request", "in_review", "own_payment_ids", "snapshot", "snapshot_in_process", "snapshot_of", "status_path",
]
