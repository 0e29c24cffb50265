"""Property-based stateful test: random sequences of customer, provider, timer and operator
actions against the real services on moto in-process (single-threaded, so moto is exact there),
with a controllable clock and the in-memory provider with fault injection.

After every step the invariants of docs/invariants.md hold (capacity, seats, journal, the money
rule as far as it can hold mid-flight); at the end every outstanding notification and refund is
delivered ("drained") and the strict money rule must hold.
"""
from __future__ import annotations

import os
from collections import Counter
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from moto import mock_aws

from holdfast.adapters.dynamo import BookingStore
from holdfast.clock import iso, parse_iso
from holdfast.domain.errors import (
    Conflict,
    IdempotencyKeyReused,
    PaymentProviderUnavailable,
    RequestInProgress,
    SeatsUnavailable,
    SoldOut,
)
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services.bookings import BookingService
from holdfast.services.catalog import CatalogService
from holdfast.services.payments import PaymentOutcomeUnknown, PaymentService
from tests.support.fake_provider import FakeProvider
from tests.support.template import create_bookings_table

from .helpers import ManualClock, check_invariants, event_request, snapshot_in_process
from .kind_cases import CASES  # noqa: F401 - registers the toy kind

TABLE = "stateful-bookings"
#: What the runs exercised, over all examples (printed and checked by test_stateful_runs_cover).
COVERAGE: Counter[str] = Counter()
CUSTOMERS = ("ann", "bob", "cat")
KEYS = ("k1", "k2", "k3")
SEATS = ("A-1", "A-2", "A-3", "A-4")
S = BookingStatus


def check_money(snap: Any, provider: FakeProvider, settled: bool) -> None:
    """The money rule (docs/invariants.md, I6).

    Always: a payment is never refunded twice; a CONFIRMED booking's own payment has no refund;
    a refunded payment's booking is REFUNDED (or REFUND_PENDING: the refund's answer was lost).
    Once settled (every notification delivered, every refund retried): each succeeded payment
    is exactly one of - the payment of a CONFIRMED booking; refunded once with its booking
    REFUNDED; or unrefunded with its booking in MANUAL_REVIEW (an operator owns it). And no
    authorisation is left uncaptured and uncancelled.
    """
    for payment in provider.payments.values():
        refunds = provider.refunds_for(payment["id"])
        assert len(refunds) <= 1, f"I6 payment {payment['id']} refunded {len(refunds)} times"
        booking = snap.bookings[payment["metadata"]["booking_id"]]
        ours = booking.payment.payment_id if booking.payment else None
        if refunds:
            assert booking.status in (S.REFUNDED, S.REFUND_PENDING), f"I6 refunded, booking {booking.status}"
        if booking.status is S.CONFIRMED and ours == payment["id"]:
            assert not refunds and payment["status"] == "succeeded", f"I6 confirmed on {payment['status']}"
        if not settled:
            continue
        if payment["status"] == "succeeded":
            outcomes = [
                booking.status is S.CONFIRMED and ours == payment["id"] and not refunds,
                len(refunds) == 1 and booking.status is S.REFUNDED,
                not refunds and booking.status is S.MANUAL_REVIEW,
            ]
            assert outcomes.count(True) == 1, \
                f"I6 succeeded payment {payment['id']}: booking {booking.status}, {len(refunds)} refund(s)"
        assert payment["status"] != "waiting_for_capture" or booking.status is S.MANUAL_REVIEW, \
            f"I6 authorisation left hanging, booking {booking.status}"


