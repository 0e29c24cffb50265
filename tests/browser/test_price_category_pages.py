"""Issue 43 in Chromium: the seat map shows each price category's colour and prices, and the
customer picks a ticket type per seat; the total the page shows is what the server charges."""
from __future__ import annotations

import re
import uuid

import pytest

from tests.browser.conftest import HOW_TO_GET_A_BROWSER
from tests.browser.test_pages import YEAR, operator_page, published, seat, serious_accessibility_problems
from tests.support.flows import customer

try:
    from playwright.sync_api import expect
except ImportError:
    pytest.fail(f"Playwright for Python is not installed. {HOW_TO_GET_A_BROWSER}", pytrace=False)

pytestmark = pytest.mark.integration

RUB = "RUB"


def test_the_seat_map_shows_price_categories_and_a_ticket_type_per_seat_in_both_languages(site, customer_page, shots):
    api = site["api"]
    event = published(api, name="Gala concert", capacity=None, price=None,
                      price_categories=[{"id": "stalls", "name": "Stalls", "color": "#c0392b"},
                                        {"id": "balcony", "name": "Balcony", "color": "#2e86c1"}],
                      prices=[{"price_category": "stalls", "ticket_type": "adult", "price": {"value": "3000.00", "currency": RUB}},
                              {"price_category": "stalls", "ticket_type": "child", "price": {"value": "1500.00", "currency": RUB}},
                              {"price_category": "balcony", "ticket_type": "adult", "price": {"value": "1000.00", "currency": RUB}}],
                      seat_map={"rows": [{"name": "A", "seats": 6, "price_category": "stalls"},
                                         {"name": "B", "seats": 6, "price_category": "balcony"}]})
    who = customer()
    page = customer_page(who, width=1280, height=900)
    page.goto(f"/event.html?id={event['event_id']}")
    legend = page.locator("#price-legend li")
    expect(legend).to_have_count(2)
    expect(legend.first).to_contain_text("Stalls: adult")
    expect(legend.first).to_contain_text("child")
    expect(page.locator("#meta")).to_contain_text("from RUB")
    expect(seat(page, "B-2")).to_have_attribute("data-category", "balcony")
    expect(seat(page, "A-1")).to_have_attribute("aria-label", "Seat A-1, Stalls, available")
    seat(page, "A-3").click()
    seat(page, "A-4").click()
    seat(page, "B-2").click()
    page.get_by_label("Ticket for seat A-4").select_option("child")
    # 3000 + 1500 + 1000
    expect(page.locator("#picked")).to_contain_text(re.compile(r"5[,\s  ]?500"))
    assert serious_accessibility_problems(page) == []
    shots(page, "event-price-categories-en-desktop", full_page=True)

    page.get_by_label("Language").select_option("ru")
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    expect(page.locator("#price-legend li").first).to_contain_text("взрослый")
    expect(seat(page, "A-1")).to_have_attribute("aria-label", "Место A-1, Stalls, свободно")
    seat(page, "A-3").click()
    page.get_by_label("Билет на место A-3").select_option("child")
    expect(page.locator("#picked")).to_contain_text(re.compile(r"1[,\s  ]?500"))
    page.set_viewport_size({"width": 390, "height": 844})
    assert serious_accessibility_problems(page) == []
    shots(page, "event-price-categories-ru-phone", full_page=True)

    page.get_by_role("button", name="Забронировать", exact=True).click()
    expect(page).to_have_url(re.compile(r"/booking\.html\?id="))
    booking_id = page.url.split("id=")[1]
    assert api.booking(booking_id, who)["amount"] == {"value": "1500.00", "currency": RUB}


def test_the_operator_sees_an_events_sales_per_price_category(site, customer_page, shots):
    """The operator page's sales table (GET /admin/sales) adds a line per price category under an
    event priced by category; a seat held in the stalls shows there and nowhere else."""
    api = site["api"]
    event = published(api, name=f"Recital {uuid.uuid4().hex[:6]}", capacity=None, price=None,
                      price_categories=[{"id": "stalls", "name": "Stalls", "color": "#c0392b"},
                                        {"id": "balcony", "name": "Balcony", "color": "#2e86c1"}],
                      prices=[{"price_category": "stalls", "ticket_type": "adult", "price": {"value": "3000.00", "currency": RUB}},
                              {"price_category": "balcony", "ticket_type": "adult", "price": {"value": "1000.00", "currency": RUB}}],
                      seat_map={"rows": [{"name": "A", "seats": 4, "price_category": "stalls"},
                                         {"name": "B", "seats": 3, "price_category": "balcony"}]})
    held = api.book(event["event_id"], customer(), {"seats": ["A-2"]})
    assert held.status_code == 201, held.text
    page = operator_page(customer_page)
    row = page.locator(f'#sales tr[data-event="{event['event_id']}"]')
    expect(row.locator('[data-part="stalls"]')).to_have_text("stalls: 0 sold, 1 held, 3 available", timeout=10_000)
    expect(row.locator('[data-part="balcony"]')).to_have_text("balcony: 0 sold, 0 held, 3 available")
    assert serious_accessibility_problems(page) == []


def test_a_ticket_with_parking_at_the_venue_is_one_order_held_and_paid_together(site, customer_page, shots):
    api = site["api"]
    event = published(api, name="Stadium night", capacity=None, starts_at=f"{YEAR}-04-01T17:00:00Z",
                      seat_map={"rows": [{"name": "A", "seats": 4}]})
    lot = api.request("POST", "/lots", organizer=True, json={
        "name": "Stadium parking", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "100.00", "currency": RUB}, "daily_cap": {"value": "900.00", "currency": RUB},
                   "grace_minutes": 10}}).json()
    linked = api.request("POST", f"/events/{event['event_id']}/parking", organizer=True,
                         json={"lot_id": lot["lot_id"], "before_minutes": 60, "after_minutes": 180})
    assert linked.status_code == 200, linked.text
    page = customer_page(customer(), width=1280, height=900)
    page.goto(f"/event.html?id={event['event_id']}")
    seat(page, "A-2").click()
    page.get_by_label("Park at the venue").check()
    page.get_by_label("Car number plate").fill("A123BC77")
    expect(page.locator("#park-window")).to_contain_text("paid with your tickets in one payment")
    assert serious_accessibility_problems(page) == []
    shots(page, "event-park-at-the-venue-en-desktop", full_page=True)
    page.get_by_role("button", name="Hold", exact=True).click()

    expect(page).to_have_url(re.compile(r"/booking\.html\?id="))
    expect(page.locator("#status")).to_have_attribute("data-status", "HELD")
    lines = page.locator("#places li")
    expect(lines).to_have_count(2)
    expect(lines.first).to_contain_text("Stadium night: Seats A-2")
    expect(lines.nth(1)).to_contain_text("Stadium parking")
    expect(page.locator("#amount")).to_contain_text("1,400")   # a seat at 1,000 and four hours at 100
    assert serious_accessibility_problems(page) == []
    shots(page, "order-held-en-desktop", full_page=True)
    booking_url = page.url

    page.get_by_role("button", name="Pay").click()
    expect(page).to_have_url(re.compile(r"/checkout/"))
    page.get_by_role("button", name="Pay").click()
    expect(page).to_have_url(booking_url)
    expect(page.locator("#status")).to_have_attribute("data-status", "CONFIRMED")
    page.get_by_label("Language").select_option("ru")
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    expect(page.locator("#places li")).to_have_count(2)
    assert serious_accessibility_problems(page) == []
    shots(page, "order-confirmed-ru-desktop", full_page=True)
