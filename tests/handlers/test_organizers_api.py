"""The organizer routes through the admin handler: which key opens which route, and that a key
never reaches the logs (nor a journal: tests/integration/test_organizers.py)."""
from __future__ import annotations

import io

import pytest

from tests.handlers.conftest import ORGANIZER_KEY, OTHER_KEY
from tests.support.handlers import api_event, call

PLATFORM = {"X-Api-Key": "platform-test-key-0123"}


def route(method: str, path: str, headers: dict[str, str], body=None, path_params=None):
    event = api_event("list_reviews.json", headers=headers, body=body, path_params=path_params)
    event.update(httpMethod=method, resource=path, path=event["path"] if path_params else path)
    if path_params:
        event["path"] = path.format(**path_params)
    return call("admin_api", event)


def test_the_platform_key_opens_only_the_platform_routes(handler_env):
    assert route("POST", "/admin/organizers", {"X-Api-Key": ORGANIZER_KEY}, {"name": "x"})[0] == 401
    assert route("GET", "/admin/organizers", {"X-Api-Key": "wrong-platform-key"})[0] == 401
    assert route("GET", "/organizers/me", PLATFORM)[0] == 401
    status, listed = route("GET", "/admin/organizers", PLATFORM)
    assert status == 200 and {o["organizer_id"] for o in listed["organizers"]} == {"org-test", "org-other"}
    status, me = route("GET", "/organizers/me", {"X-Api-Key": OTHER_KEY})
    assert status == 200 and me["organizer_id"] == "org-other"


@pytest.fixture
def our_logs():
    """Everything the functions' own logger writes, at DEBUG, as it would reach CloudWatch."""
    from holdfast.observability import logger

    handler = logger.registered_handler
    before_level, before_stream = logger.log_level, handler.stream
    handler.setStream(io.StringIO())
    logger.setLevel("DEBUG")
    yield handler.stream
    logger.setLevel(before_level)
    handler.setStream(before_stream)


def test_a_new_key_appears_in_the_answer_only(handler_env, our_logs):
    status, made = route("POST", "/admin/organizers", PLATFORM, {"name": "Acme"})
    assert status == 201
    status, added = route("POST", "/organizers/me/keys", {"X-Api-Key": made["api_key"]})
    assert status == 201
    status, _ = route("DELETE", "/organizers/me/keys/{key_id}", {"X-Api-Key": added["api_key"]},
                      path_params={"key_id": made["key_id"]})
    assert status == 204
    assert route("GET", "/organizers/me", {"X-Api-Key": made["api_key"]})[0] == 401
    written = our_logs.getvalue()
    for key in (made["api_key"], added["api_key"], ORGANIZER_KEY, PLATFORM["X-Api-Key"]):
        assert key not in written
