"""Each sale's fiscal receipts on the console's Sales page (issue 44): an organizer with receipts
on picks an offering and sees each confirmed order with its payment receipt issued and its
settlement receipt due, in words of its language, axe-clean in both; a key that may not read
sales never gets the section."""
from __future__ import annotations

import pytest

from tests.browser.test_pages import console_page, serious_accessibility_problems
from tests.integration.test_receipts import fiscal_organizer, paid

try:
    from playwright.sync_api import expect
except ImportError:  # conftest fails the run with how to install it
    expect = None

pytestmark = pytest.mark.integration


def signed_in(customer_page, organizer_key: str):
    page = customer_page("operator-rita", width=1280, height=900)
    page.goto("/operator.html")
    page.get_by_label("Organizer key").fill(organizer_key)
    page.get_by_label("Your name").fill("rita")
    page.get_by_role("button", name="Use").click()
    console_page(page, "sales")
    return page


def test_the_sales_page_lists_each_sales_receipts_in_both_languages(site, customer_page, shots):
    api, sandbox = site["api"], site["control"]
    org = fiscal_organizer(api)
    event, booking_id, _ = paid(org, sandbox, "receipts-buyer", quantity=2, email="buyer@example.com",
                                name="Receipt night")
    page = signed_in(customer_page, org.organizer_key)
    section = page.locator("#sale-receipts-form")
    expect(section.get_by_label("Offering")).to_contain_text("Receipt night")
    section.get_by_label("Offering").select_option(event["event_id"])
    section.get_by_role("button", name="Show sales").click()
    row = page.locator(f'#sale-receipts tr[data-sale="{booking_id}"]')
    expect(row.locator('li[data-receipt="payment:issued"]')).to_contain_text("payment receipt · issued · ")
    expect(row.locator('li[data-receipt="settlement:due"]')).to_contain_text("settlement receipt · due")
    expect(row).to_contain_text("2,000.00")
    # the local stand-in's sale metrics are the whole stack's, read by the demo organizer's key
    # alone: another organizer's key is told so, and shown no error
    expect(page.locator("#metrics-where")).to_have_text(
        "On the local stack these are the whole stack's figures, shown to the demo organizer's key only.")
    expect(page.locator("#metrics-error")).to_be_hidden()
    assert serious_accessibility_problems(page) == []
    shots(page, "console-sale-receipts-en-desktop")

    page.get_by_label("Language").select_option("ru")
    console_page(page, "sales")
    section = page.locator("#sale-receipts-form")
    section.get_by_label("Предложение").select_option(event["event_id"])
    section.get_by_role("button", name="Показать продажи").click()
    row = page.locator(f'#sale-receipts tr[data-sale="{booking_id}"]')
    expect(row.locator('li[data-receipt="payment:issued"]')).to_contain_text("чек прихода · выдан")
    expect(row.locator('li[data-receipt="settlement:due"]')).to_contain_text("чек полного расчёта · ожидается")
    assert serious_accessibility_problems(page) == []
    shots(page, "console-sale-receipts-ru-desktop")

    # a key that may not read sales: no such section, and the route says why
    doors = org.request("POST", "/organizers/me/keys", organizer=True, json={"name": "Door", "scopes": ["doors"]})
    assert doors.status_code == 201, doors.text
    refused = org.__class__(org.base, organizer_key=doors.json()["api_key"]).request(
        "GET", f"/admin/sales/{event['event_id']}", organizer=True)
    assert (refused.status_code, refused.json()["error"]["details"]) == (403, {"scope": "sales:read"})
