"""Fiscal receipts (54-FZ): the lines always sum exactly to what is paid or given back, and a
payment's receipt is decided once, with its attempt, whatever the organizer changes afterwards."""
from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, strategies as st

from holdfast.domain import fiscal
from holdfast.domain.errors import PaymentProviderUnavailable
from holdfast.domain.fiscal import FiscalSettings
from holdfast.domain.money import Money
from holdfast.domain.organizers import Caller
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services.payments import PaymentService
from holdfast.services.receipts import ContactRequired, refund_receipt
from tests.support.fake_organizers import FakeOrganizerDirectory
from tests.unit.conftest import event_request

ORG = Caller("org-fiscal", "key-1")
cents = st.integers(min_value=1, max_value=10_000_000_00).map(lambda c: Money(Decimal(c) / 100, "RUB"))


def total(receipt) -> Decimal:
    return sum((Decimal(i["amount"]["value"]) * Decimal(i["quantity"]) for i in receipt["items"]), Decimal("0"))


@given(amount=cents, quantity=st.integers(min_value=1, max_value=50), vat=st.integers(1, 12))
def test_a_line_sums_exactly_to_its_amount(amount, quantity, vat):
    line = fiscal.line_for("Concert " * 30, amount, quantity, vat)
    assert line.total == amount.value
    assert len(line.description) <= fiscal.ITEM_DESCRIPTION_MAX
    record = fiscal.sale_record([line], FiscalSettings(1, vat))
    assert total(fiscal.receipt("a@example.com", record, amount)) == amount.value


@given(amounts=st.lists(cents, min_size=1, max_size=5), data=st.data())
def test_a_partial_refund_lists_exactly_the_part_given_back(amounts, data):
    lines = [fiscal.line_for(f"line {i}", amount, 1, 1) for i, amount in enumerate(amounts)]
    paid = fiscal.lines_total(lines)
    back = Money(Decimal(data.draw(st.integers(1, int(paid * 100)))) / 100, "RUB")
    part = fiscal.part_of(lines, back)
    assert fiscal.lines_total(part) == back.value
    assert all(line.total > 0 for line in part)


def test_a_receipt_that_does_not_add_up_is_never_built():
    line = fiscal.line_for("x", Money(Decimal("100.00"), "RUB"), 1, 1)
    record = fiscal.sale_record([line], FiscalSettings(1, 1))
    with pytest.raises(ValueError):
        fiscal.receipt("a@example.com", record, Money(Decimal("99.99"), "RUB"))


@pytest.fixture
def directory(fake_store):
    return FakeOrganizerDirectory(fake_store.table)


@pytest.fixture
def store(fake_store):
    return fake_store


@pytest.fixture
def fiscal_payments(store, provider, clock, bookings, directory):
    return PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)


@pytest.fixture
def own_event(catalog, directory):
    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 1), "2030-01-01T00:00:00.000Z")
    return catalog.create_event(event_request(name="Quartet"), "ev-1", ORG)


def test_the_receipt_is_stored_with_the_attempt_and_sent_again_unchanged(
        bookings, fiscal_payments, provider, own_event, directory, store):
    booking = bookings.create_booking(own_event["event_id"], "alice", "k",
                                      BookingIn(quantity=2, contact_email="alice@example.com")).booking
    provider.fail("create_payment", "after")
    with pytest.raises(PaymentProviderUnavailable):
        fiscal_payments.start_payment(booking.booking_id, "alice", "pay-1")
    stored = store.get_booking(booking.booking_id).payment.receipt
    assert stored["lines"][0]["vat_code"] == 1
    # The organizer changes its rate meanwhile: the repeat under the same key sends the first receipt
    # (a different body under that key would be refused by the provider).
    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 11), "2030-01-01T00:00:00.000Z")
    retried = fiscal_payments.start_payment(booking.booking_id, "alice", "pay-1")
    [payment] = provider.payments_for(booking.booking_id)
    assert payment["id"] == retried.payment.payment_id
    assert payment["receipt"]["customer"] == {"email": "alice@example.com"}
    assert [i["vat_code"] for i in payment["receipt"]["items"]] == [1]
    assert total(payment["receipt"]) == Decimal("3000.00")


