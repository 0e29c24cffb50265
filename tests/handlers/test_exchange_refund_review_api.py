"""A booking exchanged into cheaper places, cancelled, and closed by an operator over the admin
route (proof seeds 20261214471, 20261217091): its payment has two refunds at the provider, the
difference's and the one that gave back the rest; REFUNDED names the second, never the first."""
from tests.handlers.test_doors_api import ORGANIZER, _cancel, create_event, paid_tickets
from tests.handlers.test_tickets_api import tickets_env, view  # noqa: F401 - the tickets' fixture
from tests.handlers.test_transfers_api import bookings
from tests.support.handlers import api_event, call


def test_an_operators_close_names_the_refund_of_the_rest_not_the_differences(tickets_env):
    dear = create_event("xr-dear", capacity=5, exchange_until_hours=24)
    cheap = create_event("xr-cheap", capacity=5, exchange_until_hours=24, name="Cheap night",
                         price={"value": "1000.00", "currency": "RUB"})
    booking_id, _ = paid_tickets(tickets_env, dear["event_id"], 2, "xr-1")
    status, moved = bookings("POST", f"/bookings/{booking_id}/exchange", customer="customer-42",
                             body={"event_id": cheap["event_id"], "quantity": 2}, headers={"Idempotency-Key": "xr-x"})
    assert status == 200 and moved["event_id"] == cheap["event_id"], moved
    payment_id = moved["payment"]["payment_id"]
    [difference] = tickets_env.refunds_for(payment_id)
    # the refund of the rest is refused: the booking waits for an operator, who gives the money
    # back in the provider's dashboard and closes the review
    tickets_env.fail("create_refund", "refused")
    status, cancelled = call("bookings_api", _cancel(booking_id))
    assert status == 200 and cancelled["status"] == "MANUAL_REVIEW", cancelled
    rest = tickets_env.create_refund(payment_id, {"value": "2000.00", "currency": "RUB"}, "dashboard", "by-hand")
    status, closed = call("admin_api", api_event("resolve_review.json", path_params={"booking_id": booking_id},
                                                 headers=ORGANIZER,
                                                 body={"action": "close", "operator": "olga", "note": "paid back"}))
    assert status == 200 and closed["status"] == "REFUNDED", closed
    recorded = view(booking_id)[1]["payment"]
    assert recorded["refund"]["refund_id"] == rest["id"] != difference["id"], recorded
