"""Who is calling: the customer from the Cognito authorizer's `sub`, the header identity refused
at cold start outside a stack marked local, and the secret checked whole at cold start."""
from __future__ import annotations

import importlib.util
import sys
import uuid

import pytest
from holdfast.adapters.aws import clear_secret_cache

from holdfast import wiring
from holdfast.config import ConfigurationError, load_settings
from tests.handlers.test_api_handlers import create_event
from tests.support.handlers import REPO, api_event, call


def authorized(name, sub, **kwargs):
    event = api_event(name, **kwargs)
    event["requestContext"]["authorizer"] = {"claims": {"sub": sub, "email": "ann@example.com",
                                                        "token_use": "id"}}
    return event


@pytest.fixture
def authorizer_env(handler_env, monkeypatch):
    monkeypatch.setenv("CUSTOMER_IDENTITY_SOURCE", "authorizer")
    monkeypatch.setenv("HOLDFAST_DEPLOYMENT", "aws")
    wiring.reset()
    yield handler_env
    wiring.reset()


def test_the_customer_is_the_authorizers_sub_and_never_the_header(authorizer_env):
    event = create_event(capacity=3)
    sub = str(uuid.uuid4())
    status, booking = call("bookings_api", authorized(
        "create_booking.json", sub, path_params={"event_id": event["event_id"]}, body={"quantity": 1},
        headers={"Idempotency-Key": "auth-1", "X-Customer-Id": "someone-else"}))
    assert status == 201, booking
    path = {"booking_id": booking["booking_id"]}
    assert call("bookings_api", authorized("get_booking.json", sub, path_params=path))[0] == 200
    # the header names the customer nowhere: not another customer's booking, not without a token
    assert call("bookings_api", authorized("get_booking.json", "someone-else", path_params=path))[0] == 403
    status, answer = call("bookings_api", api_event("get_booking.json", path_params=path,
                                                    headers={"X-Customer-Id": sub}))
    assert status == 401 and answer["error"]["code"] == "unauthorized"


def test_header_identity_is_refused_unless_the_stack_is_marked_local():
    base = {"BOOKINGS_TABLE_NAME": "bookings", "CUSTOMER_IDENTITY_SOURCE": "header"}
    with pytest.raises(ConfigurationError, match="HOLDFAST_DEPLOYMENT=local"):
        load_settings(base)
    with pytest.raises(ConfigurationError, match="HOLDFAST_DEPLOYMENT=local"):
        load_settings({**base, "HOLDFAST_DEPLOYMENT": "aws"})
    assert load_settings({**base, "HOLDFAST_DEPLOYMENT": "local"}).customer_identity_source == "header"
    assert load_settings({"BOOKINGS_TABLE_NAME": "bookings"}).customer_identity_source == "authorizer"


def cold_start(folder):
    """Import a function's module afresh, as a new Lambda environment would."""
    name = f"cold_{folder}_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(name, REPO / "functions" / folder / "app.py")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def test_a_function_configured_for_header_identity_outside_local_does_not_start(handler_env, monkeypatch, caplog):
    monkeypatch.setenv("HOLDFAST_DEPLOYMENT", "aws")
    with pytest.raises(ConfigurationError, match="CUSTOMER_IDENTITY_SOURCE=header"):
        cold_start("waitlist_api")
    assert any("refusing to start" in r.getMessage() for r in caplog.records)
    monkeypatch.setenv("HOLDFAST_DEPLOYMENT", "local")
    assert callable(cold_start("waitlist_api").lambda_handler)


def test_a_secret_without_every_field_stops_the_cold_start_of_its_readers_only(handler_env, caplog):
    import boto3

    secrets = boto3.client("secretsmanager", region_name="eu-central-1")
    secrets.put_secret_value(SecretId="handler/admission-token", SecretString='{"admission_token_key": "short"}')
    clear_secret_cache()
    for reader in ("bookings_api", "waiting_room", "waitlist_api"):
        with pytest.raises(ConfigurationError, match="handler/admission-token lacks admission_token_key"):
            cold_start(reader)
    assert any("refusing to start" in r.getMessage() and "admission_token_key" in r.getMessage()
               for r in caplog.records)
    # one secret per purpose: the functions that never read this one start without it
    for other in ("events_api", "admin_api", "parking_api", "payment_webhook"):
        assert callable(cold_start(other).lambda_handler), other

    secrets.put_secret_value(SecretId="handler/platform-key", SecretString='{"api_key_hash_key": "a-misplaced-field"}')
    clear_secret_cache()
    with pytest.raises(ConfigurationError, match="handler/platform-key lacks platform_api_key"):
        cold_start("admin_api")
    assert callable(cold_start("events_api").lambda_handler)


def test_a_function_not_told_of_a_secret_it_reads_does_not_start(handler_env, monkeypatch):
    # the template names a secret only to the functions granted it: a reader left without it fails
    # its start naming the variable, never a request with AccessDenied
    monkeypatch.delenv("ORGANIZER_KEY_HASH_SECRET_NAME")
    wiring.reset()
    with pytest.raises(ConfigurationError, match="ORGANIZER_KEY_HASH_SECRET_NAME is not set"):
        cold_start("events_api")
    assert callable(cold_start("waiting_room").lambda_handler)
