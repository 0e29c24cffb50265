"""Holds through the in-memory store: atomic take, idempotent repeats, sold out without writes, expiry."""
from unittest import mock

import pytest

from holdfast.domain.errors import (
    Conflict,
    Forbidden,
    IdempotencyKeyReused,
    InvalidRequest,
    NotFound,
    RequestInProgress,
    SeatsUnavailable,
    SoldOut,
)
from holdfast.domain.statuses import BookingStatus
from holdfast.ports import TransientStoreError
from holdfast.schemas import BookingIn
from holdfast.services.bookings import HOLD_ATTEMPTS


@pytest.fixture
def store(fake_store):
    return fake_store


def qty(n):
    return BookingIn(quantity=n)


def counts(catalog, event):
    return catalog.get_event(event["event_id"])["counts"]


def test_hold_takes_places_and_schedules_expiry(bookings, catalog, ga_event, scheduled):
    result = bookings.create_booking(ga_event["event_id"], "alice", "key-1", qty(3))
    booking = result.booking
    assert not result.replayed
    assert booking.status is BookingStatus.HELD
    assert booking.amount.as_dict() == {"value": "4500.00", "currency": "RUB"}
    assert booking.hold_expires_at == "2030-01-01T12:10:00.000Z"
    assert counts(catalog, ga_event) == {"available": 7, "held": 3, "sold": 0}
    assert scheduled == [(ga_event["event_id"], booking.hold_expires_at)]   # the bucket: offering and deadline
    view = bookings.view(booking.booking_id, "alice")
    assert [entry["action"] for entry in view["journal"]] == ["hold_created"]


def test_same_key_same_body_returns_the_same_booking(bookings, catalog, ga_event):
    first = bookings.create_booking(ga_event["event_id"], "alice", "key-1", qty(2)).booking
    again = bookings.create_booking(ga_event["event_id"], "alice", "key-1", qty(2))
    assert again.replayed and again.booking.booking_id == first.booking_id
    assert counts(catalog, ga_event)["held"] == 2


def test_same_key_other_body_is_rejected(bookings, ga_event):
    bookings.create_booking(ga_event["event_id"], "alice", "key-1", qty(2))
    with pytest.raises(IdempotencyKeyReused):
        bookings.create_booking(ga_event["event_id"], "alice", "key-1", qty(3))


def test_the_contact_address_is_kept_shown_and_part_of_the_request(bookings, store, ga_event):
    request = BookingIn(quantity=1, contact_email="Ann.Lee@Example.ORG")
    booking = bookings.create_booking(ga_event["event_id"], "alice", "key-1", request).booking
    assert booking.contact_email == "Ann.Lee@example.org"  # the domain is case-insensitive, the name is not
    assert bookings.view(booking.booking_id, "alice")["contact_email"] == "Ann.Lee@example.org"
    assert store.get_booking(booking.booking_id).contact_email == "Ann.Lee@example.org"
    [outbox] = store.table.query(f"BOOKING#{booking.booking_id}", prefix="OUTBOX#")
    assert outbox["contact_email"] == "Ann.Lee@example.org"
    assert bookings.create_booking(ga_event["event_id"], "alice", "key-1", request).replayed
    with pytest.raises(IdempotencyKeyReused):  # the same key with another address is another request
        bookings.create_booking(ga_event["event_id"], "alice", "key-1",
                                BookingIn(quantity=1, contact_email="other@example.org"))
    plain = bookings.create_booking(ga_event["event_id"], "alice", "key-2", qty(1)).booking
    assert plain.contact_email is None and "contact_email" not in bookings.view(plain.booking_id, "alice")


@pytest.mark.parametrize("address", ["no-at-sign", "two@@example.org", "a@b", "a b@example.org", "<a@example.org>",
                                     "a@example.org,b@example.org", "x" * 65 + "@example.org", ""])
def test_a_malformed_contact_address_is_refused(address):
    with pytest.raises(ValueError, match="contact_email"):
        BookingIn(quantity=1, contact_email=address)


def test_keys_are_scoped_per_customer(bookings, ga_event):
    a = bookings.create_booking(ga_event["event_id"], "alice", "same", qty(1)).booking
    b = bookings.create_booking(ga_event["event_id"], "bob", "same", qty(1)).booking
    assert a.booking_id != b.booking_id


