"""Issue 44 for orders over HTTP, on the sandbox: an order's payment receipt lists each line's
items, and each line gets its own settlement receipt when its own service is rendered (the parking
line when the car leaves the lot, the ticket when the event starts), once; the operator's sales
export shows each sale's receipts."""
from __future__ import annotations

import uuid
from datetime import timedelta
from decimal import Decimal

import pytest

from holdfast.clock import system_clock
from tests.integration.test_exports import rows_of
from tests.integration.test_order_lines_flow import gate, gate_pass, ok, parking_now
from tests.integration.test_orders_flow import RUB, lot
from tests.integration.test_receipts import fiscal_organizer, items_total, past_the_start, settlement_receipts, sweep
from tests.support.flows import customer

pytestmark = pytest.mark.integration


def test_an_order_settles_each_line_once_when_its_own_service_is_rendered(api, sandbox, system):
    org = fiscal_organizer(api)
    starts = (system_clock() + timedelta(hours=5)).replace(microsecond=0)
    event_id = org.create_event(
        name="Evening concert", capacity=None, price=None, starts_at=starts.strftime("%Y-%m-%dT%H:%M:%SZ"),
        price_categories=[{"id": "stalls", "name": "Stalls"}],
        prices=[{"price_category": "stalls", "ticket_type": "adult", "price": {"value": "2000.00", "currency": RUB}}],
        seat_map={"rows": [{"name": "A", "seats": 4}]})["event_id"]
    lot_id = lot(org)
    who = customer()
    placed = ok(org.request("POST", "/orders", customer=who, key=str(uuid.uuid4()), json={
        "lines": [{"event_id": event_id, "seats": ["A-1"]}, parking_now(lot_id)],
        "contact_email": "driver@example.com"}), 201)
    order_id = placed["order_id"]
    paying = ok(org.request("POST", f"/orders/{order_id}/payment", customer=who, key=str(uuid.uuid4())), 201)
    payment_id = paying["payment_id"]
    sandbox.pay(payment_id)
    org.wait_status(order_id, who, "CONFIRMED")
    [payment_receipt] = sandbox.receipts(payment_id)
    parking_amount = Decimal(placed["lines"][1]["amount"]["value"])
    assert [(i["description"], Decimal(i["amount"]["value"]) * Decimal(i["quantity"]))
            for i in payment_receipt["items"]] == [("Evening concert, stalls, adult", Decimal("2000.00")),
                                                   ("Venue parking", parking_amount)]
    assert items_total(payment_receipt) == Decimal(placed["amount"]["value"])
    sweep(system)
    assert settlement_receipts(sandbox, payment_id) == []          # nothing rendered yet
    # the car comes and goes: its line is rendered, the ticket's is not
    shown = ok(org.request("GET", f"/orders/{order_id}", customer=who))
    gate_ = gate(org, lot_id)
    entered = gate_pass(org, lot_id, gate_, "entry", event_id="in-1", token=shown["lines"][1]["entry_token"])
    assert gate_pass(org, lot_id, gate_, "exit", event_id="out-1", ticket_id=entered["ticket_id"])["exit_granted"]
    system["stack"].advance_clock(62)   # past the sweep's grace and one of the stack's own sweeps
    sweep(system)
    [parking] = settlement_receipts(sandbox, payment_id)
    assert parking["settlements"][0]["amount"] == {"value": f"{parking_amount:.2f}", "currency": RUB}
    assert [(i["description"], i["payment_mode"]) for i in parking["items"]] == [("Venue parking", "full_payment")]
    # the event starts: the ticket's line is settled, for its own items
    past_the_start(system, starts)
    sweep(system)
    sweep(system)
    made = settlement_receipts(sandbox, payment_id)
    assert len(made) == 2
    [ticket] = [r for r in made if r["id"] != parking["id"]]
    assert ticket["settlements"][0]["amount"] == {"value": "2000.00", "currency": RUB}
    assert [i["description"] for i in ticket["items"]] == ["Evening concert, stalls, adult"]
    view = ok(org.request("GET", f"/orders/{order_id}", customer=who))
    assert sorted((r["line_id"], r["status"], r["receipt_id"]) for r in view["receipts"] if r["type"] == "settlement") \
        == sorted([("L1", "sent", ticket["id"]), ("L2", "sent", parking["id"])])
    # the operator's sales export: the sale with its receipts
    columns, sales = rows_of(org.request("GET", "/admin/exports/sales.csv", organizer=True,
                                         params={"offering": event_id}))
    assert columns[-1] == "receipts"
    [sale] = [row for row in sales if row["booking_id"] == order_id]
    assert sale["receipts"].split() == ["payment:issued", f"settlement:sent:L1:{ticket['id']}",
                                        f"settlement:sent:L2:{parking['id']}"]


