"""Over HTTP on the local stack: fiscal receipts (54-FZ, issue 44). An organizer turns receipts on
with its fiscal settings; from then on each payment of its offerings carries a receipt whose items
sum to the amount, a booking without an address is refused its payment, and a refund carries the
refunded items. Each test makes its own organizer: the stack's organizers sell as they always did."""
from __future__ import annotations

from decimal import Decimal

import pytest

from devstack.organizers import PLATFORM_KEY
from tests.support.api import BookingApi
from tests.support.flows import customer

pytestmark = pytest.mark.integration

SETTINGS = {"tax_system_code": 2, "vat_code": 1}


def fiscal_organizer(api, settings=SETTINGS):
    made = api.request("POST", "/admin/organizers", headers={"X-Api-Key": PLATFORM_KEY}, json={"name": "Fiscal"})
    assert made.status_code == 201, made.text
    org = BookingApi(api.base, organizer_key=made.json()["api_key"])
    if settings is not None:
        answer = org.request("PUT", "/organizers/me/fiscal", organizer=True, json=settings)
        assert answer.status_code == 200, answer.text
    return org


def items_total(receipt) -> Decimal:
    return sum((Decimal(i["amount"]["value"]) * Decimal(i["quantity"]) for i in receipt["items"]), Decimal("0"))


def paid(org, sandbox, who, quantity=2, email="buyer@example.com", **event):
    created = org.create_event(capacity=5, **event)
    body = {"quantity": quantity} | ({"contact_email": email} if email else {})
    booking = org.book(created["event_id"], who, body)
    assert booking.status_code == 201, booking.text
    booking_id = booking.json()["booking_id"]
    payment = org.pay(booking_id, who)
    assert payment.status_code == 201, payment.text
    payment_id = payment.json()["payment_id"]
    sandbox.pay(payment_id)
    org.wait_status(booking_id, who, "CONFIRMED")
    return created, booking_id, payment_id


def asks_to_pay(org, body=None):
    """A new booking of one place on a new event of ``org``, and the answer to its payment request."""
    event = org.create_event(capacity=3)
    who = customer()
    booking = org.book(event["event_id"], who, body or {"quantity": 1}).json()
    return booking["booking_id"], who, org.pay(booking["booking_id"], who)


def test_fiscal_settings_are_put_read_checked_and_deleted(api):
    org = fiscal_organizer(api, settings=None)
    assert org.request("GET", "/organizers/me/fiscal", organizer=True).json()["error"]["code"] \
        == "fiscal_settings_not_found"
    for bad in ({"tax_system_code": 7, "vat_code": 1}, {"tax_system_code": 1, "vat_code": 13},
                {"tax_system_code": 1}, {"tax_system_code": 1, "vat_code": True},
                {"tax_system_code": 1, "vat_code": 1, "payment_subject": "gold"},
                {"tax_system_code": 1, "vat_code": 1, "extra": 1}):
        answer = org.request("PUT", "/organizers/me/fiscal", organizer=True, json=bad)
        assert answer.status_code == 400, (bad, answer.text)
    theirs = api.create_event()                       # the stack's demo organizer's offering
    answer = org.request("PUT", "/organizers/me/fiscal", organizer=True,
                         json=SETTINGS | {"vat_overrides": {theirs["event_id"]: 4}})
    assert (answer.status_code, answer.json()["error"]["code"]) == (404, "offering_not_found")
    mine = org.create_event()
    put = org.request("PUT", "/organizers/me/fiscal", organizer=True,
                      json=SETTINGS | {"vat_overrides": {mine["event_id"]: 4}})
    assert put.status_code == 200
    got = org.request("GET", "/organizers/me/fiscal", organizer=True).json()
    assert got == {"receipts": True, "tax_system_code": 2, "vat_code": 1, "payment_subject": "service",
                   "vat_overrides": {mine["event_id"]: 4}}
    assert org.request("DELETE", "/organizers/me/fiscal", organizer=True).status_code == 204
    assert org.request("DELETE", "/organizers/me/fiscal", organizer=True).status_code == 204
    assert org.request("GET", "/organizers/me/fiscal", organizer=True).status_code == 404
    assert api.request("GET", "/organizers/me/fiscal").status_code == 401


def test_each_payment_carries_a_receipt_summing_to_its_amount(api, sandbox, system):
    org = fiscal_organizer(api)
    event, booking_id, payment_id = paid(org, sandbox, customer(), quantity=3, name="Chamber concert")
    [receipt] = sandbox.receipts(payment_id)
    assert receipt["type"] == "payment"
    assert items_total(receipt) == Decimal("3000.00") == Decimal(sandbox.payment(payment_id)["amount"]["value"])
    [item] = receipt["items"]
    assert (item["description"], item["quantity"], item["vat_code"], item["payment_mode"], item["payment_subject"]) \
        == ("Chamber concert", "3.00", 1, "full_prepayment", "service")
    assert receipt["tax_system_code"] == 2


