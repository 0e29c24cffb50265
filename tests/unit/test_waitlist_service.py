"""The waitlist on the in-memory store (bookings and waitlist over one table, as the adapter keeps
them): order, idempotent join, offers as real holds, passing on, skipping, redelivery; and, on
moto, two relays racing for the same head."""
from __future__ import annotations

import threading

import pytest

from holdfast.domain.errors import Conflict, InvalidRequest, NotFound
from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services.waitlist import WaitlistService
from tests.support.fake_store import FakeWaitlistStore
from tests.unit.conftest import event_request, store_for


@pytest.fixture
def store(request):
    return store_for(request, FakeWaitlistStore())


@pytest.fixture
def waitlist(store, bookings, clock):
    return WaitlistService(store, bookings, clock, offer_seconds=900)


@pytest.fixture
def small_event(catalog):
    return catalog.create_event(event_request(capacity=2))


def sell_out(bookings, event, customer="owner", quantity=2):
    return bookings.create_booking(event["event_id"], customer, f"k-{customer}", BookingIn(quantity=quantity)).booking


def counts(catalog, event):
    return catalog.get_event(event["event_id"])["counts"]


def test_join_is_idempotent_and_ordered(waitlist, bookings, small_event, clock):
    sell_out(bookings, small_event)
    first, created = waitlist.join(small_event["event_id"], "ann", 1)
    assert created and first["state"] == "WAITING" and first["position"] == 1
    clock.advance(1)
    again, created = waitlist.join(small_event["event_id"], "ann", 2)
    assert not created and again["entry_id"] == first["entry_id"] and again["quantity"] == 1
    clock.advance(1)
    second, _ = waitlist.join(small_event["event_id"], "ben", 1)
    assert second["position"] == 2
    assert waitlist.status(small_event["event_id"], "ben")["position"] == 2


def test_join_checks_event_and_quantity(waitlist, small_event):
    with pytest.raises(NotFound):
        waitlist.join("no-such-event", "ann", 1)
    with pytest.raises(InvalidRequest):
        waitlist.join(small_event["event_id"], "ann", 11)


def test_leave_moves_the_others_up(waitlist, bookings, small_event, clock):
    sell_out(bookings, small_event)
    waitlist.join(small_event["event_id"], "ann", 1)
    clock.advance(1)
    waitlist.join(small_event["event_id"], "ben", 1)
    assert waitlist.leave(small_event["event_id"], "ann")["state"] == "LEFT"
    assert waitlist.status(small_event["event_id"], "ben")["position"] == 1
    with pytest.raises(NotFound):
        waitlist.status(small_event["event_id"], "ann")
    with pytest.raises(NotFound):
        waitlist.leave(small_event["event_id"], "ann")


def test_nothing_is_offered_while_sold_out(waitlist, bookings, small_event, store):
    sell_out(bookings, small_event)
    waitlist.join(small_event["event_id"], "ann", 1)
    assert waitlist.advance(small_event["event_id"]) == []
    assert store.waitlist_offers(small_event["event_id"]) == []


