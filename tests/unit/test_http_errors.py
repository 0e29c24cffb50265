"""holdfast.entry.http's error mapping tells pydantic's ValidationError (a ValueError) apart without
importing pydantic: a body that fails its model is a 400, any other ValueError stays a 500."""
from __future__ import annotations

import json

from holdfast.entry.http import make_resolver, parse_body
from holdfast.schemas import WaitlistIn


def _app():
    app = make_resolver()

    @app.post("/validated")
    def validated():
        return {"quantity": parse_body(app, WaitlistIn).quantity}

    @app.get("/broken")
    def broken():
        raise ValueError("a bug of ours, not the client's")

    return app


def _call(method: str, path: str, body: str | None = None) -> tuple[int, dict]:
    answer = _app().resolve({"httpMethod": method, "path": path, "headers": {}, "body": body,
                             "requestContext": {"requestId": "r-1"}}, None)
    return answer["statusCode"], json.loads(answer["body"])


def test_a_body_its_model_refuses_is_a_400_with_the_problems():
    status, body = _call("POST", "/validated", json.dumps({"quantity": "many"}))
    assert status == 400 and body["error"]["code"] == "validation_error"
    assert body["error"]["details"]["problems"][0]["field"] == "quantity"
    assert _call("POST", "/validated", json.dumps({"quantity": 2})) == (200, {"quantity": 2})


def test_any_other_value_error_is_ours_a_500():
    status, body = _call("GET", "/broken")
    assert status == 500 and body["error"]["code"] == "internal_error"
