"""Issue 45's exchange on the booking page, in Chromium on the local stack: a confirmed booking of
an event that allows exchanges offers the other dates of the same show; moving to a cheaper date
says how much of the difference goes back, and the booking (its date, its amount, its new tickets)
is the API's own. English and Russian, axe-clean, screenshots."""
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


def test_the_booking_page_moves_the_booking_to_a_cheaper_date_and_says_what_comes_back(site, customer_page, shots):
    api, sandbox, who = site["api"], site["control"], customer()
    name = f"Swap night {uuid.uuid4().hex[:6]}"
    first = api.create_event(capacity=5, name=name, exchange_until_hours=24)
    later = api.create_event(capacity=5, name=name, exchange_until_hours=24,
                             price={"value": "700.00", "currency": "RUB"},
                             starts_at=first["starts_at"].replace("T20", "T21"))
    for event in (first, later):
        assert api.request("POST", f"/events/{event['event_id']}/publish", organizer=True).status_code == 200
    booking = api.book(first["event_id"], who, {"quantity": 2}).json()
    sandbox.pay(api.pay(booking["booking_id"], who).json()["payment_id"])
    old = api.wait_for(booking["booking_id"], who, lambda b: b.get("tickets"), what="tickets")

    page = customer_page(who)
    page.goto(f"/booking.html?id={booking['booking_id']}")
    expect(page.locator("#status")).to_have_attribute("data-status", "CONFIRMED")
    expect(page.get_by_role("heading", name="Change the date or the places")).to_be_visible()
    expect(page.get_by_label("Date").locator("option")).to_have_count(2)
    page.get_by_label("Places").fill("")
    page.get_by_role("button", name="Change the booking").click()   # nothing asked: nothing sent
    expect(page.get_by_label("Places")).to_have_attribute("aria-invalid", "true")
    assert api.booking(booking["booking_id"], who)["journal"] == old["journal"]
    assert serious_accessibility_problems(page) == []

    page.get_by_label("Places").fill("2")
    page.get_by_label("Date").select_option(later["event_id"])
    page.get_by_role("button", name="Change the booking").click()
    expect(page.locator("#swap-done")).to_contain_text("goes back")
    expect(page.get_by_label("Date")).to_have_value(later["event_id"])   # the card stays, on the new date
    moved = api.booking(booking["booking_id"], who)
    assert moved["event_id"] == later["event_id"] and moved["amount"]["value"] == "1400.00"
    back = moved["payment"]["exchange_refunds"][0]["amount"]
    assert float(back["value"]) == float(old["amount"]["value"]) - 1400
    assert {t["ticket_id"] for t in moved["tickets"]}.isdisjoint({t["ticket_id"] for t in old["tickets"]})
    assert serious_accessibility_problems(page) == []
    shots(page, "booking-exchange-en-desktop", full_page=True)

    page.set_viewport_size({"width": 390, "height": 844})
    page.get_by_label("Language").select_option("ru")
    expect(page.get_by_role("button", name="Поменять бронирование")).to_be_visible()
    assert serious_accessibility_problems(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shots(page, "booking-exchange-ru-phone", full_page=True)
    # what cancelling gives back now is the part left, named once, never "in full"
    expect(page.locator("#cancel-terms")).to_contain_text(re.compile(r"1[\s\u00a0]?400"))
    expect(page.locator("#cancel-terms")).not_to_contain_text("{amount}")
    expect(page.locator("#cancel-terms")).not_to_contain_text("полностью")


def test_the_booking_page_says_the_difference_of_dearer_places_and_goes_to_its_payment(site, customer_page, shots):
    api, sandbox, who = site["api"], site["control"], customer()
    name = f"Dear night {uuid.uuid4().hex[:6]}"
    first = api.create_event(capacity=5, name=name, exchange_until_hours=24)
    dearer = api.create_event(capacity=5, name=name, exchange_until_hours=24,
                              price={"value": "1600.00", "currency": "RUB"},
                              starts_at=first["starts_at"].replace("T20", "T21"))
    for event in (first, dearer):
        assert api.request("POST", f"/events/{event['event_id']}/publish", organizer=True).status_code == 200
    booking = api.book(first["event_id"], who, {"quantity": 2}).json()
    sandbox.pay(api.pay(booking["booking_id"], who).json()["payment_id"])
    old = api.wait_for(booking["booking_id"], who, lambda b: b.get("tickets"), what="tickets")

    page = customer_page(who)
    page.goto(f"/booking.html?id={booking['booking_id']}")
    expect(page.locator("#status")).to_have_attribute("data-status", "CONFIRMED")
    expect(page.get_by_label("Date").locator("option")).to_have_count(2)
    page.get_by_label("Places").fill("2")
    page.get_by_label("Date").select_option(dearer["event_id"])
    page.get_by_role("button", name="Change the booking").click()
    # 3200.00 for the new places, 2000.00 paid: 1200.00 to pay; nothing moved yet
    expect(page.locator("#swap-pay-text")).to_contain_text(re.compile(r"1[\s\u00a0,]?200"))
    held = api.booking(booking["booking_id"], who)
    difference = held["exchange_difference"]
    assert difference["amount"] == {"value": "1200.00", "currency": "RUB"} and held["event_id"] == first["event_id"]
    link = page.get_by_role("link", name="Pay the difference")
    expect(link).to_be_focused()
    expect(link).to_have_attribute("href", difference["confirmation_url"])
    expect(page.get_by_role("button", name="Change the booking")).to_be_hidden()   # one change at a time
    assert serious_accessibility_problems(page) == []
    shots(page, "booking-exchange-dearer-en-desktop", full_page=True)

    page.set_viewport_size({"width": 390, "height": 844})
    page.get_by_label("Language").select_option("ru")
    expect(page.get_by_role("link", name="Оплатить разницу")).to_be_visible()
    expect(page.locator("#swap-pay-text")).to_contain_text("Оплатите разницу")
    assert serious_accessibility_problems(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shots(page, "booking-exchange-dearer-ru-phone", full_page=True)

    # paid at the provider: the booking moves, the page shows the new date and drops the payment card
    sandbox.pay(difference["payment_id"])
    moved = api.wait_for(booking["booking_id"], who, lambda b: b["event_id"] == dearer["event_id"],
                         what="the paid exchange")
    assert {t["ticket_id"] for t in moved["tickets"]}.isdisjoint({t["ticket_id"] for t in old["tickets"]})
    expect(page.locator("#swap-pay")).to_be_hidden()
    expect(page.get_by_label("Дата")).to_be_visible()
