"""A sale's items (issue 44): one per order line and place group, summing to what is paid to the
kopeck, a code's discount included; the payment's receipt and its refunds list them."""
from __future__ import annotations

import random
from decimal import Decimal

import pytest
from hypothesis import given, strategies as st

from holdfast.adapters.organizers_store import OrganizerStore
from holdfast.domain import pricing
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.fiscal import FiscalSettings
from holdfast.domain.money import Money
from holdfast.domain.organizers import Caller
from holdfast.domain.statuses import BookingStatus
from holdfast.products.orders.services import OrderLine, OrderService, PlaceOrder
from holdfast.products.parking.schemas import LotIn, ReservationIn
from holdfast.products.parking.services.lots import ParkingService
from holdfast.products.parking.tokens import LotKeys
from holdfast.schemas import BookingIn
from holdfast.services.bookings import BookingService
from holdfast.services.codes import CodeService
from holdfast.services.payments import PaymentService
from holdfast.services.receipts import refund_receipt
from holdfast.services.sweeper import sweep

from .conftest import event_request
from .test_price_categories import CATEGORIES, PRICES

ORG = Caller("org-items", "key-1")
RUB = "RUB"
DAY = "2030-02-01"


def _ticket_and_parking(bookings, priced_event, lot, who: str, key: str, seat: str, since: str, until: str):
    """An order of one seat of the priced event and the lot's space from ``since`` to ``until``
    (times of DAY), held for ``who`` with the address its receipts go to."""
    body = {"vehicle_type": "REGULAR", "plate": "A123BC77", "from": f"{DAY}T{since}:00Z", "to": f"{DAY}T{until}:00Z"}
    return OrderService(bookings).place(who, key, PlaceOrder((
        OrderLine(priced_event["event_id"], HoldPlaces.of(BookingIn.model_validate({"seats": [seat]}).model_dump())),
        OrderLine(lot["lot_id"], ReservationIn.model_validate(body).command())),
        contact_email=f"{who}@example.com")).booking


def _paid(payments: PaymentService, provider, booking_id: str, who: str, key: str):
    """The booking's payment started, paid at the provider and its notification applied."""
    started = payments.start_payment(booking_id, who, key)
    provider.pay(started.payment.payment_id)
    payments.apply_provider_payment(provider.get_payment(started.payment.payment_id))
    return started


def _sweep(store, clock, settlements) -> dict:
    """One run of the sweeper, its settlement receipts sent by ``settlements``."""
    return sweep(store, clock, lambda _id: {}, lambda *_: None, give_up=lambda *_: None, grace_seconds=0,
                 settle=settlements.settle)

groups = st.lists(st.tuples(st.integers(1, 40), st.integers(0, 500_000_00)), min_size=1, max_size=6)


def _sum(items) -> Decimal:
    return sum((item.amount.value for item in items), Decimal("0.00"))


@given(groups=groups, data=st.data())
def test_discounted_items_sum_to_the_amount_to_the_kopeck_and_keep_every_place(groups, data):
    full = [pricing.LineItem(f"group {n}", quantity, Money(Decimal(cents) / 100, RUB))
            for n, (quantity, cents) in enumerate(groups)]
    full_cents = int(_sum(full) * 100)
    paid = Money(Decimal(data.draw(st.integers(0, full_cents))) / 100, RUB)
    items = pricing.discounted(full, paid)
    assert _sum(items) == paid.value
    assert all(item.unit.value >= 0 and item.quantity > 0 for item in items)
    assert all(item.unit.value == item.unit.value.quantize(Decimal("0.01")) for item in items)
    for before in full:   # every place is still listed, under its own description
        assert sum(i.quantity for i in items if i.description == before.description) == before.quantity
    if paid.value == _sum(full):
        assert items == tuple(full)


def test_an_item_whose_share_does_not_divide_is_split_one_kopeck_apart():
    items = pricing.discounted([pricing.LineItem("Stalls", 3, Money.parse("10.00", RUB))], Money.parse("10.00", RUB))
    assert [(i.quantity, i.unit.text) for i in items] == [(2, "3.33"), (1, "3.34")]


@pytest.fixture
def directory(store):
    return OrganizerStore(store.table, store.client)


@pytest.fixture
def coded(store, clock, scheduled):
    return BookingService(store, clock, lambda booking_id, at: scheduled.append((booking_id, at)),
                          rng=random.Random(7), codes=CodeService(store, clock))


@pytest.fixture
def priced_event(catalog, directory):
    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 1), "2030-01-01T00:00:00.000Z")
    return catalog.create_event(caller=ORG, request=event_request(
        name="Quartet", price=None, capacity=None, price_categories=CATEGORIES, prices=PRICES,
        seat_map={"rows": [{"name": "A", "seats": 4, "price_category": "stalls"},
                           {"name": "B", "seats": 4, "price_category": "balcony"}]}))


