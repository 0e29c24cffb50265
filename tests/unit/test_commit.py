"""The one way to write: ``commit`` of a ``Change`` names why it wrote nothing from the label of
the item whose condition failed, one outcome of holdfast.ports per label."""
from dataclasses import replace

import pytest

from holdfast.adapters.codec import put_new
from holdfast.adapters.sale_gate import close_gates
from holdfast.domain.booking import JournalEntry
from holdfast.domain.inventory import InventoryKind, Places
from holdfast.ports import (Change, DuplicateRequest, HoldLimitReached, IdempotencyRecord, ItemExists, PlacesTaken,
                            SalesStopped, StaleBooking)
from holdfast.schemas import BookingIn


def held(bookings, event, customer="carol", key="k1", **wanted):
    """The id of a hold made through the service."""
    booking_id = bookings.create_booking(event["event_id"], customer, key,
                                         BookingIn(**(wanted or {"quantity": 1}))).booking.booking_id
    return booking_id


def a_new_hold(store, booking_id, new_id, key, **changes):
    """A second hold shaped like ``booking_id``'s, under its own id and Idempotency-Key."""
    booking, journal = store.get_booking_with_journal(booking_id)
    racer = replace(booking, booking_id=new_id, **changes)
    record = IdempotencyRecord(racer.customer_id, key, "booking", "fingerprint", new_id)
    return Change(after=racer, journal=journal[0], outbox={"type": "test"}, idempotency=record)


def a_step(store, booking_id, **changes):
    """The stored booking moved one version on, as a service's change of it."""
    before = store.get_booking(booking_id)
    after = replace(before, version=before.version + 1, **changes)
    entry = JournalEntry(at="2030-01-01T12:00:00Z", action="test", actor="test", from_status=before.status.value,
                         to_status=after.status.value, decision="a step", ids={"booking_id": booking_id})
    return before, Change(before=before, after=after, journal=entry)


def pool_counts(store, event):
    return store.read_pools(event["event_id"])


def test_a_new_hold_commits_and_a_change_of_items_alone_too(store, bookings, ga_event):
    first = held(bookings, ga_event)
    store.commit(a_new_hold(store, first, "b-new", "k2", counted_hold=False))
    assert store.get_booking("b-new").version == 1
    store.commit(Change(items=(("note", put_new(store.table, {"pk": "TEST#note", "sk": "one"})),)))
    assert store.db._get("TEST#note", "one") is not None


def test_the_idempotency_label_is_a_duplicate_request(store, bookings, ga_event):
    first = held(bookings, ga_event)
    with pytest.raises(DuplicateRequest):
        store.commit(a_new_hold(store, first, "b-again", "k1", counted_hold=False))
    assert store.get_booking("b-again") is None


def test_the_booking_label_of_a_new_hold_is_an_item_that_exists(store, bookings, ga_event):
    first = held(bookings, ga_event)
    before = pool_counts(store, ga_event)
    with pytest.raises(ItemExists):
        store.commit(a_new_hold(store, first, first, "k2", counted_hold=False))
    assert pool_counts(store, ga_event) == before


def test_the_booking_label_of_a_change_is_a_stale_booking(store, bookings, ga_event):
    first = held(bookings, ga_event)
    _, change = a_step(store, first, contact_email="one@example.org")
    store.commit(change)
    with pytest.raises(StaleBooking):   # the same step again: the version it read is gone
        store.commit(replace(change, after=replace(change.after, contact_email="two@example.org")))
    assert store.get_booking(first).contact_email == "one@example.org"


def test_a_failed_item_of_a_change_is_a_stale_booking_and_writes_nothing(store, bookings, ga_event):
    first = held(bookings, ga_event)
    taken = ("ticket", put_new(store.table, {"pk": "TEST#ticket", "sk": "META"}))
    store.commit(Change(items=(taken,)))
    _, change = a_step(store, first, contact_email="one@example.org")
    with pytest.raises(StaleBooking):
        store.commit(replace(change, items=(taken,)))
    assert store.get_booking(first).version == 1
    fresh = ("pass", put_new(store.table, {"pk": "TEST#pass", "sk": "entry"}))
    with pytest.raises(StaleBooking) as err:   # items alone: the same outcome, naming the label
        store.commit(Change(items=(fresh, taken)))
    assert "ticket" in str(err.value)
    assert store.db._get("TEST#pass", "entry") is None


def test_the_sale_gate_label_is_sales_stopped(store, bookings, ga_event):
    first = held(bookings, ga_event)
    assert store.db._transact(close_gates(store.table, ga_event["event_id"], "2030-01-01T12:00:00Z")) is None
    before = pool_counts(store, ga_event)
    with pytest.raises(SalesStopped):
        store.commit(a_new_hold(store, first, "b-late", "k2", counted_hold=False))
    assert store.get_booking("b-late") is None and pool_counts(store, ga_event) == before


def test_the_hold_limit_label_is_hold_limit_reached(store, bookings, ga_event):
    first = held(bookings, ga_event)   # a counted hold: the customer's one slot is taken
    change = a_new_hold(store, first, "b-second", "k2")
    with pytest.raises(HoldLimitReached):
        store.commit(replace(change, hold_limit=1))
    assert store.get_booking("b-second") is None
    store.commit(replace(change, hold_limit=2))
    assert store.get_booking("b-second") is not None


def test_the_claim_labels_are_places_taken_by_unit(store, bookings, seated_event):
    first = held(bookings, seated_event, seats=["A-2"])
    held(bookings, seated_event, customer="dan", key="k9", seats=["A-4"])
    change = a_new_hold(store, first, "b-racer", "k2", counted_hold=False,
                        places=Places(InventoryKind.NAMED, 3, units=("A-2", "A-3", "A-4")))
    with pytest.raises(PlacesTaken) as err:
        store.commit(change)
    assert err.value.failed == ["A-2", "A-4"]
    assert store.get_booking("b-racer") is None