def test_no_address_no_payment_and_nothing_stored(bookings, fiscal_payments, provider, own_event, store):
    booking = bookings.create_booking(own_event["event_id"], "bob", "k", BookingIn(quantity=1)).booking
    with pytest.raises(ContactRequired) as info:
        fiscal_payments.start_payment(booking.booking_id, "bob", "pay-1")
    assert info.value.code == "contact_required" and info.value.status == 400
    after = store.get_booking(booking.booking_id)
    assert after.status is BookingStatus.HELD and after.payment is None
    assert provider.payments_for(booking.booking_id) == []


def test_an_organizer_without_settings_sells_without_receipts(bookings, fiscal_payments, provider, catalog):
    event = catalog.create_event(event_request(), "ev-2", Caller("org-plain", "key-1"))
    booking = bookings.create_booking(event["event_id"], "cat", "k", BookingIn(quantity=1)).booking
    fiscal_payments.start_payment(booking.booking_id, "cat", "pay-1")
    [payment] = provider.payments_for(booking.booking_id)
    assert "receipt" not in payment


def test_a_partial_refund_receipt_lists_the_part(bookings, fiscal_payments, own_event, store):
    booking = bookings.create_booking(own_event["event_id"], "dan", "k",
                                      BookingIn(quantity=3, contact_email="dan@example.com")).booking
    started = fiscal_payments.start_payment(booking.booking_id, "dan", "pay-1")
    receipt = refund_receipt(started, {"value": "1000.00", "currency": "RUB"})
    assert total(receipt) == Decimal("1000.00")
    assert refund_receipt(started, {"value": "4500.00", "currency": "RUB"})["items"][0]["quantity"] == "3"


# -- settlement receipts ---------------------------------------------------------------------------

from datetime import timedelta  # noqa: E402 - the settlement cases' own

from holdfast import faults  # noqa: E402
from holdfast.clock import iso, parse_iso  # noqa: E402
from holdfast.services.listing import ListingService  # noqa: E402
from holdfast.services.settlements import Settlements, settlement_key  # noqa: E402
from holdfast.services.sweeper import sweep  # noqa: E402


@pytest.fixture
def settlements(store, provider, clock):
    return Settlements(store, provider, clock, retry_seconds=(10, 20, 40))


def confirmed(bookings, fiscal_payments, provider, event, who="eve", n=2):
    booking = bookings.create_booking(event["event_id"], who, "k",
                                      BookingIn(quantity=n, contact_email=f"{who}@example.com")).booking
    started = fiscal_payments.start_payment(booking.booking_id, who, "pay-1")
    provider.pay(started.payment.payment_id)
    fiscal_payments.apply_provider_payment(provider.get_payment(started.payment.payment_id))
    return fiscal_payments.store.get_booking(booking.booking_id)


def run_sweep(store, clock, settlements):
    return sweep(store, clock, lambda _id: {}, lambda *_: None, give_up=lambda *_: None, grace_seconds=0,
                 settle=settlements.settle)


def test_the_settlement_receipt_is_sent_once_when_the_event_starts(
        bookings, fiscal_payments, provider, own_event, store, clock, settlements):
    booking = confirmed(bookings, fiscal_payments, provider, own_event)
    assert booking.status is BookingStatus.CONFIRMED and booking.due_at == own_event["starts_at"]
    assert run_sweep(store, clock, settlements).get("settlement_sent") is None   # not started yet
    clock.advance((parse_iso(own_event["starts_at"]) - clock()).total_seconds() + 1)
    assert run_sweep(store, clock, settlements)["settlement_sent"] == 1
    [receipt] = provider.receipts.values()
    assert receipt["payment_id"] == booking.payment.payment_id and receipt["send"] is True
    assert receipt["settlements"] == [{"type": "prepayment", "amount": {"value": "3000.00", "currency": "RUB"}}]
    assert {i["payment_mode"] for i in receipt["items"]} == {"full_payment"}
    assert total(receipt) == Decimal("3000.00")
    after = store.get_booking(booking.booking_id)
    assert after.payment.settlement["state"] == "sent" and after.due_at is None
    clock.advance(3600)
    assert run_sweep(store, clock, settlements).get("settlement_sent") is None
    assert len(provider.receipts) == 1