def test_a_code_discounted_bookings_items_and_receipts_sum_to_what_is_paid(
        coded, store, clock, provider, directory, priced_event):
    CodeService(store, clock).create(priced_event["event_id"], {"code": "THIRD", "kind": "percent", "value": 33},
                                     ORG)
    body = {"seats": ["A-1", "A-2", "B-1"], "ticket_types": {"A-2": "child"}, "code": "third",
            "contact_email": "eve@example.com"}
    booking = coded.create_booking(priced_event["event_id"], "eve", "k",
                                   HoldPlaces.of(BookingIn.model_validate(body).model_dump())).booking
    assert booking.amount.text == "3685.00"   # 5500 less 33 %
    items = pricing.line_items(booking, "Quartet")
    assert _sum(items) == booking.amount.value
    assert {i.description for i in items} == {"Quartet, stalls, adult", "Quartet, stalls, child",
                                              "Quartet, balcony, adult"}
    fiscal_payments = PaymentService(store, provider, clock, coded, "http://127.0.0.1:3000/done", fiscal=directory)
    started = fiscal_payments.start_payment(booking.booking_id, "eve", "pay-1")
    [payment] = provider.payments_for(booking.booking_id)
    sent = payment["receipt"]["items"]
    assert len(sent) == 3
    assert sum(Decimal(i["amount"]["value"]) * int(i["quantity"]) for i in sent) == Decimal("3685.00")
    back = refund_receipt(started, {"value": "3685.00", "currency": RUB})
    assert [i["description"] for i in back["items"]] == [i["description"] for i in sent]


@pytest.fixture
def lot(store, clock, bookings):
    parking = ParkingService(store, clock, bookings, 600, lambda: LotKeys(b"unit-test-receipt-items"), id_salt="tests-salt")
    return parking.create_lot(LotIn.model_validate({
        "name": "Venue parking", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "100.00", "currency": RUB}, "daily_cap": {"value": "1000.00", "currency": RUB},
                   "grace_minutes": 10}}).command(), caller=ORG)


def test_an_orders_payment_receipt_lists_each_line_taxed_by_its_own_offering(
        bookings, store, clock, provider, directory, priced_event, lot):
    directory.put_fiscal(ORG.organizer_id, FiscalSettings(2, 1, vat_overrides=((lot["lot_id"], 11),)),
                         "2030-01-01T00:00:00.000Z")
    body = {"vehicle_type": "REGULAR", "plate": "A123BC77", "from": f"{DAY}T16:00:00Z", "to": f"{DAY}T20:00:00Z"}
    order = OrderService(bookings).place("zoe", "order-1", PlaceOrder((
        OrderLine(priced_event["event_id"], HoldPlaces.of(BookingIn.model_validate({"seats": ["A-1", "B-1"]}).model_dump())),
        OrderLine(lot["lot_id"], ReservationIn.model_validate(body).command())), contact_email="zoe@example.com")).booking
    PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory) \
        .start_payment(order.booking_id, "zoe", "pay-1")
    [payment] = provider.payments_for(order.booking_id)
    assert [(i["description"], i["quantity"], i["amount"]["value"], i["vat_code"]) for i in payment["receipt"]["items"]] \
        == [("Quartet, stalls, adult", "1", "3000.00", 1), ("Quartet, balcony, adult", "1", "1000.00", 1),
            ("Venue parking", "1", "400.00", 11)]


# -- one settlement receipt per order line ----------------------------------------------------------

def test_each_order_line_is_settled_once_when_its_own_service_is_rendered(
        bookings, store, clock, provider, directory, priced_event, lot):
    """A ticket and the evening's parking: the parking line settles when the car leaves, the ticket
    line when the event starts; one receipt each, for its own items, and nothing twice."""
    from datetime import timedelta

    from holdfast.clock import parse_iso
    from holdfast.domain.statuses import BookingStatus
    from holdfast.products.orders.lines import lines_of
    from holdfast.services import transitions
    from holdfast.services.booking_views import receipts_view
    from holdfast.services.settlements import Settlements

    order = _ticket_and_parking(bookings, priced_event, lot, "zoe", "order-1", "A-1", "16:00", "20:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    _paid(payments, provider, order.booking_id, "zoe", "pay-1")
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))

    def run() -> dict:
        return _sweep(store, clock, settlements)

    paid = store.get_booking(order.booking_id)
    assert paid.status is BookingStatus.CONFIRMED
    # the car has not come: the parking line is due at its no-show (its window's start plus the
    # lot's grace, when it settles unless the car came), the ticket at the event's start
    assert parse_iso(paid.settlement_due) == parse_iso(f"{DAY}T16:00:00Z") + timedelta(
        seconds=lot["no_show_grace_seconds"])
    clock.advance((parse_iso(f"{DAY}T16:05:00Z") - clock()).total_seconds())
    assert run().get("settlement_sent") is None and provider.receipts == {}
    # the car comes and goes (the gate moves the order's parking line, services/gate_passes.py)
    for status in ("CHECKED_IN", "COMPLETED"):
        current = store.get_booking(order.booking_id)
        part = next(line for line in lines_of(current) if line.offering_id == lot["lot_id"]).as_booking(current)
        transitions.advance_part(store, current, part, clock(), status, actor="gate", action=f"test_{status}",
                                 decision="the car moved")
        clock.advance(3600)
    assert run()["settlement_sent"] == 1
    [parking] = provider.receipts.values()
    assert parking["settlements"] == [{"type": "prepayment", "amount": {"value": "400.00", "currency": RUB}}]
    assert [(i["description"], i["payment_mode"]) for i in parking["items"]] == [("Venue parking", "full_payment")]
    assert run().get("settlement_sent") is None and len(provider.receipts) == 1
    clock.advance((parse_iso(priced_event["starts_at"]) - clock()).total_seconds() + 1)
    assert run()["settlement_sent"] == 1
    ticket = [r for r in provider.receipts.values() if r["id"] != parking["id"]]
    assert [i["description"] for i in ticket[0]["items"]] == ["Quartet, stalls, adult"]
    assert ticket[0]["settlements"][0]["amount"]["value"] == "3000.00"
    clock.advance(86400)
    assert run().get("settlement_sent") is None and len(provider.receipts) == 2
    settled = store.get_booking(order.booking_id)
    assert settled.settlement_due is None
    shown = [(r["type"], r.get("line_id"), r["status"], r["amount"]["value"]) for r in receipts_view(settled)]
    assert shown == [("payment", None, "issued", "3400.00"), ("settlement", "L1", "sent", "3000.00"),
                     ("settlement", "L2", "sent", "400.00")]
    back = refund_receipt(settled, {"value": "3400.00", "currency": RUB})
    assert {i["payment_mode"] for i in back["items"]} == {"full_payment"}