def test_replay_still_works_after_sell_out(bookings, ga_event):
    first = bookings.create_booking(ga_event["event_id"], "alice", "key-1", qty(10)).booking
    assert bookings.create_booking(ga_event["event_id"], "alice", "key-1", qty(10)).booking.booking_id == first.booking_id


def test_sold_out_answers_without_any_write(bookings, store, ga_event):
    bookings.create_booking(ga_event["event_id"], "alice", "k1", qty(9))
    with mock.patch.object(store, "commit", wraps=store.commit) as writes:
        with pytest.raises(SoldOut) as err:
            bookings.create_booking(ga_event["event_id"], "bob", "k2", qty(2))
    assert err.value.details == {"available": 1}
    assert writes.call_count == 0


def test_a_write_that_conflicted_is_tried_again_and_holds_once(bookings, catalog, store, ga_event):
    store.fail("commit", TransientStoreError("transaction conflict"), TransientStoreError("transaction conflict"))
    with mock.patch.object(store, "commit", wraps=store.commit) as writes:
        booking = bookings.create_booking(ga_event["event_id"], "alice", "k1", qty(2)).booking
    assert writes.call_count == 3
    assert store.get_booking(booking.booking_id).status is BookingStatus.HELD
    assert counts(catalog, ga_event) == {"available": 8, "held": 2, "sold": 0}


def test_a_write_that_keeps_conflicting_is_in_progress_and_holds_nothing(bookings, catalog, store, ga_event):
    store.fail("commit", *[TransientStoreError("transaction conflict")] * HOLD_ATTEMPTS)
    with pytest.raises(RequestInProgress):
        bookings.create_booking(ga_event["event_id"], "alice", "k1", qty(2))
    assert counts(catalog, ga_event) == {"available": 10, "held": 0, "sold": 0}
    assert bookings.create_booking(ga_event["event_id"], "alice", "k1", qty(2)).replayed is False


def test_last_places_come_from_several_pools(bookings, catalog, store):
    from tests.unit.conftest import event_request

    event = catalog.create_event(event_request(capacity=60))  # two pools of 30
    bookings.create_booking(event["event_id"], "a", "k1", qty(10))
    bookings.create_booking(event["event_id"], "b", "k2", qty(10))
    bookings.create_booking(event["event_id"], "c", "k3", qty(10))
    bookings.create_booking(event["event_id"], "d", "k4", qty(10))
    bookings.create_booking(event["event_id"], "e", "k5", qty(10))
    left = counts(catalog, event)["available"]
    assert left == 10
    last = bookings.create_booking(event["event_id"], "f", "k6", qty(10)).booking
    assert sum(n for _, n in last.places.pools) == 10
    assert counts(catalog, event) == {"available": 0, "held": 60, "sold": 0}


@pytest.mark.parametrize("body, code", [
    ({"quantity": 0}, "invalid_quantity"),
    ({"quantity": -1}, "invalid_quantity"),
    ({"quantity": 11}, "invalid_quantity"),
    ({"quantity": 10**12}, "invalid_quantity"),
    ({"seats": ["A-1"]}, "seats_not_supported"),
])
def test_bad_general_admission_requests(bookings, ga_event, body, code):
    with pytest.raises(InvalidRequest) as err:
        bookings.create_booking(ga_event["event_id"], "alice", "k", BookingIn(**body))
    assert err.value.code == code


def test_unknown_event(bookings):
    with pytest.raises(NotFound) as err:
        bookings.create_booking("nope", "alice", "k", qty(1))
    assert err.value.code == "event_not_found"


def test_seats_are_held_by_id_and_never_twice(bookings, catalog, seated_event):
    event_id = seated_event["event_id"]
    first = bookings.create_booking(event_id, "alice", "k1", BookingIn(seats=["A-1", "A-2"])).booking
    assert first.places.units == ("A-1", "A-2")
    with pytest.raises(SeatsUnavailable) as err:
        bookings.create_booking(event_id, "bob", "k2", BookingIn(seats=["A-2", "A-3"]))
    assert err.value.details["unavailable"] == ["A-2"]
    assert err.value.details["available"] == ["A-3", "A-4"]
    assert counts(catalog, seated_event) == {"available": 2, "held": 2, "sold": 0}


