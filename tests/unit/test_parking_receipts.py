"""Parking's settlement receipts (54-FZ): a reservation prepaid with a receipt is rendered when the
car leaves the lot (COMPLETED) or, when the lot keeps a no-show's money, at its NO_SHOW; then, and
not at the window's start, one settlement receipt closes the prepayment, through the same
machinery as an event's (services/settlements.py)."""
from __future__ import annotations

from datetime import timedelta

import pytest

from holdfast.domain.fiscal import FiscalSettings
from holdfast.domain.organizers import Caller
from holdfast.products.parking.schemas import LotIn
from holdfast.services.payments import PaymentService
from holdfast.services.settlements import Settlements
from holdfast.services.sweeper import sweep
from tests.support.fake_organizers import FakeOrganizerDirectory
from tests.support.fake_table import FakeTableStore
from tests.unit.test_parking import gates, parking, reserve, view_bookings  # noqa: F401 - fixtures

ORG = Caller("org-lot", "key-1")


@pytest.fixture
def store():
    return FakeTableStore()


@pytest.fixture
def fiscal_payments(store, provider, clock, view_bookings):  # noqa: F811
    directory = FakeOrganizerDirectory(store.table)
    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 1), "2030-01-01T00:00:00.000Z")
    return PaymentService(store, provider, clock, view_bookings, "http://127.0.0.1:3000/done", fiscal=directory)


@pytest.fixture
def settlements(store, provider, clock):
    return Settlements(store, provider, clock, retry_seconds=(10, 20, 40))


def fiscal_lot(parking, **overrides):  # noqa: F811
    body = {"name": "Central", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
            "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}, "grace_minutes": 10},
            "no_show_grace_seconds": 900} | overrides
    return parking.create_lot(LotIn.model_validate(body).command(), caller=ORG)


def paid(fiscal_payments, provider, parking, lot):  # noqa: F811
    booking = reserve(parking, lot)
    booking = parking.bookings.store.get_booking(booking.booking_id)
    started = fiscal_payments.start_payment(booking.booking_id, booking.customer_id, "pay-1",
                                            contact_email="driver@example.com")
    assert started.payment.receipt is not None          # the reservation's payment carries a receipt
    provider.pay(started.payment.payment_id)
    assert fiscal_payments.apply_provider_payment(provider.get_payment(started.payment.payment_id)) == "confirmed"
    return started


def run_sweep(store, clock, settlements, refund_timer=None):
    return sweep(store, clock, lambda _id: {}, lambda *_: None, give_up=lambda *_: None, grace_seconds=0,
                 settle=settlements.settle, refund_timer=refund_timer)


def settlement_receipts(provider):
    return [r for r in provider.receipts.values() if r.get("settlements")]


def test_a_reservation_settles_once_when_the_car_leaves_not_at_its_windows_start(
        parking, gates, fiscal_payments, provider, clock, store, settlements):  # noqa: F811
    lot = fiscal_lot(parking)
    booking = paid(fiscal_payments, provider, parking, lot)
    assert store.get_booking(booking.booking_id).settlement_due is None   # not rendered while it waits
    token = parking.bookings.view(booking.booking_id, "alice")["entry_token"]
    gate = parking.create_gate(lot["lot_id"], "North")
    clock.now = clock.now.replace(day=2, hour=9, minute=55)
    opened = gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "entry", "event_id": "e-1", "token": token},
                         at=clock(), offline=False)
    clock.now = clock.now.replace(hour=11, minute=0)   # inside the window: the car is parked, nothing rendered yet
    run_sweep(store, clock, settlements)
    assert settlement_receipts(provider) == []
    exited = gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "exit", "event_id": "x-1",
                                                           "ticket_id": opened["ticket_id"]}, at=clock(), offline=False)
    assert exited["exit_granted"] is True and store.get_booking(booking.booking_id).status == "COMPLETED"
    assert store.get_booking(booking.booking_id).settlement_due is not None   # owed now: in the due index
    clock.now += timedelta(minutes=1)
    assert run_sweep(store, clock, settlements)["settlement_sent"] == 1
    [receipt] = settlement_receipts(provider)
    assert receipt["customer"] == {"email": "driver@example.com"}
    assert receipt["settlements"] == [{"type": "prepayment", "amount": {"value": "200.00", "currency": "RUB"}}]
    assert {item["payment_mode"] for item in receipt["items"]} == {"full_payment"}
    after = store.get_booking(booking.booking_id)
    assert after.status == "COMPLETED" and after.payment.settlement["state"] == "sent" and after.due_at is None
    clock.now = clock.now.replace(hour=13)
    run_sweep(store, clock, settlements)
    assert len(settlement_receipts(provider)) == 1   # exactly once


def test_a_no_show_whose_money_is_kept_settles_once_and_a_refunded_one_does_not(
        parking, fiscal_payments, provider, clock, store, settlements):  # noqa: F811
    kept = paid(fiscal_payments, provider, parking, fiscal_lot(parking, policy={"refund_no_show": False}))
    clock.now = clock.now.replace(day=2, hour=10, minute=20)   # past the 15 minutes of grace
    assert run_sweep(store, clock, settlements)["timers"] == 1
    assert store.get_booking(kept.booking_id).status == "NO_SHOW"
    clock.now += timedelta(minutes=1)
    assert run_sweep(store, clock, settlements)["settlement_sent"] == 1
    run_sweep(store, clock, settlements)
    [receipt] = settlement_receipts(provider)
    assert receipt["payment_id"] == kept.payment.payment_id
    assert store.get_booking(kept.booking_id).due_at is None


