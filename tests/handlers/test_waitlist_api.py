"""The waitlist handlers and the relay's part: join, position, leave, and an offer made when the
relay sees a change that released places."""
from __future__ import annotations

import copy
import json

from boto3.dynamodb.types import TypeSerializer

from tests.support.handlers import api_event, call, load_event

ORGANIZER = {"X-Api-Key": "organizer-test-key"}


def create_event(**overrides):
    body = json.loads(load_event("create_event.json")["body"]) | overrides
    status, created = call("events_api", api_event("create_event.json", headers=ORGANIZER, body=body))
    assert status == 201, created
    return created


def waitlist(name, event_id, customer, body=...):
    return call("waitlist_api", api_event(name, path_params={"event_id": event_id}, body=body,
                                          headers={"X-Customer-Id": customer}))


def book(event_id, customer, quantity):
    return call("bookings_api", api_event("create_booking.json", path_params={"event_id": event_id},
                                          body={"quantity": quantity},
                                          headers={"Idempotency-Key": f"k-{customer}", "X-Customer-Id": customer}))


def stream_record(image):
    event = copy.deepcopy(load_event("outbox_stream.json"))
    record = event["Records"][0]
    record["dynamodb"]["NewImage"] = {key: TypeSerializer().serialize(value) for key, value in image.items()}
    return event


def test_join_read_repeat_and_leave(handler_env):
    event = create_event(capacity=2)
    eid = event["event_id"]
    # Places are free: a waitlist is no way to have them held on the system's path (issue 28,
    # finding 5); the customer is told to book, and nothing is written.
    status, err = waitlist("join_waitlist.json", eid, "ann", {"quantity": 2, "contact_email": "ann@example.org"})
    assert status == 409 and err["error"]["code"] == "places_available", err
    assert err["error"]["details"]["available"] == 2
    assert waitlist("get_waitlist_entry.json", eid, "ann")[0] == 404
    status, counts = call("events_api", api_event("get_event.json", path_params={"event_id": eid}))
    assert counts["counts"] == {"available": 2, "held": 0, "sold": 0}
    # One place left, two wanted: that request is sold out, and the line is for it.
    assert book(eid, "owner", 1)[0] == 201
    status, entry = waitlist("join_waitlist.json", eid, "ann", {"quantity": 2, "contact_email": "ann@example.org"})
    assert status == 200 and entry["joined_now"] and entry["state"] == "WAITING" and entry["position"] == 1
    status, err = waitlist("join_waitlist.json", eid, "ben", {"quantity": 1})
    assert status == 409 and err["error"]["code"] == "places_available"
    assert book(eid, "cara", 1)[0] == 201
    status, ben = waitlist("join_waitlist.json", eid, "ben", {"quantity": 1})
    assert status == 200 and ben["joined_now"] and ben["position"] == 2 and ben["state"] == "WAITING"
    status, again = waitlist("join_waitlist.json", eid, "ben", {"quantity": 1})
    assert status == 200 and not again["joined_now"] and again["entry_id"] == ben["entry_id"]
    status, left = waitlist("leave_waitlist.json", eid, "ben")
    assert status == 200 and left["state"] == "LEFT"
    status, err = waitlist("get_waitlist_entry.json", eid, "ben")
    assert status == 404 and err["error"]["code"] == "not_on_waitlist"
    status, mine = waitlist("get_waitlist_entry.json", eid, "ann")
    assert status == 200 and mine["state"] == "WAITING"


def test_validation_and_unknown_event(handler_env):
    event = create_event(capacity=2)
    status, err = waitlist("join_waitlist.json", event["event_id"], "ann", {"quantity": 0})
    assert status == 400 and err["error"]["code"] == "invalid_quantity"
    status, err = waitlist("join_waitlist.json", event["event_id"], "ann", {"quantity": 1, "extra": 1})
    assert status == 400 and err["error"]["code"] == "validation_error"
    status, err = waitlist("join_waitlist.json", event["event_id"], "ann", {"quantity": 1, "contact_email": "ann"})
    assert status == 400 and err["error"]["details"]["problems"][0]["field"] == "contact_email"
    status, err = waitlist("join_waitlist.json", "no-such-event", "ann", {"quantity": 1})
    assert status == 404 and err["error"]["code"] == "event_not_found"
    status, err = call("waitlist_api", api_event("get_waitlist_entry.json", path_params={"event_id": event["event_id"]},
                                                 drop_headers=("X-Customer-Id",)))
    assert status == 401


def test_the_relay_offers_released_places_to_the_first_in_line(handler_env):
    event = create_event(capacity=2)
    eid = event["event_id"]
    status, held = book(eid, "owner", 2)
    assert status == 201
    assert waitlist("join_waitlist.json", eid, "ann", {"quantity": 1})[1]["position"] == 1
    status, cancelled = call("bookings_api", api_event("cancel_booking.json", path_params={"booking_id": held["booking_id"]},
                                                       headers={"X-Customer-Id": "owner"}))
    assert status == 200 and cancelled["status"] == "CANCELLED"
    image = {"pk": f"BOOKING#{held['booking_id']}", "sk": "OUTBOX#000002", "type": "booking.cancelled",
             "booking_id": held["booking_id"], "event_id": eid, "customer_id": "owner", "status": "CANCELLED",
             "version": 2, "at": "2030-01-01T12:00:00.000Z"}
    for _ in range(2):  # delivered twice: one offer
        assert call("outbox_relay", stream_record(image))[1] == {"batchItemFailures": []}
    status, ann = waitlist("get_waitlist_entry.json", eid, "ann")
    assert ann["state"] == "OFFERED"
    status, offer = call("bookings_api", api_event("get_booking.json", path_params={"booking_id": ann["offer"]["booking_id"]},
                                                   headers={"X-Customer-Id": "ann"}))
    assert status == 200 and offer["status"] == "HELD" and offer["journal"][0]["actor"] == "waitlist"
    status, read = call("events_api", api_event("get_event.json", path_params={"event_id": eid}))
    assert read["counts"] == {"available": 1, "held": 1, "sold": 0}
