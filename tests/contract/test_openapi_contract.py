"""docs/openapi.yaml describes exactly the API the template deploys, and is a valid OpenAPI document."""
from __future__ import annotations

import copy
import functools
import re

import pytest
import yaml

from tests.support.handlers import REPO
from tests.support.template import template

OPENAPI_PATH = REPO / "docs" / "openapi.yaml"
#: Event routes outside /admin that need the organizer key (their handlers call require_organizer).
ORGANIZER_EVENT_ROUTES = {("post", "/events"), ("patch", "/events/{event_id}"), ("post", "/events/{event_id}/publish"),
                          ("post", "/events/{event_id}/parking"),
                          ("post", "/events/{event_id}/codes"), ("get", "/events/{event_id}/codes"),
                          ("delete", "/events/{event_id}/codes/{code}"),
                          ("post", "/events/{event_id}/blocks"), ("get", "/events/{event_id}/blocks"),
                          ("delete", "/events/{event_id}/blocks/{block_id}"),
                          ("post", "/services/{service_id}/codes"), ("get", "/services/{service_id}/codes"),
                          ("delete", "/services/{service_id}/codes/{code}"),
                          ("post", "/lots/{lot_id}/codes"), ("get", "/lots/{lot_id}/codes"),
                          ("delete", "/lots/{lot_id}/codes/{code}"),
                          ("post", "/resources"), ("get", "/resources"), ("get", "/resources/{resource_id}/day"), ("post", "/services"), ("post", "/services/{service_id}/publish"),
                          ("post", "/lots/{lot_id}/publish"),
                          ("post", "/events/{event_id}/cancel"), ("get", "/events/{event_id}/cancellation"),
                          ("post", "/lots"), ("post", "/lots/{lot_id}/gates"), ("get", "/lots/{lot_id}/gates"), ("post", "/lots/{lot_id}/subscriptions"),
                          ("post", "/lots/{lot_id}/gates/{gate_id}/key"), ("delete", "/lots/{lot_id}/gates/{gate_id}"),
                          ("post", "/events/{event_id}/doors"), ("delete", "/events/{event_id}/doors/{door_id}"),
                          ("get", "/events/{event_id}/checkins")}
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


@functools.cache
def _parsed() -> dict:
    return yaml.safe_load(OPENAPI_PATH.read_text())


def openapi() -> dict:
    """The document, parsed once per process (PyYAML's pure-Python parse of it is ~0.4 s, and the
    tests here asked for it twice per route); every caller gets its own copy to read or change."""
    return copy.deepcopy(_parsed())


def template_routes() -> set[tuple[str, str]]:
    routes = set()
    for resource in template()["Resources"].values():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        for event in ((resource.get("Properties") or {}).get("Events") or {}).values():
            if event.get("Type") == "Api":
                props = event["Properties"]
                routes.add((props["Method"].lower(), props["Path"]))
    return routes


def document_routes(document: dict) -> set[tuple[str, str]]:
    return {(method.lower(), path) for path, item in document["paths"].items()
            for method in item if method.lower() in HTTP_METHODS}


def test_the_template_declares_routes():
    assert len(template_routes()) >= 10


def test_every_template_route_is_documented():
    missing = template_routes() - document_routes(openapi())
    assert not missing, f"routes in template.yaml but not in docs/openapi.yaml: {sorted(missing)}"


def test_every_documented_operation_is_a_template_route():
    extra = document_routes(openapi()) - template_routes()
    assert not extra, f"operations in docs/openapi.yaml that template.yaml does not route: {sorted(extra)}"


def test_the_document_is_valid_openapi():
    from openapi_spec_validator import validate

    validate(openapi())


def test_schemathesis_loads_every_operation():
    import schemathesis

    schema = schemathesis.openapi.from_path(OPENAPI_PATH)
    loaded = {(result.ok().method.lower(), result.ok().path) for result in schema.get_all_operations()}
    assert loaded == template_routes()


