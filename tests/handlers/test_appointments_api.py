"""The appointment routes on the sample events: resources, services, availability, holds of a time."""
import json

import pytest

from devstack.sample_events import moved
from tests.support.handlers import api_event, call

ORGANIZER = {"X-Api-Key": "organizer-test-key"}
#: The sample events' day (create_service_booking.json's), as the samples are read today.
DAY = moved("2030-05-01")


def sample_body(name):
    return json.loads(api_event(name)["body"])


def create_resource(**overrides):
    body = sample_body("create_resource.json") | overrides
    return call("events_api", api_event("create_resource.json", headers=ORGANIZER, body=body))


def create_service(resource_id, key="service-yoga", **overrides):
    body = sample_body("create_service.json") | {"resource_ids": [resource_id]} | overrides
    body = {key: value for key, value in body.items() if value is not None}
    return call("events_api", api_event("create_service.json", headers=ORGANIZER | {"Idempotency-Key": key}, body=body))


def availability(service_id, day=DAY):
    event = api_event("get_service_availability.json", path_params={"service_id": service_id})
    event["queryStringParameters"] = {"date": day} if day is not None else None
    return call("events_api", event)


def book(service_id, resource_id, key="slot-1", customer="customer-42", **overrides):
    body = sample_body("create_service_booking.json") | {"resource_id": resource_id} | overrides
    body = {k: v for k, v in body.items() if v is not None}
    return call("bookings_api", api_event("create_service_booking.json", path_params={"service_id": service_id},
                                          body=body, headers={"Idempotency-Key": key, "X-Customer-Id": customer}))


@pytest.fixture
def yoga(handler_env):
    status, room = create_resource()
    assert status == 201, room
    status, service = create_service(room["resource_id"])
    assert status == 201, service
    return room, service


def test_resource_service_availability_and_a_hold(yoga):
    room, service = yoga
    assert service["mode"] == "group" and service["capacity"] == 3 and service["payment_mode"] == "two_stage"
    status, day = availability(service["service_id"])
    assert status == 200 and len(day["slots"]) == 12   # 09:00 to 20:00 in Moscow, hourly
    assert day["slots"][1] == {"starts_at": moved("2030-05-01T07:00:00.000Z"), "ends_at": moved("2030-05-01T08:00:00.000Z"),
                               "resource_id": room["resource_id"], "available": 3}
    status, held = book(service["service_id"], room["resource_id"], quantity=2)
    assert status == 201 and held["status"] == "HELD", held
    assert held["amount"] == {"value": "1400.00", "currency": "RUB"} and held["hold_expires_at"]
    assert held["places"]["starts_at"] == moved("2030-05-01T07:00:00.000Z")
    status, again = book(service["service_id"], room["resource_id"], quantity=2)
    assert status == 201 and again["booking_id"] == held["booking_id"]
    assert availability(service["service_id"])[1]["slots"][1]["available"] == 1
    status, refused = book(service["service_id"], room["resource_id"], key="slot-2", customer="c-2", quantity=2)
    assert status == 409 and refused["error"]["code"] == "slot_unavailable"
    assert refused["error"]["details"]["available"] == 1 and refused["error"]["details"]["nearby"]
    status, read = call("bookings_api", api_event("get_booking.json", path_params={"booking_id": held["booking_id"]},
                                                  headers={"X-Customer-Id": "customer-42"}))
    assert status == 200 and read["places"]["mode"] == "group"


def test_organizer_routes_need_the_key(handler_env):
    status, body = call("events_api", api_event("create_resource.json", headers={"X-Api-Key": "wrong"}))
    assert status == 401 and body["error"]["code"] == "unauthorized"
    status, body = call("events_api", api_event("create_service.json", headers={"X-Api-Key": "wrong"}))
    assert status == 401


BAD_RESOURCES = [
    {"timezone": "Mars/Olympus"}, {"opening_hours": {"open": "21:00", "close": "09:00"}},
    {"opening_hours": {"open": "09:10", "close": "18:00"}}, {"opening_hours": {"open": "9am", "close": "18:00"}},
    {"name": ""}, {"extra": 1},
]


def test_bad_resources_are_400(handler_env):
    for change in BAD_RESOURCES:
        status, body = create_resource(**change)
        assert status == 400 and body["error"]["code"] == "validation_error", (change, body)


BAD_SERVICES = [
    ({"mode": "group", "capacity": None}, "validation_error"),
    ({"mode": "private"}, "validation_error"),            # a capacity on a private service
    ({"duration_minutes": 50}, "validation_error"),       # not whole granules
    ({"step_minutes": 20}, "validation_error"),
    ({"mode": "both"}, "validation_error"),
    ({"resource_ids": []}, "validation_error"),
    ({"resource_ids": ["no-such-room"]}, "unknown_resource"),
    ({"price": {"value": "-1", "currency": "RUB"}}, "invalid_amount"),
    ({"resource_ids": ["r"] * 2}, "duplicate_resources"),
]


