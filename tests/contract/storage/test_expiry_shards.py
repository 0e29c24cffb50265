"""The expiry index's shard markers (adapters/expiry_buckets.py): a tick started since them reads
its bucket's markers and only the shards they name, and still finds every hold of the bucket
whichever store (Lambda container) wrote it; a hold whose transaction failed leaves no marker and
no memory of one, so the writer's next hold of the bucket writes it."""
from __future__ import annotations

import random
from typing import Any

import pytest

from holdfast.adapters.expiry_buckets import EXPIRY_SHARDS, ShardWriter, bucket_of, marker_sk, shards_pk
from holdfast.ports import PlacesTaken

from .bookings import booking, counted, new_hold, offering


def writers(*seeds: int) -> list[ShardWriter]:
    """Writers on distinct shards (seeded, so a run is repeatable)."""
    found: list[ShardWriter] = []
    for seed in seeds:
        writer = ShardWriter(random.Random(seed))
        assert writer.shard not in {w.shard for w in found}, "pick seeds on distinct shards"
        found.append(writer)
    return found


def writing_as(store: Any, writer: ShardWriter) -> None:
    """The next holds of ``store`` are written as ``writer`` (another container's store)."""
    getattr(store, "bookings", store).expiry_writer = writer


def counted_queries(store: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The partition keys the store queries from now on (the adapter's client, the fake's table)."""
    seen: list[str] = []
    if hasattr(store, "db"):
        original = store.db.client.query

        def query(**kwargs: Any) -> Any:
            seen.append(kwargs["ExpressionAttributeValues"].get(":pk", kwargs["ExpressionAttributeValues"].get(":due", {})).get("S", ""))
            return original(**kwargs)
        monkeypatch.setattr(store.db.client, "query", query)
    else:
        original = store.table.query

        def query(pk: str, *args: Any, **kwargs: Any) -> Any:
            seen.append(pk)
            return original(pk, *args, **kwargs)
        monkeypatch.setattr(store.table, "query", query)
    return seen


def test_an_indexed_read_finds_every_writer_s_holds_reading_only_their_shards(backend, ids, monkeypatch):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[5])
    expires = "2033-02-01T08:00:02.000Z"
    bucket = bucket_of(expires)
    first, second = writers(1, 2)
    writing_as(store, first)
    for name in ("a1", "a2"):
        store.commit(new_hold(booking(ids(name), event, counted(1), hold_expires_at=expires)))
    writing_as(store, second)
    store.commit(new_hold(booking(ids("b1"), event, counted(1), hold_expires_at=expires)))
    # each writer's marker, once, in the bucket's markers; no marker for a shard nobody wrote
    for writer in (first, second):
        assert backend.raw(shards_pk(bucket), marker_sk(writer.shard, writer.name)) is not None
        assert bucket in writer.marked
    mine = {ids("a1"), ids("a2"), ids("b1")}
    seen = counted_queries(store, monkeypatch)
    assert set(store.bucket_booking_ids(bucket, indexed=True)) == mine
    assert sorted(seen) == sorted([shards_pk(bucket)] + [f"EXPIRY#{bucket}#{w.shard:02d}" for w in (first, second)])
    seen.clear()
    assert set(store.bucket_booking_ids(bucket)) == mine          # a tick from before the markers: every shard
    assert len(seen) == EXPIRY_SHARDS
    seen.clear()
    empty = bucket_of("2033-02-01T08:00:07.000Z")
    assert store.bucket_booking_ids(empty, indexed=True) == [] and seen == [shards_pk(empty)]   # one read


def test_a_writer_marks_a_bucket_once_and_only_after_a_committed_hold(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[1])
    expires = "2033-02-01T09:00:02.000Z"
    bucket = bucket_of(expires)
    (writer,) = writers(3)
    writing_as(store, writer)
    store.commit(new_hold(booking(ids("first"), event, counted(1), hold_expires_at=expires), key=ids("k1")))
    (late,) = writers(4)   # another container: the pool's one place is taken, nothing is written
    writing_as(store, late)
    with pytest.raises(PlacesTaken):
        store.commit(new_hold(booking(ids("refused"), event, counted(1), hold_expires_at=expires), key=ids("k2")))
    assert backend.raw(shards_pk(bucket), marker_sk(late.shard, late.name)) is None
    assert bucket not in late.marked
    other = ids("ev2")
    offering(store, other, pools=[1])
    store.commit(new_hold(booking(ids("second"), other, counted(1), hold_expires_at=expires), key=ids("k3")))
    assert backend.raw(shards_pk(bucket), marker_sk(late.shard, late.name)) is not None
    assert {ids("first"), ids("second")} <= set(store.bucket_booking_ids(bucket, indexed=True))


def test_a_writer_s_later_holds_of_a_marked_bucket_carry_no_marker():
    from holdfast.adapters.expiry_buckets import index_items

    (writer,) = writers(5)
    expires = "2033-02-01T10:00:02.000Z"
    first = index_items("t", writer, "ev", "b-1", expires)
    assert [label for label, _ in first] == ["expiry_bucket", "expiry_shard"]
    assert first[0][1]["Put"]["Item"]["pk"] == {"S": f"EXPIRY#{bucket_of(expires)}#{writer.shard:02d}"}
    writer.committed(bucket_of(expires))
    assert [label for label, _ in index_items("t", writer, "ev", "b-2", expires)] == ["expiry_bucket"]
    # the next bucket is marked again
    assert len(index_items("t", writer, "ev", "b-3", "2033-02-01T10:00:07.000Z")) == 2


def test_a_tick_reads_the_due_index_only_for_a_bucket_a_payment_check_was_put_in(backend, ids, monkeypatch):
    from dataclasses import replace

    from holdfast.adapters.expiry_buckets import check_marker_sk
    from holdfast.domain.booking import Payment
    from holdfast.domain.statuses import BookingStatus

    from .bookings import step

    store, event = backend.store, ids("ev")
    offering(store, event, pools=[2])
    (writer,) = writers(6)
    writing_as(store, writer)
    held = booking(ids("b"), event, counted(1), hold_expires_at="2033-02-01T11:00:09.000Z")
    store.commit(new_hold(held))
    check_at = "2033-02-01T11:00:03.000Z"     # the first check comes before the hold's end
    paying = step(held, BookingStatus.PAYMENT_PENDING)
    paying = replace(paying, after=replace(paying.after, payment=Payment(
        idempotence_key="pk-1", state="CREATED", next_check_at=check_at)))
    store.commit(paying)
    bucket = bucket_of(check_at)
    assert backend.raw(shards_pk(bucket), check_marker_sk(writer.name)) is not None
    assert bucket in writer.checks_marked
    seen = counted_queries(store, monkeypatch)
    assert ids("b") in store.due_in_bucket(bucket, indexed=True)
    assert ids("b") in store.due_in_bucket(bucket)
    seen.clear()
    later = bucket_of("2033-02-01T11:00:13.000Z")            # no check was put there: one read
    assert store.due_in_bucket(later, indexed=True) == [] and seen == [shards_pk(later)]
    # the hold's own bucket has its shard's marker, but no check's: its tick reads no due shard
    seen.clear()
    assert store.due_in_bucket(bucket_of(held.hold_expires_at), indexed=True) == []
    assert seen == [shards_pk(bucket_of(held.hold_expires_at))]


def test_a_check_on_a_bucket_boundary_is_marked_in_both_buckets_whose_due_range_holds_it():
    from holdfast.adapters.expiry_buckets import check_buckets
    from holdfast.domain.booking import Payment

    held = booking("b", "ev", counted(1))
    def paying(at: str):
        return replace_payment(held, Payment(idempotence_key="k", state="CREATED", next_check_at=at))
    assert check_buckets(None, paying("2033-02-01T11:00:03.000Z")) == ["2033-02-01T11:00:05.000Z"]
    assert check_buckets(None, paying("2033-02-01T11:00:05.000Z")) == ["2033-02-01T11:00:05.000Z",
                                                                        "2033-02-01T11:00:10.000Z"]
    same = paying("2033-02-01T11:00:03.000Z")
    assert check_buckets(same, same) == []        # unchanged: the write that set it marked it
    assert check_buckets(None, held) == []        # no payment, no check


def replace_payment(held, payment):
    from dataclasses import replace

    return replace(held, payment=payment)


def test_a_payment_write_that_fails_leaves_its_check_unmarked_and_the_next_one_marks_it(backend, ids):
    from dataclasses import replace

    from holdfast.adapters.expiry_buckets import check_marker_sk
    from holdfast.domain.booking import Payment
    from holdfast.domain.statuses import BookingStatus
    from holdfast.ports import StaleBooking

    from .bookings import step

    store, event = backend.store, ids("ev")
    offering(store, event, pools=[2])
    (writer,) = writers(7)
    writing_as(store, writer)
    held = booking(ids("b"), event, counted(1), hold_expires_at="2033-02-01T12:00:09.000Z")
    store.commit(new_hold(held))
    check_at = "2033-02-01T12:00:02.000Z"
    bucket = bucket_of(check_at)

    def paying(before):
        change = step(before, BookingStatus.PAYMENT_PENDING)
        return replace(change, after=replace(change.after, payment=Payment(
            idempotence_key="pk-1", state="CREATED", next_check_at=check_at)))

    stale = replace(held, version=held.version + 5)   # another write came first: nothing is written
    with pytest.raises(StaleBooking):
        store.commit(paying(stale))
    assert backend.raw(shards_pk(bucket), check_marker_sk(writer.name)) is None and bucket not in writer.checks_marked
    store.commit(paying(held))
    assert backend.raw(shards_pk(bucket), check_marker_sk(writer.name)) is not None
    assert ids("b") in store.due_in_bucket(bucket, indexed=True)
