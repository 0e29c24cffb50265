"""An exchange into dearer places through the bookings handler (issue 45): 200 with the booking as
it was and ``exchange_difference`` (what to pay, where, by when), the repeat answered alike with
the one payment, another exchange meanwhile 409 ``exchange_pending``; paid, the booking's view
lists both payments. Every view matches docs/openapi.yaml's BookingWithJournal."""
from pathlib import Path

import yaml
from jsonschema import Draft202012Validator

from holdfast import wiring
from tests.handlers.test_doors_api import ORGANIZER, create_event, paid_tickets, request
from tests.handlers.test_tickets_api import confirm, tickets_env, view  # noqa: F401 - the tickets' fixture
from tests.handlers.test_transfers_api import bookings


OPENAPI = yaml.safe_load((Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml").read_text())
BOOKING = Draft202012Validator({"$ref": "#/components/schemas/BookingWithJournal", "components": OPENAPI["components"]})


def described(view_of_booking):
    """The view, after checking it against the documented BookingWithJournal (unknown fields are refused)."""
    errors = [f"{list(error.path)}: {error.message}" for error in BOOKING.iter_errors(view_of_booking)]
    assert not errors, errors
    return view_of_booking


def exchange(booking_id, body, key):
    return bookings("POST", f"/bookings/{booking_id}/exchange", body=body, headers={"Idempotency-Key": key})


def test_a_dearer_exchange_answers_what_to_pay_and_moves_once_paid(tickets_env):
    cheap = create_event("xd-cheap", capacity=5, exchange_until_hours=24)
    dear = create_event("xd-dear", capacity=5, exchange_until_hours=24, name="Dear night",
                        price={"value": str(int(float(cheap["price"]["value"]) * 2)) + ".00", "currency": "RUB"})
    booking_id, old = paid_tickets(tickets_env, cheap["event_id"], 2, "xd-1")
    status, held = exchange(booking_id, {"event_id": dear["event_id"], "quantity": 2}, "dearer-1")
    assert status == 200, held
    difference = described(held)["exchange_difference"]
    assert difference["amount"]["value"] == f"{2 * float(cheap['price']['value']):.2f}"
    assert difference["confirmation_url"] and difference["payment_status"] == "pending"
    assert held["event_id"] == cheap["event_id"] and [t["ticket_id"] for t in held["tickets"]] == \
        [t["ticket_id"] for t in old]
    assert exchange(booking_id, {"event_id": dear["event_id"], "quantity": 2}, "dearer-1") == (200, held)
    status, pending = exchange(booking_id, {"quantity": 1}, "dearer-2")
    assert status == 409 and pending["error"]["code"] == "exchange_pending"

    tickets_env.pay(difference["payment_id"])
    assert wiring.payments().apply_provider_payment(tickets_env.get_payment(difference["payment_id"])) == "exchanged"
    status, moved = view(booking_id)
    assert status == 200 and described(moved)["event_id"] == dear["event_id"] and "exchange_difference" not in moved
    assert [(p["purpose"], p["status"]) for p in moved["payments"]] == [("booking", "succeeded"),
                                                                       ("exchange_difference", "succeeded")]


def test_a_cheaper_exchange_after_a_dearer_one_refunds_each_payment_over_http(tickets_env):
    """Once 409 ``exchange_price_differs`` when the difference was more than the first payment held:
    now 200, the difference payment giving back what it holds and the first payment the rest, each
    listed in ``payment.exchange_refunds`` with the payment it gives back from."""
    cheap = create_event("xd-cheap-2", capacity=5, exchange_until_hours=24)
    unit = float(cheap["price"]["value"])
    dear = create_event("xd-dear-2", capacity=5, exchange_until_hours=24, name="Dear night",
                        price={"value": f"{2 * unit:.2f}", "currency": "RUB"})
    booking_id, _ = paid_tickets(tickets_env, cheap["event_id"], 2, "xd-2")
    status, held = exchange(booking_id, {"event_id": dear["event_id"], "quantity": 2}, "dearer-3")
    assert status == 200, held
    difference = held["exchange_difference"]
    tickets_env.pay(difference["payment_id"])
    assert wiring.payments().apply_provider_payment(tickets_env.get_payment(difference["payment_id"])) == "exchanged"
    status, moved = exchange(booking_id, {"event_id": cheap["event_id"], "quantity": 1}, "cheaper-1")
    assert status == 200, moved
    described(moved)
    first = moved["payment"]["payment_id"]
    assert moved["amount"]["value"] == f"{unit:.2f}"
    assert [(r["payment_id"], r["amount"]["value"], r["status"]) for r in moved["payment"]["exchange_refunds"]] == [
        (difference["payment_id"], f"{2 * unit:.2f}", "succeeded"), (first, f"{unit:.2f}", "succeeded")]
    assert exchange(booking_id, {"event_id": cheap["event_id"], "quantity": 1}, "cheaper-1")[1]["payment"] == \
        moved["payment"]   # the repeat: nothing more given back


def test_an_exchange_to_an_earlier_date_shows_its_settlement_receipt_due_at_the_new_start(tickets_env):
    """make proof seed 20261269052 (F6): with receipts on, a customer's exchange to an earlier date
    left the settlement receipt's look at the old start (the sweeper would send it late); the view's
    settlement line shows when it is due."""
    status, settings = request("PUT", "/organizers/me/fiscal", {"tax_system_code": 2, "vat_code": 1},
                               ORGANIZER, folder="admin_api")
    assert status == 200, settings
    later = create_event("xd-late", capacity=5, exchange_until_hours=24, starts_at="2030-05-08T20:00:00Z")
    earlier = create_event("xd-early", capacity=5, exchange_until_hours=24, starts_at="2030-05-01T20:00:00Z")
    status, held = bookings("POST", f"/events/{later['event_id']}/bookings",
                            body={"quantity": 2, "contact_email": "ann@example.com"},
                            headers={"Idempotency-Key": "xd-early-1", "X-Customer-Id": "customer-42"})
    assert status == 201, held
    confirm(tickets_env, held["booking_id"])

    def due(booking):
        return [r["at"] for r in described(booking)["receipts"] if r["type"] == "settlement"]

    assert due(view(held["booking_id"])[1]) == ["2030-05-08T20:00:00.000Z"]
    status, moved = exchange(held["booking_id"], {"event_id": earlier["event_id"], "quantity": 2}, "early-1")
    assert status == 200, moved
    assert due(moved) == ["2030-05-01T20:00:00.000Z"]
