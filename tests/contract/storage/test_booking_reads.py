"""What the core reads back: an offering and its inventory as ``put_event`` wrote it, bookings
(alone, with their journal, in batches), the hold's batched read, the expiry index (by bucket and
by due time), the review queue, and an event's cancellation with its bulk job's record."""
from __future__ import annotations

import random
from dataclasses import replace
from decimal import Decimal

import pytest
from botocore.exceptions import ClientError

from holdfast.adapters.expiry_buckets import bucket_of
from holdfast.domain.booking import Payment
from holdfast.domain.inventory import Move, Pool
from holdfast.domain.statuses import BookingStatus
from holdfast.ports import AlreadyCancelled, EventNotFound, ItemExists, KeyUsed

from .bookings import AT, booking, counted, named, new_hold, offering, step


def test_an_offering_reads_back_with_its_inventory_and_is_created_once(backend, ids):
    store, event = backend.store, ids("ev")
    assert store.get_event(event) is None and store.read_pools(event) == [] and store.pool_keys(event) == []
    written = offering(store, event, pools=[3, 2])
    assert store.get_event(event) == {"pk": f"EVENT#{event}", "sk": "META", **written,
                                      "hold_ttl_seconds": Decimal(600), "creation_fingerprint": f"fp-{event}"}
    assert store.read_pools(event) == [Pool("POOL#000", 3, 3, 0, 0), Pool("POOL#001", 2, 2, 0, 0)]
    assert store.event_cancelled(event) is False
    with pytest.raises(ItemExists):                     # the same request again
        store.put_event(written, [3, 2], None, f"fp-{event}")
    with pytest.raises(ItemExists):                     # another body under the id
        store.put_event({**written, "name": "Other"}, [9], None, "fp-other")
    assert store.read_pools(event) == [Pool("POOL#000", 3, 3, 0, 0), Pool("POOL#001", 2, 2, 0, 0)]
    assert store.get_event(event)["name"] == "Club night"


def test_units_read_in_unit_order_by_name_and_by_batch(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, units=["B-1", "A-2", "A-10", "A-1"])
    store.commit(new_hold(booking(ids("b"), event, named("A-2"))))
    units = store.list_units(event)
    assert [(unit["unit"], unit["sk"], unit["state"]) for unit in units] == [
        ("A-1", "UNIT#A-1", "available"), ("A-10", "UNIT#A-10", "available"), ("A-2", "UNIT#A-2", "held"),
        ("B-1", "UNIT#B-1", "available")]
    assert store.seat_states(event) == {"A-1": "available", "A-10": "available", "A-2": "held", "B-1": "available"}
    assert store.read_units(event, ["A-2", "Z-9"])["A-2"]["booking_id"] == ids("b")
    assert list(store.read_units(event, ["A-2", "Z-9"])) == ["A-2"]
    assert store.unit_keys(event, ["A-1", "X" * 1100]) == store.unit_keys(event, ["A-1"])    # too long: no seat
    assert store.read_units(event, []) == {} and store.batch_get([]) == {}


def test_the_holds_batched_read_brings_the_inventory_the_record_and_a_gate_shard(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[2])
    store.commit(new_hold(booking(ids("b"), event, counted(1)), key=ids("k")))
    record_key = store.idempotency_key("ann", ids("k"), "booking")
    gate = store.sale_gate_key(event, random.Random(3))
    assert gate == store.sale_gate_key(event, random.Random(3))
    found = store.batch_get(store.pool_keys(event) + [record_key, gate])
    assert store.pools_of(item for key, item in found.items() if key[1].startswith("POOL#")) == [
        Pool("POOL#000", 2, 1, 1, 0)]
    assert found[(record_key["pk"], record_key["sk"])]["result_id"] == ids("b")
    assert (gate["pk"], gate["sk"]) not in found                              # open, never written
    store.mark_event_cancelled(event, "storm", ids("cancel"), "fp", AT)
    assert "cancelled_at" in store.batch_get([gate])[(gate["pk"], gate["sk"])]
    with pytest.raises(ClientError) as twice:
        store.batch_get([gate, dict(gate)])
    assert twice.value.response["Error"]["Code"] == "ValidationException"


def test_bookings_read_alone_with_their_journal_and_in_batches(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[3])
    first, second = booking(ids("b1"), event, counted(1)), booking(ids("b2"), event, counted(1), customer="ben")
    store.commit(new_hold(first))
    store.commit(new_hold(second))
    paying = step(first, BookingStatus.PAYMENT_PENDING)
    store.commit(paying)
    found = store.get_bookings([ids("b2"), ids("missing"), ids("b1")])
    assert sorted(found, key=lambda b: b.booking_id) == sorted([paying.after, second], key=lambda b: b.booking_id)
    assert store.get_bookings([]) == []
    assert store.get_booking_with_journal(ids("missing")) == (None, [])
    _, journal = store.get_booking_with_journal(ids("b1"))
    assert [(entry.action, entry.from_status, entry.to_status) for entry in journal] == [
        ("hold_created", None, "HELD"), ("step", "HELD", "PAYMENT_PENDING")]
    assert sorted(store.customer_booking_ids("ann", event) + store.customer_booking_ids("ben", event)) == sorted(
        [ids("b1"), ids("b2")])
    assert sorted(store.event_booking_ids(event)) == sorted([ids("b1"), ids("b2")])