def test_bad_services_are_4xx_with_a_code(yoga):
    room, _ = yoga
    for change, code in BAD_SERVICES:
        if change.get("resource_ids") == ["r"] * 2:
            change = {"resource_ids": [room["resource_id"]] * 2}
        status, body = create_service(room["resource_id"], key=f"bad-{code}", **change)
        assert status == 400 and body["error"]["code"] == code, (change, body)


BAD_BOOKINGS = [
    ({"starts_at": moved("2030-05-01T08:00:00+03:00")}, "slot_not_offered"),
    ({"starts_at": moved("2030-05-01T10:30:00+03:00")}, "slot_not_offered"),
    ({"starts_at": moved("2030-05-01T10:00:00")}, "validation_error"),
    ({"starts_at": "2020-05-01T10:00:00+03:00"}, "slot_in_past"),
    ({"quantity": 4}, "invalid_quantity"),
    ({"resource_id": "other-room"}, "unknown_resource"),
    ({"seats": ["A-1"]}, "validation_error"),
]


def test_bad_bookings_are_4xx_with_a_code(yoga):
    room, service = yoga
    for number, (change, code) in enumerate(BAD_BOOKINGS):
        body = {"resource_id": room["resource_id"]} | change
        status, answer = book(service["service_id"], key=f"bad-{number}", **body)
        assert status == 400 and answer["error"]["code"] == code, (change, answer)


def test_bad_days_unknown_services_and_event_routes(yoga):
    room, service = yoga
    for day in ("2030-02-30", "soon", None):
        status, body = availability(service["service_id"], day)
        assert status == 400 and body["error"]["code"] == "invalid_date"
    status, body = availability("7d1f3c2a-7c55-4f0c-9a59-3f4b7f0b2b11")
    assert status == 404 and body["error"]["code"] == "service_not_found"
    status, body = book("7d1f3c2a-7c55-4f0c-9a59-3f4b7f0b2b11", room["resource_id"])
    assert status == 404 and body["error"]["code"] == "service_not_found"
    # A service is not an event: the event routes answer with a code, never a 5xx.
    status, body = call("bookings_api", api_event("create_booking.json", path_params={"event_id": service["service_id"]},
                                                  headers={"Idempotency-Key": "e-1", "X-Customer-Id": "c"}))
    assert status == 400 and body["error"]["code"] == "slot_required"
    status, body = call("events_api", api_event("get_event.json", path_params={"event_id": service["service_id"]}))
    assert status == 400 and body["error"]["code"] == "availability_by_date"


def test_a_private_service_refuses_a_quantity(yoga):
    room, _ = yoga
    status, hire = create_service(room["resource_id"], key="service-hire", mode="private", capacity=None,
                                  name="Hall hire")
    assert status == 201, hire
    status, body = book(hire["service_id"], room["resource_id"], quantity=1)
    assert status == 400 and body["error"]["code"] == "quantity_not_supported"
    status, body = book(hire["service_id"], room["resource_id"], quantity=None)
    assert status == 201 and body["places"]["mode"] == "private"


def resource_day(resource_id, day=DAY, headers=ORGANIZER):
    event = api_event("resource_day.json", path_params={"resource_id": resource_id}, headers=headers)
    event["queryStringParameters"] = {"date": day} if day is not None else None
    return call("events_api", event)


def test_a_resource_day_shows_each_session_and_private_booking_with_its_seats(yoga):
    room, yoga_class = yoga
    status, hire = create_service(room["resource_id"], key="service-hire", mode="private", capacity=None,
                                  duration_minutes=90)
    assert status == 201, hire
    assert resource_day(room["resource_id"]) == (200, {
        "resource": {"resource_id": room["resource_id"], "name": "Hall A", "timezone": "Europe/Moscow",
                     "opening_hours": {"open": "09:00", "close": "21:00"}},
        "date": DAY, "times": []})
    for key, who in (("seat-1", "c-1"), ("seat-2", "c-2")):     # two bookings of one group session
        assert book(yoga_class["service_id"], room["resource_id"], key=key, customer=who)[0] == 201
    status, hired = book(hire["service_id"], room["resource_id"], key="hire-1", customer="c-3", quantity=None,
                         starts_at=moved("2030-05-01T13:30:00+03:00"))
    assert status == 201, hired

    status, day = resource_day(room["resource_id"])
    assert status == 200
    assert day["times"] == [
        {"starts_at": moved("2030-05-01T07:00:00.000Z"), "ends_at": moved("2030-05-01T08:00:00.000Z"), "held": 2, "sold": 0,
         "mode": "group", "service_id": yoga_class["service_id"]},
        {"starts_at": moved("2030-05-01T10:30:00.000Z"), "ends_at": moved("2030-05-01T12:00:00.000Z"), "held": 1, "sold": 0,
         "mode": "private", "booking_id": hired["booking_id"]}]
    assert resource_day(room["resource_id"], day=moved("2030-05-02"))[1]["times"] == []
    assert resource_day(room["resource_id"], day="May 1")[1]["error"]["code"] == "invalid_date"
    assert resource_day(room["resource_id"], headers={"X-Api-Key": "wrong"})[0] == 401
    status, missing = resource_day("no-such-resource")
    assert (status, missing["error"]["code"]) == (404, "resource_not_found")
