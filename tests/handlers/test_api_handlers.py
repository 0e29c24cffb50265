"""The thin handlers: routing, error mapping and the HTTP contract, on the sample events."""
import json

import pytest

from holdfast.adapters.expiry_buckets import bucket_of, execution_name
from tests.support.handlers import api_event, call

ORGANIZER = {"X-Api-Key": "organizer-test-key"}


def create_event(**body_overrides):
    event = api_event("create_event.json", headers=ORGANIZER)
    body = json.loads(event["body"]) | body_overrides
    status, created = call("events_api", api_event("create_event.json", headers=ORGANIZER, body=body))
    assert status == 201, created
    return created


def book(event_id, body=None, key="key-1", customer="customer-42"):
    return call("bookings_api", api_event(
        "create_booking.json", path_params={"event_id": event_id}, body=body or {"quantity": 2},
        headers={"Idempotency-Key": key, "X-Customer-Id": customer}))


def test_create_and_read_event(handler_env):
    created = create_event(capacity=30)
    assert created["counts"] == {"available": 30, "held": 0, "sold": 0}
    status, read = call("events_api", api_event("get_event.json", path_params={"event_id": created["event_id"]}))
    assert status == 200 and read == created


def test_event_creation_is_idempotent_with_a_key(handler_env):
    first = create_event()
    assert create_event()["event_id"] == first["event_id"]


def test_create_event_needs_the_organizer_key(handler_env):
    status, body = call("events_api", api_event("create_event.json", headers={"X-Api-Key": "wrong"}))
    assert status == 401 and body["error"]["code"] == "unauthorized"


@pytest.mark.parametrize("change, code", [
    ({"capacity": 0}, "validation_error"),
    ({"capacity": None}, "validation_error"),
    ({"price": {"value": "-5", "currency": "RUB"}}, "invalid_amount"),
    ({"price": {"value": "1.005", "currency": "RUB"}}, "invalid_amount"),
    ({"price": {"value": "5", "currency": "XYZ"}}, "invalid_currency"),
    ({"starts_at": "2030-05-01T20:00:00"}, "validation_error"),
    ({"unexpected": 1}, "validation_error"),
    ({"seat_map": {"rows": [{"name": "A", "seats": 2}]}}, "validation_error"),
])
def test_bad_events_are_4xx_with_a_code(handler_env, change, code):
    body = json.loads(api_event("create_event.json")["body"]) | change
    body = {key: value for key, value in body.items() if value is not None}
    status, answer = call("events_api", api_event("create_event.json", headers=ORGANIZER, body=body))
    assert status == 400 and answer["error"]["code"] == code


def test_booking_round_trip_and_repeat(handler_env):
    event = create_event(capacity=5)
    status, booking = book(event["event_id"])
    assert status == 201 and booking["status"] == "HELD" and booking["amount"] == {"value": "3000.00", "currency": "RUB"}
    status, again = book(event["event_id"])
    assert status == 201 and again["booking_id"] == booking["booking_id"]
    status, other = book(event["event_id"], {"quantity": 3})
    assert status == 422 and other["error"]["code"] == "idempotency_key_reused"
    status, read = call("bookings_api", api_event("get_booking.json", path_params={"booking_id": booking["booking_id"]}))
    assert status == 200 and read["journal"][0]["action"] == "hold_created"
    status, foreign = call("bookings_api", api_event("get_booking.json", path_params={"booking_id": booking["booking_id"]},
                                                     headers={"X-Customer-Id": "someone-else"}))
    assert status == 403
    executions = handler_env["sfn"].list_executions(stateMachineArn=handler_env["machine"])["executions"]
    assert execution_name(bucket_of(booking["hold_expires_at"])) in [e["name"] for e in executions]


def test_sold_out_says_what_is_left(handler_env):
    event = create_event(capacity=3)
    assert book(event["event_id"], {"quantity": 2}, key="a")[0] == 201
    status, body = book(event["event_id"], {"quantity": 2}, key="b")
    assert status == 409 and body["error"]["code"] == "sold_out" and body["error"]["details"] == {"available": 1}