def test_the_due_index_holds_a_booking_while_a_timer_or_a_check_is_pending(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[5])
    early = booking(ids("b1"), event, counted(1), hold_expires_at="2030-01-01T12:00:01.000Z")
    late = booking(ids("b2"), event, counted(1), hold_expires_at="2030-01-01T12:00:09.000Z")
    later = booking(ids("b3"), event, counted(1), hold_expires_at="2030-01-01T12:00:04.000Z")
    for held in (early, late, later):
        store.commit(new_hold(held))
    mine = {ids("b1"), ids("b2"), ids("b3")}
    due = [booking_id for booking_id in store.due_bookings("2030-01-01T12:00:10.000Z", limit=1000) if booking_id in mine]
    assert due == [ids("b1"), ids("b3"), ids("b2")]                         # by due time
    assert ids("b2") not in store.due_bookings("2030-01-01T12:00:09.000Z", limit=1000)   # strictly before
    assert {ids("b1"), ids("b3")} <= set(store.due_in_bucket("2030-01-01T12:00:05.000Z"))
    assert ids("b2") not in store.due_in_bucket("2030-01-01T12:00:05.000Z")
    # the bucket is the platform's: other tests' holds may share it, so only ours are looked at
    assert set(store.bucket_booking_ids(bucket_of(early.hold_expires_at))) & mine == {ids("b1"), ids("b3")}
    assert set(store.bucket_booking_ids(bucket_of(late.hold_expires_at))) & mine == {ids("b2")}
    store.commit(step(early, BookingStatus.CONFIRMED, Move.SELL))          # nothing left to look at
    checked = step(later, BookingStatus.PAYMENT_PENDING)
    checked = replace(checked, after=replace(checked.after, hold_expires_at="2030-01-01T12:00:04.000Z", payment=Payment(
        idempotence_key="pk-1", state="CREATED", next_check_at="2030-01-01T11:59:59.000Z")))
    store.commit(checked)                                                   # the payment's check comes first
    due = [booking_id for booking_id in store.due_bookings("2030-01-01T12:00:10.000Z", limit=1000) if booking_id in mine]
    assert due == [ids("b3"), ids("b2")]
    assert set(store.bucket_booking_ids(bucket_of(early.hold_expires_at))) & mine == {ids("b1"), ids("b3")}


def test_a_deadline_on_a_bucket_boundary_is_due_in_both_buckets_it_touches(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[2])
    edge = booking(ids("b"), event, counted(1), hold_expires_at="2031-03-01T09:00:05.000Z")
    store.commit(new_hold(edge))
    assert ids("b") in store.due_in_bucket("2031-03-01T09:00:05.000Z")
    assert ids("b") in store.due_in_bucket("2031-03-01T09:00:10.000Z")        # BETWEEN includes its start
    assert ids("b") not in store.due_in_bucket("2031-03-01T09:00:15.000Z")
    assert ids("b") in store.bucket_booking_ids("2031-03-01T09:00:05.000Z")        # its own end
    assert ids("b") not in store.bucket_booking_ids("2031-03-01T09:00:10.000Z")


def test_due_bookings_stops_at_its_limit_oldest_first(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[9])
    for n in range(6):
        store.commit(new_hold(booking(ids(f"b{n}"), event, counted(1), customer=f"c{n}",
                                      hold_expires_at=f"1999-01-01T00:00:0{9 - n}.000Z")))
    assert store.due_bookings("1999-01-01T00:00:10.000Z", limit=3) == [ids("b5"), ids("b4"), ids("b3")]


def test_bookings_in_review_are_listed_until_they_leave_it(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[3])
    held = booking(ids("b"), event, counted(1))
    store.commit(new_hold(held))
    review = step(held, BookingStatus.MANUAL_REVIEW, Move.RELEASE)
    store.commit(review)
    assert review.after.booking_id in [b.booking_id for b in store.list_reviews()]
    flagged = step(review.after, BookingStatus.REFUNDED)
    store.commit(flagged)
    assert flagged.after.booking_id not in [b.booking_id for b in store.list_reviews()]
    noted = step(flagged.after)
    noted = replace(noted, after=replace(noted.after, review={"reason": "second payment"}))
    store.commit(noted)                                  # a review flag on a booking that stands
    assert replace(noted.after, counted_hold=False) in store.list_reviews()   # the slot is kept while holding


