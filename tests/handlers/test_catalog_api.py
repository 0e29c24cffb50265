"""Catalog API handlers: listing with ETag/304, edit and publish, the seat map, best available."""
import json

from devstack.sample_events import moved
from tests.support.handlers import FakeLambdaContext, api_event, call, load_handler

ORGANIZER = {"X-Api-Key": "organizer-test-key"}


def create_event(**overrides):
    body = json.loads(api_event("create_event.json")["body"]) | overrides
    headers = ORGANIZER | {"Idempotency-Key": "catalog-" + json.dumps(overrides, sort_keys=True)[:60].replace(" ", "")}
    headers["Idempotency-Key"] = "".join(ch if ch.isalnum() else "-" for ch in headers["Idempotency-Key"])
    status, created = call("events_api", api_event("create_event.json", headers=headers, body=body))
    assert status == 201, created
    return created


def raw(folder, event):
    return load_handler(folder).lambda_handler(event, FakeLambdaContext(function_name=folder))


def listing(query=None, headers=None):
    event = api_event("list_events.json", headers=headers)
    event["queryStringParameters"] = query
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()} if query else None
    return raw("catalog_api", event)


def publish(event_id, headers=ORGANIZER):
    return call("events_api", api_event("publish_event.json", path_params={"event_id": event_id}, headers=headers))


def patch(event_id, body, headers=ORGANIZER):
    event = api_event("publish_event.json", path_params={"event_id": event_id}, headers=headers, body=body)
    event["resource"] = event["requestContext"]["resourcePath"] = "/events/{event_id}"
    event["path"] = f"/events/{event_id}"
    event["httpMethod"] = event["requestContext"]["httpMethod"] = "PATCH"
    return call("events_api", event)


def test_listing_etag_and_304(handler_env):
    created = create_event(name="Рок фестиваль", starts_at=moved("2031-06-01T18:00:00Z"))
    assert json.loads(listing({"q": "рок"})["body"])["events"] == []  # a draft is not listed
    assert publish(created["event_id"], headers={"X-Api-Key": "wrong"})[0] == 401
    status, published = publish(created["event_id"])
    assert status == 200 and published["published"] is True
    first = listing({"q": "РОК", "city": "moscow"})
    assert first["statusCode"] == 200
    assert [e["event_id"] for e in json.loads(first["body"])["events"]] == [created["event_id"]]
    headers = first["multiValueHeaders"] if "ETag" not in first.get("headers", {}) else first["headers"]
    etag = headers["ETag"][0] if isinstance(headers["ETag"], list) else headers["ETag"]
    cache = headers["Cache-Control"][0] if isinstance(headers["Cache-Control"], list) else headers["Cache-Control"]
    assert cache == "public, max-age=30, s-maxage=60, stale-while-revalidate=60, stale-if-error=3600"
    again = listing({"q": "РОК", "city": "moscow"}, headers={"If-None-Match": etag})
    assert again["statusCode"] == 304 and not again["body"]
    assert listing({"q": "рок"}, headers={"If-None-Match": '"stale"'})["statusCode"] == 200


def test_listing_rejects_bad_queries(handler_env):
    for query, code in [({"limit": "0"}, "validation_error"), ({"from": "2031-01-01"}, "validation_error"),
                        ({"unknown": "x"}, "validation_error"), ({"cursor": "@@@"}, "invalid_cursor"),
                        ({"q": "!!!"}, "invalid_query")]:
        answer = listing(query)
        assert answer["statusCode"] == 400 and json.loads(answer["body"])["error"]["code"] == code, query


def test_patch_event(handler_env):
    created = create_event()
    status, body = patch(created["event_id"], {"venue": "Новый зал"})
    assert status == 200 and body["venue"] == "Новый зал"
    assert patch(created["event_id"], {"price": "1"})[0] == 400
    assert patch(created["event_id"], {"venue": "x"}, headers={})[0] == 401
    status, body = patch("missing", {"venue": "x"})
    assert status == 404 and body["error"]["code"] == "event_not_found"


def test_seat_map_and_best_available(handler_env):
    created = create_event(capacity=None, seat_map={"rows": [{"name": "A", "seats": 4}]})
    status, booking = call("bookings_api", api_event(
        "create_seat_booking.json", path_params={"event_id": created["event_id"]},
        body={"quantity": 2, "best_available": True}, headers={"Idempotency-Key": "ba-1", "X-Customer-Id": "c-1"}))
    assert status == 201 and booking["places"]["seats"] in (["A-1", "A-2"], ["A-3", "A-4"])
    answer = raw("catalog_api", api_event("get_seat_map.json", path_params={"event_id": created["event_id"]}))
    assert answer["statusCode"] == 200
    body = json.loads(answer["body"])
    assert body["counts"] == {"available": 2, "held": 2, "sold": 0}
    assert {seat["seat"]: seat["state"] for seat in body["seats"]}[booking["places"]["seats"][0]] == "held"
    headers = answer.get("multiValueHeaders") or {}
    assert "public, max-age=1" in str(headers.get("Cache-Control") or answer["headers"].get("Cache-Control"))
    ga = create_event(capacity=5, name="GA")
    status, body = call("catalog_api", api_event("get_seat_map.json", path_params={"event_id": ga["event_id"]}))
    assert status == 400 and body["error"]["code"] == "seats_not_supported"


def test_patch_sets_and_ends_exchanges_and_transfers(handler_env):
    created = create_event()
    assert "exchange_until_hours" not in created and created["transfers_allowed"] is True
    status, body = patch(created["event_id"], {"exchange_until_hours": 48, "transfers_allowed": False})
    assert status == 200 and body["exchange_until_hours"] == 48 and body["transfers_allowed"] is False
    # null ends exchanges (the organizer opts in); transfers take no null
    status, body = patch(created["event_id"], {"exchange_until_hours": None})
    assert status == 200 and "exchange_until_hours" not in body
    for bad in ({"exchange_until_hours": -1}, {"exchange_until_hours": 8761}, {"exchange_until_hours": "soon"},
                {"transfers_allowed": None}, {"transfers_allowed": "no"}):
        status, refused = patch(created["event_id"], bad)
        assert status == 400 and refused["error"]["code"] == "validation_error", bad
