"""The organizer routes through the admin handler: which key opens which route, and that a key
never reaches the logs (nor a journal: tests/integration/test_organizers.py)."""
from __future__ import annotations

import io

import pytest

from tests.handlers.conftest import ORGANIZER_KEY, OTHER_KEY
from tests.support.handlers import api_event, call

PLATFORM = {"X-Api-Key": "platform-test-key-0123"}


def route(sample: str, headers: dict[str, str], body=None, path_params=None):
    return call("admin_api", api_event(sample, headers=headers, body=body, path_params=path_params))


def test_the_platform_key_opens_only_the_platform_routes(handler_env):
    assert route("create_organizer.json", {"X-Api-Key": ORGANIZER_KEY}, {"name": "x"})[0] == 401
    assert route("list_organizers.json", {"X-Api-Key": "wrong-platform-key"})[0] == 401
    assert route("get_own_organizer.json", PLATFORM)[0] == 401
    status, listed = route("list_organizers.json", PLATFORM)
    assert status == 200 and {o["organizer_id"] for o in listed["organizers"]} == {"org-test", "org-other"}
    status, me = route("get_own_organizer.json", {"X-Api-Key": OTHER_KEY})
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
    status, made = route("create_organizer.json", PLATFORM, {"name": "Acme"})
    assert status == 201
    status, added = route("add_organizer_key.json", {"X-Api-Key": made["api_key"]})
    assert status == 201
    status, _ = route("delete_organizer_key.json", {"X-Api-Key": added["api_key"]},
                      path_params={"key_id": made["key_id"]})
    assert status == 204
    assert route("get_own_organizer.json", {"X-Api-Key": made["api_key"]})[0] == 401
    written = our_logs.getvalue()
    for key in (made["api_key"], added["api_key"], ORGANIZER_KEY, PLATFORM["X-Api-Key"]):
        assert key not in written