def test_an_offering_override_sets_its_vat_code(api, sandbox):
    org = fiscal_organizer(api)
    event = org.create_event(capacity=3)
    org.request("PUT", "/organizers/me/fiscal", organizer=True, json=SETTINGS | {"vat_overrides": {event["event_id"]: 11}})
    who = customer()
    booking = org.book(event["event_id"], who, {"quantity": 1, "contact_email": "a@example.com"}).json()
    payment_id = org.pay(booking["booking_id"], who).json()["payment_id"]
    sandbox.pay(payment_id)
    org.wait_status(booking["booking_id"], who, "CONFIRMED")
    assert [i["vat_code"] for i in sandbox.receipts(payment_id)[0]["items"]] == [11]


def test_a_booking_without_an_address_is_refused_its_payment(api, sandbox):
    org = fiscal_organizer(api)
    booking_id, who, answer = asks_to_pay(org)
    assert (answer.status_code, answer.json()["error"]["code"]) == (400, "contact_required")
    assert org.booking(booking_id, who)["status"] == "HELD"
    assert sandbox.find_payments(booking_id=booking_id) == []
    # the page asks for the address, and pays with it: stored with the attempt, on the receipt
    bad = org.request("POST", f"/bookings/{booking_id}/payment", customer=who, key="pay-2",
                      json={"contact_email": "not an address"})
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "validation_error")
    paying = org.request("POST", f"/bookings/{booking_id}/payment", customer=who, key="pay-2",
                         json={"contact_email": "late@example.com"})
    assert paying.status_code == 201, paying.text
    sandbox.pay(paying.json()["payment_id"])
    assert org.wait_status(booking_id, who, "CONFIRMED")["contact_email"] == "late@example.com"
    assert sandbox.receipts(paying.json()["payment_id"])[0]["type"] == "payment"


def test_receipts_off_sells_as_before(api, sandbox):
    org = fiscal_organizer(api)
    assert org.request("DELETE", "/organizers/me/fiscal", organizer=True).status_code == 204
    _, _, payment_id = paid(org, sandbox, customer(), email=None)   # no address needed either
    assert sandbox.receipts(payment_id) == []


def test_a_refund_carries_its_refund_receipt(api, sandbox):
    org = fiscal_organizer(api)
    who = customer()
    _, booking_id, payment_id = paid(org, sandbox, who, quantity=2)
    assert org.cancel(booking_id, who).status_code == 200
    org.wait_status(booking_id, who, "REFUNDED")
    receipts = sandbox.receipts(payment_id)
    assert sorted(r["type"] for r in receipts) == ["payment", "refund"]
    refund_receipt = next(r for r in receipts if r["type"] == "refund")
    assert refund_receipt["refund_id"] == sandbox.refunds(payment_id)[0]["id"]
    assert items_total(refund_receipt) == Decimal("2000.00")


def test_a_shop_that_requires_receipts_takes_the_organizers_with_receipts_on(api, sandbox):
    """The sandbox told to require receipts, as a Russian shop is: an organizer with receipts on
    sells; one without is refused by the provider (the engine releases the places)."""
    sandbox.set_receipts("required")
    try:
        with_receipts = fiscal_organizer(api)
        _, _, payment_id = paid(with_receipts, sandbox, customer())
        assert len(sandbox.receipts(payment_id)) == 1
        without = fiscal_organizer(api, settings=None)
        booking_id, who, answer = asks_to_pay(without)
        assert (answer.status_code, answer.json()["error"]["code"]) == (409, "payment_rejected")
        assert without.booking(booking_id, who)["status"] == "PAYMENT_FAILED"
    finally:
        sandbox.set_receipts("optional")


# -- settlement: when the service is rendered ------------------------------------------------------

import time  # noqa: E402 - the parking cases below sweep until the receipt is there
from datetime import timedelta  # noqa: E402

from holdfast import faults  # noqa: E402
from holdfast.clock import system_clock  # noqa: E402
from holdfast.services.settlements import RETRY_SECONDS  # noqa: E402


def sweep(system):
    return system["stack"].invoke("SweepDueFunction", {"detail-type": "Scheduled Event", "source": "aws.events"})


