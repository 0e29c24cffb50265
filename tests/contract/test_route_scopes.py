"""Every organizer route needs exactly one scope, named in one table (kinds.products.route_scopes:
the core's routes in domain/scopes.py, each product's in its ``Product``):
the table covers exactly template.yaml's organizer routes, docs/api.md lists the same table route
by route, and each route's handler really refuses a key that lacks its scope, before it does
anything."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from holdfast import wiring
from holdfast.domain.scopes import ANY_KEY
from holdfast.kinds.products import every_scope, route_scopes
from tests.contract.test_openapi_contract import openapi
from tests.handlers.conftest import ORGANIZER_KEY, handler_env, organizer_caller  # noqa: F401 - a fixture
from tests.support.handlers import REPO, call
from tests.support.template import template

API_DOC = REPO / "docs" / "api.md"
ROUTE_SCOPES = route_scopes()
SCOPES = every_scope()
BEGIN, END = "<!-- route-scopes:begin -->", "<!-- route-scopes:end -->"


def template_routes() -> dict[tuple[str, str], str]:
    """(METHOD, path) -> the folder of the function that serves it."""
    routes = {}
    for resource in template()["Resources"].values():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = resource.get("Properties") or {}
        for event in (props.get("Events") or {}).values():
            if event.get("Type") == "Api":
                routes[(event["Properties"]["Method"].upper(), event["Properties"]["Path"])] = Path(props["CodeUri"]).name
    return routes


def organizer_routes() -> set[tuple[str, str]]:
    """The template's routes that openapi.yaml says take an organizer's key (its contract test
    holds the document to the template), and, so a route left out of the document cannot slip
    past, every route under /organizers/ and /admin/ but the platform's."""
    document = openapi()
    marked = {(method.upper(), path) for path, item in document["paths"].items() for method, operation in item.items()
              if operation.get("security") == [{"organizerKey": []}]}
    by_path = {(method, path) for method, path in template_routes()
               if path.startswith(("/organizers/", "/admin/")) and not path.startswith("/admin/organizers")}
    return (marked | by_path) & set(template_routes())


def documented_block() -> str:
    """The table docs/api.md must hold between its markers (printed when the test fails), sorted
    by path then method."""
    rows = ["| Method and path | Scope |", "|---|---|"]
    for (method, path), scope in sorted(ROUTE_SCOPES.items(), key=lambda row: (row[0][1], row[0][0])):
        rows.append(f"| `{method} {path}` | {'any key' if scope == ANY_KEY else f'`{scope}`'} |")
    return "\n".join(rows)


def test_every_organizer_route_of_the_template_has_exactly_one_scope():
    unscoped = organizer_routes() - set(ROUTE_SCOPES)
    assert not unscoped, f"organizer routes with no scope (domain/scopes.py, or the product's route_scopes): " \
                         f"{sorted(unscoped)}"
    stale = set(ROUTE_SCOPES) - organizer_routes()
    assert not stale, f"ROUTE_SCOPES names routes the template does not serve to organizers: {sorted(stale)}"
    assert all(scope in SCOPES for route, scope in ROUTE_SCOPES.items() if route != ("GET", "/organizers/me"))
    assert ROUTE_SCOPES[("GET", "/organizers/me")] == ANY_KEY


def test_the_api_doc_lists_the_table_route_by_route():
    text = API_DOC.read_text()
    assert BEGIN in text and END in text, f"docs/api.md needs the scope table between {BEGIN} and {END}"
    written = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert written == documented_block(), "docs/api.md's scope table differs from ROUTE_SCOPES; it should read:\n" \
                                          + documented_block()


def test_the_doc_names_every_scope():
    text = API_DOC.read_text()
    for scope in SCOPES:
        assert f"`{scope}`" in text


@pytest.fixture
def keys(handler_env):
    """One key per scope a route needs, holding every scope but that one."""
    service = wiring.organizers()
    owner = organizer_caller()
    made = {}
    for scope in sorted(set(ROUTE_SCOPES.values()) - {ANY_KEY}):
        made[scope] = service.add_key(owner, name=f"without {scope}",
                                      scopes=[other for other in SCOPES if other != scope])["api_key"]
    return made


def _event(method: str, path: str, key: str) -> dict:
    concrete = re.sub(r"\{(\w+)\}", "x", path)
    return {"resource": path, "path": concrete, "httpMethod": method, "body": "{}",
            "headers": {"X-Api-Key": key}, "multiValueHeaders": {"X-Api-Key": [key]},
            "pathParameters": dict.fromkeys(re.findall(r"\{(\w+)\}", path), "x") or None,
            "queryStringParameters": None, "requestContext": {"requestId": "r", "identity": {"sourceIp": "192.0.2.1"}}}


def test_each_route_refuses_a_key_without_its_scope(keys):
    folders = template_routes()
    checked = 0
    for (method, path), scope in ROUTE_SCOPES.items():
        if scope == ANY_KEY:
            continue
        status, body = call(folders[(method, path)], _event(method, path, keys[scope]))
        assert (status, body["error"]["code"], body["error"]["details"]) == (403, "scope_required", {"scope": scope}), \
            (method, path)
        checked += 1
    assert checked == len(ROUTE_SCOPES) - 1


def test_a_key_holding_the_scope_gets_past_it(handler_env):
    """The same synthetic requests with a key holding every scope are not refused for a scope (the
    route then answers 404 for the id ``x``, or 400 for the empty body)."""
    folders = template_routes()
    for (method, path) in ROUTE_SCOPES:
        status, body = call(folders[(method, path)], _event(method, path, ORGANIZER_KEY))
        assert status != 403, (method, path, body)
