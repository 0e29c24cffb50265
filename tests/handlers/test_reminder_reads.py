"""The reminder path reads each hold's booking once: the notifier's ``remind`` (one hold) and
``remind_all`` (a tick's bucket) hand the booking they read to the notification instead of the
notification reading it again (by itself, or inside the batch read of offerings and records)."""
from __future__ import annotations

import json

from holdfast import wiring
from holdfast.adapters.expiry_buckets import bucket_of
from tests.support.handlers import api_event, call, load_event


class CountingStore:
    """The real store, with every booking each call read written down (name, booking ids)."""

    def __init__(self, store) -> None:
        self.store = store
        self.reads: list[tuple[str, tuple[str, ...]]] = []

    def get_booking(self, booking_id):
        self.reads.append(("get_booking", (booking_id,)))
        return self.store.get_booking(booking_id)

    def get_bookings(self, booking_ids):
        self.reads.append(("get_bookings", tuple(booking_ids)))
        return self.store.get_bookings(booking_ids)

    def message_reads(self, booking_ids, event_ids, notes):
        self.reads.append(("message_reads", tuple(booking_ids)))
        return self.store.message_reads(booking_ids, event_ids, notes)

    def __getattr__(self, name):
        return getattr(self.store, name)

    def booking_reads(self, booking_id: str) -> list[str]:
        return [name for name, ids in self.reads if booking_id in ids]


def _hold(customer: str) -> dict:
    body = {**json.loads(load_event("create_event.json")["body"]), "hold_ttl_seconds": 600}
    event = call("events_api", api_event("create_event.json", headers={"X-Api-Key": "organizer-test-key"}, body=body))[1]
    status, booking = call("bookings_api", api_event(
        "create_booking.json", path_params={"event_id": event["event_id"]},
        body={"quantity": 1, "contact_email": f"{customer}@example.org"},
        headers={"Idempotency-Key": f"k-{customer}", "X-Customer-Id": customer}))
    assert status == 201, booking
    return booking


def _counting(monkeypatch) -> CountingStore:
    counting = CountingStore(wiring.store())
    monkeypatch.setattr(wiring, "store", lambda: counting)
    return counting


def test_remind_reads_the_booking_once(handler_env, monkeypatch):
    booking = _hold("once-1")
    counting = _counting(monkeypatch)
    assert call("notifier", {"remind_booking_id": booking["booking_id"]})[1]["reminded"] is True
    assert counting.booking_reads(booking["booking_id"]) == ["get_booking"]
    # a repeat finds the reminder recorded, still on one read of the booking
    counting.reads.clear()
    assert call("notifier", {"remind_booking_id": booking["booking_id"]})[1]["reminded"] is False
    assert counting.booking_reads(booking["booking_id"]) == ["get_booking"]


def test_a_bucket_s_reminders_read_each_booking_once(handler_env, monkeypatch):
    held = [_hold(f"bucket-{n}") for n in range(2)]
    counting = _counting(monkeypatch)
    reminded = sum(call("notifier", {"remind_bucket": {"bucket": b}})[1]["reminded"]
                   for b in sorted({bucket_of(h["hold_expires_at"]) for h in held}))
    assert reminded == 2
    assert [counting.booking_reads(h["booking_id"]) for h in held] == [["get_bookings"]] * 2
