"""An exchanged booking is one offering's sale, never two (issue 45 with the sales index): the
write that moves a confirmed booking to another offering moves its entry in the offerings' booking
indexes, and so on their sales pages (GET /admin/sales/{offering_id}), in the same transaction; a
same-price exchange and a dearer one once its difference is paid, through the handlers."""
from __future__ import annotations

from holdfast import wiring
from tests.handlers.conftest import ORGANIZER_KEY
from tests.handlers.test_doors_api import create_event, paid_tickets
from tests.handlers.test_exchange_dearer_api import exchange
from tests.handlers.test_scoped_keys import admin
from tests.handlers.test_tickets_api import tickets_env  # noqa: F401 - the tickets' fixture

OWNER = {"X-Api-Key": ORGANIZER_KEY}


def listed(offering_id: str) -> list[str]:
    status, page = admin("GET", "/admin/sales/{offering_id}", OWNER, params={"offering_id": offering_id})
    assert status == 200, page
    return [sale["booking_id"] for sale in page["sales"]]


def test_a_booking_exchanged_at_the_same_price_is_listed_on_its_new_offerings_sales_page_alone(tickets_env):
    first = create_event("xs-first", capacity=5, exchange_until_hours=24)
    second = create_event("xs-second", capacity=5, exchange_until_hours=24, name="Second night")
    booking_id, _ = paid_tickets(tickets_env, first["event_id"], 2, "xs-1")
    assert listed(first["event_id"]) == [booking_id] and listed(second["event_id"]) == []
    status, moved = exchange(booking_id, {"event_id": second["event_id"], "quantity": 2}, "same-1")
    assert status == 200 and moved["event_id"] == second["event_id"], moved
    assert listed(first["event_id"]) == [] and listed(second["event_id"]) == [booking_id]
    # and back again: the first offering lists it once more, the second no longer
    status, back = exchange(booking_id, {"event_id": first["event_id"], "quantity": 2}, "same-2")
    assert status == 200 and back["event_id"] == first["event_id"], back
    assert listed(first["event_id"]) == [booking_id] and listed(second["event_id"]) == []


def test_a_dearer_exchange_moves_the_sale_once_its_difference_is_paid_not_before(tickets_env):
    cheap = create_event("xs-cheap", capacity=5, exchange_until_hours=24)
    dear = create_event("xs-dear", capacity=5, exchange_until_hours=24, name="Dear night",
                        price={"value": f"{2 * float(cheap['price']['value']):.2f}", "currency": "RUB"})
    booking_id, _ = paid_tickets(tickets_env, cheap["event_id"], 2, "xs-2")
    status, held = exchange(booking_id, {"event_id": dear["event_id"], "quantity": 2}, "dearer-1")
    assert status == 200, held
    assert listed(cheap["event_id"]) == [booking_id] and listed(dear["event_id"]) == []   # not moved yet
    payment_id = held["exchange_difference"]["payment_id"]
    tickets_env.pay(payment_id)
    assert wiring.payments().apply_provider_payment(tickets_env.get_payment(payment_id)) == "exchanged"
    assert listed(cheap["event_id"]) == [] and listed(dear["event_id"]) == [booking_id]
