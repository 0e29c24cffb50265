"""holdfast.entry.resolver: the API functions' router keeps the behaviour they had on Powertools' resolver."""
from __future__ import annotations

import json

import pytest

from holdfast.entry.resolver import Response, RestResolver


def event(method: str, path: str, **extra) -> dict:
    return {"httpMethod": method, "path": path, "headers": {}, "body": None, **extra}


def app_with_routes() -> RestResolver:
    app = RestResolver()

    @app.get("/events/<event_id>/seats")
    def seats(event_id: str):
        return Response(200, "application/json", json.dumps({"event": event_id}), headers={"ETag": '"x"'})

    @app.post("/events/<event_id>")
    def change(event_id: str):
        return {"changed": event_id}

    @app.get("/fail")
    def fail():
        raise KeyError("boom")

    return app


def test_a_rule_matches_with_its_parameters_and_a_trailing_slash():
    answer = app_with_routes().resolve(event("GET", "/events/e-1/seats/"), None)
    assert answer["statusCode"] == 200 and json.loads(answer["body"]) == {"event": "e-1"}
    assert answer["multiValueHeaders"] == {"ETag": ['"x"'], "Content-Type": ["application/json"]}
    assert answer["isBase64Encoded"] is False


def test_a_returned_dict_is_a_json_200():
    answer = app_with_routes().resolve(event("POST", "/events/e-2"), None)
    assert answer["statusCode"] == 200 and json.loads(answer["body"]) == {"changed": "e-2"}


@pytest.mark.parametrize(("method", "path"), [("GET", "/events/e-1"), ("DELETE", "/events/e-1/seats"),
                                              ("GET", "/events/a/b/seats"), ("GET", "/nowhere")])
def test_an_unknown_method_or_path_goes_to_the_not_found_handler(method, path):
    app = app_with_routes()
    app.not_found(lambda exc: Response(404, "application/json", json.dumps({"why": str(exc)})))
    answer = app.resolve(event(method, path), None)
    assert answer["statusCode"] == 404 and json.loads(answer["body"])["why"] == f"{method} {path}"


def test_exception_handlers_are_found_along_the_mro_and_an_unhandled_error_propagates():
    app = app_with_routes()
    with pytest.raises(KeyError):
        app.resolve(event("GET", "/fail"), None)
    app.exception_handler(Exception)(lambda exc: Response(500, "application/json", "{}"))
    app.exception_handler(LookupError)(lambda exc: Response(409, "application/json", json.dumps(type(exc).__name__)))
    assert app.resolve(event("GET", "/fail"), None)["statusCode"] == 409


def test_middlewares_run_in_order_around_the_route_and_may_answer_instead():
    app, seen = app_with_routes(), []

    def first(app, next_middleware):
        seen.append("first")
        return next_middleware(app)

    def gate(app, next_middleware):
        seen.append("gate")
        if app.current_event.path_parameters.get("event_id") == "stop":
            return Response(404, "application/json", "{}")
        return next_middleware(app)

    app.use(middlewares=[first, gate])
    assert app.resolve(event("POST", "/events/stop", pathParameters={"event_id": "stop"}), None)["statusCode"] == 404
    assert app.resolve(event("POST", "/events/go", pathParameters={"event_id": "go"}), None)["statusCode"] == 200
    assert seen == ["first", "gate", "first", "gate"]


def test_the_event_reads_as_the_routes_read_it():
    app = RestResolver()
    app.resolve(event("GET", "/", queryStringParameters={"date": "2026-12-01"}, isBase64Encoded=True,
                      requestContext={"identity": {"sourceIp": "185.71.76.1"}, "authorizer": {"principalId": "c-1"}}), None)
    current = app.current_event
    assert current.get_query_string_value("date") == "2026-12-01" and current.get_query_string_value("x", "d") == "d"
    assert current.is_base64_encoded and current.request_context.identity.source_ip == "185.71.76.1"
    assert current.request_context.authorizer == {"principalId": "c-1"}


def test_a_response_without_content_type_and_bytes_bodies():
    assert Response(304, None, "", headers={"ETag": '"e"'}).as_proxy_result()["multiValueHeaders"] == {"ETag": ['"e"']}
    answer = Response(200, "application/octet-stream", b"\x00\x01").as_proxy_result()
    assert answer["isBase64Encoded"] is True and answer["body"] == "AAE="


def test_the_literal_text_of_a_rule_is_literal():
    app = RestResolver()

    @app.get("/bookings/<booking_id>/pass.svg")
    def picture(booking_id: str):
        return Response(200, "image/svg+xml", "<svg/>")

    assert app.resolve(event("GET", "/bookings/b-1/pass.svg"), None)["statusCode"] == 200
    assert app.resolve(event("GET", "/bookings/b-1/passXsvg"), None)["statusCode"] == 404
