"""Inventory kinds are plug-ins: a kind written in a test (tests/support/toy_kind.py) is
registered and sold through the unchanged services: plan with fallback, price by allocation,
availability, late-payment re-plan."""
import pytest

from holdfast import kinds
from holdfast.domain.errors import SoldOut
from holdfast.schemas import BookingIn
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
    return catalog.create_event(event_request(capacity=6, category="zoned", max_per_booking=2))


def test_the_registry_chooses_the_kind_from_the_request_and_the_stored_name(zoned):
    assert zoned["inventory"] == "standing_zones"
    assert kinds.named("counted").label == "general_admission" and kinds.named("named").label == "seated"
    with pytest.raises(LookupError):
        kinds.named("nonexistent")


def test_a_toy_kind_plans_best_first_falls_back_and_prices_what_it_allocated(zoned, bookings, catalog):
    event_id = zoned["event_id"]
    front = bookings.create_booking(event_id, "ann", "k1", BookingIn(quantity=2)).booking   # front: 4 places
    assert front.places.pools == ((toy_kind.FRONT, 2),) and front.amount.text == "6000.00"   # 2 x 1500 x 2
    bookings.create_booking(event_id, "bob", "k1", BookingIn(quantity=2))
    back = bookings.create_booking(event_id, "cat", "k1", BookingIn(quantity=1)).booking     # front full
    assert back.places.pools == ((toy_kind.BACK, 1),) and back.amount.text == "1500.00"
    with pytest.raises(SoldOut):
        bookings.create_booking(event_id, "dan", "k1", BookingIn(quantity=2))             # 1 left in the back
    assert catalog.get_event(event_id)["counts"] == {"available": 1, "held": 5, "sold": 0}
    assert bookings.view(front.booking_id, "ann")["places"] == {"kind": "toy_zones", "quantity": 2, "zone": "front"}


def test_a_late_payment_is_replanned_by_the_bookings_kind(zoned, bookings, payments, clock):
    event_id = zoned["event_id"]
    held = bookings.create_booking(event_id, "ann", "k1", BookingIn(quantity=2)).booking
    clock.advance(601)
    bookings.expire(held.booking_id)
    expired = bookings.store.get_booking(held.booking_id)
    assert payments.replan(expired) == held.places                        # the front is free again
    bookings.create_booking(event_id, "bob", "k1", BookingIn(quantity=2))  # the front has 2 left
    bookings.create_booking(event_id, "cat", "k1", BookingIn(quantity=2))  # now none
    assert payments.replan(expired) is None                               # the back is not what was paid for


def test_a_kind_whose_plan_takes_no_clock_is_refused_when_registered():
    from holdfast import kinds
    from holdfast.products.events.general_admission import GeneralAdmission

    class Clockless(GeneralAdmission):
        name = "clockless"

        def plan(self, store, event, wanted, rng, attempt):  # noqa: ANN001 - the old signature
            raise AssertionError("never called")

    with pytest.raises(TypeError, match="now="):
        kinds.register(Clockless())
    with pytest.raises(LookupError):
        kinds.named("clockless")
