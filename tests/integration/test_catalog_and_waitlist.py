"""The catalog over HTTP on the local stack: publish, list, search, edit, seat map, best available."""
from __future__ import annotations

import uuid

import pytest

from holdfast.entry import http
from tests.support.stack_time import days_ahead

pytestmark = pytest.mark.integration


def test_publish_list_search_edit_and_cache_headers(api):
    word = "инт" + uuid.uuid4().hex[:8]  # a word no other test's event has
    event = api.create_event(name=f"Фестиваль {word}", city="Тверь", category="festival",
                             starts_at=f"{days_ahead(200)}T18:00:00Z")
    assert api.request("GET", "/events", params={"q": word}).json()["events"] == []
    published = api.request("POST", f"/events/{event['event_id']}/publish", organizer=True)
    assert published.status_code == 200 and published.json()["published"] is True
    listed = api.request("GET", "/events", params={"q": word.upper(), "city": "ТВЕРЬ"})
    assert listed.status_code == 200 and [e["event_id"] for e in listed.json()["events"]] == [event["event_id"]]
    assert listed.headers["Cache-Control"] == http.LISTING_FRESHNESS.header() and listed.headers["ETag"]
    again = api.request("GET", "/events", params={"q": word.upper(), "city": "ТВЕРЬ"},
                        headers={"If-None-Match": listed.headers["ETag"]})
    assert again.status_code == 304
    renamed = api.request("PATCH", f"/events/{event['event_id']}", organizer=True, json={"city": "Казань"})
    assert renamed.status_code == 200, renamed.text
    assert api.request("GET", "/events", params={"q": word, "city": "Тверь"}).json()["events"] == []
    assert len(api.request("GET", "/events", params={"q": word, "city": "казань"}).json()["events"]) == 1


def test_seat_map_and_best_available(api):
    event = api.create_event(capacity=None, seat_map={"rows": [{"name": "A", "seats": 6}, {"name": "B", "seats": 6}]})
    booking = api.book(event["event_id"], "ba-cust", {"quantity": 3, "best_available": True})
    assert booking.status_code == 201, booking.text
    seats = booking.json()["places"]["seats"]
    assert seats in (["A-1", "A-2", "A-3"], ["A-4", "A-5", "A-6"])
    answer = api.request("GET", f"/events/{event['event_id']}/seats")
    assert answer.status_code == 200 and answer.headers["Cache-Control"] == http.SEAT_MAP_FRESHNESS.header()
    states = {seat["seat"]: seat["state"] for seat in answer.json()["seats"]}
    assert [seat for seat, state in states.items() if state == "held"] == seats


CYRILLIC, LATIN = "абвгдзиклмнопрту", "abvgdziklmnoprtu"   # one letter each way, nothing folded


def test_search_by_prefix_spelling_and_typo_with_the_headers_a_cdn_reads(api):
    """Issue 35: a word found from a prefix in either alphabet, spelled in the other, or with one
    typo; what each public GET lets a CDN keep, and that no error is kept."""
    digits = uuid.uuid4().hex[:9]
    russian = "".join(CYRILLIC[int(d, 16)] for d in digits)
    latin = "".join(LATIN[int(d, 16)] for d in digits)
    event = api.create_event(name=f"Квартет {russian.capitalize()}", venue="Зал", city="Тверь", category="music",
                             starts_at=f"{days_ahead(230)}T18:00:00Z")
    assert api.request("GET", "/events", params={"q": latin}).json()["events"] == []     # not published yet
    assert api.request("POST", f"/events/{event['event_id']}/publish", organizer=True).status_code == 200
    typo = latin[:6] + ("a" if latin[6] != "a" else "o") + latin[7:]
    for text in (russian[:6], latin[:6], latin, russian.upper(), typo, f"kvartet {latin[:5]}"):
        found = api.request("GET", "/events", params={"q": text})
        assert found.status_code == 200 and [e["event_id"] for e in found.json()["events"]] == [event["event_id"]], text
        assert found.headers["Cache-Control"] == http.LISTING_FRESHNESS.header()
    page = api.request("GET", f"/events/{event['event_id']}")
    assert page.headers["Cache-Control"] == http.EVENT_FRESHNESS.header() and page.headers["ETag"]
    assert api.request("GET", f"/events/{event['event_id']}",
                       headers={"If-None-Match": page.headers["ETag"]}).status_code == 304
    refused = api.request("GET", "/events", params={"q": "!!!"}, headers={"Accept-Language": "ru"})
    assert refused.status_code == 400 and refused.headers["Cache-Control"] == "no-store"
    assert refused.headers["Vary"] == "Accept-Language"
