"""GET /bookings/{booking_id}/pass.svg on its sample event: the pass as SVG text (never base64,
so API Gateway needs no binary media type), private, and the codes a page can act on."""
import pytest

from holdfast import wiring
from tests.handlers.test_parking_api import create_lot, parking_env, reserve  # noqa: F401 - the lot routes' fixture
from tests.support.fake_provider import FakeProvider
from tests.support.handlers import FakeLambdaContext, api_event, load_handler


@pytest.fixture
def provider(parking_env):
    fake, real = FakeProvider(), wiring.provider
    wiring.provider = lambda: fake
    yield fake
    wiring.provider = real


def pass_svg(booking_id, customer):
    event = api_event("get_booking_pass.json", path_params={"booking_id": booking_id},
                      headers={"X-Customer-Id": customer})
    return load_handler("bookings_api").lambda_handler(event, FakeLambdaContext(function_name="bookings_api"))


def test_a_paid_reservation_answers_its_pass_as_svg_text(provider):
    import json

    lot = create_lot(key="pass-lot")[1]
    status, held = reserve(lot["lot_id"], "pass-1")
    assert status == 201, held
    customer = "customer-pass-1"
    refused = pass_svg(held["booking_id"], customer)
    assert refused["statusCode"] == 404 and json.loads(refused["body"])["error"]["code"] == "no_pass"
    payment_id = wiring.payments().start_payment(held["booking_id"], customer, "pay-1").payment.payment_id
    provider.pay(payment_id)
    assert wiring.payments().apply_provider_payment(provider.get_payment(payment_id)) == "confirmed"

    answer = pass_svg(held["booking_id"], customer)
    assert answer["statusCode"] == 200 and answer["isBase64Encoded"] is False
    assert answer["multiValueHeaders"]["Content-Type"] == ["image/svg+xml"]
    assert answer["multiValueHeaders"]["Cache-Control"] == ["private, no-store"]
    assert answer["body"].startswith("<svg") and answer["body"].rstrip().endswith("</svg>")
    other = pass_svg(held["booking_id"], "someone-else")
    assert other["statusCode"] == 403 and json.loads(other["body"])["error"]["code"] == "forbidden"
    unknown = pass_svg("0b6a6d7e-2f0f-4d7e-8a8e-000000000000", customer)
    assert json.loads(unknown["body"])["error"]["code"] == "booking_not_found"
