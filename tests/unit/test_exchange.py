"""Exchange (issue 45): a confirmed booking moved to other places of the same organizer in one
write, or nothing changes. On moto's DynamoDB (the adapter's own transaction), with the rule's
pure parts (domain/exchange.py) checked on their own."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from holdfast.domain import entry_rights
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import Conflict, IdempotencyKeyReused, NotFound, SeatsUnavailable
from holdfast.domain.exchange import check_open, check_price, closes_at, swap
from holdfast.domain.inventory import Granule, Move, Places
from holdfast.domain.money import Money
from holdfast.domain.organizers import Caller
from holdfast.domain.statuses import BookingStatus
from holdfast.products.events import tickets
from holdfast.services import transitions
from holdfast.services.exchange import ExchangeService

from .conftest import event_request

ORGANIZER = Caller("org-1", "key-1")
OTHER = Caller("org-2", "key-2")


# ------------------------------------------------------------------------------- the pure rule

def test_exchanges_close_the_given_hours_before_the_start_and_absent_means_none():
    places = Places(kind="counted", quantity=1, pools=(("POOL#000", 1),))
    offering = {"event_id": "e1", "starts_at": "2030-02-01T20:00:00.000Z", "exchange_until_hours": 24}
    assert closes_at(offering, places) == datetime(2030, 1, 31, 20, 0, tzinfo=timezone.utc)
    check_open(offering, places, datetime(2030, 1, 31, 20, 0, tzinfo=timezone.utc), "from")
    with pytest.raises(Conflict) as late:
        check_open(offering, places, datetime(2030, 1, 31, 20, 1, tzinfo=timezone.utc), "from")
    assert late.value.code == "exchange_closed"
    with pytest.raises(Conflict) as none:
        check_open({"event_id": "e1", "starts_at": "2030-02-01T20:00:00.000Z"}, places,
                   datetime(2030, 1, 1, tzinfo=timezone.utc), "from")
    assert none.value.code == "exchange_not_offered"


def test_a_slot_counts_from_its_own_first_granule_not_the_service():
    places = Places(kind="slots", quantity=1, granules=(Granule("hall", "2030-01-05T10:00"),
                                                       Granule("hall", "2030-01-05T10:30")))
    service = {"event_id": "s1", "starts_at": "2029-12-01T00:00:00.000Z", "exchange_until_hours": 2}
    assert closes_at(service, places) == datetime(2030, 1, 5, 8, 0, tzinfo=timezone.utc)


def test_only_the_same_price_is_exchanged():
    check_price(Money.parse("10.00", "RUB"), Money.parse("10.00", "RUB"))
    for other in (Money.parse("9.00", "RUB"), Money.parse("11.00", "RUB")):
        with pytest.raises(Conflict) as differs:
            check_price(Money.parse("10.00", "RUB"), other)
        assert differs.value.code == "exchange_price_differs"
    with pytest.raises(Conflict) as currency:
        check_price(Money.parse("10.00", "RUB"), Money.parse("10.00", "EUR"))
    assert currency.value.code == "exchange_other_currency"


def test_the_swap_nets_what_both_sides_name_in_one_offering():
    old = Places(kind="counted", quantity=3, pools=(("POOL#000", 2), ("POOL#001", 1)))
    new = Places(kind="counted", quantity=3, pools=(("POOL#000", 1), ("POOL#002", 2)))
    moved = swap("e1", old, "e1", new)
    assert moved.given.pools == (("POOL#000", 1), ("POOL#001", 1)) and moved.given.quantity == 2
    assert moved.taken.pools == (("POOL#002", 2),) and moved.taken.quantity == 2
    seats = swap("e1", Places("named", 2, units=("A-1", "A-2")), "e1", Places("named", 2, units=("A-2", "A-3")))
    assert seats.given.units == ("A-1",) and seats.taken.units == ("A-3",)
    # another offering: nothing in common, whatever the ids
    apart = swap("e1", old, "e2", new)
    assert apart.given == old and apart.taken == new


# ------------------------------------------------------------------------------- the service

@pytest.fixture
def exchanges(store, clock):
    return ExchangeService(store, clock)


def _confirmed(bookings, store, clock, event_id, body, customer="alice", key="hold-1"):
    booking = bookings.create_booking(event_id, customer, key, body).booking
    return transitions.apply(store, booking, clock(), status=BookingStatus.CONFIRMED, actor="test", action="paid",
                             decision="paid", move=Move.SELL)


def _seated(catalog, caller=ORGANIZER, **overrides):
    return catalog.create_event(event_request(capacity=None, seat_map={"rows": [{"name": "A", "seats": 4}]},
                                              exchange_until_hours=24, **overrides), caller=caller)


def _states(store, event_id):
    return {unit["unit"]: unit["state"] for unit in store.list_units(event_id)}


def test_a_seat_is_exchanged_for_another_in_one_write_and_the_tickets_are_new(bookings, store, catalog, clock,
                                                                             exchanges):
    event = _seated(catalog)
    booking = _confirmed(bookings, store, clock, event["event_id"], HoldPlaces(seats=("A-1",)))
    old_tickets = [tid for tid, _ in tickets.places(booking)]
    moved = exchanges.exchange(booking.booking_id, "alice", "x-1", None, HoldPlaces(seats=("A-3",)))
    assert moved.status is BookingStatus.CONFIRMED and moved.places.units == ("A-3",)
    assert _states(store, event["event_id"]) == {"A-1": "available", "A-2": "available", "A-3": "sold",
                                                 "A-4": "available"}
    new_tickets = [tid for tid, _ in tickets.places(moved)]
    assert set(new_tickets).isdisjoint(old_tickets)
    assert not entry_rights.admits(moved, old_tickets[0]) and entry_rights.admits(moved, new_tickets[0])
    assert set(old_tickets) <= set(tickets.revoked(moved))   # an offline door refuses the old ticket
    _, journal = store.get_booking_with_journal(booking.booking_id)
    assert journal[-1].action == "exchanged" and journal[-1].ids["to_event_id"] == event["event_id"]
    # the repeat is answered from the first exchange; the key with another body is refused
    again = exchanges.exchange(booking.booking_id, "alice", "x-1", None, HoldPlaces(seats=("A-3",)))
    assert again.version == moved.version
    with pytest.raises(IdempotencyKeyReused):
        exchanges.exchange(booking.booking_id, "alice", "x-1", None, HoldPlaces(seats=("A-4",)))


def test_an_exchange_to_a_taken_seat_changes_nothing(bookings, store, catalog, clock, exchanges):
    event = _seated(catalog)
    booking = _confirmed(bookings, store, clock, event["event_id"], HoldPlaces(seats=("A-1",)))
    bookings.create_booking(event["event_id"], "bob", "bob-1", HoldPlaces(seats=("A-2",)))
    before, stored = _states(store, event["event_id"]), store.get_booking(booking.booking_id)
    with pytest.raises(SeatsUnavailable):
        exchanges.exchange(booking.booking_id, "alice", "x-1", None, HoldPlaces(seats=("A-2",)))
    assert _states(store, event["event_id"]) == before
    assert store.get_booking(booking.booking_id) == stored


def test_an_exchange_to_another_date_moves_the_booking_and_both_counts(bookings, store, catalog, clock, exchanges):
    first = catalog.create_event(event_request(exchange_until_hours=24), caller=ORGANIZER)
    second = catalog.create_event(event_request(starts_at="2030-02-08T20:00:00Z", exchange_until_hours=24),
                                  caller=ORGANIZER)
    booking = _confirmed(bookings, store, clock, first["event_id"], HoldPlaces(quantity=2))
    moved = exchanges.exchange(booking.booking_id, "alice", "x-1", second["event_id"], HoldPlaces(quantity=2))
    assert moved.event_id == second["event_id"] and moved.ends_at == "2030-02-08T20:00:00.000Z"
    assert catalog.get_event(first["event_id"])["counts"] == {"available": 10, "held": 0, "sold": 0}
    assert catalog.get_event(second["event_id"])["counts"] == {"available": 8, "held": 0, "sold": 2}
    # the new event's cancellation and doors find it; the old event's doors still void its old tickets
    assert booking.booking_id in store.event_booking_ids(second["event_id"])
    assert set(tickets.revoked(moved)) == {tid for tid, _ in tickets.places(booking)}


def test_what_is_refused_changes_nothing(bookings, store, catalog, clock, exchanges):
    closed = catalog.create_event(event_request(), caller=ORGANIZER)     # no exchange_until_hours: none offered
    open_ = catalog.create_event(event_request(exchange_until_hours=24), caller=ORGANIZER)
    dearer = catalog.create_event(event_request(exchange_until_hours=24, price={"value": "2000.00", "currency": "RUB"}),
                                  caller=ORGANIZER)
    foreign = catalog.create_event(event_request(exchange_until_hours=24), caller=OTHER)
    booking = _confirmed(bookings, store, clock, open_["event_id"], HoldPlaces(quantity=1))
    stored = store.get_booking(booking.booking_id)
    cases = [
        (closed["event_id"], "exchange_not_offered"),
        (dearer["event_id"], "exchange_price_differs"),
        (foreign["event_id"], "event_not_found"),
    ]
    for target, code in cases:
        with pytest.raises((Conflict, NotFound)) as refused:
            exchanges.exchange(booking.booking_id, "alice", f"x-{code}", target, HoldPlaces(quantity=1))
        assert refused.value.code == code
    held = bookings.create_booking(open_["event_id"], "alice", "hold-2", HoldPlaces(quantity=1)).booking
    with pytest.raises(Conflict) as unpaid:
        exchanges.exchange(held.booking_id, "alice", "x-held", None, HoldPlaces(quantity=1))
    assert unpaid.value.code == "booking_not_exchangeable"
    clock.now = datetime(2030, 1, 31, 21, 0, tzinfo=timezone.utc)   # 23 h before the start
    with pytest.raises(Conflict) as late:
        exchanges.exchange(booking.booking_id, "alice", "x-late", None, HoldPlaces(quantity=1))
    assert late.value.code == "exchange_closed"
    assert store.get_booking(booking.booking_id) == stored
    for event in (closed, open_, dearer, foreign):
        assert catalog.get_event(event["event_id"])["counts"]["sold"] == (1 if event is open_ else 0)


def test_events_and_slots_are_exchanged_parking_windows_and_orders_are_not():
    from holdfast import kinds

    exchangeable = {name: kinds.named(name).exchangeable for name in ("counted", "named", "slots", "parking", "basket")}
    assert exchangeable == {"counted": True, "named": True, "slots": True, "parking": False, "basket": False}