def test_a_cancellation_closes_sales_once_and_its_job_moves_on_once(backend, ids):
    store, event = backend.store, ids("ev")
    with pytest.raises(EventNotFound):
        store.mark_event_cancelled(event, "storm", ids("key0"), "fp", AT)
    assert store.cancel_request(ids("key0")) is None
    offering(store, event, pools=[2])
    store.mark_event_cancelled(event, "storm", ids("key"), "fp", AT)
    assert store.event_cancelled(event) is True
    meta = store.get_event(event)
    assert (meta["cancelled_at"], meta["cancel_reason"], meta["cancel_attempt"]) == (AT, "storm", 1)
    request = store.cancel_request(ids("key"))
    assert (request["fingerprint"], request["result_id"]) == ("fp", event)
    assert event in store.cancelling_events()
    with pytest.raises(KeyUsed):
        store.mark_event_cancelled(event, "storm", ids("key"), "fp", AT)
    with pytest.raises(AlreadyCancelled):
        store.mark_event_cancelled(event, "again", ids("key2"), "fp", AT)
    assert store.cancel_request(ids("key2")) is None
    assert store.next_cancel_attempt(event, 1) is True
    assert store.next_cancel_attempt(event, 1) is False
    assert store.next_cancel_attempt(ids("nothing"), 0) is False
    assert store.finish_cancellation(event, {"refunded": 2}, AT) is True
    assert store.finish_cancellation(event, {"refunded": 3}, AT) is False
    assert store.next_cancel_attempt(event, 2) is False                  # finished: no more attempts
    assert event not in store.cancelling_events()
    assert store.get_event(event)["cancel_summary"] == {"refunded": 2}
    assert store.finish_cancellation(ids("other"), {}, AT) is False


def test_the_event_index_answers_each_bookings_placing_time(backend, ids):
    """``event_booking_times``: every booking of the event with the ``created_at`` the hold's
    transaction wrote beside it (the operator's sales page sorts by it, newest first)."""
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[3])
    early = booking(ids("b1"), event, counted(1), created_at="2030-01-01T12:00:00.000Z")
    late = booking(ids("b2"), event, counted(1), customer="ben", created_at="2030-01-01T12:05:00.000Z")
    store.commit(new_hold(early))
    store.commit(new_hold(late))
    assert sorted(store.event_booking_times(event), reverse=True) == [
        ("2030-01-01T12:05:00.000Z", ids("b2")), ("2030-01-01T12:00:00.000Z", ids("b1"))]
    assert store.event_booking_times(ids("other")) == []


def test_the_event_index_lists_its_confirmed_bookings_newest_first_a_page_at_a_time(backend, ids):
    """``sold_positions``: the write that confirms a booking lists its index entry among its
    offering's sales (a hold alone is not listed; a second write while CONFIRMED lists nothing
    more), read newest first by placing time, ``limit`` at a time, strictly older than a position:
    what the operator's sales page pages through without reading the whole index."""
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[10])
    made = []
    for n in range(4):
        held = booking(ids(f"b{n}"), event, counted(1), customer=f"c{n}", created_at=f"2030-01-01T12:0{n}:00.000Z")
        store.commit(new_hold(held))
        made.append(held)
    for held in made[:3]:   # three are paid; the fourth stays a hold
        store.commit(step(held, BookingStatus.CONFIRMED, Move.SELL))
    paid = store.get_booking(made[1].booking_id)
    store.commit(step(paid, BookingStatus.CONFIRMED))   # a journalled change while confirmed
    newest = [(f"2030-01-01T12:0{n}:00.000Z", ids(f"b{n}")) for n in (2, 1, 0)]
    assert store.sold_positions(event, None, 10) == newest
    assert store.sold_positions(event, None, 2) == newest[:2]
    assert store.sold_positions(event, newest[1], 2) == newest[2:]
    assert store.sold_positions(event, newest[2], 2) == []
    assert store.sold_positions(ids("other"), None, 5) == []


def test_the_sales_of_an_event_page_through_every_shard_in_order(backend, ids):
    """``sold_positions`` merges the index's sixteen shards: paged five at a time from the newest,
    every confirmed booking comes once, in placing order, whatever shard it fell in."""
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[40])
    expected = []
    for n in range(40):
        held = booking(ids(f"s{n:02d}"), event, counted(1), customer=f"c{n}",
                       created_at=f"2030-01-01T12:{n:02d}:00.000Z")
        store.commit(new_hold(held))
        store.commit(step(held, BookingStatus.CONFIRMED, Move.SELL))
        expected.append((held.created_at, held.booking_id))
    seen, before = [], None
    while True:
        page = store.sold_positions(event, before, 5)
        if not page:
            break
        assert len(page) == 5 or len(seen) + len(page) == 40
        seen += page
        before = page[-1]
    assert seen == sorted(expected, reverse=True)
