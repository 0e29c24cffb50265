"""Inputs that answered 500 (finding 6 of issue 11), at the handler level: every body route and
the webhook with deeply nested JSON, an oversized seat id, listing filters that Unicode
normalisation blows past DynamoDB's key size, and a cursor outside its query's range. Each must
be a 400 with a machine-readable code.

moto does not enforce DynamoDB's key limits on reads, so here the checks pin the code the API
promises; tests/correctness/test_key_limits.py shows the same requests against DynamoDB Local,
where the old code raised ValidationException (a 500)."""
import base64
import json

import pytest

from devstack.sample_events import moved
from tests.support.handlers import api_event, call

from .test_catalog_api import create_event, listing, patch, publish

ORGANIZER = {"X-Api-Key": "organizer-test-key"}
CUSTOMER = {"X-Customer-Id": "customer-42", "Idempotency-Key": "deep-1"}
EXPANDS = "\ufdfa"   # NFKC turns this one character into 18 (33 bytes of UTF-8)


def nested(depth, leaf="[]"):
    return "[" * depth + leaf + "]" * depth


def object_nested(depth):
    return '{"quantity": ' + nested(depth) + "}"


def body_routes(event_id, booking_id="0b6a6d7e-2f0f-4d7e-8a8e-6f1e0b9c4a21"):
    patch_event = api_event("publish_event.json", path_params={"event_id": event_id}, headers=ORGANIZER)
    patch_event["resource"] = patch_event["requestContext"]["resourcePath"] = "/events/{event_id}"
    patch_event["path"], patch_event["httpMethod"] = f"/events/{event_id}", "PATCH"
    patch_event["requestContext"]["httpMethod"] = "PATCH"
    return [
        ("events_api", api_event("create_event.json", headers=ORGANIZER)),
        ("events_api", patch_event),
        ("bookings_api", api_event("create_booking.json", path_params={"event_id": event_id}, headers=CUSTOMER)),
        ("waitlist_api", api_event("join_waitlist.json", path_params={"event_id": event_id}, headers=CUSTOMER)),
        ("admin_api", api_event("resolve_review.json", path_params={"booking_id": booking_id}, headers=ORGANIZER)),
    ]


@pytest.mark.parametrize("shape", ["array", "object"])
@pytest.mark.parametrize("depth", [40, 32_000])
def test_deeply_nested_bodies_are_400_on_every_body_route(handler_env, shape, depth):
    event_id = create_event()["event_id"]
    body = nested(depth) if shape == "array" else object_nested(depth)
    for folder, event in body_routes(event_id):
        event["body"] = body
        status, answer = call(folder, event)
        assert (folder, status, answer["error"]["code"]) == (folder, 400, "body_too_deep"), answer


@pytest.mark.parametrize("depth", [40, 32_000])
def test_deeply_nested_notification_is_400(handler_env, depth):
    event = api_event("payment_notification.json", raw_body='{"type": "notification", "object": ' + nested(depth) + "}",
                      source_ip="127.0.0.1")
    status, answer = call("payment_webhook", event)
    assert status == 400 and answer["error"]["code"] == "malformed_notification"


def test_an_oversized_seat_id_is_400(handler_env):
    event_id = create_event(capacity=None, seat_map={"rows": [{"name": "A", "seats": 3}]})["event_id"]
    for seat in ("A" * 1100, "A-1" + "0" * 2000):
        status, answer = call("bookings_api", api_event(
            "create_booking.json", path_params={"event_id": event_id}, body={"seats": ["A-1", seat]},
            headers=CUSTOMER | {"Idempotency-Key": f"long-{len(seat)}"}))
        assert status == 400 and answer["error"]["code"] == "validation_error", answer


@pytest.mark.parametrize("query", [
    {"city": EXPANDS * 100}, {"category": EXPANDS * 50}, {"city": EXPANDS * 60, "category": EXPANDS * 40},
    {"q": "\u3300" * 200},   # one katakana word of 2,400 bytes (U+FDFA expands to short words: a search)
])
def test_filters_that_normalise_past_the_key_limit_are_400(handler_env, query):
    response = listing(query)
    answer = json.loads(response["body"])
    assert response["statusCode"] == 400 and answer["error"]["code"] == "query_too_long", answer


def test_events_whose_names_normalise_past_the_key_limit_still_publish(handler_env):
    created = create_event(name="\u3300" * 200, venue="Hall")
    status, answer = publish(created["event_id"])
    assert status == 200, answer
    status, answer = patch(created["event_id"], {"city": EXPANDS * 100})
    assert status == 400 and answer["error"]["code"] == "validation_error"
    status, answer = call("events_api", api_event("create_event.json", headers=ORGANIZER | {"Idempotency-Key": "c"},
                                                  body=json.loads(api_event("create_event.json")["body"])
                                                  | {"category": EXPANDS * 50}))
    assert status == 400 and answer["error"]["code"] == "validation_error"


def cursor(partition, sort_key):
    raw = json.dumps({"p": partition, "s": sort_key}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize("sort_key", ["0000-01-01T00:00:00Z#x", "~~~~", moved("2031-01-01T00:00:00Z") + "#" + "x" * 1100])
def test_a_cursor_outside_its_query_range_is_400(handler_env, sort_key):
    response = listing({"from": moved("2030-06-01T00:00:00Z"), "to": moved("2032-01-01T00:00:00Z"),
                        "cursor": cursor("LIST#ALL", sort_key)})
    answer = json.loads(response["body"])
    assert response["statusCode"] == 400 and answer["error"]["code"] == "invalid_cursor", answer


def test_a_long_query_of_short_words_is_still_a_search(handler_env):
    # 200 CJK characters with spaces: 600 bytes in all, but each word is short.
    response = listing({"q": " ".join(["\u6f14\u5531\u4f1a"] * 50)[:200]})
    assert response["statusCode"] == 200, response["body"]
