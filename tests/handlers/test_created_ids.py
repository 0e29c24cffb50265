"""POST /events through the handler and the wiring: the id comes from the Idempotency-Key keyed with
the function's HOLDFAST_ID_SALT (the template sets the stack's id), so another deployment given the
same key creates another event, and a repeat in one deployment returns the first."""
import pytest

from holdfast import wiring
from holdfast.config import ConfigurationError
from tests.support.handlers import api_event, call

ORGANIZER = {"X-Api-Key": "organizer-test-key"}


def create(key):
    return call("events_api", api_event("create_event.json", headers={**ORGANIZER, "Idempotency-Key": key}))


def test_the_same_key_in_two_deployments_gives_two_events(handler_env, monkeypatch):
    status, first = create("event-2030-05-01")
    assert status == 201
    assert create("event-2030-05-01") == (201, first)
    monkeypatch.setenv("HOLDFAST_ID_SALT", "arn:aws:cloudformation:eu-central-1:1:stack/other/0f0f")
    wiring.reset()
    status, other = create("event-2030-05-01")
    assert status == 201 and other["event_id"] != first["event_id"]
    assert {k: v for k, v in other.items() if k != "event_id"} == {k: v for k, v in first.items() if k != "event_id"}


def test_a_function_without_the_salt_refuses_to_derive_ids(handler_env, monkeypatch):
    monkeypatch.delenv("HOLDFAST_ID_SALT")
    wiring.reset()
    with pytest.raises(ConfigurationError, match="HOLDFAST_ID_SALT"):
        wiring.catalog()
