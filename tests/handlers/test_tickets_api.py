"""An event booking's tickets on the sample events: the view lists one per place once CONFIRMED,
each ticket's token is signed with the event's own key, its QR code is the owner's only, and a
cancelled booking's tickets are gone (void)."""
import json

import boto3
import pytest

from holdfast import wiring
from holdfast.domain.signatures import unb64, verify
from holdfast.products.events.tickets import EventKeys, ticket_id
from tests.handlers.test_api_handlers import book, create_event
from tests.support.fake_provider import FakeProvider
from tests.support.handlers import api_event, call

SEED = "handler-ticket-master-seed-0123456789"


@pytest.fixture
def tickets_env(handler_env, monkeypatch):
    boto3.client("secretsmanager", region_name="eu-central-1").create_secret(
        Name="handler/tickets", SecretString=json.dumps({"master_seed": SEED}))
    monkeypatch.setenv("TICKET_KEY_SECRET_NAME", "handler/tickets")
    wiring.reset()
    fake, real = FakeProvider(), wiring.provider
    wiring.provider = lambda: fake
    yield fake
    wiring.provider = real


def view(booking_id, customer="customer-42"):
    return call("bookings_api", api_event("get_booking.json", path_params={"booking_id": booking_id},
                                          headers={"X-Customer-Id": customer}))


def ticket_svg(booking_id, ticket_file, customer="customer-42"):
    return call("bookings_api", api_event("get_booking_ticket.json", headers={"X-Customer-Id": customer},
                                          path_params={"booking_id": booking_id, "ticket_file": ticket_file}))


def confirm(provider, booking_id, customer="customer-42"):
    payment_id = wiring.payments().start_payment(booking_id, customer, f"pay-{booking_id}").payment.payment_id
    provider.pay(payment_id)
    assert wiring.payments().apply_provider_payment(provider.get_payment(payment_id)) == "confirmed"


def test_a_confirmed_booking_lists_one_signed_ticket_per_place(tickets_env):
    event = create_event(capacity=10)
    status, held = book(event["event_id"], {"quantity": 3})
    assert status == 201
    assert "tickets" not in view(held["booking_id"])[1]
    assert ticket_svg(held["booking_id"], ticket_id(held["booking_id"], 1) + ".svg")[1]["error"]["code"] == "no_pass"
    confirm(tickets_env, held["booking_id"])

    status, shown = view(held["booking_id"])
    assert status == 200 and [t["seat_id"] for t in shown["tickets"]] == [None, None, None]
    assert [t["ticket_id"] for t in shown["tickets"]] == [ticket_id(held["booking_id"], n) for n in (1, 2, 3)]
    public = EventKeys(SEED.encode()).public_raw(event["event_id"])
    payload = verify(shown["tickets"][0]["token"], public)
    assert payload["ev"] == event["event_id"] and payload["bk"] == held["booking_id"]
    assert payload["tk"] == shown["tickets"][0]["ticket_id"] and payload["seat"] is None
    # the event's own key: a lot's key from the same seed never verifies it
    from holdfast.products.parking.tokens import LotKeys
    with pytest.raises(Exception):
        verify(shown["tickets"][0]["token"], LotKeys(SEED.encode()).public_raw(event["event_id"]))

    raw = _raw(held["booking_id"], shown["tickets"][1]["ticket_id"] + ".svg")
    assert raw["statusCode"] == 200 and raw["multiValueHeaders"]["Content-Type"] == ["image/svg+xml"]
    assert raw["multiValueHeaders"]["Cache-Control"] == ["private, no-store"] and raw["body"].startswith("<svg")
    assert ticket_svg(held["booking_id"], shown["tickets"][1]["ticket_id"] + ".svg", "someone-else")[0] == 403
    assert ticket_svg(held["booking_id"], shown["tickets"][1]["ticket_id"] + ".png")[0] == 404
    assert ticket_svg(held["booking_id"], ticket_id(held["booking_id"], 4) + ".svg")[1]["error"]["code"] == "no_pass"

    # leaving CONFIRMED voids them: the view lists none and no code is drawn
    status, cancelled = call("bookings_api", api_event("cancel_booking.json", path_params={"booking_id": held["booking_id"]},
                                                       headers={"X-Customer-Id": "customer-42"}))
    assert status == 200 and cancelled["status"] != "CONFIRMED" and "tickets" not in cancelled
    assert "tickets" not in view(held["booking_id"])[1]
    assert ticket_svg(held["booking_id"], shown["tickets"][1]["ticket_id"] + ".svg")[1]["error"]["code"] == "no_pass"


def test_a_seated_booking_s_tickets_name_their_seats(tickets_env):
    event = create_event(capacity=None, seat_map={"seat_ids": ["A1", "A2", "A3"]})
    status, held = book(event["event_id"], {"seats": ["A2", "A3"]}, key="seated")
    assert status == 201, held
    confirm(tickets_env, held["booking_id"])
    assert [t["seat_id"] for t in view(held["booking_id"])[1]["tickets"]] == ["A2", "A3"]


def _raw(booking_id, ticket_file):
    from tests.support.handlers import FakeLambdaContext, load_handler

    event = api_event("get_booking_ticket.json", headers={"X-Customer-Id": "customer-42"},
                      path_params={"booking_id": booking_id, "ticket_file": ticket_file})
    return load_handler("bookings_api").lambda_handler(event, FakeLambdaContext(function_name="bookings_api"))
