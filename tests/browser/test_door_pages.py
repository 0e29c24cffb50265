"""Issue 32's pages in Chromium on the local stack: the booking page shows a paid event booking's
tickets as QR codes a door reads, and the operator page counts the check-ins per door live."""
from __future__ import annotations

import re

import pytest

from tests.browser.test_pages import console_page, decoded_qr, serious_accessibility_problems
from tests.support.flows import customer

try:
    from playwright.sync_api import expect
except ImportError:   # test_pages.py says how to get a browser
    pytest.skip("Playwright for Python is not installed", allow_module_level=True)

pytestmark = pytest.mark.integration


def test_tickets_are_shown_as_codes_a_door_admits_and_the_operator_sees_them(site, customer_page, shots):
    api, sandbox, who = site["api"], site["control"], customer()
    event = api.create_event(capacity=10)
    booking = api.book(event["event_id"], who, {"quantity": 2}).json()
    sandbox.pay(api.pay(booking["booking_id"], who).json()["payment_id"])
    tickets = api.wait_for(booking["booking_id"], who, lambda b: b.get("tickets"), what="tickets")["tickets"]

    page = customer_page(who)
    page.goto(f"/booking.html?id={booking['booking_id']}")
    expect(page.locator("#status")).to_have_attribute("data-status", "CONFIRMED")
    codes = page.locator("#tickets img")
    expect(codes).to_have_count(2)
    expect(codes.first).to_have_attribute("src", re.compile(r"^data:image/svg\+xml"))
    expect(page.locator("#tickets figcaption").first).to_have_text("Ticket 1")
    assert serious_accessibility_problems(page) == []
    assert decoded_qr(codes.first) == [tickets[0]["token"]]        # the code is the ticket's token
    shots(page, "booking-tickets-en-desktop", full_page=True)
    page.get_by_label("Language").select_option("ru")
    expect(page.locator("#tickets figcaption").first).to_have_text("Билет 1")
    page.set_viewport_size({"width": 390, "height": 844})
    assert serious_accessibility_problems(page) == []
    shots(page, "booking-tickets-ru-phone", full_page=True)

    door = api.request("POST", f"/events/{event['event_id']}/doors", organizer=True, json={"name": "Foyer"}).json()
    scanned = api.request("POST", f"/events/{event['event_id']}/doors/{door['door_id']}/scan",
                          headers={"X-Door-Key": door["door_key"]},
                          json={"event_id": "page-1", "token": decoded_qr(codes.first)[0]}).json()
    assert scanned["admitted"] is True

    operator = customer_page("operator-olga")
    operator.goto("/operator.html")
    operator.get_by_label("Organizer key").fill("local-organizer-key")
    operator.get_by_role("button", name="Use").click()
    console_page(operator, "doors")
    operator.locator("#checkins-event").fill(event["event_id"])   # the check-ins' (the blocks' form has one too)
    operator.get_by_role("button", name="Watch").click()
    expect(operator.locator("#checkins-total")).to_contain_text("1 checked in")
    expect(operator.locator("#checkins-doors tr").first).to_contain_text("Foyer")
    assert serious_accessibility_problems(operator) == []
    operator.locator("#section-checkins").scroll_into_view_if_needed()
    shots(operator, "operator-checkins-en-desktop")
    operator.get_by_label("Language").select_option("ru")
    expect(operator.locator("#checkins-total")).to_contain_text("1 человек прошёл")
    operator.set_viewport_size({"width": 390, "height": 844})
    assert serious_accessibility_problems(operator) == []
    operator.locator("#section-checkins").scroll_into_view_if_needed()
    shots(operator, "operator-checkins-ru-phone")
