"""A booking is written to in the language its creating request preferred (Accept-Language):
Russian when Russian ranks above English, English otherwise; kept on the booking for the
notifier, which has no request at hand. (The header's q-values: test_preferred_language.py.)"""
from __future__ import annotations

import pytest

from holdfast.domain.commands import HoldPlaces
from holdfast.domain.languages import known, preferred


@pytest.mark.parametrize("header, language", [
    (None, "en"), ("", "en"), ("ru", "ru"), ("ru-RU,ru;q=0.9,en-US;q=0.8", "ru"),
    ("en-US,en;q=0.9,ru;q=0.8", "en"), ("de-DE,ru;q=0.5", "ru"), ("de", "en"), ("*", "en"),
    ("ru;q=0, en", "en"), ("ru;q=abc,en;q=0.1", "en"), ("fr;q=0.9,RU;q=0.95", "ru"), ("en;q=0.5,ru;q=0.6", "ru"),
    (",,;;=", "en"), ("ru;q=2", "en"),
])
def test_the_preferred_supported_language(header, language):
    assert preferred(header) == language


def test_an_unknown_stored_language_reads_as_english():
    assert known("ru") == "ru" and known(None) == "en" and known("de") == "en"


def test_the_booking_keeps_its_language_and_a_repeat_in_another_is_the_same_hold(store, bookings, ga_event):
    first = bookings.create_booking(ga_event["event_id"], "alice", "k1", HoldPlaces(quantity=1, language="ru"))
    assert store.get_booking(first.booking.booking_id).language == "ru"
    again = bookings.create_booking(ga_event["event_id"], "alice", "k1", HoldPlaces(quantity=1, language="en"))
    assert again.replayed and again.booking.booking_id == first.booking.booking_id
    other = bookings.create_booking(ga_event["event_id"], "bob", "k2", HoldPlaces(quantity=1))
    assert store.get_booking(other.booking.booking_id).language == "en"