def test_a_settlement_the_provider_refuses_for_a_completed_stay_is_the_organizers_case(
        parking, gates, fiscal_payments, provider, clock, store, settlements):  # noqa: F811
    lot = fiscal_lot(parking)
    booking = paid(fiscal_payments, provider, parking, lot)
    token = parking.bookings.view(booking.booking_id, "alice")["entry_token"]
    gate = parking.create_gate(lot["lot_id"], "North")
    clock.now = clock.now.replace(day=2, hour=9, minute=55)
    opened = gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "entry", "event_id": "e-1", "token": token},
                         at=clock(), offline=False)
    clock.now = clock.now.replace(hour=11, minute=0)
    gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "exit", "event_id": "x-1", "ticket_id": opened["ticket_id"]},
                at=clock(), offline=False)
    provider.fail("create_receipt", "before", "before", "before")
    outcomes = []
    for _ in range(3):
        clock.now = clock.now.replace(hour=clock.now.hour + 1)
        counts = run_sweep(store, clock, settlements)
        outcomes.append(next(k for k, n in counts.items() if k.startswith("settlement_") and n))
    assert outcomes == ["settlement_retrying", "settlement_retrying", "settlement_failed"]
    after = store.get_booking(booking.booking_id)
    assert after.status == "COMPLETED" and after.review["reason"] == "settlement_receipt_failed"
    assert after.due_at is None and settlement_receipts(provider) == []


# -- a drive-up's exit payment ---------------------------------------------------------------------

from urllib.parse import parse_qs, urlsplit  # noqa: E402

from holdfast.domain.errors import InvalidRequest  # noqa: E402
from holdfast.products.parking.services.gate_passes import GatePasses  # noqa: E402
from tests.unit.test_parking import KEYS  # noqa: E402,F401 - the lot keys the gates sign with


@pytest.fixture
def fiscal_gates(store, clock, parking, provider):  # noqa: F811
    directory = FakeOrganizerDirectory(store.table)
    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 1), "2030-01-01T00:00:00.000Z")
    return GatePasses(store, clock, parking, lambda: provider, "http://127.0.0.1:3000/booking.html?id={booking_id}",
                      exit_page_url="http://127.0.0.1:3000/exit.html", fiscal_reads=directory)


def drive_up_owing(parking, fiscal_gates, clock, **lot):  # noqa: F811
    made = fiscal_lot(parking, **lot)
    gate = parking.create_gate(made["lot_id"], "South")
    entered = fiscal_gates.apply(made["lot_id"], gate["gate_id"], {"kind": "entry", "event_id": "d-1", "plate": "X 1"},
                                 at=clock(), offline=False)
    clock.now += timedelta(minutes=65)
    owed = fiscal_gates.apply(made["lot_id"], gate["gate_id"], {"kind": "exit", "event_id": "d-x", "plate": "X1"},
                              at=clock(), offline=False)
    query = {k: v[0] for k, v in parse_qs(urlsplit(owed["confirmation_url"]).query).items()}
    return made, gate, entered, owed, query


def test_a_drive_ups_exit_payment_waits_for_the_address_then_carries_a_full_payment_receipt(
        parking, fiscal_gates, clock, provider, store):  # noqa: F811
    lot, gate, entered, owed, query = drive_up_owing(parking, fiscal_gates, clock)
    assert owed["amount_due"]["value"] == "100.00" and provider.payments == {}   # nothing created at the gate
    exits = fiscal_gates.exit_payments
    view = exits.page(parking.lot(lot["lot_id"]), entered["ticket_id"], query["key"])
    assert (view["state"], view["contact_required"], view["confirmation_url"]) == ("pending", True, None)
    with pytest.raises(InvalidRequest) as refused:
        exits.pay(parking.lot(lot["lot_id"]), entered["ticket_id"], query["key"], None)
    assert refused.value.code == "contact_required" and provider.payments == {}
    paying = exits.pay(parking.lot(lot["lot_id"]), entered["ticket_id"], query["key"], "driver@example.com")
    assert paying["contact_required"] is False and paying["confirmation_url"]
    [payment] = provider.payments.values()
    receipt = payment["receipt"]
    assert receipt["customer"] == {"email": "driver@example.com"}
    assert [(i["amount"]["value"], i["quantity"], i["payment_mode"]) for i in receipt["items"]] \
        == [("100.00", "1", "full_payment")]
    # a repeat (a second tap, a reload) answers the same payment
    assert exits.pay(parking.lot(lot["lot_id"]), entered["ticket_id"], query["key"], None) == paying
    assert len(provider.payments) == 1
    # the gate's next exit gives the same page; paid, the car leaves
    again = fiscal_gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "exit", "event_id": "d-x2", "plate": "X1"},
                               at=clock(), offline=False)
    assert again["confirmation_url"] == owed["confirmation_url"] and len(provider.payments) == 1
    provider.pay(payment["id"])
    assert fiscal_gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "exit", "event_id": "d-x3", "plate": "X1"},
                              at=clock(), offline=False)["exit_granted"] is True


def test_a_lot_without_receipts_creates_the_exit_payment_at_the_gate_as_before(
        parking, fiscal_gates, clock, provider):  # noqa: F811
    gates = fiscal_gates   # the directory is there; this lot's organizer has no settings in it
    made = parking.create_lot(LotIn.model_validate(
        {"name": "Plain", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
         "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}, "grace_minutes": 10}}).command(),
        caller=Caller("org-plain", "key-2"))
    gate = parking.create_gate(made["lot_id"], "South")
    gates.apply(made["lot_id"], gate["gate_id"], {"kind": "entry", "event_id": "d-1", "plate": "X 1"},
                at=clock(), offline=False)
    clock.now += timedelta(minutes=65)
    gates.apply(made["lot_id"], gate["gate_id"], {"kind": "exit", "event_id": "d-x", "plate": "X1"},
                at=clock(), offline=False)
    [payment] = provider.payments.values()
    assert "receipt" not in payment