@pytest.mark.parametrize("kwargs, status, code", [
    ({"raw_body": "{not json"}, 400, "malformed_json"),
    ({"raw_body": "[1,2]"}, 400, "malformed_json"),
    ({"raw_body": ""}, 400, "malformed_json"),
    ({"body": {"quantity": 0}}, 400, "invalid_quantity"),
    ({"body": {"quantity": -3}}, 400, "invalid_quantity"),
    ({"body": {"quantity": 10**30}}, 400, "invalid_quantity"),
    ({"body": {"quantity": "two"}}, 400, "validation_error"),
    ({"body": {"quantity": 1, "seats": ["A-1"]}}, 400, "validation_error"),
    ({"body": {"seats": ["A-1"]}}, 400, "seats_not_supported"),
    ({"body": {"quantity": 1, "contact_email": "not-an-address"}}, 400, "validation_error"),
    ({"body": {"quantity": 1, "contact_email": 42}}, 400, "validation_error"),
    ({"raw_body": json.dumps({"quantity": 1, "pad": "x" * 70_000})}, 413, "body_too_large"),
    ({"drop_headers": ("Idempotency-Key",)}, 400, "idempotency_key_missing"),
    ({"headers": {"Idempotency-Key": "bad key with spaces"}}, 400, "idempotency_key_invalid"),
    ({"drop_headers": ("X-Customer-Id",)}, 401, "unauthorized"),
])
def test_bad_booking_requests_are_4xx_with_a_code(handler_env, kwargs, status, code):
    event = create_event(capacity=5)
    request = api_event("create_booking.json", path_params={"event_id": event["event_id"]}, **kwargs)
    got_status, body = call("bookings_api", request)
    assert (got_status, body["error"]["code"]) == (status, code)


def test_unknown_event_and_booking(handler_env):
    status, body = book("no-such-event")
    assert (status, body["error"]["code"]) == (404, "event_not_found")
    status, body = call("bookings_api", api_event("get_booking.json", path_params={"booking_id": "nope"}))
    assert (status, body["error"]["code"]) == (404, "booking_not_found")


def test_webhook_queues_allowed_senders_only(handler_env):
    status, body = call("payment_webhook", api_event("payment_notification.json"))
    assert status == 200 and body == {"queued": True}
    messages = handler_env["sqs"].receive_message(QueueUrl=handler_env["queue_url"], MaxNumberOfMessages=10,
                                                  AttributeNames=["All"])["Messages"]
    assert len(messages) == 1
    assert messages[0]["Attributes"]["MessageGroupId"] == "2f9a3c4e-000f-5000-9000-1b2c3d4e5f60"
    status, body = call("payment_webhook", api_event("payment_notification.json", source_ip="198.51.100.7"))
    assert (status, body["error"]["code"]) == (403, "sender_not_allowed")
    status, body = call("payment_webhook", api_event("payment_notification.json", raw_body='{"type": "x"}'))
    assert (status, body["error"]["code"]) == (400, "malformed_notification")


def test_unknown_route_is_404(handler_env):
    event = api_event("get_event.json", path_params={"event_id": "x"})
    event["resource"] = event["path"] = "/nowhere"
    status, body = call("events_api", event)
    assert (status, body["error"]["code"]) == (404, "route_not_found")


def test_admin_endpoints_need_the_organizer_key_and_validate(handler_env):
    status, body = call("admin_api", api_event("list_reviews.json", headers={"X-Api-Key": "nope"}))
    assert (status, body["error"]["code"]) == (401, "unauthorized")
    status, body = call("admin_api", api_event("list_reviews.json", headers=ORGANIZER))
    assert (status, body) == (200, {"reviews": [], "next_cursor": None, "gate_cases": [], "gate_cases_next_cursor": None,
                              "checkin_cases": [], "checkin_cases_next_cursor": None})
    for query, code in (({"limit": "lots"}, "invalid_limit"), ({"limit": "500"}, "invalid_limit"),
                        ({"cursor": "garbage"}, "invalid_cursor")):
        event = api_event("list_reviews.json", headers=ORGANIZER)
        event["queryStringParameters"] = query
        event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()}
        status, body = call("admin_api", event)
        assert (status, body["error"]["code"]) == (400, code), query
    status, body = call("admin_api", api_event("resolve_review.json", headers=ORGANIZER,
                                               body={"action": "explode", "operator": "o", "note": "n"}))
    assert (status, body["error"]["code"]) == (400, "validation_error")
    status, body = call("admin_api", api_event("resolve_review.json", headers=ORGANIZER))
    assert (status, body["error"]["code"]) == (404, "booking_not_found")
    status, body = call("admin_api", api_event("get_booking_journal.json", headers=ORGANIZER))
    assert (status, body["error"]["code"]) == (404, "booking_not_found")


def test_admin_sees_any_booking_with_its_journal(handler_env):
    event = create_event(capacity=2)
    booking = book(event["event_id"])[1]
    status, body = call("admin_api", api_event("get_booking_journal.json", headers=ORGANIZER,
                                               path_params={"booking_id": booking["booking_id"]}))
    assert status == 200 and body["customer_id"] == "customer-42"
    assert [entry["action"] for entry in body["journal"]] == ["hold_created"]
