"""The catalog over HTTP on the local stack: publish, list, search, edit, seat map, best available."""
from __future__ import annotations

import uuid

import pytest

pytestmark = pytest.mark.integration


def test_publish_list_search_edit_and_cache_headers(api):
    word = "инт" + uuid.uuid4().hex[:8]  # a word no other test's event has
    event = api.create_event(name=f"Фестиваль {word}", city="Тверь", category="festival",
                             starts_at="2031-07-01T18:00:00Z")
    assert api.request("GET", "/events", params={"q": word}).json()["events"] == []
    published = api.request("POST", f"/events/{event['event_id']}/publish", organizer=True)
    assert published.status_code == 200 and published.json()["published"] is True
    listed = api.request("GET", "/events", params={"q": word.upper(), "city": "ТВЕРЬ"})
    assert listed.status_code == 200 and [e["event_id"] for e in listed.json()["events"]] == [event["event_id"]]
    assert listed.headers["Cache-Control"] == "public, max-age=30" and listed.headers["ETag"]
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
    assert answer.status_code == 200 and answer.headers["Cache-Control"] == "public, max-age=1"
    states = {seat["seat"]: seat["state"] for seat in answer.json()["seats"]}
    assert [seat for seat, state in states.items() if state == "held"] == seats
