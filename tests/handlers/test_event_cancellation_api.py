"""Events API handlers for an event's cancellation (issue 18): the organizer's key, the
Idempotency-Key and the reason are required; bad input is a 4xx that cancels nothing."""
import json

from tests.support.handlers import api_event, call

ORGANIZER = {"X-Api-Key": "organizer-test-key"}


def created_event():
    body = json.loads(api_event("create_event.json")["body"])
    status, event = call("events_api", api_event("create_event.json", headers=ORGANIZER, body=body))
    assert status == 201, event
    return event["event_id"]


def cancel(event_id, *, body=..., headers=None, drop=()):
    return call("events_api", api_event("cancel_event.json", path_params={"event_id": event_id},
                                        body={"reason": "storm"} if body is ... else body,
                                        headers={key: value for key, value in
                                                 {**ORGANIZER, "Idempotency-Key": "c-1", **(headers or {})}.items()
                                                 if key not in drop},
                                        drop_headers=drop))


def progress(event_id, headers=ORGANIZER):
    return call("events_api", api_event("get_event_cancellation.json", path_params={"event_id": event_id},
                                        headers=headers))


def test_bad_cancel_requests_are_4xx_and_cancel_nothing(handler_env):
    event_id = created_event()
    assert cancel(event_id, headers={"X-Api-Key": "wrong"})[0] == 401
    assert cancel(event_id, drop=("Idempotency-Key",))[1]["error"]["code"] == "idempotency_key_missing"
    assert cancel(event_id, body={})[1]["error"]["code"] == "validation_error"
    assert cancel(event_id, body={"reason": "   "})[1]["error"]["code"] == "validation_error"
    assert cancel(event_id, body={"reason": "x", "extra": 1})[0] == 400
    assert cancel("0" * 36)[1]["error"]["code"] == "event_not_found"
    assert progress(event_id)[1]["error"]["code"] == "event_not_cancelled"


def test_cancel_then_progress(handler_env):
    event_id = created_event()
    status, body = cancel(event_id)
    assert status == 202 and body["reason"] == "storm" and body["state"] == "running"
    status, again = cancel(event_id)
    assert status == 202 and again["cancelled_at"] == body["cancelled_at"]
    assert cancel(event_id, body={"reason": "flood"})[1]["error"]["code"] == "idempotency_key_reused"
    status, view = progress(event_id)
    assert status == 200 and view["counts"]["bookings"] == 0
    assert progress(event_id, headers={"X-Api-Key": "wrong"})[0] == 401
