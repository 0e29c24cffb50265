"""Retrying POST /events with the same Idempotency-Key (finding 1 of issue 11): a replay or a
conflicting body never writes inventory; inventory is created only with the event, and a
creation that stopped half-way is completed by its retry without touching what exists."""
import pytest

from holdfast.adapters.inventory_store import inventory_entry
from holdfast.domain.errors import IdempotencyKeyReused
from holdfast.schemas import BookingIn

from .conftest import event_request


def inventory(store, event_id):
    """Every inventory item of the event as written (pools and seats), by ("pool"|"unit", id)."""
    return {inventory_entry(item)[1:]: {k: v for k, v in item.items() if k not in ("pk", "sk", "event_id")}
            for item in store.inventory_items(event_id)}


def sell(bookings, payments, provider, event_id, customer, body):
    booking = bookings.create_booking(event_id, customer, f"k-{customer}", body).booking
    payment_id = payments.start_payment(booking.booking_id, customer, f"p-{customer}").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    return booking


def test_retry_of_a_general_admission_event_keeps_its_sales(catalog, bookings, payments, provider, store):
    event = catalog.create_event(event_request(capacity=10), "organizer-key-1")
    sell(bookings, payments, provider, event["event_id"], "alice", BookingIn(quantity=3))
    bookings.create_booking(event["event_id"], "bob", "k-bob", BookingIn(quantity=2))
    before = inventory(store, event["event_id"])
    assert catalog.get_event(event["event_id"])["counts"] == {"available": 5, "held": 2, "sold": 3}

    replay = catalog.create_event(event_request(capacity=10), "organizer-key-1")
    assert replay["event_id"] == event["event_id"]
    assert replay["counts"] == {"available": 5, "held": 2, "sold": 3}
    with pytest.raises(IdempotencyKeyReused):
        catalog.create_event(event_request(capacity=500), "organizer-key-1")
    assert inventory(store, event["event_id"]) == before


def test_retry_of_a_seated_event_keeps_sold_seats_and_adds_none(catalog, bookings, payments, provider, store):
    seat_map = {"rows": [{"name": "A", "seats": 4}]}
    event = catalog.create_event(event_request(capacity=None, seat_map=seat_map), "organizer-key-2")
    sell(bookings, payments, provider, event["event_id"], "alice", BookingIn(seats=["A-1", "A-2"]))
    before = inventory(store, event["event_id"])
    assert before[("unit", "A-1")]["state"] == "sold"

    assert catalog.create_event(event_request(capacity=None, seat_map=seat_map), "organizer-key-2")["counts"] == \
        {"available": 2, "held": 0, "sold": 2}
    # Same seat count, other seats: the seat map is part of the request.
    for other in ({"rows": [{"name": "B", "seats": 4}]}, {"seat_ids": ["A-1", "A-2", "A-3", "A-5"]}):
        with pytest.raises(IdempotencyKeyReused):
            catalog.create_event(event_request(capacity=None, seat_map=other), "organizer-key-2")
    assert inventory(store, event["event_id"]) == before


class StopAfter:
    """A DynamoDB client that fails every write after ``writes`` successful ones (a crash)."""

    WRITES = ("transact_write_items", "put_item", "batch_write_item")

    def __init__(self, inner, writes):
        self.inner, self.left = inner, writes

    def __getattr__(self, name):
        attribute = getattr(self.inner, name)
        if name not in self.WRITES:
            return attribute

        def write(**kwargs):
            if self.left <= 0:
                raise ConnectionError("crashed")
            self.left -= 1
            return attribute(**kwargs)
        return write


def test_a_creation_stopped_half_way_is_invisible_and_its_retry_completes_it(catalog, store):
    rows = [{"name": name, "seats": 100} for name in "ABC"]   # 300 seats: more than one transaction
    body = event_request(capacity=None, seat_map={"rows": rows})
    client = store.client
    store.client = StopAfter(client, 2)
    with pytest.raises(ConnectionError):
        catalog.create_event(body, "organizer-key-3")
    store.client = client
    event_id = catalog._event_id("organizer-key-3")
    assert store.get_event(event_id) is None            # not visible while incomplete
    with pytest.raises(IdempotencyKeyReused):           # another body cannot take the key over
        catalog.create_event(event_request(capacity=None, seat_map={"rows": [{"name": "Z", "seats": 3}]}),
                             "organizer-key-3")
    assert not any(item_id.startswith("Z-") for _, item_id in inventory(store, event_id))
    created = catalog.create_event(body, "organizer-key-3")
    assert created["event_id"] == event_id and created["counts"] == {"available": 300, "held": 0, "sold": 0}
    assert len(inventory(store, event_id)) == 300
