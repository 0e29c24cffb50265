"""Screenshots of every message's HTML as Chromium shows it: docs/screenshots/mail/<case>.<language>.png.

The messages are the golden cases of tests/unit/test_messages.py (the same samples the golden
files hold), so what the pictures show is what the goldens pin. Inline images (the parking
pass's QR code, ``cid:`` in the mail) are put in as data URLs, as a mail program would show them.
Debian's Chromium through Playwright, as the browser tests launch it (tests/browser/conftest.py).

    .venv/bin/python -m devstack.mail_screenshots [output directory]    (make mail-screenshots)
"""
from __future__ import annotations

import base64
import sys
from pathlib import Path

from tests.browser.conftest import chromium_path
from tests.unit.test_messages import CASES, LANGUAGES, rendered

OUT = Path(__file__).resolve().parents[1] / "docs" / "screenshots" / "mail"


def page_html(message) -> str:  # noqa: ANN001 - a holdfast.ports.Message
    html = message.html
    for image in message.inline:
        data = base64.b64encode(image.data).decode()
        html = html.replace(f"cid:{image.name}", f"data:{image.content_type};base64,{data}")
    return html


def main(out: Path = OUT) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 680, "height": 400})
        for case in sorted(CASES):
            for language in LANGUAGES:
                page.set_content(page_html(rendered(case, language)), wait_until="load")
                path = out / f"{case}.{language}.png"
                page.screenshot(path=str(path), full_page=True)
                written.append(path)
        browser.close()
    return written


if __name__ == "__main__":
    paths = main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
    print(f"{len(paths)} screenshots in {paths[0].parent}")
