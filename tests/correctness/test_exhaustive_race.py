"""Every ordering of the steps that compete around one booking's hold, run against the real
services (moto in-process, one fresh event per ordering).

The model: an event with 2 places; Alice holds both and has started her payment. Six steps then
happen once each, in every one of the 6! = 720 orders:

  P  Alice pays at the provider (captured now)      D  the hold's deadline passes (clock +601 s)
  N  the notification is applied (GET, then act)   E  the expiry task runs
  C  a competitor asks for 2 places                R  the refund is retried (if one is pending)

The provider loses the answer of the first refund call (the refund happens, we do not hear it), so
a refund needs R (or reconciliation) to be recorded. After the six steps, reconciliation runs
once ("drain": a GET of the payment applied, pending refunds retried). For each ordering the
observed outcome must equal the one the rules in docs/invariants.md predict (``expected``), and
the invariants must hold after every single step.
"""
from __future__ import annotations

import copy
import itertools
import os
from collections import Counter
from typing import Any

import boto3
import pytest
from moto import mock_aws

from holdfast.adapters.dynamo import BookingStore
from holdfast.clock import iso
from holdfast.domain.errors import SoldOut
from holdfast.domain.statuses import BookingStatus
from holdfast.services.bookings import BookingService
from holdfast.services.catalog import CatalogService
from holdfast.services.payments import PaymentOutcomeUnknown, PaymentService
from tests.support.fake_provider import FakeProvider
from tests.support.template import create_bookings_table

from .helpers import ManualClock, check_invariants, snapshot_in_process
from .kind_cases import CASES, RACE_ONLY_CASES, KindCase

STEPS = "PNDECR"
TABLE = "race-bookings"
#: ``make test`` walks, for each kind, the 48 orderings that start with one of two two-step prefixes
#: (the 24 each leaves): 240 orderings of the 3,600 all kinds have, a third of the 720 it walked
#: when each kind took the 120 starting with one step. The prefixes are chosen so that the kinds
#: together start from all six steps, each kind reaches at least four of the outcomes (the old
#: single steps reached as few as two: a seat map starting with the payment), and the kinds without
#: alternatives together reach every row of the pinned table; every walked ordering is compared with
#: ``expected``. ``expected`` itself is pinned over all 720 orderings by a pure test (no engine, no
#: table), so the outcome table below holds for every ordering ``make test`` walks.
#: ``make proof`` (HOLDFAST_RACE_ORDERINGS=all) walks all 720 for every kind and compares each
#: kind's observed table with the pinned one.
ALL_ORDERINGS = os.environ.get("HOLDFAST_RACE_ORDERINGS") == "all"
PREFIXES = {"general_admission": ("NR", "DE"), "seat_map": ("PD", "RN"), "toy_zones": ("ER", "DR"),
            "slots": ("CR", "ND"), "parking": ("DP", "RD")}

#: The outcomes of all 720 orderings for a kind without alternatives: (status after the six steps,
#: competitor's answer, status after reconciliation, refunds) -> orderings.
PINNED_TABLE = {
    ("CONFIRMED", "sold_out", "CONFIRMED", 0): 336,
    ("PAYMENT_PENDING", "sold_out", "CONFIRMED", 0): 180,
    ("EXPIRED", "sold_out", "CONFIRMED", 0): 120,
    ("EXPIRED", "held", "REFUNDED", 1): 54,
    ("REFUND_PENDING", "held", "REFUNDED", 1): 15,
    ("EXPIRED", "held", "MANUAL_REVIEW", 0): 6,
    ("MANUAL_REVIEW", "held", "MANUAL_REVIEW", 0): 6,
    ("REFUNDED", "held", "REFUNDED", 1): 3,
}


def expected(order: str, offers_alternatives: bool = False) -> tuple[str, str, str, int]:
    """(status after the six steps, competitor's answer, status after reconciliation, refunds).
    A kind that offers alternatives (appointment slots: other free times) opens a conflict case
    for a late payment whose places were resold, where the others refund it."""
    at = {step: order.index(step) for step in STEPS}
    timer_effective = at["E"] > at["D"]                      # an expiry before the deadline is a no-op
    notified_after_payment = at["N"] > at["P"]               # a notification before paying is ignored
    confirmed_in_time = notified_after_payment and not (timer_effective and at["E"] < at["N"])
    expired = timer_effective and not confirmed_in_time
    late_notice = expired and notified_after_payment and at["N"] > at["E"]
    competitor_won = expired and at["C"] > at["E"] and not (late_notice and at["N"] < at["C"])
    paid_in_time = at["P"] < at["D"]
    competitor = "held" if competitor_won else "sold_out"

    def late_outcome(refund_retried: bool) -> str:
        if not competitor_won:
            return "CONFIRMED"                                   # places still free: taken again
        if paid_in_time or offers_alternatives:
            return "MANUAL_REVIEW"                               # paid in time, or a case offering other times
        return "REFUNDED" if refund_retried else "REFUND_PENDING"

    if confirmed_in_time:
        before = "CONFIRMED"
    elif not expired:
        before = "PAYMENT_PENDING"                               # paid; the notice is still to come
    elif late_notice:
        refund_retried = at["R"] > at["N"]
        if competitor_won and at["C"] > at["N"]:
            raise AssertionError("unreachable: a late notice before the competitor retakes the places")
        before = late_outcome(refund_retried)
    else:
        before = "EXPIRED"                                       # paid late; the notice is still to come
    if before in ("PAYMENT_PENDING",):
        after = "CONFIRMED"
    elif before == "EXPIRED":
        after = late_outcome(refund_retried=True)
    elif before == "REFUND_PENDING":
        after = "REFUNDED"
    else:
        after = before
    refunds = 1 if after == "REFUNDED" else 0
    return before, competitor, after, refunds


