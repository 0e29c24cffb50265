"""What a CDN may keep (issue 35, goal 5): every public catalog GET says, per route, how long a
browser and a shared cache may reuse it (holdfast/entry/http.py) with an ETag; every error says no cache
may keep it and that it depends on Accept-Language; nothing a customer or an organizer reads as
themselves is public."""
import json

import pytest

from holdfast.entry import http
from tests.handlers.test_appointments_api import create_resource, create_service
from tests.handlers.test_catalog_api import ORGANIZER, create_event, publish
from tests.handlers.test_parking_api import create_lot, parking_env  # noqa: F401 - the lot routes' fixture
from tests.support.handlers import FakeLambdaContext, api_event, load_handler


def answer(folder, sample, query=None, path_params=None, headers=None):
    event = api_event(sample, path_params=path_params, headers=headers)
    if query is not None:
        event["queryStringParameters"] = query
        event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()}
    return load_handler(folder).lambda_handler(event, FakeLambdaContext(function_name=folder))


def headers_of(response):
    single = {key: value for key, value in (response.get("headers") or {}).items()}
    for key, values in (response.get("multiValueHeaders") or {}).items():
        single[key] = ", ".join(values)
    return single


def public(response, fresh):
    assert response["statusCode"] == 200, response["body"]
    headers = headers_of(response)
    assert headers["Cache-Control"] == fresh.header() and headers["ETag"].startswith('"')
    assert "Vary" not in headers     # the body is the same in every language
    return headers


def refused(response, status):
    assert response["statusCode"] == status, response["body"]
    headers = headers_of(response)
    assert headers["Cache-Control"] == "no-store" and headers["Vary"] == "Accept-Language"


def test_the_freshness_each_answer_says():
    assert http.LISTING_FRESHNESS.header() == "public, max-age=30, s-maxage=60, stale-while-revalidate=60, stale-if-error=3600"
    assert http.SEAT_MAP_FRESHNESS.header() == "public, max-age=1, s-maxage=1, stale-while-revalidate=1"
    assert http.EVENT_FRESHNESS.header() == "public, max-age=1, s-maxage=2, stale-while-revalidate=2"


def test_event_listing_search_event_and_seat_map(handler_env):
    seated = create_event(name="Квартет", capacity=None, seat_map={"rows": [{"name": "A", "seats": 4}]})
    assert publish(seated["event_id"])[0] == 200
    ids = {"event_id": seated["event_id"]}
    public(answer("catalog_api", "list_events.json", {}), http.LISTING_FRESHNESS)
    public(answer("catalog_api", "list_events.json", {"q": "kvartet", "city": "moscow"}), http.LISTING_FRESHNESS)
    public(answer("events_api", "get_event.json", path_params=ids), http.EVENT_FRESHNESS)
    seats = public(answer("catalog_api", "get_seat_map.json", path_params=ids), http.SEAT_MAP_FRESHNESS)
    again = answer("catalog_api", "get_seat_map.json", path_params=ids, headers={"If-None-Match": seats["ETag"]})
    assert again["statusCode"] == 304 and headers_of(again)["ETag"] == seats["ETag"]
    public(answer("catalog_api", "get_customer_texts.json", {"lang": "ru"}), http.TEXTS_FRESHNESS)


def test_errors_of_the_cached_routes_are_never_kept(handler_env):
    refused(answer("catalog_api", "list_events.json", {"q": "!!!"}, headers={"Accept-Language": "ru"}), 400)
    refused(answer("catalog_api", "list_events.json", {"utm_source": "x"}), 400)
    missing = {"event_id": "no-such-event"}
    refused(answer("events_api", "get_event.json", path_params=missing), 404)
    refused(answer("catalog_api", "get_seat_map.json", path_params=missing), 404)
    refused(answer("catalog_api", "get_customer_texts.json", {"lang": "xx"}), 400)


def test_service_and_lot_listings(handler_env, parking_env):
    room = create_resource()[1]
    service = create_service(room["resource_id"], key="edge", city="Tver")[1]
    load_handler("events_api").lambda_handler(
        api_event("publish_service.json", path_params={"service_id": service["service_id"]}, headers=ORGANIZER),
        FakeLambdaContext(function_name="events_api"))
    public(answer("events_api", "list_services.json", {"city": "Tver"}), http.LISTING_FRESHNESS)
    public(answer("events_api", "list_services.json", {"q": "massazh"}), http.LISTING_FRESHNESS)
    refused(answer("events_api", "list_services.json", {"limit": "0"}), 400)
    create_lot()
    public(answer("parking_api", "list_lots.json", {}), http.LISTING_FRESHNESS)
    refused(answer("parking_api", "list_lots.json", {"q": "x"}), 400)


@pytest.mark.parametrize("folder, sample", [("bookings_api", "get_booking.json")])
def test_what_a_customer_reads_as_themselves_is_not_public(handler_env, folder, sample):
    response = answer(folder, sample, path_params={"booking_id": "no-such-booking"},
                      headers={"X-Customer-Id": "c-1"})
    assert "public" not in headers_of(response).get("Cache-Control", "")
    assert json.loads(response["body"])