def test_an_order_paid_after_its_event_was_moved_earlier_settles_its_ticket_at_the_new_start(
        bookings, store, clock, provider, directory, priced_event, lot):
    """The start moved earlier while the order was still unpaid (no payment, so nothing for the
    change's announcement to move): the payment's first looks are read per line from each line's
    offering as it is then, not from the start the line was sold for (proof seed 20261211084, F5)."""
    from datetime import timedelta

    from holdfast.clock import iso, parse_iso
    from holdfast.services.listing import ListingService
    from holdfast.services.settlements import Settlements

    order = _ticket_and_parking(bookings, priced_event, lot, "zoe", "order-1", "A-1", "16:00", "20:00")
    earlier = clock() + timedelta(hours=2)
    assert earlier < parse_iso(priced_event["starts_at"])
    ListingService(store, clock).update(priced_event["event_id"], {"starts_at": earlier}, ORG)
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    _paid(payments, provider, order.booking_id, "zoe", "pay-1")
    ticket_line = next(line for line in order.kind_details["lines"] if line["offering_id"] == priced_event["event_id"])
    paid = store.get_booking(order.booking_id)
    assert paid.payment.settlement["lines"][ticket_line["line_id"]]["next_at"] == iso(earlier)
    assert parse_iso(paid.settlement_due) <= earlier
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))
    clock.advance((earlier - clock()).total_seconds() + 1)
    sent = _sweep(store, clock, settlements)
    assert sent["settlement_sent"] == 1
    [receipt] = provider.receipts.values()
    assert [i["description"] for i in receipt["items"]] == ["Quartet, stalls, adult"]


def test_the_sales_export_lists_each_sales_receipts(coded, store, clock, provider, directory, priced_event, catalog):
    import csv
    import io

    from holdfast.services.exports import ExportService

    booking = coded.create_booking(priced_event["event_id"], "kim", "k", HoldPlaces.of(BookingIn.model_validate(
        {"seats": ["B-1"], "contact_email": "kim@example.com"}).model_dump())).booking
    payments = PaymentService(store, provider, clock, coded, "http://127.0.0.1:3000/done", fiscal=directory)
    _paid(payments, provider, booking.booking_id, "kim", "pay-1")
    plain = catalog.create_event(event_request(name="No receipts"), caller=Caller("org-plain", "key-1"))
    other = coded.create_booking(plain["event_id"], "lee", "k", BookingIn(quantity=1)).booking
    plain_payments = PaymentService(store, provider, clock, coded, "http://127.0.0.1:3000/done")
    paying = plain_payments.start_payment(other.booking_id, "lee", "pay-1")
    provider.pay(paying.payment.payment_id)
    plain_payments.apply_provider_payment(provider.get_payment(paying.payment.payment_id))

    def rows(caller):
        text = ExportService(store).page(caller, "sales")["text"].lstrip("\ufeff")
        return {row["booking_id"]: row for row in csv.DictReader(io.StringIO(text))}

    assert rows(ORG)[booking.booking_id]["receipts"] == "payment:issued settlement:due"
    assert rows(Caller("org-plain", "key-1"))[other.booking_id]["receipts"] == ""   # receipts off: none


def test_a_crash_between_a_lines_receipt_call_and_its_record_still_makes_one_receipt_for_it(
        bookings, store, clock, provider, directory, priced_event, lot, monkeypatch):
    from holdfast import faults
    from holdfast.clock import parse_iso
    from holdfast.services.settlements import Settlements, settlement_key

    # (a window after the event's start: the line's own no-show, 21:15, is not yet due at it)
    order = _ticket_and_parking(bookings, priced_event, lot, "max", "order-1", "A-2", "21:00", "23:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    _paid(payments, provider, order.booking_id, "max", "pay-1")
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))

    def run() -> dict:
        return _sweep(store, clock, settlements)

    clock.advance((parse_iso(priced_event["starts_at"]) - clock()).total_seconds() + 1)   # the ticket's line
    faults.reset_crash_counts()
    monkeypatch.setenv("HOLDFAST_CRASH_POINTS", "settlement.after_provider_call:1")
    try:
        assert run()["failed"] == 1                          # died after the provider registered it
        stored = store.get_booking(order.booking_id).payment.settlement["lines"]["L1"]
        assert stored["state"] == "requested" and stored["key"] == settlement_key(order.booking_id, line_id="L1")
        clock.advance(11)
        assert run()["settlement_sent"] == 1
    finally:
        faults.reset_crash_counts()
    [made] = provider.receipts.values()                     # the same key: one receipt
    assert made["settlements"][0]["amount"]["value"] == "3000.00"
    assert store.get_booking(order.booking_id).payment.settlement["lines"]["L1"]["receipt_id"] == made["id"]
    assert "L2" not in store.get_booking(order.booking_id).payment.settlement["lines"]   # the car never came


