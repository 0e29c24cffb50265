"""A ticket expires VALID_AFTER_START after its event's start as the event says it when the ticket
is signed (issue 42, "one fact, one place"). Before, a booking's ticket was signed with the
booking's ``ends_at`` and an order's line's with the line's: copies of the start taken at hold
time that a postponement (``PATCH /events/{id}`` with a later ``starts_at``) left as they were, so
past the old start + 12 h every door refused a postponed event's tickets ``ticket_expired``."""
from __future__ import annotations

from datetime import datetime, timezone

from holdfast import kinds
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.signatures import PublicKeys, claimed
from holdfast.kinds import products
from holdfast.products.events import tickets
from holdfast.products.events.services.doors import Doors
from holdfast.products.events.tickets import EventKeys, TicketSigner
from holdfast.products.orders.services import OrderLine, OrderService, PlaceOrder
from holdfast.schemas import BookingIn
from holdfast.services.listing import ListingService

from .conftest import event_request

KEYS = EventKeys(b"unit-ticket-expiry-events-root-0123")
OLD_START = "2030-02-01T20:00:00Z"
NEW_START = "2030-02-08T20:00:00Z"
#: a day past the old start: its tickets' old expiry (+12 h) is behind, the new start ahead
A_DAY_AFTER = datetime(2030, 2, 2, 20, 0, tzinfo=timezone.utc)


def signer(store) -> TicketSigner:
    """What events' view credentials are (products/events/wiring.py), on this store."""
    return TicketSigner(lambda: KEYS, store)


class LineCredentials:
    """The orders' view credentials: each line's kind's product's own (products/orders/wiring.py)."""

    def __init__(self, store) -> None:
        self.events = signer(store)

    def of(self, kind: str):
        return self.events if products.of_kind(kind).name == "events" else None


def paid(store, payments, provider, booking_id, customer):
    paying = payments.start_payment(booking_id, customer, f"pay-{booking_id}")
    provider.pay(paying.payment.payment_id)
    assert payments.apply_provider_payment(provider.get_payment(paying.payment.payment_id)) == "confirmed"
    return store.get_booking(booking_id)


def admitted_a_day_after_the_old_start(store, clock, event_id, token):
    doors = Doors(store, clock, lambda: PublicKeys([KEYS.public_raw()]))
    door = doors.create_door(event_id, "Main")
    return doors.scan(event_id, door["door_id"], {"event_id": f"scan-{token[-8:]}", "token": token},
                      at=A_DAY_AFTER, offline=False)


def test_a_booking_held_before_a_postponement_signs_its_tickets_with_the_new_start(
        store, clock, catalog, bookings, payments, provider):
    event_id = catalog.create_event(event_request(starts_at=OLD_START))["event_id"]
    held = bookings.create_booking(event_id, "ann", "k1", HoldPlaces(quantity=2))
    ListingService(store, clock).update(event_id, {"starts_at": datetime(2030, 2, 8, 20, 0, tzinfo=timezone.utc)})
    booking = paid(store, payments, provider, held.booking.booking_id, "ann")

    shown = tickets.view(booking, signer(store))["tickets"]
    assert [claimed(ticket["token"])["exp"] for ticket in shown] == ["2030-02-09T08:00:00.000Z"] * 2
    assert tickets.by_id(booking, signer(store)) == {ticket["ticket_id"]: ticket["token"] for ticket in shown}
    answer = admitted_a_day_after_the_old_start(store, clock, event_id, shown[0]["token"])
    assert answer["admitted"] is True, answer


def test_an_order_lines_tickets_follow_their_own_events_start(store, clock, catalog, bookings, payments, provider):
    concert = catalog.create_event(event_request(capacity=None, seat_map={"rows": [{"name": "A", "seats": 4}]},
                                                 starts_at=OLD_START))["event_id"]
    club = catalog.create_event(event_request(starts_at=OLD_START))["event_id"]
    lines = (OrderLine(concert, HoldPlaces.of(BookingIn.model_validate({"seats": ["A-1"]}).model_dump())),
             OrderLine(club, HoldPlaces.of(BookingIn.model_validate({"quantity": 1}).model_dump())))
    order = OrderService(bookings).place("ann", "order-1", PlaceOrder(lines)).booking
    order = paid(store, payments, provider, order.booking_id, "ann")
    ListingService(store, clock).update(concert, {"starts_at": datetime(2030, 2, 8, 20, 0, tzinfo=timezone.utc)})

    shown = kinds.of_booking(order).view_extras(order, LineCredentials(store))["tickets"]
    expiry = {concert: "2030-02-09T08:00:00.000Z", club: "2030-02-02T08:00:00.000Z"}   # the line of the event that did not move keeps its start
    assert sorted(claimed(ticket["token"])["ev"] + " " + claimed(ticket["token"])["exp"] for ticket in shown) \
        == sorted(f"{event} {exp}" for event, exp in expiry.items())
    concert_ticket = next(t for t in shown if claimed(t["token"])["ev"] == concert)
    answer = admitted_a_day_after_the_old_start(store, clock, concert, concert_ticket["token"])
    assert answer["admitted"] is True, answer
    club_ticket = next(t for t in shown if claimed(t["token"])["ev"] == club)
    assert admitted_a_day_after_the_old_start(store, clock, club, club_ticket["token"])["reason"] == "ticket_expired"
    # what the QR codes draw (the kind's passes) is signed alike
    assert kinds.of_booking(order).passes(order, LineCredentials(store)) == \
        {ticket["ticket_id"]: ticket["token"] for ticket in shown}