def test_a_postponed_event_moves_the_settlement_to_its_new_start(
        bookings, fiscal_payments, provider, own_event, store, clock, settlements):
    booking = confirmed(bookings, fiscal_payments, provider, own_event)
    later = iso(parse_iso(own_event["starts_at"]) + timedelta(days=2))
    ListingService(store, clock).update(own_event["event_id"], {"starts_at": parse_iso(later)}, ORG)
    clock.advance((parse_iso(own_event["starts_at"]) - clock()).total_seconds() + 1)   # the old start
    assert run_sweep(store, clock, settlements)["settlement_rescheduled"] == 1
    assert provider.receipts == {}
    assert store.get_booking(booking.booking_id).due_at == later
    clock.advance(2 * 86400)
    assert run_sweep(store, clock, settlements)["settlement_sent"] == 1


def test_a_crash_between_the_call_and_its_record_still_makes_one_receipt(
        bookings, fiscal_payments, provider, own_event, store, clock, settlements, monkeypatch):
    booking = confirmed(bookings, fiscal_payments, provider, own_event)
    clock.advance((parse_iso(own_event["starts_at"]) - clock()).total_seconds() + 1)
    faults.reset_crash_counts()
    monkeypatch.setenv("HOLDFAST_CRASH_POINTS", "settlement.after_provider_call:1")
    try:
        assert run_sweep(store, clock, settlements)["failed"] == 1      # the process died after the call
        stored = store.get_booking(booking.booking_id).payment.settlement
        assert stored["state"] == "requested" and stored["key"] == settlement_key(booking.booking_id)
        assert len(provider.receipts) == 1
        clock.advance(11)
        assert run_sweep(store, clock, settlements)["settlement_sent"] == 1
    finally:
        faults.reset_crash_counts()
    assert len(provider.receipts) == 1   # the same key: the provider answered the first receipt again
    assert store.get_booking(booking.booking_id).payment.settlement["receipt_id"] == next(iter(provider.receipts))


def test_provider_errors_are_retried_then_become_the_organizers_case(
        bookings, fiscal_payments, provider, own_event, store, clock, settlements):
    booking = confirmed(bookings, fiscal_payments, provider, own_event)
    clock.advance((parse_iso(own_event["starts_at"]) - clock()).total_seconds() + 1)
    provider.fail("create_receipt", "before", "before", "before")
    assert run_sweep(store, clock, settlements)["settlement_retrying"] == 1
    assert run_sweep(store, clock, settlements).get("settlement_retrying") is None   # not due again yet
    clock.advance(21)
    assert run_sweep(store, clock, settlements)["settlement_retrying"] == 1
    clock.advance(41)
    assert run_sweep(store, clock, settlements)["settlement_failed"] == 1
    after = store.get_booking(booking.booking_id)
    assert after.status is BookingStatus.CONFIRMED and after.review["reason"] == "settlement_receipt_failed"
    assert after.due_at is None and provider.receipts == {}
    assert [b.booking_id for b in store.list_reviews()] == [booking.booking_id]


def test_a_slot_settles_at_its_first_granule(bookings, fiscal_payments, provider, own_event, store, clock):
    booking = confirmed(bookings, fiscal_payments, provider, own_event)
    assert booking.settlement_due == own_event["starts_at"]
    assert fiscal.rendered_at(["2030-01-02T10:30", "2030-01-02T10:00"], "2030-03-01T00:00:00.000Z") \
        == "2030-01-02T10:00:00.000Z"


def test_a_booking_with_its_settlement_receipt_due_stays_live_for_erasure(
        bookings, fiscal_payments, provider, own_event, store, clock, settlements):
    from holdfast.adapters.booking_items import booking_item, due_bucket

    booking = confirmed(bookings, fiscal_payments, provider, own_event)
    # past its event (what the retention counts from) with the receipt still owed: in the due index,
    # out of the ended index that erasure reads
    clock.advance((parse_iso(own_event["starts_at"]) - clock()).total_seconds() + 400 * 86400)
    item = booking_item(store.get_booking(booking.booking_id))
    assert item["gsi1pk"] == due_bucket(booking.booking_id)
    run_sweep(store, clock, settlements)
    sent = store.get_booking(booking.booking_id)
    assert sent.payment.settlement["state"] == "sent"
    assert booking_item(sent).get("gsi1pk") != due_bucket(booking.booking_id)   # now it may end
