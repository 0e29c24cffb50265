"""transitions.decide_again, the one read-decide-retry loop, on the in-memory store: a decision
made on a copy someone else has already moved collides for real (the version condition fails, as
tests/contract/storage/ shows it does on DynamoDB), and the booking is read again and decided
again, up to the bound."""
from __future__ import annotations

import pytest

from holdfast.ports import StaleBooking
from holdfast.domain.errors import Conflict, TooBusy
from holdfast.schemas import BookingIn
from holdfast.services import transitions
from tests.support.fakes import always


@pytest.fixture
def store(fake_store):
    return fake_store


@pytest.fixture
def held(bookings, ga_event):
    return bookings.create_booking(ga_event["event_id"], "ann", "k1", BookingIn(quantity=1)).booking


def note(store, clock, booking, decision="noted"):
    """A journalled change that keeps the status: one new version, or StaleBooking."""
    return transitions.apply(store, booking, clock(), actor="test", action="test_note", decision=decision)


def moved_by_someone_else(store, clock, booking):
    """The booking as another writer leaves it; ``booking`` is now a stale copy."""
    return note(store, clock, booking, "the other writer")


def test_a_collision_reads_again_and_the_second_decision_is_written(store, clock, held):
    stale = held
    moved_by_someone_else(store, clock, held)
    seen = []

    def decide(booking):
        seen.append(booking.version)
        return note(store, clock, booking)

    after = transitions.decide_again(lambda: store.get_booking(held.booking_id), decide, first=stale,
                                     attempts=3, exhausted=TooBusy())
    assert seen == [1, 2]                       # the stale copy, then the booking as it stands
    assert after.version == 3 and store.get_booking(held.booking_id).version == 3
    _, journal = store.get_booking_with_journal(held.booking_id)
    assert [entry.decision for entry in journal][-2:] == ["the other writer", "noted"]


def test_without_a_first_copy_the_booking_is_read_before_the_first_decision(store, clock, held):
    reads = []

    def read():
        reads.append(1)
        return store.get_booking(held.booking_id)

    after = transitions.decide_again(read, lambda booking: note(store, clock, booking), attempts=3,
                                     exhausted=TooBusy())
    assert len(reads) == 1 and after.version == 2


def test_collisions_past_the_bound_give_the_exhausted_answer_and_write_nothing(store, clock, held):
    stale = held
    moved_by_someone_else(store, clock, held)
    decisions, pauses = [], []

    def decide_on_the_old_copy(booking):
        decisions.append(booking.version)
        return note(store, clock, stale)        # always the copy that lost: every attempt collides

    busy = TooBusy()
    with pytest.raises(TooBusy) as raised:
        transitions.decide_again(lambda: store.get_booking(held.booking_id), decide_on_the_old_copy, first=stale,
                                 attempts=4, exhausted=busy, pause=pauses.append)
    assert raised.value is busy
    assert decisions == [1, 2, 2, 2] and pauses == [0, 1, 2, 3]
    assert store.get_booking(held.booking_id).version == 2
    # a callable answer is returned instead of raised
    assert transitions.decide_again(lambda: store.get_booking(held.booking_id), decide_on_the_old_copy,
                                    attempts=2, exhausted=lambda: "kept changing") == "kept changing"


def test_a_booking_that_is_gone_gets_the_gone_answer(store, clock, held):
    stale = held
    moved_by_someone_else(store, clock, held)
    decisions = []

    def decide(booking):
        decisions.append(booking.version)
        # the booking vanishes while this decision is being written
        store.table.write((f"BOOKING#{held.booking_id}", "META"), always, lambda _: None)
        return note(store, clock, booking)

    assert transitions.decide_again(lambda: store.get_booking(held.booking_id), decide, first=stale, attempts=3,
                                    gone=lambda: "gone", exhausted=TooBusy()) == "gone"
    assert decisions == [1]
    # nothing there on the first read: no decision at all; an exception is raised
    missing = LookupError("no such booking")
    with pytest.raises(LookupError) as raised:
        transitions.decide_again(lambda: store.get_booking("no-such-booking"), decisions.append, attempts=3,
                                 gone=missing, exhausted=TooBusy())
    assert raised.value is missing and decisions == [1]


def test_without_a_gone_answer_nothing_read_is_decided_like_anything_else(store):
    # (a gate pass not yet recorded: the pass is applied)
    assert transitions.decide_again(lambda: store.get_booking("no-such-booking"),
                                    lambda found: "decided on nothing" if found is None else "found",
                                    attempts=3, exhausted=TooBusy()) == "decided on nothing"


def test_nothing_to_do_is_an_answer_and_writes_nothing(store, clock, held):
    answer = transitions.decide_again(lambda: store.get_booking(held.booking_id),
                                      lambda booking: "nothing_to_do" if booking.version == 1 else note(store, clock, booking),
                                      first=held, attempts=3, exhausted=TooBusy())
    assert answer == "nothing_to_do"
    assert store.get_booking(held.booking_id).version == 1


def test_only_the_named_collisions_are_decided_again(store, clock, held):
    decisions = []

    def refuse(booking):
        decisions.append(booking.version)
        raise Conflict("not now", code="not_now")

    with pytest.raises(Conflict):
        transitions.decide_again(lambda: store.get_booking(held.booking_id), refuse, first=held, attempts=3,
                                 exhausted=TooBusy())
    assert decisions == [1]

    def busy_then_written(booking):
        decisions.append(booking.version)
        if len(decisions) == 2:
            raise Conflict("busy", code="busy")
        return note(store, clock, booking)

    assert transitions.decide_again(lambda: store.get_booking(held.booking_id), busy_then_written, first=held,
                                    attempts=3, exhausted=TooBusy(), retry_on=(StaleBooking, Conflict)).version == 2
    assert decisions == [1, 1, 1]
