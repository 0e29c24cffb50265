"""The outbox relay handles a stream batch as a batch: PutEvents in calls of ten, each event's
waitlist once, and a failure reported for exactly the records it concerns."""
from __future__ import annotations

import copy
import functools
import json

import pytest
from boto3.dynamodb.types import TypeSerializer

from holdfast import wiring
from tests.support.handlers import call, load_event


def image(n, event_id="ev-a", status="CONFIRMED", kind="booking.confirmed"):
    return {"pk": f"BOOKING#b-{n}", "sk": "OUTBOX#000002", "type": kind, "booking_id": f"b-{n}",
            "event_id": event_id, "customer_id": f"c-{n}", "status": status, "version": 2,
            "at": "2030-01-01T12:00:00.000Z"}


def batch(images):
    template = load_event("outbox_stream.json")["Records"][0]
    records = []
    for n, new_image in enumerate(images):
        record = copy.deepcopy(template)
        record["eventID"] = str(n)
        record["dynamodb"]["SequenceNumber"] = str(1000 + n)
        record["dynamodb"]["NewImage"] = {k: TypeSerializer().serialize(v) for k, v in new_image.items()}
        records.append(record)
    return {"Records": records}


class Bus:
    name = "notes"

    def __init__(self, reject=()):
        self.calls, self.reject = [], set(reject)

    def publish_many(self, entries):
        assert len(entries) <= 10
        self.calls.append([entry["Detail"] for entry in entries])
        return [i for i, entry in enumerate(entries) if any(f'"b-{n}"' in entry["Detail"] for n in self.reject)]


class Waitlist:
    def __init__(self, failing=()):
        self.advanced, self.failing = [], set(failing)

    def advance(self, event_id):
        self.advanced.append(event_id)
        if event_id in self.failing:
            raise RuntimeError("table throttled")
        return []


@pytest.fixture
def relay_with(handler_env, monkeypatch):
    def install(bus=None, waitlist=None):
        bus, waitlist = bus or Bus(), waitlist or Waitlist()
        # Cached factories, like the real ones (wiring.reset() clears every factory's cache).
        monkeypatch.setattr(wiring, "notifications_bus", functools.cache(lambda: bus))
        monkeypatch.setattr(wiring, "waitlist", functools.cache(lambda: waitlist))
        return bus, waitlist
    return install


def failures(result):
    return [item["itemIdentifier"] for item in result["batchItemFailures"]]


def test_a_batch_goes_out_in_calls_of_ten_and_each_waitlist_is_looked_at_once(relay_with):
    bus, waitlist = relay_with()
    images = [image(n, event_id="ev-a" if n % 3 else "ev-b") for n in range(23)]
    images += [image(90, status="PAYMENT_PENDING", kind="booking.payment_started")]  # still holding places
    status, result = call("outbox_relay", batch(images))
    assert failures(result) == []
    assert [len(c) for c in bus.calls] == [10, 10, 4]
    assert [json.loads(detail)["booking_id"] for detail in sum(bus.calls, [])] == [i["booking_id"] for i in images]
    assert sorted(waitlist.advanced) == ["ev-a", "ev-b"]


def test_an_exchange_offers_the_places_it_gave_back_to_the_waitlist_of_the_event_it_left(relay_with):
    _, waitlist = relay_with()
    moved = {**image(0, event_id="ev-later", status="CONFIRMED", kind="booking.exchanged"),
             "released_event_id": "ev-first"}
    status, result = call("outbox_relay", batch([moved]))
    assert failures(result) == [] and sorted(waitlist.advanced) == ["ev-first", "ev-later"]


def test_a_rejected_entry_fails_its_record_alone(relay_with):
    relay_with(bus=Bus(reject={4, 12}))
    status, result = call("outbox_relay", batch([image(n) for n in range(15)]))
    assert failures(result) == ["1004", "1012"]


def test_a_failed_waitlist_fails_the_records_of_that_event_only(relay_with):
    _, waitlist = relay_with(waitlist=Waitlist(failing={"ev-b"}))
    images = [image(0, "ev-a"), image(1, "ev-b"), image(2, "ev-a"), image(3, "ev-b")]
    status, result = call("outbox_relay", batch(images))
    assert failures(result) == ["1001", "1003"] and sorted(waitlist.advanced) == ["ev-a", "ev-b"]


def test_a_crash_before_publishing_fails_that_record_and_the_rest_go_out(relay_with, monkeypatch):
    from holdfast import faults

    bus, _ = relay_with()
    monkeypatch.setenv("HOLDFAST_CRASH_POINTS", "outbox.before_publish:1")
    monkeypatch.setattr(faults, "_fired", {})
    status, result = call("outbox_relay", batch([image(n) for n in range(3)]))
    assert failures(result) == ["1000"]
    assert len(bus.calls) == 1 and len(bus.calls[0]) == 2


def test_without_a_bus_the_relay_records_the_notifications_itself(handler_env, monkeypatch):
    monkeypatch.setattr(wiring, "waitlist", functools.cache(Waitlist))
    status, result = call("outbox_relay", batch([image(n) for n in range(3)]))
    assert failures(result) == []
    assert [n["type"] for n in wiring.store().list_notifications("c-1")] == ["booking.confirmed"]


def test_without_a_bus_an_event_change_reaches_each_customer_holding_places(handler_env, monkeypatch):
    from tests.support.handlers import api_event

    monkeypatch.setattr(wiring, "waitlist", functools.cache(Waitlist))
    body = json.loads(load_event("create_event.json")["body"])
    status, event = call("events_api", api_event("create_event.json", headers={"X-Api-Key": "organizer-test-key"},
                                                 body=body))
    assert status == 201, event
    for customer in ("ann", "bob"):
        status, _ = call("bookings_api", api_event("create_booking.json", path_params={"event_id": event["event_id"]},
                                                   body={"quantity": 1},
                                                   headers={"Idempotency-Key": f"k-{customer}", "X-Customer-Id": customer}))
        assert status == 201
    change = {"pk": f"EVENT#{event['event_id']}", "sk": "OUTBOX#000002", "type": "event.changed",
              "event_id": event["event_id"], "version": 2, "at": "2030-01-01T12:00:00.000Z", "name": body["name"],
              "changes": {"venue": {"before": "A", "after": "B"}}}
    status, result = call("outbox_relay", batch([change]))
    assert failures(result) == []
    for customer in ("ann", "bob"):
        assert [n["type"] for n in wiring.store().list_notifications(customer)] == ["event.changed"]
