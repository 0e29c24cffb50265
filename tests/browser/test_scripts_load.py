"""Every page's scripts load and run without an uncaught error in Chromium: a script that does not
parse (as operator.js once did, which left the operator page with no sections) fails here by name,
before any flow test times out waiting for a form that was never drawn."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.conftest import HOW_TO_GET_A_BROWSER

try:
    from playwright.sync_api import expect
except ImportError:
    pytest.fail(f"Playwright for Python is not installed. {HOW_TO_GET_A_BROWSER}", pytrace=False)

pytestmark = pytest.mark.integration

PAGES = sorted(path.name for path in (Path(__file__).resolve().parents[2] / "web").glob("*.html"))


def test_the_pages_are_found():
    assert "operator.html" in PAGES and "index.html" in PAGES


@pytest.mark.parametrize("name", PAGES)
def test_a_pages_scripts_run_without_an_uncaught_error(site, customer_page, name):
    page = customer_page("reader")
    errors = []
    page.on("pageerror", lambda error: errors.append(f"{error.name}: {error.message}"))
    page.goto(f"/{name}")
    page.wait_for_load_state("load")
    # layout.js draws the header on every page once the deferred scripts have run
    expect(page.get_by_role("banner")).to_be_visible()
    assert errors == []