@pytest.mark.parametrize("seats, code", [
    (["A-1", "A-1"], "duplicate_seats"),
    (["Z-9"], "unknown_seats"),
    ([], "invalid_quantity"),
])
def test_bad_seat_requests(bookings, seated_event, seats, code):
    with pytest.raises(InvalidRequest) as err:
        bookings.create_booking(seated_event["event_id"], "alice", "k", BookingIn(seats=seats))
    assert err.value.code == code


def test_quantity_on_a_seat_map_is_refused(bookings, seated_event):
    with pytest.raises(InvalidRequest) as err:
        bookings.create_booking(seated_event["event_id"], "alice", "k", qty(1))
    assert err.value.code == "seats_required"


def test_expiry_waits_for_the_deadline_then_releases(bookings, catalog, ga_event, clock):
    booking = bookings.create_booking(ga_event["event_id"], "alice", "k", qty(4)).booking
    assert bookings.expire(booking.booking_id)["outcome"] == "not_yet"
    clock.advance(600)
    assert bookings.expire(booking.booking_id)["outcome"] == "expired"
    assert bookings.expire(booking.booking_id)["outcome"] == "noop_expired"
    assert counts(catalog, ga_event) == {"available": 10, "held": 0, "sold": 0}
    journal = bookings.view(booking.booking_id, "alice")["journal"]
    assert [(e["action"], e["actor"], e["to_status"]) for e in journal] == [
        ("hold_created", "customer", "HELD"), ("hold_expired", "timer", "EXPIRED")]


def test_an_expiry_that_loses_the_race_to_a_cancel_reads_again_and_leaves_it(bookings, catalog, store, ga_event,
                                                                              clock, monkeypatch):
    """The timer read the hold; the customer cancelled it before the timer's write landed. The
    timer's write collides (StaleBooking, nothing written), it reads the booking again and finds
    nothing left to end: the places come back once, by the cancellation."""
    booking = bookings.create_booking(ga_event["event_id"], "alice", "k", qty(4)).booking
    clock.advance(601)
    real_commit, raced = store.commit, []

    def cancelled_just_before(change):
        if change.before and change.after.status is BookingStatus.EXPIRED and not raced:
            raced.append(change.before.version)
            bookings.cancel(booking.booking_id, "alice")
        return real_commit(change)

    monkeypatch.setattr(store, "commit", cancelled_just_before)
    assert bookings.expire(booking.booking_id)["outcome"] == "noop_cancelled"
    assert raced == [1]
    assert store.get_booking(booking.booking_id).status is BookingStatus.CANCELLED
    assert counts(catalog, ga_event) == {"available": 10, "held": 0, "sold": 0}
    journal = bookings.view(booking.booking_id, "alice")["journal"]
    assert [e["action"] for e in journal] == ["hold_created", "cancelled_by_customer"]


def test_cancel_releases_at_once_and_repeats_harmlessly(bookings, catalog, seated_event):
    booking = bookings.create_booking(seated_event["event_id"], "alice", "k", BookingIn(seats=["A-3"])).booking
    assert bookings.cancel(booking.booking_id, "alice").status is BookingStatus.CANCELLED
    assert bookings.cancel(booking.booking_id, "alice").status is BookingStatus.CANCELLED
    assert counts(catalog, seated_event) == {"available": 4, "held": 0, "sold": 0}
    assert len(bookings.view(booking.booking_id, "alice")["journal"]) == 2


def test_only_the_owner_reads_or_cancels(bookings, ga_event):
    booking = bookings.create_booking(ga_event["event_id"], "alice", "k", qty(1)).booking
    with pytest.raises(Forbidden):
        bookings.view(booking.booking_id, "mallory")
    with pytest.raises(Forbidden):
        bookings.cancel(booking.booking_id, "mallory")


def test_expired_booking_cannot_be_cancelled(bookings, ga_event, clock):
    booking = bookings.create_booking(ga_event["event_id"], "alice", "k", qty(1)).booking
    clock.advance(601)
    bookings.expire(booking.booking_id)
    with pytest.raises(Conflict) as err:
        bookings.cancel(booking.booking_id, "alice")
    assert err.value.code == "not_cancellable"