def test_expiry_offers_a_real_hold_that_passes_on_when_not_taken(waitlist, bookings, catalog, small_event, clock,
                                                                 scheduled, store):
    held = sell_out(bookings, small_event)
    waitlist.join(small_event["event_id"], "ann", 2)
    clock.advance(1)
    waitlist.join(small_event["event_id"], "ben", 1)
    clock.advance(601)
    assert bookings.expire(held.booking_id)["outcome"] == "expired"
    [offer_id] = waitlist.advance(small_event["event_id"])
    offer = store.get_booking(offer_id)
    assert offer.customer_id == "ann" and offer.status is BookingStatus.HELD and offer.places.quantity == 2
    # the offering's own hold time (600 s), never WAITLIST_OFFER_SECONDS' longer 900
    assert offer.hold_expires_at == "2030-01-01T12:20:02.000Z"
    assert scheduled[-1] == (small_event["event_id"], offer.hold_expires_at)  # its expiry bucket is scheduled
    assert counts(catalog, small_event) == {"available": 0, "held": 2, "sold": 0}  # nobody else sees them
    ann = waitlist.status(small_event["event_id"], "ann")
    assert ann["state"] == "OFFERED" and ann["offer"]["booking_id"] == offer_id
    assert waitlist.status(small_event["event_id"], "ben")["position"] == 1
    # A repeat (a redelivered outbox event) makes no second offer.
    assert waitlist.advance(small_event["event_id"]) == []
    # The offer lapses: its expiry releases the places and the next in line gets one.
    clock.advance(901)
    assert bookings.expire(offer_id)["outcome"] == "expired"
    [second] = waitlist.advance(small_event["event_id"])
    assert store.get_booking(second).customer_id == "ben"
    assert waitlist.status(small_event["event_id"], "ann")["state"] == "PASSED"
    assert counts(catalog, small_event) == {"available": 1, "held": 1, "sold": 0}


def test_a_confirmed_offer_is_done(waitlist, bookings, payments, provider, small_event, clock, store):
    held = sell_out(bookings, small_event)
    waitlist.join(small_event["event_id"], "ann", 2)
    bookings.cancel(held.booking_id, "owner")
    [offer_id] = waitlist.advance(small_event["event_id"])
    booking = store.get_booking(offer_id)
    from holdfast.services import transitions
    from holdfast.domain.inventory import Move
    transitions.apply(store, booking, clock(), status=BookingStatus.CONFIRMED, actor="test", action="paid",
                      decision="paid", move=Move.SELL)
    waitlist.advance(small_event["event_id"])
    assert waitlist.status(small_event["event_id"], "ann")["state"] == "DONE"
    # A finished turn lets the customer join again, as a new entry.
    entry, created = waitlist.join(small_event["event_id"], "ann", 1)
    assert created and entry["state"] == "WAITING"


def test_leaving_with_an_offer_standing_is_refused(waitlist, bookings, small_event):
    held = sell_out(bookings, small_event)
    waitlist.join(small_event["event_id"], "ann", 1)
    bookings.cancel(held.booking_id, "owner")
    waitlist.advance(small_event["event_id"])
    with pytest.raises(Conflict) as err:
        waitlist.leave(small_event["event_id"], "ann")
    assert err.value.code == "offer_pending"


def test_a_customer_who_already_has_places_is_skipped(waitlist, bookings, small_event, clock, store):
    sell_out(bookings, small_event, customer="owner", quantity=1)
    mine = bookings.create_booking(small_event["event_id"], "ann", "ann-own", BookingIn(quantity=1)).booking
    waitlist.join(small_event["event_id"], "ann", 1)
    clock.advance(1)
    waitlist.join(small_event["event_id"], "ben", 1)
    bookings.cancel(store.customer_booking_ids("owner", small_event["event_id"])[0], "owner")
    [offer_id] = waitlist.advance(small_event["event_id"])
    assert store.get_booking(offer_id).customer_id == "ben"
    ann = waitlist.status(small_event["event_id"], "ann")
    assert ann["state"] == "SKIPPED" and mine.booking_id in store.customer_booking_ids("ann", small_event["event_id"])


def test_head_waits_for_enough_places_first_come_first_served(waitlist, bookings, catalog, small_event, clock):
    a = bookings.create_booking(small_event["event_id"], "o1", "o1", BookingIn(quantity=1)).booking
    bookings.create_booking(small_event["event_id"], "o2", "o2", BookingIn(quantity=1))
    waitlist.join(small_event["event_id"], "ann", 2)
    clock.advance(1)
    waitlist.join(small_event["event_id"], "ben", 1)
    bookings.cancel(a.booking_id, "o1")
    assert waitlist.advance(small_event["event_id"]) == []  # ann wants 2; ben does not overtake her
    assert counts(catalog, small_event)["available"] == 1


