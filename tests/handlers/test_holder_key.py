"""The stored key of a hold's network address is an HMAC under a secret of its own (issue 42,
finding 11/13 follow-up): the id salt is the stack's id, whose random part shows in the public
sign-in domain, so a key made with it could be undone by trying every IPv4 address. The secret is
read on the first hold of an offering with a cap on live holds per address, never before."""
from __future__ import annotations

import json

import boto3

from holdfast import wiring
from holdfast.domain.holder_address import holder_key
from tests.support.handlers import api_event, call, load_event

from .conftest import REGION, SECRETS

ORGANIZER = {"X-Api-Key": "organizer-test-key"}
ADDRESS = "203.0.113.7"


def _event(**fields):
    body = {**json.loads(load_event("create_event.json")["body"]), **fields}
    status, event = call("events_api", api_event("create_event.json", headers=ORGANIZER, body=body))
    assert status == 201, event
    return event["event_id"]


def _hold(event_id, customer, key="k-1"):
    return call("bookings_api", api_event("create_booking.json", path_params={"event_id": event_id},
                                          body={"quantity": 1}, source_ip=ADDRESS,
                                          headers={"Idempotency-Key": key, "X-Customer-Id": customer}))


def _counters():
    table = boto3.client("dynamodb", region_name=REGION)
    items = table.scan(TableName="handler-bookings")["Items"]
    return {item["pk"]["S"].removeprefix("HOLDS#ADDR#") for item in items if item["pk"]["S"].startswith("HOLDS#ADDR#")}


def test_a_capped_hold_counts_under_the_holder_key_secret_not_the_public_id_salt(handler_env, monkeypatch):
    event_id = _event(max_holds_per_address=1)
    status, booking = _hold(event_id, "net-1")
    assert status == 201, booking
    secret = SECRETS["handler/holder-key"]["holder_key"]
    assert _counters() == {holder_key(secret, ADDRESS)}
    assert holder_key("handler-tests-deployment", ADDRESS) not in _counters()   # HOLDFAST_ID_SALT's
    # another stack id changes ids, not the address's key: the cap still binds across it
    monkeypatch.setenv("HOLDFAST_ID_SALT", "arn:aws:cloudformation:eu-central-1:1:stack/other/0f0f")
    wiring.reset()
    status, refused = _hold(event_id, "net-2")
    assert status == 429 and refused["error"]["code"] == "too_many_holds", refused


def test_a_hold_of_an_uncapped_offering_never_reads_the_holder_key(handler_env, monkeypatch):
    monkeypatch.setenv("HOLDER_KEY_SECRET_NAME", "handler/no-such-secret")
    wiring.reset()
    status, booking = _hold(_event(), "net-3")
    assert status == 201 and "counted_address" not in booking, booking
    assert _counters() == set()