def test_more_groups_than_a_receipt_lists_become_one_item_per_offering():
    from types import SimpleNamespace

    from holdfast.domain import fiscal
    from holdfast.services.receipts import receipt_lines

    priced = [{"price_category": f"c{n}", "ticket_type": "adult", "quantity": 1, "unit": "10.00"} for n in range(81)]
    order = SimpleNamespace(event_id="ev-1", amount=Money.parse("910.00", RUB), places=SimpleNamespace(quantity=82),
                            kind_details={"lines": [
                                {"offering_id": "ev-1", "quantity": 81, "amount": "810.00", "name": "Gala",
                                 "details": {"priced": priced}},
                                {"offering_id": "lot-1", "quantity": 1, "amount": "100.00", "name": "Parking"}]})
    lines = receipt_lines(order, "Gala", FiscalSettings(2, 1, vat_overrides=(("lot-1", 11),)))
    assert [(line.offering_id, line.total, line.vat_code) for line in lines] == [
        ("ev-1", Decimal("810.00"), 1), ("lot-1", Decimal("100.00"), 11)]
    assert fiscal.lines_total(lines) == order.amount.value


def test_an_orders_parking_line_whose_car_never_came_is_settled_once_at_its_no_show(
        bookings, store, clock, provider, directory, priced_event, lot, monkeypatch):
    """54-FZ: a prepaid reservation whose car never came is rendered at its no-show (the window's
    start plus the lot's grace, as a single reservation's NO_SHOW), its money kept: the line's
    prepayment is closed by one settlement receipt then, exactly once, a crash between the
    provider's call and its record included."""
    from datetime import timedelta

    from holdfast import faults
    from holdfast.clock import parse_iso
    from holdfast.services.booking_views import receipts_view
    from holdfast.services.settlements import Settlements

    order = _ticket_and_parking(bookings, priced_event, lot, "ned", "order-1", "A-3", "16:00", "18:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    _paid(payments, provider, order.booking_id, "ned", "pay-1")
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))

    def run() -> dict:
        return _sweep(store, clock, settlements)

    paid = store.get_booking(order.booking_id)
    grace = lot["no_show_grace_seconds"]
    no_show = parse_iso(f"{DAY}T16:00:00Z") + timedelta(seconds=grace)
    assert parse_iso(paid.settlement_due) == no_show   # the line's no-show, before the event starts
    clock.advance((no_show - clock()).total_seconds() - 60)
    assert run().get("settlement_sent") is None and provider.receipts == {}   # not a no-show yet
    clock.advance(61)
    faults.reset_crash_counts()
    monkeypatch.setenv("HOLDFAST_CRASH_POINTS", "settlement.after_provider_call:1")
    try:
        assert run()["failed"] == 1                          # died after the provider registered it
        clock.advance(11)
        assert run()["settlement_sent"] == 1
    finally:
        faults.reset_crash_counts()
    [made] = provider.receipts.values()
    assert made["settlements"] == [{"type": "prepayment", "amount": {"value": "200.00", "currency": RUB}}]
    assert [(i["description"], i["payment_mode"]) for i in made["items"]] == [("Venue parking", "full_payment")]
    clock.advance(3600)
    assert run().get("settlement_sent") is None and len(provider.receipts) == 1   # once
    settled = store.get_booking(order.booking_id)
    assert [(r["type"], r.get("line_id"), r["status"]) for r in receipts_view(settled)] == [
        ("payment", None, "issued"), ("settlement", "L1", "due"), ("settlement", "L2", "sent")]
    _, journal = store.get_booking_with_journal(order.booking_id)
    assert any(entry.action == "settlement_requested" and "line L2" in entry.decision for entry in journal)


def test_an_orders_parking_line_paid_after_its_window_began_counts_its_no_show_from_the_payment(
        bookings, store, clock, provider, directory, priced_event, lot):
    """As a single reservation's no-show timer (Booking.confirmed): a window already begun when the
    order is paid is not unused the moment it is paid; the line's settlement waits the lot's grace
    from the confirmation (a line counted from the window's start settled at once: the car could
    still come)."""
    from datetime import timedelta

    from holdfast.clock import parse_iso
    from holdfast.services.settlements import Settlements

    grace = lot["no_show_grace_seconds"]
    begun = parse_iso(f"{DAY}T16:00:00Z")
    clock.advance((begun - clock()).total_seconds() + grace + 120)   # past the window's start + grace
    order = _ticket_and_parking(bookings, priced_event, lot, "ned", "order-2", "A-4", "16:00", "18:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    _paid(payments, provider, order.booking_id, "ned", "pay-2")
    confirmed_at = clock()
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))

    def run() -> dict:
        return _sweep(store, clock, settlements)

    paid = store.get_booking(order.booking_id)
    assert parse_iso(paid.settlement_due) == confirmed_at + timedelta(seconds=grace)
    assert run().get("settlement_sent") is None and provider.receipts == {}   # the car may still come
    clock.advance(grace + 1)
    assert run()["settlement_sent"] == 1
    [made] = provider.receipts.values()
    assert [i["description"] for i in made["items"]] == ["Venue parking"]


def test_an_offerings_sales_list_each_sale_with_its_receipts_for_the_operators_page(
        coded, store, clock, provider, directory, priced_event):
    from holdfast.domain.errors import NotFound
    from holdfast.services.exports import ExportService

    paid = []
    for n, seat in enumerate(("A-3", "A-4", "B-2")):
        booking = coded.create_booking(priced_event["event_id"], f"c{n}", "k", HoldPlaces.of(BookingIn.model_validate(
            {"seats": [seat], "contact_email": f"c{n}@example.com"}).model_dump())).booking
        payments = PaymentService(store, provider, clock, coded, "http://127.0.0.1:3000/done", fiscal=directory)
        _paid(payments, provider, booking.booking_id, f"c{n}", "pay-1")
        paid.append(booking.booking_id)
    service = ExportService(store)
    first = service.sales_of(ORG, priced_event["event_id"], limit=2)
    rest = service.sales_of(ORG, priced_event["event_id"], cursor=first["next_cursor"], limit=2)
    sales = first["sales"] + rest["sales"]
    assert rest["next_cursor"] is None and sorted(sale["booking_id"] for sale in sales) == sorted(paid)
    for sale in sales:
        assert [(r["type"], r["status"]) for r in sale["receipts"]] == [("payment", "issued"), ("settlement", "due")]
        assert sale["receipts"][0]["amount"] == sale["amount"] and "sent_to" not in sale["receipts"][0]
    with pytest.raises(NotFound) as hidden:
        service.sales_of(Caller("org-other", "key-1"), priced_event["event_id"])
    assert hidden.value.code == "offering_not_found"


