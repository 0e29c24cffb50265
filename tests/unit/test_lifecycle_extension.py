"""Kinds extend the lifecycle after CONFIRMED: the toy kind's ADMITTED / LEFT / MISSED states are
booking statuses in the same item, journal and outbox; places follow the declared state."""
import pytest

from holdfast.domain import lifecycle
from holdfast.domain.booking import IllegalTransition
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services import transitions
from tests.support import toy_kind

from .conftest import event_request


@pytest.fixture
def store(fake_store):
    return fake_store


@pytest.fixture
def zoned(catalog):
    # Registered for the rest of the session, on purpose: the correctness suite's kind cases use it
    # too, whatever the order the tests run in; it only ever accepts offerings of category "zoned".
    toy_kind.register()
    return catalog.create_event(event_request(capacity=6, category="zoned", max_per_booking=2))["event_id"]


def confirmed(bookings, payments, provider, event_id, customer):
    booking = bookings.create_booking(event_id, customer, "k", BookingIn(quantity=2)).booking
    payment_id = payments.start_payment(booking.booking_id, customer, "p").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    return bookings.store.get_booking(booking.booking_id)


def test_declared_states_are_statuses_with_journal_outbox_and_places(zoned, bookings, payments, provider, store,
                                                                      catalog, clock):
    ann = confirmed(bookings, payments, provider, zoned, "ann")
    admitted = transitions.advance(store, ann, clock(), "ADMITTED", actor="gate", action="entered", decision="gate 1")
    left = transitions.advance(store, admitted, clock(), "LEFT", actor="gate", action="exited", decision="gate 2")
    stored, journal = store.get_booking_with_journal(ann.booking_id)
    assert stored.status == "LEFT" and stored.version == left.version
    assert [entry.to_status for entry in journal][-2:] == ["ADMITTED", "LEFT"]
    outbox = [item["type"] for item in store.table.query(f"BOOKING#{ann.booking_id}", prefix="OUTBOX#")]
    assert "booking.admitted" in outbox
    assert catalog.get_event(zoned)["counts"] == {"available": 4, "held": 0, "sold": 2}   # still sold

    bob = confirmed(bookings, payments, provider, zoned, "bob")
    transitions.advance(store, bob, clock(), "MISSED", actor="timer", action="no_show", decision="not entered")
    assert catalog.get_event(zoned)["counts"] == {"available": 4, "held": 0, "sold": 2}   # bob's went back
    assert bookings.view(bob.booking_id, "bob")["status"] == "MISSED"


def test_only_the_declared_moves_by_the_declared_actors_of_the_declaring_kind(zoned, bookings, payments, provider,
                                                                               store, catalog, clock):
    ann = confirmed(bookings, payments, provider, zoned, "ann")
    with pytest.raises(IllegalTransition):
        transitions.advance(store, ann, clock(), "ADMITTED", actor="customer", action="x", decision="x")
    with pytest.raises(IllegalTransition):
        transitions.advance(store, ann, clock(), "LEFT", actor="gate", action="x", decision="x")   # not admitted
    held = bookings.create_booking(zoned, "cat", "k", BookingIn(quantity=1)).booking
    with pytest.raises(IllegalTransition):
        transitions.advance(store, held, clock(), "ADMITTED", actor="gate", action="x", decision="x")  # unpaid
    general = catalog.create_event(event_request(capacity=4))["event_id"]
    other = confirmed(bookings, payments, provider, general, "dan")
    with pytest.raises(IllegalTransition):
        transitions.advance(store, other, clock(), "ADMITTED", actor="gate", action="x", decision="x")  # other kind
    with pytest.raises(ValueError):
        lifecycle.declare("another_kind", (toy_kind.StandingZones.extra_states[0],))


def test_the_money_invariant_counts_a_declared_state_after_confirmation_as_money_kept():
    """S1 (tests/correctness/helpers.py) once knew only CONFIRMED as the place a kept payment can
    rest; a parking booking that entered and left (COMPLETED) keeps its money the same way."""
    from holdfast import kinds  # noqa: F401 - registers the parking kind and its states
    from holdfast.domain.lifecycle import status_of
    from tests.correctness.helpers import kept_after_confirmation

    class Row:
        def __init__(self, status):
            self.status = status

    assert kept_after_confirmation(Row(status_of("COMPLETED")))
    assert kept_after_confirmation(Row(status_of("CHECKED_IN")))
    assert kept_after_confirmation(Row(BookingStatus.CONFIRMED))
    assert not kept_after_confirmation(Row(BookingStatus.REFUNDED))
    assert not kept_after_confirmation(Row(BookingStatus.EXPIRED))