class BookingMachine(RuleBasedStateMachine):
    #: Extra fields of the quantity-sold offerings ("ga", "two_stage"): none for general admission;
    #: the toy kind's machine below sells them as standing zones (tests/support/toy_kind.py).
    COUNTED: dict[str, Any] = {}

    def __init__(self) -> None:
        super().__init__()
        self.mock = mock_aws()
        self.mock.start()
        self.client = boto3.client("dynamodb", region_name="eu-central-1")
        create_bookings_table(self.client, TABLE)
        self.store = BookingStore(TABLE, self.client)
        self.clock = ManualClock()
        self.provider = FakeProvider()
        self.catalog = CatalogService(self.store, self.clock, 600)
        self.bookings = BookingService(self.store, self.clock)
        self.payments = PaymentService(self.store, self.provider, self.clock, self.bookings, "http://127.0.0.1:3000/done")
        self.events = {
            "ga": self.catalog.create_event(event_request(capacity=4, max_per_booking=3, **self.COUNTED),
                                            "ga")["event_id"],
            "seats": self.catalog.create_event(event_request(
                capacity=None, seat_map={"seat_ids": list(SEATS)}, max_per_booking=3), "seats")["event_id"],
            "two_stage": self.catalog.create_event(event_request(
                capacity=3, max_per_booking=3, payment_mode="two_stage", **self.COUNTED), "two")["event_id"],
        }
        self.known: list[tuple[str, str]] = []          # (booking_id, customer)
        self.requests: dict[tuple[str, str], tuple[Any, str]] = {}   # (customer, key) -> (body, booking_id)
        self.seen: list[dict[str, Any]] = []             # provider answers fetched earlier (stale copies)
        self.log = COVERAGE

    def teardown(self) -> None:
        try:
            self.drain()
            snap = snapshot_in_process(TABLE)
            check_invariants(snap)
            check_money(snap, self.provider, settled=True)
        finally:
            self.mock.stop()

    # ------------------------------------------------------------------------ customers

    @rule(event=st.sampled_from(["ga", "two_stage", "seats"]), customer=st.sampled_from(CUSTOMERS),
          key=st.sampled_from(KEYS), quantity=st.integers(1, 3),
          seats=st.lists(st.sampled_from(SEATS), min_size=1, max_size=3, unique=True))
    def create(self, event: str, customer: str, key: str, quantity: int, seats: list[str]) -> None:
        body = BookingIn(seats=seats) if event == "seats" else BookingIn(quantity=quantity)
        fingerprint = (event, tuple(seats) if event == "seats" else quantity)
        earlier = self.requests.get((customer, key))
        try:
            result = self.bookings.create_booking(self.events[event], customer, key, body)
        except IdempotencyKeyReused:
            assert earlier is not None and earlier[0] != fingerprint, "key reuse reported for a new or same body"
            self.log["key_reused"] += 1
            return
        except (SoldOut, SeatsUnavailable):
            assert earlier is None or earlier[0] == fingerprint and earlier[1] == "", "refused a replay"
            self.log["refused"] += 1
            return
        booking = result.booking
        if earlier is not None and earlier[1]:
            assert earlier[0] == fingerprint, "a different body under a used key made a booking"
            assert result.replayed and booking.booking_id == earlier[1], "a repeat made a second booking"
            self.log["replayed"] += 1
            return
        assert not result.replayed
        self.requests[(customer, key)] = (fingerprint, booking.booking_id)
        self.known.append((booking.booking_id, customer))
        self.log["created"] += 1

    @precondition(lambda self: self.requests)
    @rule(data=st.data())
    def repeat_request(self, data: st.DataObject) -> None:
        """A client that lost the answer sends the very same request again, at any later time."""
        customer, key = data.draw(st.sampled_from(sorted(self.requests)))
        (event, what), booking_id = self.requests[(customer, key)]
        body = BookingIn(seats=list(what)) if event == "seats" else BookingIn(quantity=what)
        result = self.bookings.create_booking(self.events[event], customer, key, body)
        assert result.replayed and result.booking.booking_id == booking_id
        self.log["replayed"] += 1

    @precondition(lambda self: self.known)
    @rule(data=st.data(), fault=st.sampled_from([None, None, "before", "after"]),
          then=st.sampled_from(["leaves", "pays", "pays", "declines"]))
    def start_payment(self, data: st.DataObject, fault: str | None, then: str) -> None:
        booking_id, customer = data.draw(st.sampled_from(self._prefer({S.HELD, S.PAYMENT_PENDING})))
        if fault:
            self.provider.fail("create_payment", fault)
        try:
            booking = self.payments.start_payment(booking_id, customer, "pay")
            self.log["payment_started"] += 1
            payment_id = booking.payment.payment_id if booking.payment else None
            if payment_id and self.provider.payments[payment_id]["status"] == "pending" and then != "leaves":
                # The customer goes straight on to the provider's page.
                if then == "pays":
                    self.provider.pay(payment_id, at=iso(self.clock()))
                else:
                    self.provider.decline(payment_id)
                self.log[then] += 1
        except (Conflict, PaymentProviderUnavailable, RequestInProgress):
            self.log["payment_not_started"] += 1
        finally:
            self.provider.faults.pop("create_payment", None)

    @precondition(lambda self: self.provider.payments)
    @rule(data=st.data(), pays=st.sampled_from([True, True, True, False]))
    def customer_acts_at_provider(self, data: st.DataObject, pays: bool) -> None:
        pending = sorted(p for p, v in self.provider.payments.items() if v["status"] == "pending")
        payment_id = data.draw(st.sampled_from(pending or sorted(self.provider.payments)))
        if self.provider.payments[payment_id]["status"] != "pending":
            return
        if pays:
            self.provider.pay(payment_id, at=iso(self.clock()))
        else:
            self.provider.decline(payment_id)
        self.log["paid" if pays else "declined"] += 1

    @precondition(lambda self: self.known)
    @rule(data=st.data(), refund_fault=st.sampled_from([None, None, "before", "after"]), gate=st.integers(0, 2))
    def cancel(self, data: st.DataObject, refund_fault: str | None, gate: int) -> None:
        if gate:   # a third as often as the other rules: cancelling ends most stories early
            return
        booking_id, customer = data.draw(st.sampled_from(self.known))
        if refund_fault:
            self.provider.fail("create_refund", refund_fault)
        try:
            self.bookings.cancel(booking_id, customer, refund=self.payments.cancel_confirmed)
            self.log["cancelled"] += 1
        except Conflict:
            self.log["not_cancellable"] += 1
        finally:
            self.provider.faults.pop("create_refund", None)

    # ------------------------------------------------------------------- provider -> us

    @precondition(lambda self: self.provider.payments)
    @rule(data=st.data(), stale=st.booleans(), capture_fault=st.sampled_from([None, None, "after"]),
          refund_fault=st.sampled_from([None, None, "before", "after"]))
    def deliver(self, data: st.DataObject, stale: bool, capture_fault: str | None, refund_fault: str | None) -> None:
        """A notification handler: GET the payment, then act on it. A stale delivery is a handler
        that fetched earlier and was slow to act (reordering, duplicates, late delivery)."""
        if stale and self.seen:
            answer = data.draw(st.sampled_from(self.seen))
        else:
            final = sorted(p for p, v in self.provider.payments.items() if v["status"] != "pending")
            choices = final if final and data.draw(st.integers(0, 3)) else sorted(self.provider.payments)
            answer = self.provider.get_payment(data.draw(st.sampled_from(choices)))
            self.seen.append(answer)
        for operation, fault in (("capture_payment", capture_fault), ("create_refund", refund_fault)):
            if fault:
                self.provider.fail(operation, fault)
        try:
            self.log[f"deliver:{self.payments.apply_provider_payment(answer)}"] += 1
        except PaymentOutcomeUnknown:
            self.log["deliver:unknown"] += 1
        finally:
            self.provider.faults.pop("capture_payment", None)
            self.provider.faults.pop("create_refund", None)

    @precondition(lambda self: self.known)
    @rule(data=st.data(), fault=st.sampled_from([None, "before", "after"]))
    def retry_refund(self, data: st.DataObject, fault: str | None) -> None:
        booking_id, _ = data.draw(st.sampled_from(self._prefer({S.REFUND_PENDING})))
        booking = self.store.get_booking(booking_id)
        if booking is None or booking.status is not S.REFUND_PENDING:
            return
        if fault:
            self.provider.fail("create_refund", fault)
        try:
            self.log[f"refund:{self.payments.refund(booking, 'reconciler')}"] += 1
        except PaymentOutcomeUnknown:
            self.log["refund:unknown"] += 1
        finally:
            self.provider.faults.pop("create_refund", None)

    # ------------------------------------------------------------------------- time

    @precondition(lambda self: self.known)
    @rule(data=st.data(), late=st.booleans())
    def expiry_fires(self, data: st.DataObject, late: bool) -> None:
        """The hold's timer: early (before the deadline: a no-op) or late (the clock first runs
        past the deadline, as when the timer execution was delayed)."""
        booking_id, _ = data.draw(st.sampled_from(self._prefer({S.HELD, S.PAYMENT_PENDING})))
        booking = self.store.get_booking(booking_id)
        if late and booking is not None:
            overdue = (parse_iso(booking.hold_expires_at) - self.clock()).total_seconds() + 1
            if overdue > 0:
                self.clock.advance(overdue)
        self.log[f"expire:{self.bookings.expire(booking_id)['outcome']}"] += 1

    @rule(seconds=st.sampled_from([30, 299, 601]))
    def time_passes(self, seconds: int) -> None:
        self.clock.advance(seconds)

    # -------------------------------------------------------------------- invariants

    def _prefer(self, statuses: set[BookingStatus]) -> list[tuple[str, str]]:
        """Known bookings now in one of ``statuses``, or all of them if none is."""
        matching = [entry for entry in self.known if (b := self.store.get_booking(entry[0])) and b.status in statuses]
        return matching or self.known

    @invariant()
    def invariants_hold(self) -> None:
        snap = snapshot_in_process(TABLE)
        check_invariants(snap)
        check_money(snap, self.provider, settled=False)

    def drain(self) -> None:
        """Everything outstanding finally arrives, without faults: every payment's notification
        (a GET now), every pending refund retried, until nothing changes."""
        self.provider.faults.clear()
        for _ in range(4):
            for payment_id in sorted(self.provider.payments):
                self.payments.apply_provider_payment(self.provider.get_payment(payment_id), actor="reconciler")
            for booking_id, _ in self.known:
                booking = self.store.get_booking(booking_id)
                if booking is not None and booking.status is S.REFUND_PENDING:
                    self.payments.refund(booking, "reconciler")


@pytest.fixture(autouse=True)
def _region() -> None:
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-central-1")


class ToyKindMachine(BookingMachine):
    """The same rules and invariants, on the toy inventory kind registered by kind_cases."""

    COUNTED = {"category": "zoned"}


MACHINE_SETTINGS = settings(
    max_examples=int(os.environ.get("HOLDFAST_STATEFUL_EXAMPLES", "30")), stateful_step_count=30, deadline=None,
    derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestBookingMachine = BookingMachine.TestCase
TestBookingMachine.settings = MACHINE_SETTINGS
TestToyKindMachine = ToyKindMachine.TestCase
TestToyKindMachine.settings = MACHINE_SETTINGS


def test_stateful_runs_cover_the_interesting_paths() -> None:
    """The machine above is only evidence if it reached the paths that matter; runs after it."""
    if not COVERAGE:
        pytest.skip("the state machine did not run in this session")
    print(sorted(COVERAGE.items()))
    for outcome in ("created", "replayed", "key_reused", "refused", "payment_started", "deliver:confirmed",
                    "expire:expired", "cancelled"):
        assert COVERAGE[outcome] > 0, f"never reached {outcome}: {sorted(COVERAGE.items())}"
