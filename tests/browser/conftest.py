"""The web pages (web/) in a real browser: Playwright for Python driving Debian's Chromium against
one local stack for the whole package, which the API stand-in serves same-origin at `/`.

Never a browser download: Playwright is pointed at the system's Chromium (`/usr/bin/chromium`,
or HOLDFAST_CHROMIUM). `make test` installs Debian's `chromium` package when it is missing.

Only one EmbeddedStack may live in a process: the package's stack ends with its last test, before
the process goes on to another folder's (tests/conftest.py keeps the package's files together).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support.handlers import REPO
from tests.support.system import local_system

HOW_TO_GET_A_BROWSER = (
    "The browser tests need Chromium and Playwright for Python. `make test` installs both (Playwright "
    "from pyproject.toml; Chromium with `apt-get install -y chromium` on Debian/Ubuntu). Elsewhere, "
    "install Chromium or Chrome with your package manager and set HOLDFAST_CHROMIUM=/path/to/it. "
    "Never run `playwright install`: the suite uses the system's browser."
)
#: Where the tests leave screenshots: docs/screenshots with `make screenshots`. Without it (make test)
#: no picture is taken: nothing reads them, and a full-page PNG of each page at each size was a
#: share of Chromium's time in the package (docs/testing.md, issue 47's sixth pass).
SCREENSHOTS_ENV = "HOLDFAST_SCREENSHOTS"


def chromium_path() -> str:
    found = (os.environ.get("HOLDFAST_CHROMIUM") or shutil.which("chromium")
             or shutil.which("chromium-browser"))
    if not found or not Path(found).exists():
        pytest.fail(f"no Chromium found. {HOW_TO_GET_A_BROWSER}", pytrace=False)
    return found


# Package scope: the browser files share one stack and one Chromium (tests/conftest.py runs the
# package as one unit in one process), as tests/integration shares its stack; each test makes its
# own events and customers, so none depends on what another left.
@pytest.fixture(scope="package")
def site():
    with local_system(
        SweepGraceSeconds="1",
        HoldReminderSeconds="0",
        WaitlistOfferSeconds="30",
        ReconcileScheduleSeconds="1,1,2",
        ReconcileLimitSeconds="15",
        ProviderTimeoutSeconds="3",
    ) as running:
        yield running


@pytest.fixture(scope="package")
def browser():
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        pytest.fail(f"Playwright for Python is not installed. {HOW_TO_GET_A_BROWSER}", pytrace=False)
    executable = chromium_path()
    # Assertions wait as long as actions do: on a loaded 2-core machine a function's first cold start
    # in the stack can take longer than expect's 5 s default before the page has anything to show.
    expect.set_options(timeout=15_000)
    with sync_playwright() as playwright:
        # --no-sandbox: Chromium refuses its sandbox when run as root (as in CI here)
        launched = playwright.chromium.launch(executable_path=executable, headless=True,
                                              args=["--no-sandbox", "--disable-gpu"])
        yield launched
        launched.close()


@pytest.fixture
def customer_page(browser, site):
    """open(name, viewport=...) -> a page in a fresh browser context whose customer name is set."""
    contexts = []

    def open_page(name: str, width: int = 1000, height: int = 720):
        context = browser.new_context(base_url=site["stack"].api_url,
                                      viewport={"width": width, "height": height})
        context.set_default_timeout(15_000)
        context.add_init_script(f"localStorage.setItem('holdfast.customer', {name!r});")
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture(scope="session")
def shots():
    target = os.environ.get(SCREENSHOTS_ENV)
    if not target:
        return lambda page, name, full_page=False: None
    folder = Path(target)
    if not folder.is_absolute():
        folder = REPO / folder
    folder.mkdir(parents=True, exist_ok=True)

    def shoot(page, name: str, full_page: bool = False) -> Path:
        path = folder / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path

    return shoot
