"""An export as a job from the console's Exports page (issue 46): "Whole file" asks for the job,
the page reads its status until it is ready and offers the presigned link, which downloads the
CSV with exactly the confirmed order; the page stays axe-clean with the link on it, in both languages."""
from __future__ import annotations

import csv
import io

import pytest
import requests

from tests.browser.test_pages import console_page, operator_page, serious_accessibility_problems
from tests.integration.test_doors_flow import tickets_of

try:
    from playwright.sync_api import expect
except ImportError:  # conftest fails the run with how to install it
    expect = None

pytestmark = pytest.mark.integration


def test_the_exports_page_prepares_a_whole_file_as_a_job_and_links_it(site, customer_page):
    api, sandbox = site["api"], site["control"]
    event = api.create_event(capacity=4)
    booking_id, _, _ = tickets_of(api, sandbox, event["event_id"], 2)
    page = operator_page(customer_page, section="exports")
    page.get_by_label("Offering id").fill(event["event_id"])
    page.get_by_role("button", name="Whole file (prepared on the server)").click()
    link = page.locator("#export-links a[data-export-job]")
    expect(link).to_contain_text("sales.csv: 1 rows, ready.")
    # the job is listed first among the files prepared lately (GET /organizers/me/exports), with its link
    listed = page.locator("#export-jobs li").first
    expect(listed).to_have_attribute("data-export-listed", link.get_attribute("data-export-job"))
    expect(listed).to_contain_text("sales.csv, asked ")
    expect(listed).to_contain_text(": ready")
    expect(listed.get_by_role("link", name="Download")).to_have_count(1)
    assert serious_accessibility_problems(page) == []
    answer = requests.get(link.get_attribute("href"), timeout=10)
    assert answer.status_code == 200 and answer.content.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(answer.content.decode("utf-8-sig"), newline="")))
    assert [(row["booking_id"], row["quantity"]) for row in rows] == [(booking_id, "2")]

    page.get_by_label("Language").select_option("ru")
    console_page(page, "exports")
    page.get_by_label("Id предложения").fill(event["event_id"])
    page.get_by_role("button", name="Весь файл (готовится на сервере)").click()
    expect(page.locator("#export-links a[data-export-job]")).to_contain_text("sales.csv: строк — 1, готово.")
    expect(page.locator("#export-jobs li").first).to_contain_text(": готов")
    assert serious_accessibility_problems(page) == []


def test_the_exports_page_reaches_every_older_file_page_by_page(site, customer_page):
    """Ten files a page, newest first; "Older files" appends the next page (by next_cursor) until
    the oldest is shown, then goes away: no job is out of reach (GET /organizers/me/exports)."""
    from tests.integration.test_organizers import new_organizer
    from tests.support.api import BookingApi
    from tests.support.flows import customer

    api = site["api"]
    mine = BookingApi(api.base, organizer_key=new_organizer(api, "Many exports")["api_key"])
    mine.create_event(capacity=2)
    made = []
    for _ in range(11):   # a second apart on the stack's clock: newest first is the reverse
        site["stack"].advance_clock(1)
        made.append(mine.request("POST", "/organizers/me/exports", organizer=True, key=customer(),
                                 json={"export": "attendees"}).json()["export_id"])
    site["stack"].wait_idle()
    page = customer_page("operator-many", width=1280, height=900)
    page.goto("/operator.html")
    page.get_by_label("Organizer key").fill(mine.organizer_key)
    page.get_by_label("Your name").fill("olga")
    page.get_by_role("button", name="Use").click()
    console_page(page, "exports")
    listed = page.locator("#export-jobs li[data-export-listed]")
    expect(listed).to_have_count(10)
    assert [item.get_attribute("data-export-listed") for item in listed.all()] == made[::-1][:10]
    older = page.get_by_role("button", name="Older files")
    older.click()
    expect(listed).to_have_count(11)
    expect(older).to_be_hidden()
    assert sorted(item.get_attribute("data-export-listed") for item in listed.all()) == sorted(made)
    assert listed.last.get_attribute("data-export-listed") == made[0]   # the oldest comes last
    assert serious_accessibility_problems(page) == []
