"""Issue 45's transfer page in Chromium on the local stack: the mailed link opened in a browser
lands on transfer.html (the API's 303), which shows what is offered and changes nothing until the
signed-in reader presses Accept; then the booking is theirs. English and Russian, axe-clean."""
from __future__ import annotations

import re
import uuid

import pytest

from tests.browser.test_pages import serious_accessibility_problems
from tests.support.flows import customer

try:
    from playwright.sync_api import expect
except ImportError:   # test_pages.py says how to get a browser
    pytest.skip("Playwright for Python is not installed", allow_module_level=True)

pytestmark = pytest.mark.integration


def test_the_transfer_page_shows_the_offer_and_accepts_it_for_the_signed_in_reader(site, customer_page, shots):
    api, sandbox, giver = site["api"], site["control"], customer()
    event = api.create_event(capacity=5, name="Transfer night")
    booking = api.book(event["event_id"], giver, {"quantity": 1}).json()
    sandbox.pay(api.pay(booking["booking_id"], giver).json()["payment_id"])
    old = api.wait_for(booking["booking_id"], giver, lambda b: b.get("tickets"), what="tickets")["tickets"]
    offered = api.request("POST", f"/bookings/{booking['booking_id']}/transfer", customer=giver,
                          json={"to_email": f"friend-{uuid.uuid4().hex[:8]}@example.org"})
    assert offered.status_code == 202, offered.text

    taker = customer()
    page = customer_page(taker)
    page.goto(offered.json()["accept_url"])   # the API sends a browser on to transfer.html
    expect(page).to_have_url(re.compile(r"/transfer\.html\?booking="))
    expect(page.locator("#status")).to_have_attribute("data-state", "pending")
    expect(page.locator("#name")).to_have_text("Transfer night")
    assert serious_accessibility_problems(page) == []
    shots(page, "transfer-offer-en-desktop", full_page=True)
    # showing it changed nothing: the booking is still the giver's, with its tickets
    assert api.request("GET", f"/bookings/{booking['booking_id']}", customer=giver).json()["tickets"] == old

    page.get_by_label("Language").select_option("ru")
    expect(page.get_by_role("button", name="Принять бронь")).to_be_visible()
    page.set_viewport_size({"width": 390, "height": 844})
    assert serious_accessibility_problems(page) == []
    shots(page, "transfer-offer-ru-phone", full_page=True)

    page.get_by_role("button", name="Принять бронь").click()
    expect(page.locator("#status")).to_have_attribute("data-state", "accepted")
    expect(page.get_by_role("link", name="Открыть бронь")).to_be_visible()
    assert serious_accessibility_problems(page) == []
    mine = api.request("GET", f"/bookings/{booking['booking_id']}", customer=taker).json()
    assert mine["status"] == "CONFIRMED" and mine["tickets"][0]["ticket_id"] != old[0]["ticket_id"]
    assert api.request("GET", f"/bookings/{booking['booking_id']}", customer=giver).status_code == 403


def test_the_booking_page_offers_the_booking_to_an_address_and_takes_the_offer_back(site, customer_page, shots):
    """The holder's side: a confirmed booking's page sends the link to an address (the API's 202),
    shows until when it works, and takes it back (DELETE): the link then finds nothing."""
    api, sandbox, giver = site["api"], site["control"], customer()
    event = api.create_event(capacity=5, name="Giving night")
    booking = api.book(event["event_id"], giver, {"quantity": 1}).json()
    sandbox.pay(api.pay(booking["booking_id"], giver).json()["payment_id"])
    api.wait_for(booking["booking_id"], giver, lambda b: b.get("tickets"), what="tickets")
    page = customer_page(giver)
    page.goto(f"/booking.html?id={booking['booking_id']}")
    expect(page.locator("#status")).to_have_attribute("data-status", "CONFIRMED")
    page.get_by_role("button", name="Send the link").click()          # no address: asked for, nothing sent
    expect(page.get_by_label("Their e-mail")).to_have_attribute("aria-invalid", "true")
    assert "transfer" not in api.request("GET", f"/bookings/{booking['booking_id']}", customer=giver).json()
    page.get_by_label("Their e-mail").fill(f"friend-{uuid.uuid4().hex[:8]}@example.org")
    page.get_by_role("button", name="Send the link").click()
    expect(page.locator("#given-text")).to_contain_text("Offered")
    offer = api.request("GET", f"/bookings/{booking['booking_id']}", customer=giver).json()["transfer"]
    assert offer["transfer_id"] and offer["expires_at"]
    assert serious_accessibility_problems(page) == []
    shots(page, "booking-transfer-offered-en-desktop", full_page=True)

    page.set_viewport_size({"width": 390, "height": 844})
    page.get_by_label("Language").select_option("ru")
    expect(page.get_by_role("button", name="Отозвать предложение")).to_be_visible()
    assert serious_accessibility_problems(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shots(page, "booking-transfer-offered-ru-phone", full_page=True)
    page.get_by_role("button", name="Отозвать предложение").click()
    expect(page.get_by_label("Его почта")).to_be_visible()
    assert "transfer" not in api.request("GET", f"/bookings/{booking['booking_id']}", customer=giver).json()
    assert serious_accessibility_problems(page) == []


def test_the_transfer_page_says_why_a_taker_without_an_address_must_confirm_one_first(site, customer_page):
    """A booking whose organizer has receipts on is taken only by a customer with a confirmed
    address (its refunds' receipts go to it): the API's 400 ``contact_required`` is said on the page
    in the reader's language, and nothing changed."""
    from tests.integration.test_receipts import fiscal_organizer

    api, sandbox, giver = site["api"], site["control"], customer()
    org = fiscal_organizer(api)
    event = org.create_event(capacity=5, name="Receipts night")
    booking = org.book(event["event_id"], giver, {"quantity": 1, "contact_email": "giver@example.com"}).json()
    sandbox.pay(org.pay(booking["booking_id"], giver).json()["payment_id"])
    org.wait_for(booking["booking_id"], giver, lambda b: b["status"] == "CONFIRMED", what="confirmed")
    offered = api.request("POST", f"/bookings/{booking['booking_id']}/transfer", customer=giver,
                          json={"to_email": f"friend-{uuid.uuid4().hex[:8]}@example.org"})
    assert offered.status_code == 202, offered.text

    page = customer_page(customer())   # signed in by the header identity, with no address
    page.goto(offered.json()["accept_url"])
    expect(page.locator("#status")).to_have_attribute("data-state", "pending")
    page.get_by_role("button", name="Accept the booking").click()
    expect(page.locator("#action-error")).to_contain_text("no confirmed e-mail address")
    page.get_by_label("Language").select_option("ru")
    page.get_by_role("button", name="Принять бронь").click()
    expect(page.locator("#action-error")).to_contain_text("нет подтверждённой почты")
    assert serious_accessibility_problems(page) == []
    assert api.request("GET", f"/bookings/{booking['booking_id']}", customer=giver).json()["status"] == "CONFIRMED"
