"""The web pages load nothing from elsewhere: every script, stylesheet and link a page names is a
file of web/ (or another page, or the provider's page it is sent to at run time), and each page
carries the Content-Security-Policy that holds the browser to its own origin."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

WEB = Path(__file__).resolve().parents[2] / "web"
PAGES = sorted(WEB.glob("*.html"))
CSP = "default-src 'self'; script-src 'self'"


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.csp = ""

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        for name in ("src", "href"):
            if values.get(name):
                self.refs.append(values[name])
        if (values.get("http-equiv") or "").lower() == "content-security-policy":
            self.csp = values.get("content") or ""


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_names_only_its_own_files(page):
    parsed = _Refs()
    parsed.feed(page.read_text(encoding="utf-8"))
    assert parsed.csp.startswith(CSP), page.name
    for ref in parsed.refs:
        if ref in ("#", "data:,"):
            continue
        assert not re.match(r"^([a-z]+:)?//", ref, re.I), (page.name, ref)
        assert (WEB / ref.split("?")[0]).is_file(), (page.name, ref)


def test_scripts_fetch_nothing_but_the_configured_api():
    for script in WEB.glob("*.js"):
        text = script.read_text(encoding="utf-8")
        assert not re.search(r"""["'`]https?://""", text), script.name
        assert "import(" not in text and "importScripts" not in text, script.name
    assert PAGES, "web/ has pages"


def test_the_edge_adds_the_pages_own_policy_and_what_only_a_header_can_say():
    """CloudFront's Content-Security-Policy header (the template's response headers policy) holds
    every directive of the pages' <meta> policy, plus frame-ancestors, which a <meta> cannot set."""
    from tests.support.template import template

    config = template()["Resources"]["WebResponseHeadersPolicy"]["Properties"]["ResponseHeadersPolicyConfig"]
    header = config["SecurityHeadersConfig"]["ContentSecurityPolicy"]["ContentSecurityPolicy"]
    directives = {d.strip() for d in header.split(";")}
    assert "frame-ancestors 'none'" in directives
    for page in PAGES:
        parsed = _Refs()
        parsed.feed(page.read_text(encoding="utf-8"))
        assert {d.strip() for d in parsed.csp.split(";")} <= directives, page.name