def paid_before_start(org, sandbox, system, seconds_ahead=600):
    """A paid booking of an event that starts ``seconds_ahead`` from now on the stack's clock (the
    one the engine reads: tests before this one may have moved it far from the machine's), with
    its payment receipt only. Returns the booking, its customer, its payment and the start."""
    starts = (system_clock() + timedelta(seconds=seconds_ahead)).replace(microsecond=0)
    who = customer()
    event, booking_id, payment_id = paid(org, sandbox, who, starts_at=starts.strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert [r["type"] for r in sandbox.receipts(payment_id)] == ["payment"]
    sweep(system)                                       # before the start: nothing is sent
    assert len(sandbox.receipts(payment_id)) == 1
    return booking_id, who, payment_id, starts


def past_the_start(system, starts):
    """Move the stack's clock past the start, the sweep's grace (SweepGraceSeconds, 1 s here) and
    one interval of the stack's scheduled sweeper (a minute): that sweeper has looked at the
    booking once it was due. The move returns once the stack is idle."""
    system["stack"].advance_clock((starts - system_clock()).total_seconds() + 62)


def settlement_receipts(sandbox, payment_id):
    return [r for r in sandbox.receipts(payment_id) if r.get("settlements")]


def test_a_settlement_receipt_appears_once_after_the_event_starts(api, sandbox, system):
    org = fiscal_organizer(api)
    booking_id, who, payment_id, starts = paid_before_start(org, sandbox, system)
    past_the_start(system, starts)
    sweep(system)
    [settlement] = settlement_receipts(sandbox, payment_id)
    assert settlement["settlements"] == [{"type": "prepayment", "amount": {"value": "2000.00", "currency": "RUB"}}]
    assert {i["payment_mode"] for i in settlement["items"]} == {"full_payment"}
    assert items_total(settlement) == Decimal("2000.00")
    sweep(system)
    sweep(system)
    system["stack"].advance_clock(RETRY_SECONDS[0] + 62)   # and the stack's own sweeps meanwhile
    assert len(settlement_receipts(sandbox, payment_id)) == 1


def test_a_crash_between_the_receipt_call_and_its_record_still_gives_one(api, sandbox, system, monkeypatch):
    """The sweep that first finds the receipt due is the stack's scheduled one, during the move past
    the start: it registers the receipt at the provider and dies before recording it. The next look
    (the first retry's wait later) sends it again under the stored key: the provider's same receipt."""
    org = fiscal_organizer(api)
    booking_id, who, payment_id, starts = paid_before_start(org, sandbox, system)
    point = "settlement.after_provider_call"
    faults.reset_crash_counts()
    monkeypatch.setenv("HOLDFAST_CRASH_POINTS", f"{point}:1")
    try:
        past_the_start(system, starts)
        assert faults.crash_count(point) == 1            # registered at the provider, then the crash
        [registered] = settlement_receipts(sandbox, payment_id)
        system["stack"].advance_clock(RETRY_SECONDS[0] + 62)   # the next look, under the same key
    finally:
        faults.reset_crash_counts()
    assert [r["id"] for r in settlement_receipts(sandbox, payment_id)] == [registered["id"]]
    view = org.booking(booking_id, who)
    assert [(r["status"], r.get("receipt_id")) for r in view["receipts"] if r["type"] == "settlement"] \
        == [("sent", registered["id"])]
    assert [e["action"] for e in view["journal"]].count("settlement_receipt_sent") == 1
    assert "settlement_sent" not in sweep(system)      # nothing is due any more


def test_the_booking_view_lists_its_receipts_and_the_journal_says_where_they_went(api, sandbox, system):
    org = fiscal_organizer(api)
    who = customer()
    created = org.create_event(capacity=3)
    booking_id = org.book(created["event_id"], who, {"quantity": 1, "contact_email": "view@example.com"}).json()["booking_id"]
    payment_id = org.pay(booking_id, who).json()["payment_id"]
    sandbox.pay(payment_id)
    view = org.wait_status(booking_id, who, "CONFIRMED")
    assert [(r["type"], r["status"], r["sent_to"]) for r in view["receipts"]] == [
        ("payment", "issued", "view@example.com"), ("settlement", "due", "view@example.com")]
    assert view["receipts"][0]["amount"] == {"value": "1000.00", "currency": "RUB"}
    assert org.cancel(booking_id, who).status_code == 200
    refunded = org.wait_status(booking_id, who, "REFUNDED")
    assert [r["type"] for r in refunded["receipts"]] == ["payment", "refund"]


# -- parking: rendered when the car leaves, or at a no-show whose money is kept ---------------------

from tests.integration.test_parking_flow import create_lot, gate, now_window, pass_  # noqa: E402
import uuid  # noqa: E402


def settled_by_sweeps(system, sandbox, payment_id, seconds=20):
    """Sweep until the payment's settlement receipt is there (the stack's own sweeper may send it
    first), or fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not settlement_receipts(sandbox, payment_id):
        assert time.monotonic() < deadline, sandbox.receipts(payment_id)
        sweep(system)
    return settlement_receipts(sandbox, payment_id)


def test_a_reservation_settles_once_when_the_car_leaves_the_lot(api, sandbox, system):
    org = fiscal_organizer(api)
    lot = create_lot(org, spaces=[{"space_id": "R1", "type": "REGULAR"}])
    gate_, who = gate(org, lot["lot_id"]), customer()
    body = {"vehicle_type": "REGULAR", "plate": "K777KK77", "contact_email": "driver@example.com",
            **dict(zip(("from", "to"), now_window()))}
    held = org.request("POST", f"/lots/{lot['lot_id']}/reservations", customer=who, key=str(uuid.uuid4()), json=body)
    assert held.status_code == 201, held.text
    booking_id = held.json()["booking_id"]
    payment = org.pay(booking_id, who)
    assert payment.status_code == 201, payment.text
    payment_id = payment.json()["payment_id"]
    sandbox.pay(payment_id)
    token = org.wait_status(booking_id, who, "CONFIRMED")["entry_token"]
    assert [r["type"] for r in sandbox.receipts(payment_id)] == ["payment"]
    entered = pass_(org, lot["lot_id"], gate_, "entry", event_id="in-1", token=token)
    sweep(system)                                        # parked: nothing is rendered yet
    assert settlement_receipts(sandbox, payment_id) == []
    assert pass_(org, lot["lot_id"], gate_, "exit", event_id="out-1", ticket_id=entered["ticket_id"])["exit_granted"]
    [settlement] = settled_by_sweeps(system, sandbox, payment_id)
    assert {i["payment_mode"] for i in settlement["items"]} == {"full_payment"}
    assert settlement["settlements"][0]["amount"] == sandbox.payment(payment_id)["amount"]
    sweep(system)
    assert len(settlement_receipts(sandbox, payment_id)) == 1
    view = org.booking(booking_id, who)
    assert view["status"] == "COMPLETED"
    assert [(r["type"], r["status"], r["sent_to"]) for r in view["receipts"]] \
        == [("payment", "issued", "driver@example.com"), ("settlement", "sent", "driver@example.com")]


def test_a_drive_ups_exit_payment_asks_the_address_then_carries_its_receipt(api, sandbox, system):
    from urllib.parse import parse_qs, urlsplit

    from tests.integration.test_parking_flow import documented

    org = fiscal_organizer(api)
    lot = create_lot(org, spaces=[{"space_id": "R1", "type": "REGULAR"}], name="Fiscal lot",
                     tariff={"hourly": {"value": "90.00", "currency": "RUB"}, "grace_minutes": 0})
    gate_ = gate(org, lot["lot_id"])
    entered = pass_(org, lot["lot_id"], gate_, "entry", event_id="f-in", plate="T 123 TT")
    owed = pass_(org, lot["lot_id"], gate_, "exit", event_id="f-out", plate="T123TT")
    assert owed["exit_granted"] is False and sandbox.payments(ticket_id=entered["ticket_id"]) == []
    query = {name: values[0] for name, values in parse_qs(urlsplit(owed["confirmation_url"]).query).items()}
    path = f"/lots/{lot['lot_id']}/tickets/{entered['ticket_id']}/exit-payment"
    page = api.request("GET", path, params={"key": query["key"]}).json()
    documented(page, "ExitPayment")
    assert (page["state"], page["contact_required"], page["confirmation_url"]) == ("pending", True, None)
    refused = api.request("POST", path, params={"key": query["key"]})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "contact_required"
    bad = api.request("POST", path, params={"key": query["key"]}, json={"contact_email": "not an address"})
    assert bad.status_code == 400
    assert sandbox.payments(ticket_id=entered["ticket_id"]) == []
    paying = api.request("POST", path, params={"key": query["key"]}, json={"contact_email": "driver@example.com"})
    assert paying.status_code == 200, paying.text
    documented(paying.json(), "ExitPayment")
    assert paying.json()["contact_required"] is False and paying.json()["confirmation_url"]
    again = api.request("POST", path, params={"key": query["key"]})   # a second tap: the same payment
    assert again.status_code == 200 and again.json()["confirmation_url"] == paying.json()["confirmation_url"]
    [payment] = sandbox.payments(ticket_id=entered["ticket_id"])
    sandbox.pay(payment["id"])                           # the payment's receipt is registered as it succeeds
    [receipt] = sandbox.receipts(payment["id"])
    assert receipt["type"] == "payment" and items_total(receipt) == Decimal(payment["amount"]["value"])
    assert [i["payment_mode"] for i in receipt["items"]] == ["full_payment"]
    assert pass_(org, lot["lot_id"], gate_, "exit", event_id="f-out-2", plate="T123TT")["exit_granted"] is True