def test_seated_event_offers_best_available_seats(waitlist, bookings, seated_event, store):
    held = bookings.create_booking(seated_event["event_id"], "owner", "k", BookingIn(quantity=4, best_available=True)).booking
    waitlist.join(seated_event["event_id"], "ann", 2)
    bookings.cancel(held.booking_id, "owner")
    [offer_id] = waitlist.advance(seated_event["event_id"])
    assert len(store.get_booking(offer_id).places.units) == 2


def test_a_crash_between_claim_and_hold_is_finished_by_the_next_run(waitlist, bookings, small_event, store, clock):
    held = sell_out(bookings, small_event)
    waitlist.join(small_event["event_id"], "ann", 1)
    bookings.cancel(held.booking_id, "owner")
    head = store.waitlist_head(small_event["event_id"])
    assert store.waitlist_claim(small_event["event_id"], head, "2030-01-01T12:00:00.000Z")  # then the relay died
    assert not store.waitlist_claim(small_event["event_id"], head, "2030-01-01T12:00:00.000Z")  # claims are exclusive
    assert waitlist.status(small_event["event_id"], "ann")["state"] == "OFFERING"
    [offer_id] = waitlist.advance(small_event["event_id"])
    assert waitlist.status(small_event["event_id"], "ann")["offer"]["booking_id"] == offer_id


def test_the_same_offer_twice_is_one_hold(waitlist, bookings, small_event, store, catalog):
    """The deterministic key: a second completion of the same PENDING offer replays the booking."""
    held = sell_out(bookings, small_event)
    waitlist.join(small_event["event_id"], "ann", 1)
    bookings.cancel(held.booking_id, "owner")
    head = store.waitlist_head(small_event["event_id"])
    store.waitlist_claim(small_event["event_id"], head, "x")
    [offer] = store.waitlist_offers(small_event["event_id"])
    first = waitlist._complete(small_event["event_id"], dict(offer))
    second = waitlist.bookings.hold_for_customer(
        small_event["event_id"], "ann", f"waitlist-offer-{offer['entry_id']}", BookingIn(quantity=1),
        hold_seconds=900, outbox_type="waitlist.offer", actor="waitlist")
    assert second.replayed and second.booking.booking_id == first
    assert counts(catalog, small_event)["held"] == 1


