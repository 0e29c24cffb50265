"""The expiry tick's tasks on the deployed handlers: ExpireHold and the notifier take the bucket
alone (the platform's, every offering's holds), and still take one offering's bucket from an
execution started before the ticks were shared."""
from __future__ import annotations

import json
import time

import pytest

from holdfast import wiring
from holdfast.adapters.expiry_buckets import bucket_markers, bucket_of, offering_shard_pk, shards_named, shifted
from holdfast.domain.statuses import BookingStatus
from tests.support.handlers import api_event, call, load_event, load_handler


def hold(event_id: str, customer: str) -> dict:
    status, booking = call("bookings_api", api_event(
        "create_booking.json", path_params={"event_id": event_id}, body={"quantity": 1},
        headers={"Idempotency-Key": f"k-{customer}", "X-Customer-Id": customer}))
    assert status == 201, booking
    return booking


def offering(hold_ttl_seconds: int) -> str:
    body = {**json.loads(load_event("create_event.json")["body"]), "hold_ttl_seconds": hold_ttl_seconds}
    status, created = call("events_api", api_event("create_event.json", headers={"X-Api-Key": "organizer-test-key"},
                                                   body=body))
    assert status == 201, created
    return created["event_id"]


def test_a_tick_expires_every_offering_s_hold_of_its_bucket_waiting_out_the_last_moment(handler_env):
    held = [hold(offering(1), f"tick-{n}") for n in range(2)]
    store = wiring.store()
    time.sleep(1.1)   # the one-second holds are due: their bucket ends less than a bucket from now
    # called as if the tick's wait woke early, within a bucket: the task waits the rest itself
    for bucket in sorted({bucket_of(b["hold_expires_at"]) for b in held}):
        result = call("expire_hold", {"bucket": bucket})[1]
        assert result["outcome"] == "done" and result["event_id"] == ""
    assert [store.get_booking(b["booking_id"]).status for b in held] == [BookingStatus.EXPIRED] * 2


def test_a_tick_woken_a_bucket_or_more_early_is_retried_by_the_state_machine(handler_env):
    booking = hold(offering(600), "early")
    with pytest.raises(load_handler("expire_hold").BucketNotDue):
        call("expire_hold", {"bucket": bucket_of(booking["hold_expires_at"])})
    assert wiring.store().get_booking(booking["booking_id"]).status is BookingStatus.HELD


def test_the_reminder_step_reminds_the_bucket_it_is_given_whatever_the_offering(handler_env):
    held = [hold(offering(600), f"remind-{n}") for n in range(2)]
    buckets = {bucket_of(b["hold_expires_at"]) for b in held}
    assert sum(call("notifier", {"remind_bucket": {"bucket": b}})[1]["reminded"] for b in buckets) == 2
    assert call("notifier", {"remind_bucket": {"bucket": ""}})[1] == {"reminded": 0}   # reminders off
    assert call("notifier", {"remind_bucket": {"bucket": shifted(min(buckets), -5)}})[1] == {"reminded": 0}


def test_an_execution_from_before_the_shared_ticks_still_finds_its_offering_s_holds(handler_env):
    event_id = offering(1)
    booking = hold(event_id, "legacy")
    bucket = bucket_of(booking["hold_expires_at"])
    store = wiring.store()
    # the entry as the hold transaction wrote it before issue 35
    store.db.client.put_item(TableName=store.db.table, Item={
        "pk": {"S": offering_shard_pk(event_id, bucket, 3)}, "sk": {"S": booking["booking_id"]},
        "booking_id": {"S": booking["booking_id"]}})
    legacy = {"event_id": event_id, "bucket": bucket}
    assert call("notifier", {"remind_bucket": legacy})[1] == {"reminded": 1}
    time.sleep(1.1)   # the hold is due: its bucket ends less than a bucket from now
    result = call("expire_hold", legacy)[1]
    assert (result["event_id"], result["holds"], result["expired"]) == (event_id, 1, 1)
    assert store.get_booking(booking["booking_id"]).status is BookingStatus.EXPIRED


def test_a_tick_started_since_the_shard_markers_reads_only_the_shards_they_name(handler_env, monkeypatch):
    """The state machine passes the tick's input on (``tick``); one whose ``index`` says the
    markers are written reads the bucket's markers and the shards they name: two queries for a
    bucket of one container's holds, not 33 (adapters/expiry_buckets.py)."""
    held = hold(offering(1), "indexed")
    bucket = bucket_of(held["hold_expires_at"])
    store = wiring.store()
    # this test's store wrote one shard; another test's holds of the same 5 s may have marked more
    named = shards_named(bucket_markers(store.db, bucket))
    assert store.bookings.expiry_writer.shard in named and len(named) < 4
    queried: list[str] = []
    original = store.db.client.query
    monkeypatch.setattr(store.db.client, "query", lambda **kw: queried.append(
        kw["ExpressionAttributeValues"][":pk"]["S"]) or original(**kw))
    tick = {"bucket": bucket, "remind_bucket": "", "index": "shards"}
    assert call("notifier", {"remind_bucket": {"bucket": bucket, "tick": tick}})[1] == {"reminded": 1}
    assert queried[0].endswith("#SHARDS") and len(queried) == 1 + len(named)
    queried.clear()
    time.sleep(1.1)   # the hold is due: its bucket ends less than a bucket from now
    result = call("expire_hold", {"bucket": bucket, "tick": tick})[1]
    assert result["expired"] >= 1 and len(queried) == 1 + len(named)
    assert store.get_booking(held["booking_id"]).status is BookingStatus.EXPIRED
