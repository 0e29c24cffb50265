"""The web pages load nothing from elsewhere: every script, stylesheet and link a page names is a
file of web/ (or another page, or the provider's page it is sent to at run time), and each page
carries the Content-Security-Policy that holds the browser to its own origin. The one exception is
the challenge widget of the pages that hold (issue 42, finding 13): its script and frame come from
the configured origin (CaptchaWidgetOrigin), which the edge's header alone adds."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

WEB = Path(__file__).resolve().parents[2] / "web"
PAGES = sorted(WEB.glob("*.html"))
CSP = "default-src 'self'; script-src 'self'"
#: The pages that hold and may have to load the challenge widget: their <meta> leaves scripts and
#: frames to the header, which allows 'self' and the widget's configured origin, nothing else.
HOLD_PAGES = {"event.html", "service.html", "lot.html"}
WIDGET_DIRECTIVES = {"default-src", "script-src", "frame-src", "child-src"}


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
    if page.name in HOLD_PAGES:
        named = {d.split()[0] for d in parsed.csp.split(";") if d.strip()}
        assert named and not named & WIDGET_DIRECTIVES, page.name
    else:
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


def _header_policy(origin: str | None = None) -> dict[str, str]:
    """The distribution's Content-Security-Policy, directive by directive, with the template's
    CaptchaWidgetOrigin (its default, or ``origin``)."""
    from tests.support.template import template

    parameters = template()["Parameters"]
    config = template()["Resources"]["WebResponseHeadersPolicy"]["Properties"]["ResponseHeadersPolicyConfig"]
    value = config["SecurityHeadersConfig"]["ContentSecurityPolicy"]["ContentSecurityPolicy"]
    text = value["Fn::Sub"] if isinstance(value, dict) else value
    text = text.replace("${CaptchaWidgetOrigin}", origin or parameters["CaptchaWidgetOrigin"]["Default"])
    assert "${" not in text, text
    return {d.split()[0]: d.strip() for d in text.split(";") if d.strip()}


def _meta_policy(page: Path) -> dict[str, str]:
    parsed = _Refs()
    parsed.feed(page.read_text(encoding="utf-8"))
    return {d.split()[0]: d.strip() for d in parsed.csp.split(";") if d.strip()}


def test_the_edge_adds_the_pages_own_policy_and_what_only_a_header_can_say():
    """CloudFront's Content-Security-Policy header (the template's response headers policy) holds
    every directive of the pages' <meta> policy, plus frame-ancestors, which a <meta> cannot set;
    the pages that do not hold narrow its scripts back to their own origin."""
    header = _header_policy()
    assert header["frame-ancestors"] == "frame-ancestors 'none'"
    for page in PAGES:
        meta = _meta_policy(page)
        for name, directive in meta.items():
            if page.name not in HOLD_PAGES and name == "script-src":
                assert directive == "script-src 'self'", page.name
                continue
            assert directive == header[name], (page.name, directive)


@pytest.mark.parametrize("origin", [None, "http://127.0.0.1:8090"], ids=["default", "local"])
def test_the_header_allows_the_configured_widget_origin_and_nothing_wider(origin):
    """Scripts and frames: the pages' own origin and the challenge widget's, exactly as configured
    (SmartCaptcha's by default, the sandbox's stand-in locally): no wildcard, no scheme, no
    'unsafe-*', and no other directive names the widget."""
    from tests.support.template import template

    widget = origin or template()["Parameters"]["CaptchaWidgetOrigin"]["Default"]
    assert widget == (origin or "https://smartcaptcha.yandexcloud.net")
    header = _header_policy(origin)
    assert header["script-src"] == f"script-src 'self' {widget}"
    assert header["frame-src"] == f"frame-src {widget}"
    assert header["default-src"] == "default-src 'self'"
    others = [d for name, d in header.items() if name not in ("script-src", "frame-src")]
    assert not any(widget in d for d in others), others
    assert not any("*" in d and "amazoncognito" not in d for d in header.values())


def test_the_widget_origin_is_one_origin():
    """The parameter takes an origin (scheme, host, port), never a list or a wildcard, so the
    policy cannot be widened through it."""
    import re

    from tests.support.template import template

    pattern = template()["Parameters"]["CaptchaWidgetOrigin"]["AllowedPattern"]
    for good in ("https://smartcaptcha.yandexcloud.net", "http://127.0.0.1:8090"):
        assert re.fullmatch(pattern, good)
    for bad in ("https://*.yandexcloud.net", "https:", "https://a.net https://b.net", "'unsafe-inline'",
                "https://a.net; script-src *", ""):
        assert not re.fullmatch(pattern, bad), bad
