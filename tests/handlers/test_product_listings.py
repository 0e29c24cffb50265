"""The public listings of the products' own offerings: GET /services (appointments) and GET /lots
(parking), published ones only, by name, a page at a time, with the event catalog's 400s."""
import json

import pytest

from tests.handlers.test_appointments_api import create_resource, create_service
from tests.handlers.test_parking_api import create_lot, parking_env  # noqa: F401 - the lot routes' fixture
from tests.support.handlers import FakeLambdaContext, api_event, call, load_handler

ORGANIZER = {"X-Api-Key": "organizer-test-key"}


def listed(folder, sample, query=None, headers=None):
    event = api_event(sample, headers=headers)
    event["queryStringParameters"] = query
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()} if query else None
    answer = load_handler(folder).lambda_handler(event, FakeLambdaContext(function_name=folder))
    return answer["statusCode"], json.loads(answer["body"]) if answer["body"] else None, answer


def publish(folder, sample, name, offering_id, headers=ORGANIZER):
    return call(folder, api_event(sample, path_params={name: offering_id}, headers=headers))


def services(query=None, headers=None):
    return listed("events_api", "list_services.json", query, headers)


def lots(query=None, headers=None):
    return listed("parking_api", "list_lots.json", query, headers)


def test_published_services_are_listed_by_name_city_and_words(handler_env):
    room = create_resource()[1]
    made = {}
    for key, name, city in [("s-1", "Массаж спины", "Москва"), ("s-2", "Morning yoga", "Kazan"),
                            ("s-3", "Evening yoga", "Москва"), ("s-4", "Draft yoga", "Москва")]:
        status, made[name] = create_service(room["resource_id"], key=key, name=name, city=city)
        assert status == 201 and made[name]["city"] == city, made[name]
    assert services()[1] == {"services": [], "next_cursor": None}   # nothing published yet
    assert publish("events_api", "publish_service.json", "service_id", made["Morning yoga"]["service_id"],
                   headers={"X-Api-Key": "wrong"})[0] == 401
    status, body = publish("events_api", "publish_service.json", "service_id", "no-such-service")
    assert (status, body["error"]["code"]) == (404, "service_not_found")
    for name in ("Массаж спины", "Morning yoga", "Evening yoga"):
        status, body = publish("events_api", "publish_service.json", "service_id", made[name]["service_id"])
        assert status == 200 and body["published"] is True
    # again: nothing changes
    assert publish("events_api", "publish_service.json", "service_id", made["Morning yoga"]["service_id"])[0] == 200

    status, body, _ = services()
    assert status == 200 and [s["name"] for s in body["services"]] == ["Evening yoga", "Morning yoga", "Массаж спины"]
    first = body["services"][0]
    assert first == {"service_id": made["Evening yoga"]["service_id"], "name": "Evening yoga", "city": "Москва",
                     "mode": "group", "duration_minutes": 60, "price": {"value": "700.00", "currency": "RUB"}}
    assert [s["name"] for s in services({"city": "москва"})[1]["services"]] == ["Evening yoga", "Массаж спины"]
    assert [s["name"] for s in services({"q": "YOGA"})[1]["services"]] == ["Evening yoga", "Morning yoga"]
    assert [s["name"] for s in services({"q": "yoga evening"})[1]["services"]] == ["Evening yoga"]
    assert [s["name"] for s in services({"q": "yoga", "city": "Kazan"})[1]["services"]] == ["Morning yoga"]
    assert [s["name"] for s in services({"q": "массаж"})[1]["services"]] == ["Массаж спины"]
    assert [s["name"] for s in services({"q": "masazh spin"})[1]["services"]] == ["Массаж спины"]  # Latin, prefixes

    seen, cursor = [], None
    while True:
        status, page, _ = services({"limit": "1", **({"cursor": cursor} if cursor else {})})
        assert status == 200 and len(page["services"]) <= 1
        seen += [s["name"] for s in page["services"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == ["Evening yoga", "Morning yoga", "Массаж спины"]


def test_a_service_listing_is_cached_and_answers_304(handler_env):
    room = create_resource()[1]
    service = create_service(room["resource_id"], key="cached", city="Tver")[1]
    publish("events_api", "publish_service.json", "service_id", service["service_id"])
    _, _, answer = services({"city": "Tver"})
    headers = answer.get("multiValueHeaders") or {}
    etag = (headers.get("ETag") or [answer["headers"]["ETag"]])[0]
    assert "public, max-age=30" in str(headers.get("Cache-Control") or answer["headers"]["Cache-Control"])
    assert services({"city": "Tver"}, headers={"If-None-Match": etag})[2]["statusCode"] == 304


@pytest.mark.parametrize("query, code", [
    ({"limit": "0"}, "validation_error"), ({"limit": "101"}, "validation_error"), ({"limit": "x"}, "validation_error"),
    ({"unknown": "x"}, "validation_error"), ({"cursor": "@@@"}, "invalid_cursor"), ({"q": "!!!"}, "invalid_query"),
    ({"city": "ﷺ" * 40}, "query_too_long"),
])
def test_the_service_listing_refuses_bad_queries(handler_env, query, code):
    status, body, _ = services(query)
    assert (status, body["error"]["code"]) == (400, code)


def test_published_lots_are_listed_by_name_and_city(parking_env):
    made = {}
    for key, name, city in [("l-1", "Центральная", "Москва"), ("l-2", "Airport P1", "Kazan"),
                            ("l-3", "Arbat", "Москва"), ("l-4", "Draft lot", "Москва")]:
        status, made[name] = create_lot(key=key, name=name, city=city)
        assert status == 201 and made[name]["city"] == city, made[name]
    assert lots()[1] == {"lots": [], "next_cursor": None}
    for name in ("Центральная", "Airport P1", "Arbat"):
        status, body = publish("parking_api", "publish_lot.json", "lot_id", made[name]["lot_id"])
        assert status == 200 and body["published"] is True
    status, body = publish("parking_api", "publish_lot.json", "lot_id", made["Arbat"]["lot_id"], headers={})
    assert status == 401
    status, body, _ = lots()
    assert status == 200 and [lot["name"] for lot in body["lots"]] == ["Airport P1", "Arbat", "Центральная"]
    assert body["lots"][1] == {"lot_id": made["Arbat"]["lot_id"], "name": "Arbat", "city": "Москва",
                               "timezone": "Europe/Moscow", "hourly": {"value": "150.00", "currency": "RUB"},
                               "spaces": {"COMPACT": 1, "REGULAR": 2, "LARGE": 1, "HANDICAP": 1}}
    assert [lot["name"] for lot in lots({"city": "МОСКВА"})[1]["lots"]] == ["Arbat", "Центральная"]
    status, page, _ = lots({"city": "Москва", "limit": "1"})
    assert [lot["name"] for lot in page["lots"]] == ["Arbat"] and page["next_cursor"]
    status, rest, _ = lots({"city": "Москва", "limit": "1", "cursor": page["next_cursor"]})
    assert [lot["name"] for lot in rest["lots"]] == ["Центральная"]
    # a cursor belongs to its query: another city's is a 400, never a page of the wrong list
    status, wrong, _ = lots({"city": "Kazan", "cursor": page["next_cursor"]})
    assert (status, wrong["error"]["code"]) == (400, "invalid_cursor")
    for query, code in [({"limit": "0"}, "validation_error"), ({"q": "arbat"}, "validation_error"),
                        ({"cursor": "e30"}, "invalid_cursor")]:
        status, answer, _ = lots(query)
        assert (status, answer["error"]["code"]) == (400, code), query
