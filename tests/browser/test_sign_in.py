"""Signing in on AWS (identity "authorizer"), in a real browser: the pages go to the user pool's
hosted UI with the authorization code flow and PKCE, and accept a return only with the `state`
this tab stored when it left. A token in a link (#id_token=) signs nobody in.

The pages are served by the local API stand-in with the headers CloudFront adds (so the real
Content-Security-Policy decides whether the code exchange may be fetched). The hosted UI is played
inside the browser (Playwright routes): nothing leaves the machine, and any request that is
neither the stand-in nor the hosted UI is aborted.
"""
from __future__ import annotations

import base64
import hashlib
import json
from urllib.parse import parse_qs, urlsplit

import pytest

from devstack.aws.apigw import ApiGatewayServer
from devstack.aws.edge import page_headers
from tests.support.handlers import REPO
from tests.support.template import template

SIGN_IN_DOMAIN = "https://holdfast-test.auth.eu-central-1.amazoncognito.com"
CLIENT_ID = "pages-client"
ID_TOKEN = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJjdXN0b21lci0xIn0.signature"


@pytest.fixture(scope="module")
def pages():
    policy = template()["Resources"]["WebResponseHeadersPolicy"]["Properties"]["ResponseHeadersPolicyConfig"]
    server = ApiGatewayServer([], port=0, static_dir=REPO / "web")
    server.page_headers = page_headers(policy)
    server.start()
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


class HostedUi:
    """The hosted UI and token endpoint, as the browser sees them; records what the page sent."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.authorize: dict[str, str] | None = None
        self.exchanges: list[dict[str, str]] = []
        self.api_headers: list[dict[str, str]] = []
        self.elsewhere: list[str] = []

    def handle(self, route) -> None:
        request = route.request
        url = urlsplit(request.url)
        if request.url.startswith(self.base):
            if url.path.startswith("/events"):
                self.api_headers.append(request.headers)
            if url.path == "/config.js":
                config = {"apiBase": "", "identity": "authorizer", "signInDomain": SIGN_IN_DOMAIN,
                          "clientId": CLIENT_ID, "metricsDashboardUrl": ""}
                route.fulfill(status=200, content_type="text/javascript",
                              body=f"window.HOLDFAST_CONFIG = {json.dumps(config)};")
                return
            route.continue_()
        elif request.url.startswith(SIGN_IN_DOMAIN + "/oauth2/authorize"):
            self.authorize = {k: v[0] for k, v in parse_qs(url.query).items()}
            back = f"{self.authorize['redirect_uri']}?code=the-code&state={self.authorize['state']}"
            route.fulfill(status=302, headers={"Location": back})
        elif request.url == SIGN_IN_DOMAIN + "/oauth2/token":
            form = {k: v[0] for k, v in parse_qs(request.post_data or "").items()}
            self.exchanges.append(form)
            route.fulfill(status=200, content_type="application/json",
                          headers={"Access-Control-Allow-Origin": self.base},
                          body=json.dumps({"id_token": ID_TOKEN, "token_type": "Bearer", "expires_in": 3600}))
        else:
            self.elsewhere.append(request.url)
            route.abort()


@pytest.fixture
def signing_in(browser, pages):
    contexts = []

    def open_page():
        hosted = HostedUi(pages)
        context = browser.new_context(base_url=pages)
        context.set_default_timeout(15_000)
        context.route("**/*", hosted.handle)
        contexts.append(context)
        return context.new_page(), hosted

    yield open_page
    for context in contexts:
        context.close()


def _challenge(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def _token(page) -> str | None:
    return page.evaluate("sessionStorage.getItem('holdfast.idToken')")


def test_sign_in_goes_through_the_hosted_ui_with_a_code_pkce_and_state(signing_in, pages):
    from playwright.sync_api import expect

    page, hosted = signing_in()
    page.goto("/event.html?id=some-event")
    page.click("#sign-in")
    page.wait_for_url("**/event.html?id=some-event")
    expect(page.locator("#who")).to_contain_text("Signed in")
    asked = hosted.authorize
    assert asked["response_type"] == "code" and asked["client_id"] == CLIENT_ID
    assert asked["redirect_uri"] == pages + "/" and asked["scope"] == "openid email"
    assert asked["code_challenge_method"] == "S256" and len(asked["state"]) >= 32
    [exchange] = hosted.exchanges
    assert exchange["grant_type"] == "authorization_code" and exchange["code"] == "the-code"
    assert exchange["redirect_uri"] == pages + "/"
    assert _challenge(exchange["code_verifier"]) == asked["code_challenge"]
    assert _token(page) == ID_TOKEN
    page.wait_for_load_state("networkidle")
    assert hosted.api_headers and hosted.api_headers[-1].get("authorization") == ID_TOKEN
    # the sign-in under way is used up: the same return a second time is refused
    page.goto(f"/?code=the-code&state={asked['state']}")
    expect(page.locator("#sign-in-error")).to_contain_text("refused")
    assert len(hosted.exchanges) == 1 and not hosted.elsewhere


def test_a_return_without_the_stored_state_is_refused(signing_in):
    from playwright.sync_api import expect

    page, hosted = signing_in()
    # a link someone else made: a code from their own sign-in, and a state this tab never stored
    page.goto("/?code=someone-elses-code&state=made-up")
    expect(page.locator("#sign-in-error")).to_contain_text("refused")
    expect(page.locator("#sign-in")).to_be_visible()
    assert hosted.exchanges == [] and _token(page) is None
    assert "code=" not in page.url

    # a sign-in of this tab, but the return carries another state
    page.evaluate("sessionStorage.setItem('holdfast.signIn', JSON.stringify({state: 'mine', verifier: 'v', back: '/'}))")
    page.goto("/?code=someone-elses-code&state=theirs")
    expect(page.locator("#sign-in-error")).to_contain_text("refused")
    assert hosted.exchanges == [] and _token(page) is None
    assert page.evaluate("sessionStorage.getItem('holdfast.signIn')") is None

    # the tab's own sign-in, given up at the hosted UI: said so, nothing exchanged
    page.evaluate("sessionStorage.setItem('holdfast.signIn', JSON.stringify({state: 'mine', verifier: 'v', back: '/'}))")
    page.goto("/?error=access_denied&state=mine")
    expect(page.locator("#sign-in-error")).to_contain_text("not completed")
    assert hosted.exchanges == [] and _token(page) is None


def test_an_id_token_in_a_link_signs_nobody_in(signing_in):
    from playwright.sync_api import expect

    page, hosted = signing_in()
    page.goto(f"/index.html#id_token={ID_TOKEN}")
    expect(page.locator("#sign-in")).to_be_visible()
    assert _token(page) is None
    page.wait_for_load_state("networkidle")
    assert all("authorization" not in headers for headers in hosted.api_headers)