def test_an_orders_receipts_as_the_booking_view_and_the_sales_page_show_them_are_as_documented(
        bookings, store, clock, provider, directory, priced_event, lot):
    """docs/openapi.yaml holds what the API answers about receipts: an order's settlement receipts
    name their line (``line_id``) in the booking view (GET /bookings/{id}) and on the operator's
    sales page (GET /admin/sales/{offering_id}); both validate against the document's schemas."""
    from jsonschema import ValidationError

    from holdfast.services.booking_views import receipts_view
    from holdfast.services.exports import ExportService
    from tests.contract.test_openapi_contract import BOOKING_RECEIPT, SALES_PAGE, check_documented

    order = _ticket_and_parking(bookings, priced_event, lot, "zoe", "order-1", "A-1", "16:00", "20:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    _paid(payments, provider, order.booking_id, "zoe", "pay-1")
    shown = receipts_view(store.get_booking(order.booking_id))
    assert [(r["type"], r.get("line_id")) for r in shown] == [("payment", None), ("settlement", "L1"),
                                                               ("settlement", "L2")]
    for receipt in shown:
        check_documented(receipt, BOOKING_RECEIPT)
    page = ExportService(store).sales_of(ORG, priced_event["event_id"])
    assert [r.get("line_id") for r in page["sales"][0]["receipts"]] == [None, "L1", "L2"]
    check_documented(page, SALES_PAGE)
    with pytest.raises(ValidationError):   # the check can fail: a field the document does not name
        check_documented({**shown[1], "line": "L1"}, BOOKING_RECEIPT)


@pytest.fixture
def refunding_lot(store, clock, bookings):
    """The lot of ``lot`` whose policy gives a no-show's money back."""
    parking = ParkingService(store, clock, bookings, 600, lambda: LotKeys(b"unit-test-receipt-items"), id_salt="tests-salt")
    return parking.create_lot(LotIn.model_validate({
        "name": "Venue parking", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "100.00", "currency": RUB}, "daily_cap": {"value": "1000.00", "currency": RUB},
                   "grace_minutes": 10}, "policy": {"refund_no_show": True}}).command(), caller=ORG)


def _line_sweep(store, clock, settlements, payments) -> dict:
    """One run of the sweeper as functions/sweep_due wires it for orders: settlements and lines' timers."""
    return sweep(store, clock, lambda _id: {}, lambda *_: None, give_up=lambda *_: None, grace_seconds=0,
                 settle=settlements.settle, line_timers=payments.line_timers, part_refunds=payments.part_refunds.retry)


def test_an_orders_parking_line_on_a_lot_that_refunds_no_shows_is_refunded_alone_at_its_no_show(
        bookings, store, clock, provider, directory, priced_event, refunding_lot):
    """As a single reservation on such a lot: the car never came by the window's start plus the
    lot's grace, so the line's amount goes back, once, with a refund receipt of the line's items
    alone (a lost answer asked again under the same key by a later sweep); the line is REFUNDED
    and settled by no receipt, the order stays CONFIRMED for its ticket at the rest of the price,
    and a later cancel of the order gives back only the ticket's part."""
    from datetime import timedelta

    from holdfast.clock import parse_iso
    from holdfast.services.settlements import Settlements

    order = _ticket_and_parking(bookings, priced_event, refunding_lot, "ned", "order-3", "A-3", "16:00", "18:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    started = _paid(payments, provider, order.booking_id, "ned", "pay-3")
    payment_id = started.payment.payment_id
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))
    paid = store.get_booking(order.booking_id)
    assert paid.amount.text == "3200.00"                     # 3000.00 of the seat, 200.00 of parking
    no_show = parse_iso(f"{DAY}T16:00:00Z") + timedelta(seconds=refunding_lot["no_show_grace_seconds"])
    assert parse_iso(paid.due_at) == no_show

    clock.advance((no_show - clock()).total_seconds() - 60)
    assert _line_sweep(store, clock, settlements, payments).get("timers") is None   # the car may still come
    assert provider.refunds_for(payment_id) == []
    clock.advance(61)
    provider.fail("create_refund", "after")                  # the provider refunds; its answer is lost
    assert _line_sweep(store, clock, settlements, payments)["timers"] == 1
    waiting = store.get_booking(order.booking_id)
    [entry] = waiting.payment.exchange_refunds
    assert (entry["line_id"], entry["status"], entry["amount"]) == ("L2", "requested", {"value": "200.00", "currency": RUB})
    assert waiting.status.value == "CONFIRMED" and waiting.amount.text == "3000.00" and waiting.charged.text == "3200.00"
    assert [line.get("status") for line in waiting.kind_details["lines"]] == [None, "REFUNDED"]
    assert _line_sweep(store, clock, settlements, payments).get("line_refunds") is None   # not asked again yet
    clock.advance(31)
    assert _line_sweep(store, clock, settlements, payments)["line_refunds"] == 1
    [refund] = provider.refunds_for(payment_id)              # the same key: one refund
    assert (refund["amount"]["value"], refund["status"]) == ("200.00", "succeeded")
    assert [(i["description"], i["amount"]["value"], i["payment_mode"]) for i in refund["receipt"]["items"]] == [
        ("Venue parking", "200.00", "full_prepayment")]
    refunded = store.get_booking(order.booking_id)
    assert refunded.payment.exchange_refunds[0]["status"] == "succeeded"
    assert refunded.line_timers == [] and refunded.part_refunds_due is None   # due next: the ticket's settlement
    _, journal = store.get_booking_with_journal(order.booking_id)
    assert [e.action for e in journal if "no_show" in e.action or e.action.startswith("line_refund")] == [
        "line_no_show_refund", "line_refund_requested", "line_refund_succeeded"]   # the lost answer: asked later

    clock.advance(3600)
    for _ in range(2):
        assert _line_sweep(store, clock, settlements, payments).get("timers") is None
    assert len(provider.refunds_for(payment_id)) == 1 and provider.receipts == {}   # no settlement of L2

    cancelled = payments.cancel_confirmed(store.get_booking(order.booking_id))   # before the concert
    assert cancelled.status.value == "REFUNDED"
    back = [r for r in provider.refunds_for(payment_id) if r["id"] != refund["id"]]
    assert [(r["amount"]["value"], [i["description"] for i in r["receipt"]["items"]]) for r in back] == [
        ("3000.00", ["Quartet, stalls, adult"])]