class World:
    def __init__(self, store: BookingStore, case: KindCase) -> None:
        self.store = store
        self.case = case
        self.clock = ManualClock()
        self.provider = FakeProvider(self.clock)
        self.catalog = CatalogService(store, self.clock, 600, id_salt="tests-deployment-salt")
        # No availability snapshot: the walk restores the table to earlier states (time travel no
        # container sees), and the model predicts each step from the table as it stands. What a
        # snapshot may do (fail a transaction, refuse for at most a second) is
        # tests/correctness/test_stale_snapshot.py's.
        self.bookings = BookingService(store, self.clock, snapshot_seconds=0)
        self.payments = PaymentService(store, self.provider, self.clock, self.bookings, "http://127.0.0.1:3000/done")
        self.event_id = case.create(self.catalog, 2)
        self.booking_id = self.bookings.create_booking(self.event_id, "alice", "a", case.ask(2)).booking.booking_id
        self.payment_id = self.payments.start_payment(self.booking_id, "alice", "pay").payment.payment_id
        self.provider.fail("create_refund", "after")           # the first refund's answer is lost
        self.competitor = "not_run"

    def step(self, name: str) -> None:
        if name == "P":
            self.provider.pay(self.payment_id, at=iso(self.clock()))
        elif name == "N":
            try:
                self.payments.apply_provider_payment(self.provider.get_payment(self.payment_id))
            except PaymentOutcomeUnknown:
                pass                                             # the queue would redeliver it
        elif name == "D":
            self.clock.advance(601)
        elif name == "E":
            self.bookings.expire(self.booking_id)
        elif name == "C":
            try:
                self.bookings.create_booking(self.event_id, "bob", "b", self.case.ask(2))
                self.competitor = "held"
            except SoldOut:
                self.competitor = "sold_out"
        elif name == "R":
            booking = self.store.get_booking(self.booking_id)
            if booking is not None and booking.status is BookingStatus.REFUND_PENDING:
                self.payments.refund(booking, "reconciler")

    def reconcile(self) -> None:
        try:
            self.payments.apply_provider_payment(self.provider.get_payment(self.payment_id), actor="reconciler")
        except PaymentOutcomeUnknown:
            pass                                                 # the first refund's answer was lost

        booking = self.store.get_booking(self.booking_id)
        if booking is not None and booking.status is BookingStatus.REFUND_PENDING:
            self.payments.refund(booking, "reconciler")

    def status(self, snap) -> str:  # noqa: ANN001
        """From a snapshot read out of moto's memory: a GetItem's response serialisation was most of
        this test's time, and every step's invariant check takes that snapshot anyway."""
        return snap.bookings[self.booking_id].status.value


@pytest.fixture
def client():
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-central-1")
    with mock_aws():
        yield boto3.client("dynamodb", region_name="eu-central-1")


def _tables() -> dict[str, Any]:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends[DEFAULT_ACCOUNT_ID]["eu-central-1"].tables


def checkpoint(world: World) -> tuple:
    """The whole world after a prefix of steps: moto's table (copied the way moto's own
    transaction rollback copies it), the provider's books, the clock, the competitor's answer."""
    books = {name: copy.deepcopy(getattr(world.provider, name)) for name in ("payments", "refunds", "keys", "faults")}
    return copy.deepcopy(_tables()[TABLE]), books, world.clock(), world.competitor


def restore(world: World, saved: tuple) -> None:
    table, books, now, competitor = saved
    _tables()[TABLE] = copy.deepcopy(table)
    for name, value in books.items():
        setattr(world.provider, name, copy.deepcopy(value))
    world.clock._now = now
    world.competitor = competitor