@pytest.mark.on_moto("a race: threads interleaving DynamoDB calls")
def test_two_relays_at_once_offer_each_entry_once(waitlist, bookings, small_event, store, catalog, clock):
    from holdfast.adapters.dynamo import BookingStore
    from holdfast.services.bookings import BookingService
    from tests.unit.test_listing_and_best_available import SerialClient

    shared = BookingStore(store.table, SerialClient(store.client))
    waitlist = WaitlistService(shared, BookingService(shared, clock, None), clock, offer_seconds=900)
    held = sell_out(bookings, small_event)
    for n, who in enumerate(["ann", "ben", "cat"]):
        clock.advance(1)
        waitlist.join(small_event["event_id"], who, 1)
    bookings.cancel(held.booking_id, "owner")
    results: list[list[str]] = []
    barrier = threading.Barrier(4)

    def relay():
        barrier.wait()
        results.append(waitlist.advance(small_event["event_id"]))

    threads = [threading.Thread(target=relay) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    offered = {store.get_booking(b).customer_id for run in results for b in run}
    assert offered == {"ann", "ben"}
    assert counts(catalog, small_event) == {"available": 0, "held": 2, "sold": 0}
    assert waitlist.status(small_event["event_id"], "cat")["position"] == 1


def test_the_offer_carries_the_contact_address_given_on_joining(waitlist, bookings, small_event, clock, store):
    held = sell_out(bookings, small_event)
    waitlist.join(small_event["event_id"], "ann", 1, contact_email="ann@example.org")
    clock.advance(601)
    bookings.expire(held.booking_id)
    [offer_id] = waitlist.advance(small_event["event_id"])
    assert store.get_booking(offer_id).contact_email == "ann@example.org"
    [outbox] = store.table.query(f"BOOKING#{offer_id}", prefix="OUTBOX#")
    assert outbox["contact_email"] == "ann@example.org" and outbox["type"] == "waitlist.offer"


def test_the_offer_is_written_in_the_language_the_customer_joined_in(waitlist, bookings, small_event, clock, store):
    held = sell_out(bookings, small_event)
    waitlist.join(small_event["event_id"], "ann", 1, language="ru")
    waitlist.join(small_event["event_id"], "ben", 1)
    clock.advance(601)
    bookings.expire(held.booking_id)
    offers = [store.get_booking(offer_id) for offer_id in waitlist.advance(small_event["event_id"])]
    assert {offer.customer_id: offer.language for offer in offers} == {"ann": "ru", "ben": "en"}


def test_a_waitlist_is_for_places_nobody_can_take_now(waitlist, bookings, small_event, store):
    # Joining with places free made the relay hold them for the customer at once, on the
    # system's path (issue 28, finding 5): the customer books them like anyone else instead.
    event_id = small_event["event_id"]
    with pytest.raises(Conflict) as refused:
        waitlist.join(event_id, "ann", 2)
    assert refused.value.code == "places_available" and refused.value.details["available"] == 2
    assert store.waitlist_entry(event_id, "ann") is None and store.waitlist_head(event_id) is None
    sell_out(bookings, small_event, quantity=1)
    with pytest.raises(Conflict):
        waitlist.join(event_id, "ann", 1)
    entry, created = waitlist.join(event_id, "ann", 2)   # one free, two wanted: sold out for this request
    assert created and entry["state"] == "WAITING"
    # A repeat answers the entry it made, even while a place is free.
    again, created = waitlist.join(event_id, "ann", 2)
    assert not created and again["entry_id"] == entry["entry_id"]


def test_an_offer_holds_no_longer_than_the_offering_lets_a_hold(store, bookings, clock, catalog):
    event = catalog.create_event(event_request(capacity=1, hold_ttl_seconds=120))
    held = sell_out(bookings, event, quantity=1)
    for seconds, window in ((900, 120), (60, 60)):
        assert WaitlistService(store, bookings, clock, offer_seconds=seconds).offer_window(
            store.get_event(event["event_id"])) == window
    waitlist = WaitlistService(store, bookings, clock, offer_seconds=900)
    waitlist.join(event["event_id"], "ann", 1)
    bookings.cancel(held.booking_id, "owner")
    [offer_id] = waitlist.advance(event["event_id"])
    offer = store.get_booking(offer_id)
    assert offer.hold_expires_at == "2030-01-01T12:02:00.000Z"   # 120 s, the offering's hold time


def test_an_offer_to_a_customer_at_the_hold_cap_is_skipped(store, bookings, clock, catalog, waitlist):
    # The customer took a hold of their own between the claim of their turn and its hold (a relay
    # that crashed in between, say): the offer would be one hold past the cap.
    event = catalog.create_event(event_request(capacity=3, max_holds_per_customer=1))
    event_id = event["event_id"]
    held = sell_out(bookings, event, quantity=3)
    waitlist.join(event_id, "ann", 1)
    clock.advance(1)
    waitlist.join(event_id, "ben", 1)
    bookings.cancel(held.booking_id, "owner")
    assert store.waitlist_claim(event_id, store.waitlist_head(event_id), "2030-01-01T12:00:01.000Z")
    own = bookings.create_booking(event_id, "ann", "k-ann", BookingIn(quantity=1)).booking
    offered = waitlist.advance(event_id)
    ann = waitlist.status(event_id, "ann")
    assert ann["state"] == "SKIPPED" and ann["reason"] == "offer_failed:hold_limit_reached"
    assert [store.get_booking(b).customer_id for b in offered] == ["ben"]   # the line went on
    mine = [b for b in store.customer_booking_ids("ann", event_id) if store.get_booking(b).status is BookingStatus.HELD]
    assert mine == [own.booking_id]