def test_a_lost_line_refund_answer_is_asked_again_by_the_one_part_refund_retry_even_in_a_case(
        bookings, store, clock, provider, directory, priced_event, refunding_lot):
    """A line's refund and a cheaper exchange's are one kind of record with one retry
    (services/part_refunds.py): the line's lost answer is asked again at ``next_check_at`` (30 s,
    then 90, 270, ...), and when the order sits in a case (the review index, not the due index) the
    sweeper still asks. Before, a line's retry ran from the due index alone, on its own ``next_at``."""
    from datetime import timedelta

    from holdfast.clock import parse_iso
    from holdfast.services import transitions
    from holdfast.services.settlements import Settlements

    order = _ticket_and_parking(bookings, priced_event, refunding_lot, "uma", "order-5", "B-1", "16:00", "18:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    payment_id = _paid(payments, provider, order.booking_id, "uma", "pay-5").payment.payment_id
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))
    provider.fail("create_refund", "after", "before")      # made, its answer lost; then no answer at all
    _no_show_passed(store, clock, settlements, payments, refunding_lot)
    [entry] = store.get_booking(order.booking_id).payment.exchange_refunds
    assert (entry["status"], entry["tries"]) == ("requested", 1) and "next_at" not in entry
    assert parse_iso(entry["next_check_at"]) == clock() + timedelta(seconds=30)
    clock.advance(31)
    assert _line_sweep(store, clock, settlements, payments)["line_refunds"] == 1   # asked again: no answer
    [entry] = store.get_booking(order.booking_id).payment.exchange_refunds
    assert entry["tries"] == 2 and parse_iso(entry["next_check_at"]) == clock() + timedelta(seconds=90)
    waiting = store.get_booking(order.booking_id)
    transitions.apply(store, waiting, clock(), actor="test", action="case_opened", decision="test",
                      review={"reason": "second_payment_for_booking"})
    assert order.booking_id not in store.due_bookings("9999", 100)
    clock.advance(91)
    assert _line_sweep(store, clock, settlements, payments).get("line_refunds") == 1
    [refund] = provider.refunds_for(payment_id)             # the same key: one refund
    assert refund["status"] == "succeeded"
    assert store.get_booking(order.booking_id).payment.exchange_refunds[0]["status"] == "succeeded"


def test_an_orders_parking_line_on_a_lot_that_keeps_no_shows_enters_no_show_and_is_settled(
        bookings, store, clock, provider, directory, priced_event, lot):
    """The default lot keeps a no-show's money: at the no-show the line enters NO_SHOW on its own
    (as a single reservation does), nothing goes back, and its settlement receipt follows once."""
    from holdfast.services.settlements import Settlements

    order = _ticket_and_parking(bookings, priced_event, lot, "ned", "order-4", "A-4", "16:00", "18:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    payment_id = _paid(payments, provider, order.booking_id, "ned", "pay-4").payment.payment_id
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))
    _no_show_passed(store, clock, settlements, payments, lot)
    gone = store.get_booking(order.booking_id)
    assert gone.status.value == "CONFIRMED" and [line.get("status") for line in gone.kind_details["lines"]] == [
        None, "NO_SHOW"]
    clock.advance(1)
    assert _line_sweep(store, clock, settlements, payments)["settlement_sent"] == 1
    for _ in range(2):
        _line_sweep(store, clock, settlements, payments)
    assert provider.refunds_for(payment_id) == [] and len(provider.receipts) == 1
    [made] = provider.receipts.values()
    assert [i["description"] for i in made["items"]] == ["Venue parking"]


def _rival_reservation(bookings, lot, since: str, until: str):
    """Another customer's reservation of the lot's one space (``since`` to ``until`` on DAY)."""
    body = {"vehicle_type": "REGULAR", "plate": "B777BB77", "from": f"{DAY}T{since}:00Z", "to": f"{DAY}T{until}:00Z"}
    return bookings.create_booking(lot["lot_id"], "rita", f"rival-{since}", ReservationIn.model_validate(body).command())