def test_an_orders_parking_line_whose_car_never_comes_is_settled_once_at_its_no_show(api, sandbox, system):
    """The car never comes: at the line's no-show (its window's start plus the lot's grace) the
    line's prepayment, kept, is closed by one settlement receipt; later sweeps make no second one;
    the ticket's line still waits for its event."""
    org = fiscal_organizer(api)
    starts = (system_clock() + timedelta(hours=6)).replace(microsecond=0)
    event_id = org.create_event(name="Late concert", capacity=3, starts_at=starts.strftime("%Y-%m-%dT%H:%M:%SZ"))["event_id"]
    lot_id = lot(org)
    who = customer()
    placed = ok(org.request("POST", "/orders", customer=who, key=str(uuid.uuid4()), json={
        "lines": [{"event_id": event_id, "quantity": 1}, parking_now(lot_id, plate="B456CD77")],
        "contact_email": "absent@example.com"}), 201)
    order_id = placed["order_id"]
    paying = ok(org.request("POST", f"/orders/{order_id}/payment", customer=who, key=str(uuid.uuid4())), 201)
    sandbox.pay(paying["payment_id"])
    org.wait_status(order_id, who, "CONFIRMED")
    sweep(system)
    assert settlement_receipts(sandbox, paying["payment_id"]) == []     # the car may still come
    grace = ok(org.request("GET", f"/lots/{lot_id}"))["no_show_grace_seconds"]
    system["stack"].advance_clock(grace + 62)   # past the no-show and one of the stack's own sweeps
    sweep(system)
    # the line entered NO_SHOW (the sweeper's timer): its service counts as rendered from that write,
    # and the sweeper looks at what came due a grace minute ago, as for a single reservation
    assert ok(org.request("GET", f"/orders/{order_id}", customer=who))["lines"][1]["status"] == "NO_SHOW"
    system["stack"].advance_clock(62)
    sweep(system)
    sweep(system)
    [parking] = settlement_receipts(sandbox, paying["payment_id"])
    assert parking["settlements"][0]["amount"] == placed["lines"][1]["amount"]
    assert [i["description"] for i in parking["items"]] == ["Venue parking"]
    view = ok(org.request("GET", f"/orders/{order_id}", customer=who))
    assert sorted((r.get("line_id"), r["status"]) for r in view["receipts"] if r["type"] == "settlement") \
        == [("L1", "due"), ("L2", "sent")]


def test_an_orders_parking_line_on_a_lot_that_refunds_no_shows_gets_its_money_back_at_its_no_show(api, sandbox, system):
    """The lot gives a no-show's money back (its own policy, as for a single reservation): at the
    line's no-show the line's amount is refunded, once, its refund receipt listing the line's
    items; the order stays CONFIRMED for its ticket, the line REFUNDED, and no settlement receipt
    is made for it."""
    org = fiscal_organizer(api)
    starts = (system_clock() + timedelta(hours=6)).replace(microsecond=0)
    event_id = org.create_event(name="Night concert", capacity=3, starts_at=starts.strftime("%Y-%m-%dT%H:%M:%SZ"))["event_id"]
    made = org.request("POST", "/lots", organizer=True, json={
        "name": "Venue parking", "spaces": [{"space_id": "R0", "type": "REGULAR"}], "policy": {"refund_no_show": True},
        "tariff": {"hourly": {"value": "150.00", "currency": RUB}, "daily_cap": {"value": "900.00", "currency": RUB},
                   "grace_minutes": 10}})
    assert made.status_code == 201, made.text
    lot_id = made.json()["lot_id"]
    who = customer()
    placed = ok(org.request("POST", "/orders", customer=who, key=str(uuid.uuid4()), json={
        "lines": [{"event_id": event_id, "quantity": 1}, parking_now(lot_id, plate="C789EF77")],
        "contact_email": "refunded@example.com"}), 201)
    order_id = placed["order_id"]
    paying = ok(org.request("POST", f"/orders/{order_id}/payment", customer=who, key=str(uuid.uuid4())), 201)
    payment_id = paying["payment_id"]
    sandbox.pay(payment_id)
    org.wait_status(order_id, who, "CONFIRMED")
    sweep(system)
    assert sandbox.refunds(payment_id) == []                     # the car may still come
    grace = ok(org.request("GET", f"/lots/{lot_id}"))["no_show_grace_seconds"]
    system["stack"].advance_clock(grace + 62)   # past the no-show and one of the stack's own sweeps
    sweep(system)
    sweep(system)
    [refund] = sandbox.refunds(payment_id)
    assert refund["amount"] == placed["lines"][1]["amount"]
    [receipt] = [r for r in sandbox.receipts(payment_id) if r["type"] == "refund"]
    assert receipt["refund_id"] == refund["id"] and [i["description"] for i in receipt["items"]] == ["Venue parking"]
    assert items_total(receipt) == Decimal(refund["amount"]["value"])
    assert settlement_receipts(sandbox, payment_id) == []        # nothing rendered: its money went back
    view = ok(org.request("GET", f"/orders/{order_id}", customer=who))
    assert view["status"] == "CONFIRMED"
    assert [line.get("status") for line in view["lines"]] == [None, "REFUNDED"]   # the ticket moves with the order
    assert Decimal(view["amount"]["value"]) == Decimal(placed["amount"]["value"]) - Decimal(refund["amount"]["value"])
