"""Transactions carry labels: a cancellation names the failed items by label, never by position."""
from dataclasses import replace

import pytest

from holdfast.adapters.codec import Cancelled, put_new
from holdfast.ports import Change, IdempotencyRecord, PlacesTaken
from holdfast.adapters.inventory_store import CLAIM, claim_items
from holdfast.domain.inventory import InventoryKind, Move, Places
from holdfast.schemas import BookingIn

from .conftest import event_request


def seated(catalog):
    return catalog.create_event(event_request(capacity=None, seat_map={"rows": [{"name": "A", "seats": 4}]}))["event_id"]


def test_a_failed_claim_is_named_wherever_it_sits_in_the_transaction(catalog, bookings, store):
    event_id = seated(catalog)
    bookings.create_booking(event_id, "bob", "k1", BookingIn(seats=["A-2"]))
    claims = claim_items(store.table, event_id, "b-x", Places(InventoryKind.NAMED, 3, units=("A-1", "A-2", "A-3")),
                         Move.HOLD)
    extra = [("note", put_new(store.table, {"pk": "TEST#note", "sk": "one"})),
             ("note2", put_new(store.table, {"pk": "TEST#note", "sk": "two"}))]
    for items in (claims + extra, extra + claims, extra[:1] + claims + extra[1:]):
        cancelled = store.db._transact(items)
        assert cancelled is not None and cancelled.failed_under(CLAIM) == ["A-2"]
        assert not cancelled.failed("note") and not cancelled.conflict


def test_the_hold_reports_every_seat_taken_by_label(catalog, bookings, store):
    event_id = seated(catalog)
    bookings.create_booking(event_id, "bob", "k1", BookingIn(seats=["A-3"]))
    first, journal = store.get_booking_with_journal(
        bookings.create_booking(event_id, "carol", "k2", BookingIn(seats=["A-1"])).booking.booking_id)
    # A second booking racing for A-1 and A-3 (both gone by now), with A-2 free between them.
    racer = replace(first, booking_id="b-racer", counted_hold=False,
                    places=Places(InventoryKind.NAMED, 3, units=("A-1", "A-2", "A-3")))
    with pytest.raises(PlacesTaken) as err:
        store.commit(Change(after=racer, journal=journal[0], outbox={"type": "test"},
                            idempotency=IdempotencyRecord("carol", "k3", "booking", "f", "b-racer")))
    assert err.value.failed == ["A-1", "A-3"]
    assert store.get_booking("b-racer") is None


def test_labels_must_be_unique_and_reasons_map_by_label(store):
    with pytest.raises(ValueError):
        store.db._transact([("a", put_new(store.table, {"pk": "X", "sk": "1"})),
                         ("a", put_new(store.table, {"pk": "X", "sk": "2"}))])
    cancelled = Cancelled({"idempotency": "None", "claim:P1": "ConditionalCheckFailed", "claim:P2": "None"})
    assert cancelled.failed_under(CLAIM) == ["P1"] and cancelled.any_failed and not cancelled.failed("idempotency")