def _no_show_passed(store, clock, settlements, payments, lot) -> None:
    from datetime import timedelta

    from holdfast.clock import parse_iso

    no_show = parse_iso(f"{DAY}T16:00:00Z") + timedelta(seconds=lot["no_show_grace_seconds"])
    clock.advance((no_show - clock()).total_seconds() + 1)
    assert _line_sweep(store, clock, settlements, payments)["timers"] == 1


@pytest.mark.parametrize("refunds", [True, False], ids=["refunded", "kept"])
def test_an_orders_parking_line_given_up_at_its_no_show_frees_its_space_in_the_same_write(
        bookings, store, clock, provider, directory, priced_event, lot, refunding_lot, refunds):
    """A parking line whose car never came (refunded by the lot's policy, or its money kept) gives
    its space back when its no-show is recorded, as a single reservation does, not at its window's
    end: another driver may take the rest of the window at once; the order keeps only its seat's
    places, and a later cancel gives back only those."""
    from holdfast.services.settlements import Settlements

    parking = refunding_lot if refunds else lot
    order = _ticket_and_parking(bookings, priced_event, parking, "ned", "order-5", "A-2", "16:00", "18:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    _paid(payments, provider, order.booking_id, "ned", "pay-5")
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))
    held = store.get_booking(order.booking_id)
    assert held.places.granules and store.seat_states(priced_event["event_id"])["A-2"] == "sold"
    _no_show_passed(store, clock, settlements, payments, parking)

    after = store.get_booking(order.booking_id)
    assert [line.get("status") for line in after.kind_details["lines"]] == [None, "REFUNDED" if refunds else "NO_SHOW"]
    assert after.places.granules == () and after.places.quantity == 1   # the seat's place alone
    rival = _rival_reservation(bookings, parking, "16:30", "17:30").booking   # the space is free now
    assert rival.status is BookingStatus.HELD

    cancelled = payments.cancel_confirmed(store.get_booking(order.booking_id))
    assert cancelled.status.value in ("REFUNDED", "CANCELLED")
    assert store.seat_states(priced_event["event_id"])["A-2"] == "available"
    assert store.get_booking(rival.booking_id).status is BookingStatus.HELD   # its space was not given back twice


def test_a_refused_refund_of_an_orders_line_opens_a_review_its_customer_sees(
        bookings, store, clock, provider, directory, priced_event, refunding_lot):
    """The provider refuses a parking line's own refund for good: as a whole booking's refused
    refund, it becomes an operator's case the customer is told about (the order's ``review``, on
    the operators' list), while the order stands for its ticket; the operator settles the money and
    closes the review."""
    from holdfast.services.booking_views import describe
    from holdfast.services.reviews import ReviewService
    from holdfast.services.settlements import Settlements

    order = _ticket_and_parking(bookings, priced_event, refunding_lot, "ned", "order-6", "A-1", "16:00", "18:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    _paid(payments, provider, order.booking_id, "ned", "pay-6")
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))
    provider.fail("create_refund", "refused")
    _no_show_passed(store, clock, settlements, payments, refunding_lot)

    refused = store.get_booking(order.booking_id)
    assert refused.status is BookingStatus.CONFIRMED                      # the ticket still stands
    assert refused.payment.exchange_refunds[0]["status"] == "rejected"
    assert refused.review["reason"] == "line_refund_rejected_forbidden"
    shown = describe(refused)["review"]
    assert shown["next_step"] and "part of your order" in shown["next_step"]
    reviews = ReviewService(store, payments, clock)
    assert [b["booking_id"] for b in reviews.open_reviews()] == [order.booking_id]
    closed = reviews.resolve(order.booking_id, "close", "op", "refunded by hand")
    assert "review" not in closed and closed["status"] == "CONFIRMED"


def test_a_refused_line_refund_tells_its_customer_once_as_a_whole_bookings_refused_refund_does(
        bookings, store, clock, provider, directory, priced_event, refunding_lot):
    """A whole booking's refused refund tells its customer with ``booking.manual_review`` (its
    status change's message); an order line's refused refund leaves the order CONFIRMED, so the
    write that opens the line's review publishes that message itself, once: it reads the line's
    sentence, in the order's language, and later writes while the review stays open send none."""
    from holdfast.services.messages import Site, compose
    from holdfast.services.reviews import ReviewService
    from holdfast.services.settlements import Settlements

    order = _ticket_and_parking(bookings, priced_event, refunding_lot, "ned", "order-8", "A-3", "16:00", "18:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    _paid(payments, provider, order.booking_id, "ned", "pay-8")
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))
    provider.fail("create_refund", "refused")
    _no_show_passed(store, clock, settlements, payments, refunding_lot)

    def told() -> list[dict]:
        return [item for item in store.db._query_prefix(f"BOOKING#{order.booking_id}", "OUTBOX#")
                if item["type"] == "booking.manual_review"]

    refused = store.get_booking(order.booking_id)
    assert refused.status is BookingStatus.CONFIRMED and refused.review["reason"] == "line_refund_rejected_forbidden"
    [notice] = told()
    message = compose(store, {**notice, "booking_id": order.booking_id}, Site(), html=False)
    assert "part of your order" in message.text, message.text
    reviews = ReviewService(store, payments, clock)
    reviews.resolve(order.booking_id, "close", "op", "refunded by hand")
    assert len(told()) == 1


