"""SnapStart's runtime hooks (issue 49; holdfast/wiring.py `_snapshot_hooks`): a function's start
registers them once; before the snapshot the main route's request model is built and every secret,
client and cached collaborator is dropped; after each restore the secrets are read anew, and a
missing or malformed one fails the restore as it fails a cold start. Run here the way Lambda runs
them: through the registries of `snapshot_restore_py`, the library the runtime ships."""
from __future__ import annotations

import json
import random
import uuid

import pytest
import snapshot_restore_py

from holdfast import wiring
from holdfast.adapters import aws
from holdfast.config import ConfigurationError
from tests.handlers.test_api_handlers import create_event
from tests.handlers.test_identity import cold_start
from tests.support.handlers import api_event, call


def run(registry):
    for func, args, kwargs in registry:
        func(*args, **kwargs)


def ours(registry):
    return [func for func, _, _ in registry if func.__module__ == "holdfast.wiring"]


@pytest.fixture
def started(handler_env):
    """bookings_api started afresh, as a published version's init is."""
    module = cold_start("bookings_api")
    yield module
    wiring.reset()


def test_a_start_registers_each_hook_once_however_many_functions_start(started):
    cold_start("waitlist_api")
    assert ours(snapshot_restore_py.get_before_snapshot()) == [wiring.before_snapshot]
    assert ours(snapshot_restore_py.get_after_restore()) == [wiring.after_restore]


def test_the_snapshot_holds_no_secret_and_no_client_but_the_built_request_model(started):
    from holdfast.schemas import BookingIn

    BookingIn.__pydantic_complete__ = False   # as after a fresh import (defer_build)
    assert aws._secrets, "the start read its secrets"
    wiring.store()
    run(snapshot_restore_py.get_before_snapshot())
    assert BookingIn.__pydantic_complete__
    assert not aws._secrets and not aws._secrets_client
    assert all(factory.cache_info().currsize == 0 for factory in wiring.CACHED)


def test_a_restore_reads_the_secrets_anew_and_serves_a_hold(started):
    import boto3

    run(snapshot_restore_py.get_before_snapshot())
    secrets = boto3.client("secretsmanager", region_name="eu-central-1")
    rotated = "k" * 24 + uuid.uuid4().hex
    secrets.put_secret_value(SecretId="handler/admission-token",
                             SecretString=json.dumps({"admission_token_key": rotated}))
    state = random.getstate()
    run(snapshot_restore_py.get_after_restore())
    assert random.getstate() != state
    assert any(value.get("admission_token_key") == rotated for _, value in aws._secrets.values())
    event = create_event(capacity=2)
    status, booking = call("bookings_api", api_event(
        "create_booking.json", path_params={"event_id": event["event_id"]}, body={"quantity": 1},
        headers={"X-Customer-Id": "restored", "Idempotency-Key": "restored-1"}))
    assert status == 201, booking


def test_a_malformed_secret_fails_the_restore_loudly(started, caplog):
    import boto3

    run(snapshot_restore_py.get_before_snapshot())
    boto3.client("secretsmanager", region_name="eu-central-1").put_secret_value(
        SecretId="handler/admission-token", SecretString='{"admission_token_key": "short"}')
    with pytest.raises(ConfigurationError, match="handler/admission-token lacks admission_token_key"):
        run(snapshot_restore_py.get_after_restore())
    assert any("refusing to start" in r.getMessage() for r in caplog.records)
