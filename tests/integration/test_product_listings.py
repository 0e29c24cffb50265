"""Over HTTP on the local stack: the products' public listings (GET /services, GET /lots) with
their publish routes, paging and 400s; a reservation's pass as SVG text; the customer texts in
the language Accept-Language prefers."""
from __future__ import annotations

import uuid

import pytest

from holdfast.entry import http
from tests.integration.test_parking_flow import create_lot, now_window, paid
from tests.support.flows import customer

pytestmark = pytest.mark.integration


def test_published_services_and_lots_are_listed_by_city_a_page_at_a_time(api):
    town = f"Town {uuid.uuid4().hex[:8]}"
    hall = api.create_resource(name="Listing hall")["resource_id"]
    services = [api.create_service([hall], name=name, city=town)
                for name in ("Yoga Bravo", "Yoga Alpha", "Yoga draft")]
    lots = [create_lot(api, name=name, city=town) for name in ("Lot B", "Lot A")]
    for service in services[:2]:
        assert api.request("POST", f"/services/{service['service_id']}/publish", organizer=True).status_code == 200
    for lot in lots:
        assert api.request("POST", f"/lots/{lot['lot_id']}/publish", organizer=True).status_code == 200

    first = api.request("GET", "/services", params={"city": town, "limit": 1})
    assert first.status_code == 200 and first.headers["Cache-Control"] == http.LISTING_FRESHNESS.header()
    page = first.json()
    assert [s["name"] for s in page["services"]] == ["Yoga Alpha"] and page["next_cursor"]
    rest = api.request("GET", "/services", params={"city": town, "limit": 1, "cursor": page["next_cursor"]}).json()
    assert [s["name"] for s in rest["services"]] == ["Yoga Bravo"]
    # a full page may be the last: its cursor then leads to an empty one (as GET /events pages)
    last = api.request("GET", "/services", params={"city": town, "limit": 1, "cursor": rest["next_cursor"]}).json()
    assert last == {"services": [], "next_cursor": None}
    assert api.request("GET", "/services", headers={"If-None-Match": first.headers["ETag"]},
                       params={"city": town, "limit": 1}).status_code == 304
    words = api.request("GET", "/services", params={"city": town, "q": "yoga bravo"}).json()
    assert [s["name"] for s in words["services"]] == ["Yoga Bravo"]

    listed = api.request("GET", "/lots", params={"city": town}).json()
    assert [lot["name"] for lot in listed["lots"]] == ["Lot A", "Lot B"]
    assert listed["lots"][0]["spaces"] == {"COMPACT": 1, "REGULAR": 1, "LARGE": 1, "HANDICAP": 1}
    for path, params, code in [("/lots", {"cursor": page["next_cursor"]}, "invalid_cursor"),
                               ("/lots", {"limit": "0"}, "validation_error"),
                               ("/services", {"q": "!!"}, "invalid_query")]:
        refused = api.request("GET", path, params={"city": town, **params})
        assert (refused.status_code, refused.json()["error"]["code"]) == (400, code), (path, params)


def test_a_paid_reservations_pass_is_svg_text_and_texts_follow_accept_language(api, sandbox):
    lot, who = create_lot(api, spaces=[{"space_id": "R1", "type": "REGULAR"}]), customer()
    start, end = now_window()
    held = api.request("POST", f"/lots/{lot['lot_id']}/reservations", customer=who, key=str(uuid.uuid4()),
                       headers={"Accept-Language": "ru-RU,ru;q=0.9,en;q=0.5"},
                       json={"vehicle_type": "REGULAR", "plate": "A123BC77", "from": start, "to": end})
    assert held.status_code == 201 and held.json()["hold_next_step"].startswith("Места закреплены за вами до")
    held = held.json()
    path = f"/bookings/{held['booking_id']}/pass.svg"
    unpaid = api.request("GET", path, customer=who, headers={"Accept-Language": "ru"})
    assert unpaid.status_code == 404 and unpaid.json()["error"]["code"] == "no_pass"
    assert unpaid.json()["error"]["message"].startswith("У этого бронирования сейчас нет пропуска")
    paid(api, sandbox, held, who)
    answer = api.request("GET", path, customer=who)
    assert answer.status_code == 200 and answer.headers["Content-Type"] == "image/svg+xml"
    assert answer.text.startswith("<svg") and "<title>Entry pass</title>" in answer.text
    texts = api.request("GET", "/texts", params={"lang": "ru"}).json()
    assert texts["texts"]["ru"]["hold_next_step"].startswith("Места закреплены за вами до {until}")