def test_a_line_refunds_notification_whose_answer_was_lost_is_the_lines_not_the_orders(
        bookings, store, clock, provider, directory, priced_event):
    """An order line's refund whose answer was lost is known by no id yet. When the order's own
    refund was then refused (the order in review) and the line's refund's notification arrives,
    the line's refund is asked again under its key (the provider answers the same refund) and the
    notification is recorded as the line's: the order stays in review, never REFUNDED on the
    strength of the line's money alone, even when the amounts are equal (proof seed 20261421)."""
    from holdfast.services.settlements import Settlements

    parking = ParkingService(store, clock, bookings, 600, lambda: LotKeys(b"unit-test-receipt-items"), id_salt="tests-salt")
    lot = parking.create_lot(LotIn.model_validate({
        "name": "Dear parking", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "1500.00", "currency": RUB}}, "policy": {"refund_no_show": True}}).command(),
        caller=ORG)
    order = _ticket_and_parking(bookings, priced_event, lot, "ned", "order-7", "A-2", "16:00", "18:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    payment_id = _paid(payments, provider, order.booking_id, "ned", "pay-7").payment.payment_id
    paid = store.get_booking(order.booking_id)
    assert [line["amount"] for line in paid.kind_details["lines"]] == ["3000.00", "3000.00"]   # equal halves
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))
    provider.fail("create_refund", "after")                    # the line's refund made, its answer lost
    _no_show_passed(store, clock, settlements, payments, lot)
    provider.fail("create_refund", "refused")                  # the order's own refund refused
    payments.cancel_confirmed(store.get_booking(order.booking_id))
    assert store.get_booking(order.booking_id).status is BookingStatus.MANUAL_REVIEW
    [line_refund] = provider.refunds_for(payment_id)
    payments.apply_provider_refund(dict(line_refund))          # the line's refund's notification
    after = store.get_booking(order.booking_id)
    assert after.status is BookingStatus.MANUAL_REVIEW
    [entry] = after.payment.exchange_refunds
    assert (entry["status"], entry["refund_id"]) == ("succeeded", line_refund["id"])
    assert len(provider.refunds_for(payment_id)) == 1          # asked again under its key: the same refund



def test_an_operators_close_asks_a_lines_unanswered_refund_again_as_the_notification_does(
        bookings, store, clock, provider, directory, priced_event, refunding_lot):
    """The line's refund whose answer was lost, then the order's own refund (its customer cancels)
    lost too, then a day without the provider: the order waits for an operator with two refunds of
    its payment at the provider, neither known by id. The operator's close takes the same step as a
    refund's notification (Refunds.tell_apart): the line's refund is asked again under its key and
    recorded as the line's, the order's own under its key names the order's own refund."""
    from holdfast.services.reconciliation import ReconciliationService
    from holdfast.services.reviews import ReviewService
    from holdfast.services.settlements import Settlements

    order = _ticket_and_parking(bookings, priced_event, refunding_lot, "ned", "order-9", "B-3", "16:00", "18:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    payment_id = _paid(payments, provider, order.booking_id, "ned", "pay-9").payment.payment_id
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))
    provider.fail("create_refund", "after")                    # the line's refund made, its answer lost
    _no_show_passed(store, clock, settlements, payments, refunding_lot)
    provider.fail("create_refund", "after")                    # the order's own refund made, its answer lost
    payments.cancel_confirmed(store.get_booking(order.booking_id))
    provider.fail("create_refund", *["before"] * 5)
    clock.advance(24 * 3600 + 1)
    ReconciliationService(store, provider, payments, clock, schedule_seconds=(30, 60, 3600), limit_seconds=24 * 3600,
                          key_retention_seconds=24 * 3600).check(order.booking_id)
    provider.faults.clear()
    in_review = store.get_booking(order.booking_id)
    assert in_review.status is BookingStatus.MANUAL_REVIEW
    assert not in_review.payment.exchange_refunds[0].get("refund_id") and not in_review.payment.refund.get("refund_id")
    line_refund, own = provider.refunds_for(payment_id)
    closed = ReviewService(store, payments, clock).resolve(order.booking_id, "close", "op", "both went back")
    assert closed["status"] == "REFUNDED"
    after = store.get_booking(order.booking_id)
    assert after.payment.refund["refund_id"] == own["id"]
    [entry] = after.payment.exchange_refunds
    assert (entry["status"], entry["refund_id"]) == ("succeeded", line_refund["id"])
    assert len(provider.refunds_for(payment_id)) == 2          # each asked again under its key: no third

def test_a_refused_line_refund_stays_an_operators_case_when_the_order_is_refunded_after_it(
        bookings, store, clock, provider, directory, priced_event, refunding_lot):
    """The order's own refund (its customer cancels) gives back what the order keeps, not the line
    whose refund was refused: the order is REFUNDED and still carries the line's review, until an
    operator closes it, which marks the line's refund settled (proof seed 20261797)."""
    from holdfast.services.reviews import ReviewService
    from holdfast.services.settlements import Settlements

    order = _ticket_and_parking(bookings, priced_event, refunding_lot, "ned", "order-8", "A-4", "16:00", "18:00")
    payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done", fiscal=directory)
    _paid(payments, provider, order.booking_id, "ned", "pay-8")
    settlements = Settlements(store, provider, clock, retry_seconds=(10, 20, 40))
    provider.fail("create_refund", "refused")
    _no_show_passed(store, clock, settlements, payments, refunding_lot)
    cancelled = payments.cancel_confirmed(store.get_booking(order.booking_id))
    assert cancelled.status is BookingStatus.REFUNDED
    refunded = store.get_booking(order.booking_id)
    assert refunded.review["reason"] == "line_refund_rejected_forbidden"
    closed = ReviewService(store, payments, clock).resolve(order.booking_id, "close", "op", "paid back by hand")
    assert "review" not in closed and closed["status"] == "REFUNDED"
    assert [e["status"] for e in store.get_booking(order.booking_id).payment.exchange_refunds] == ["settled"]