@pytest.mark.parametrize("case", CASES + RACE_ONLY_CASES, ids=str)
def test_every_ordering_of_expiry_payment_and_resale_ends_in_a_documented_outcome(client, case):
    """The orderings (all 720, or those starting with the kind's prefixes in ``make test``),
    walked as a tree: each prefix runs once and its state is restored for the next branch (1,956
    step executions instead of 4,320 for all of them, same states)."""
    table: Counter[tuple[str, str, str, int]] = Counter()
    mismatches = []
    create_bookings_table(client, TABLE)
    world = World(BookingStore(TABLE, client), case)

    def finish(order: str, last: Any) -> None:
        before, competitor = world.status(last), world.competitor
        world.reconcile()
        snap = snapshot_in_process(TABLE)
        check_invariants(snap)
        after = world.status(snap)
        refunds = len(world.provider.refunds_for(world.payment_id))
        observed = (before, competitor, after, refunds)
        table[observed] += 1
        predicted = expected(order, case.offers_alternatives)
        if observed != predicted:
            mismatches.append((order, observed, predicted))
        # Money: the payment succeeded; it ends sold, refunded once, or with an operator.
        booking = snap.bookings[world.booking_id]
        assert (after, refunds) in (("CONFIRMED", 0), ("REFUNDED", 1), ("MANUAL_REVIEW", 0)), (order, observed)
        if after == "CONFIRMED":
            assert booking.payment is not None and booking.payment.payment_id == world.payment_id
        sold = snap.counts(world.event_id)
        places = case.held_places   # what one hold takes; the offering has exactly that many
        occupied_by = {"alice": places if after == "CONFIRMED" else 0, "bob": places if competitor == "held" else 0}
        assert sold == {"available": places - sum(occupied_by.values()), "held": occupied_by["bob"],
                        "sold": occupied_by["alice"]}, (order, sold)

    def explore(prefix: str, remaining: str, last: Any) -> None:
        if not remaining:
            finish(prefix, last)
            return
        saved = checkpoint(world)
        for index, name in enumerate(remaining):
            if index:
                restore(world, saved)
            world.step(name)
            snap = snapshot_in_process(TABLE)
            check_invariants(snap)
            explore(prefix + name, remaining[:index] + remaining[index + 1:], snap)

    prefixes = tuple(STEPS) if ALL_ORDERINGS else PREFIXES[case.name]
    saved = checkpoint(world)
    for prefix in prefixes:
        restore(world, saved)
        for name in prefix:
            world.step(name)
            snap = snapshot_in_process(TABLE)
            check_invariants(snap)
        explore(prefix, "".join(step for step in STEPS if step not in prefix), snap)

    print("\nordering outcomes (status after the steps, competitor, status after reconciliation, refunds): count")
    for outcome, count in sorted(table.items()):
        print(f"  {outcome}: {count}")
    assert not mismatches, f"{len(mismatches)} orderings differ from the model, e.g. {mismatches[:5]}"
    assert sum(table.values()) == sum(len(list(itertools.permutations(STEPS[len(prefix):]))) for prefix in prefixes)
    if not ALL_ORDERINGS:
        return
    assert sum(table.values()) == len(list(itertools.permutations(STEPS))) == 720
    if case.offers_alternatives:
        return   # the refunds of the table below are conflict cases there, each checked above
    assert table == PINNED_TABLE
    # The documented outcomes, each reached; nothing else is.
    assert {(before, competitor, after) for before, competitor, after, _ in table} == {
        ("CONFIRMED", "sold_out", "CONFIRMED"),              # paid and notified while held
        ("PAYMENT_PENDING", "sold_out", "CONFIRMED"),        # notice lost/early; reconciliation confirms
        ("EXPIRED", "sold_out", "CONFIRMED"),                # expired, late payment, places still free
        ("EXPIRED", "held", "REFUNDED"),                     # expired, resold, paid late: refund
        ("EXPIRED", "held", "MANUAL_REVIEW"),                # expired, resold, but paid in time: operator
        ("REFUND_PENDING", "held", "REFUNDED"),              # refund answer lost, reconciliation records it
        ("REFUNDED", "held", "REFUNDED"),                    # refund retried (R) after the late notice
        ("MANUAL_REVIEW", "held", "MANUAL_REVIEW"),
    }


def test_the_model_predicts_the_pinned_outcomes_for_all_720_orderings():
    """``expected`` over every ordering, without the engine: the table the walks are held to."""
    table = Counter(expected("".join(order)) for order in itertools.permutations(STEPS))
    assert table == PINNED_TABLE
    alternatives = Counter(expected("".join(order), offers_alternatives=True) for order in itertools.permutations(STEPS))
    assert sum(alternatives.values()) == 720
    assert all(after in ("CONFIRMED", "MANUAL_REVIEW") and refunds == 0 for _, _, after, refunds in alternatives)
    assert set(PREFIXES) == {case.name for case in CASES + RACE_ONLY_CASES}
    prefixes = [prefix for kind in PREFIXES.values() for prefix in kind]
    assert all(len(prefix) == 2 and len(set(prefix)) == 2 and set(prefix) <= set(STEPS) for prefix in prefixes)
    assert {prefix[0] for prefix in prefixes} == set(STEPS)   # make test starts from every step
    walked = {case.name: {expected("".join(order), case.offers_alternatives)
                          for prefix in PREFIXES[case.name]
                          for order in itertools.permutations(STEPS) if "".join(order).startswith(prefix)}
              for case in CASES + RACE_ONLY_CASES}
    assert all(len(outcomes) >= 4 for outcomes in walked.values()), walked
    # the kinds without alternatives, together, reach every row of the pinned table in make test
    assert set().union(*(walked[case.name] for case in CASES + RACE_ONLY_CASES
                         if not case.offers_alternatives)) == set(PINNED_TABLE)
