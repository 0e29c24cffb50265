"""The sample events are read as of today (devstack/sample_events.py): no fixed date in events/
can become a date bomb, and the intervals inside a file stay as written."""
from __future__ import annotations

import json
from datetime import date, timedelta

from devstack import sample_events
from holdfast.clock import parse_iso, system_clock


def test_the_sample_day_is_read_as_a_month_from_today_and_intervals_are_kept():
    today = date(2041, 2, 27)
    text = '{"created_at": "2030-05-01T10:00:00.000Z", "hold_expires_at": "2030-05-01T10:10:00.000Z", ' \
           '"starts_at": "2030-06-01T19:00:00+03:00", "day": "2030-05-02", "key": "event-2030-05-01"}'
    moved = json.loads(sample_events.moved(text, today))
    assert moved["created_at"] == f"{today + timedelta(days=sample_events.LEAD_DAYS)}T10:00:00.000Z"
    assert parse_iso(moved["hold_expires_at"]) - parse_iso(moved["created_at"]) == timedelta(minutes=10)
    assert moved["starts_at"].endswith("T19:00:00+03:00") and moved["day"] == "2041-03-30"
    assert moved["key"] == "event-2041-03-29"


def test_what_only_looks_like_a_date_is_left_alone():
    assert sample_events.moved("2030-02-30 and 12030-05-01x and 2030-05-011", date(2040, 1, 1)) == \
        "2030-02-30 and 12030-05-01x and 2030-05-011"


def test_no_sample_event_starts_or_expires_in_the_past_today_or_in_ten_years():
    """Every moment a sample names as an event's start or a hold's end lies ahead of the day it
    is read on, whatever that day is."""
    for today in (system_clock().date(), system_clock().date() + timedelta(days=3653)):
        for path in sorted(sample_events.EVENTS_DIR.glob("*.json")):
            text = sample_events.text(path, today)
            for field in ("starts_at", "hold_expires_at"):
                for value in _values(json.loads(text), field):
                    assert parse_iso(value).date() > today, (path.name, field, value, today)


def _values(node, field):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == field and isinstance(value, str):
                yield value
            elif key == "body" and isinstance(value, str) and value.startswith("{"):
                yield from _values(json.loads(value), field)
            else:
                yield from _values(value, field)
    elif isinstance(node, list):
        for item in node:
            yield from _values(item, field)