@pytest.mark.parametrize("method,path", sorted(template_routes()))
def test_path_parameters_are_declared_and_required(method, path):
    operation = openapi()["paths"][path][method]
    document = openapi()
    declared = set()
    for parameter in operation.get("parameters", []):
        if "$ref" in parameter:
            parameter = document["components"]["parameters"][parameter["$ref"].rsplit("/", 1)[1]]
        if parameter["in"] == "path":
            assert parameter["required"] is True
            declared.add(parameter["name"])
    assert declared == set(re.findall(r"\{(\w+)\}", path))


def test_every_operation_documents_its_errors_with_the_envelope():
    document = openapi()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            errors = [status for status in operation["responses"] if status.startswith(("4", "5"))]
            assert errors, f"{method.upper()} {path} documents no error response"
            assert not any(status.startswith("5") and status != "503" for status in errors)
            successes = [status for status in operation["responses"] if status.startswith("2")]
            assert len(successes) == 1, f"{method.upper()} {path}"


def test_organizer_routes_require_the_api_key_and_customer_routes_the_customer():
    document = openapi()
    assert document["components"]["securitySchemes"]["organizerKey"] == {
        **document["components"]["securitySchemes"]["organizerKey"], "type": "apiKey", "in": "header", "name": "X-Api-Key"}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            refs = {p.get("$ref", "").rsplit("/", 1)[-1] for p in operation.get("parameters", [])}
            platform = path.startswith("/admin/organizers")
            organizer = not platform and (path.startswith(("/admin/", "/organizers/"))
                                          or (method, path) in ORGANIZER_EVENT_ROUTES)
            assert (operation.get("security") == [{"organizerKey": []}]) is organizer, f"{method} {path}"
            assert (operation.get("security") == [{"platformKey": []}]) is platform, f"{method} {path}"
            customer = path.startswith(("/bookings/", "/customers/", "/orders")) or path.endswith(("/bookings", "/queue", "/waitlist", "/reservations"))
            assert ("CustomerId" in refs) is customer, f"{method} {path}"


#: Properties that carry an amount, wherever they appear: each is {value, currency} (Money in
#: answers, PriceIn in requests), never a bare number or string.
AMOUNT_PROPERTIES = {"price", "amount", "amount_due", "hourly", "daily_cap", "unpaid", "charge", "refunded_amount"}
MONEY_SCHEMAS = {"#/components/schemas/Money", "#/components/schemas/PriceIn"}


def named_properties(node, where=""):
    """(where, name, schema) of every property declared anywhere in the document."""
    if isinstance(node, dict):
        for name, schema in (node.get("properties") or {}).items():
            yield f"{where}.{name}", name, schema
        for key, value in node.items():
            yield from named_properties(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from named_properties(value, f"{where}[{index}]")


def is_money(schema: dict) -> bool:
    if "$ref" in schema:
        return schema["$ref"] in MONEY_SCHEMAS
    members = [m for key in ("allOf", "oneOf", "anyOf") for m in schema.get(key, []) if m.get("type") != "null"]
    return bool(members) and all(is_money(member) for member in members)


def test_every_amount_in_the_document_is_value_and_currency():
    found = [(where, schema) for where, name, schema in named_properties(openapi()) if name in AMOUNT_PROPERTIES]
    assert {where.rsplit(".", 1)[1] for where, _ in found} >= {"price", "amount", "amount_due", "hourly", "daily_cap"}
    bare = [where for where, schema in found if not is_money(schema)]
    assert not bare, f"amounts that are not {{value, currency}}: {bare}"


def check_documented(body, pointer: str) -> None:
    """Check a body the code makes against the schema at ``pointer`` in docs/openapi.yaml (a JSON
    pointer such as ``/components/schemas/BookingFields``; OpenAPI 3.1 schemas are JSON Schema
    2020-12, their ``$ref``s resolved within the document)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    registry = Registry().with_resource("urn:openapi", Resource(contents=openapi(), specification=DRAFT202012))
    Draft202012Validator({"$ref": f"urn:openapi#{pointer}"}, registry=registry).validate(body)


#: where docs/openapi.yaml describes a booking's receipts and the operator's sales page
BOOKING_RECEIPT = "/components/schemas/BookingFields/properties/receipts/items"
SALES_PAGE = ("/paths/~1admin~1sales~1{offering_id}/get/responses/200/content/application~1json/schema")
