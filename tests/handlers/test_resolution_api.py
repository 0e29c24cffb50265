"""The conflict-case routes on their sample events: the customer's POST /bookings/{id}/resolution
and the operator's alternative in /admin/reviews. A late payment opens the case through the real
services with an in-memory provider in place of the unreachable one."""
import time

import pytest

from holdfast import wiring
from holdfast.products.events.schemas import EventIn
from holdfast.schemas import BookingIn
from tests.handlers.conftest import organizer_caller
from devstack.sample_events import moved
from tests.support import toy_windows
from tests.support.fake_provider import FakeProvider
from tests.support.handlers import api_event, call

ORGANIZER = {"X-Api-Key": "organizer-test-key"}


@pytest.fixture
def provider(handler_env):
    # Put back before handler_env's teardown resets the (cached) real factory.
    fake, real = FakeProvider(), wiring.provider
    wiring.provider = lambda: fake
    yield fake
    wiring.provider = real


def resolve(booking_id, body, key="r-1", customer="ann", raw=None):
    return call("bookings_api", api_event(
        "resolve_conflict.json", path_params={"booking_id": booking_id}, body=body, raw_body=raw,
        headers={"Idempotency-Key": key, "X-Customer-Id": customer}))


def open_case(provider, mode="one_stage"):
    """Ann's hold lapses unpaid, Bob takes her window, Ann's payment arrives: a case opens."""
    toy_windows.register()
    event = wiring.catalog().create_event(EventIn.model_validate({
        "name": "Tasting", "venue": "Cellar", "city": "Moscow", "category": "windowed",
        "starts_at": moved("2030-02-01T12:00:00Z"), "price": {"value": "900.00", "currency": "RUB"}, "capacity": 2,
        "max_per_booking": 2, "payment_mode": mode, "hold_ttl_seconds": 1}).command(), caller=organizer_caller())
    ann = wiring.bookings().create_booking(event["event_id"], "ann", "a", BookingIn(quantity=2)).booking
    payment_id = wiring.payments().start_payment(ann.booking_id, "ann", "p").payment.payment_id
    time.sleep(1.1)   # the hold of 1 s lapses (the handlers run on the real clock)
    assert wiring.bookings().expire(ann.booking_id)["outcome"] == "expired"
    wiring.bookings().create_booking(event["event_id"], "bob", "b", BookingIn(quantity=2))
    provider.pay(payment_id)
    assert wiring.payments().apply_provider_payment(provider.get_payment(payment_id)) == "conflict_case_opened"
    return ann.booking_id, payment_id


def test_the_customer_chooses_an_alternative_and_a_repeat_returns_the_same_booking(provider):
    booking_id, payment_id = open_case(provider)
    status, view = call("bookings_api", api_event("get_booking.json", path_params={"booking_id": booking_id},
                                                  headers={"X-Customer-Id": "ann"}))
    assert status == 200 and view["status"] == "MANUAL_REVIEW" and view["resolution"]["open"]
    assert [a["window"] for a in view["resolution"]["alternatives"]] == ["12:30", "13:00"]
    status, chosen = resolve(booking_id, {"choice": "alternative", "window": "13:00"})
    assert status == 200 and chosen["status"] == "CONFIRMED" and chosen["places"]["window"] == "13:00"
    assert resolve(booking_id, {"choice": "alternative", "window": "13:00"}) == (200, chosen)
    status, other = resolve(booking_id, {"choice": "refund"}, key="r-2")
    assert status == 409 and other["error"]["code"] == "resolution_closed"
    assert len(provider.payments_for(booking_id)) == 1 and not provider.refunds_for(payment_id)


BAD_REQUESTS = [
    ({"choice": "swap"}, None, "validation_error", 400),
    ({"choice": "alternative", "window": {"nested": 1}}, None, "validation_error", 400),
    ({"choice": "alternative", "Bad-Name": "x"}, None, "validation_error", 400),
    (..., "not json", "malformed_json", 400),
    ({"choice": "alternative", "window": "09:00"}, None, "not_an_offered_alternative", 409),
    ({"choice": "refund", "window": "12:30"}, None, "invalid_choice", 400),
]


def test_bad_resolution_requests_are_4xx_and_write_nothing(provider):
    booking_id, _ = open_case(provider)
    before = wiring.store().get_booking(booking_id).version
    for number, (body, raw, code, status) in enumerate(BAD_REQUESTS):
        answer = resolve(booking_id, body, raw=raw, key=f"bad-{number}")
        assert answer[0] == status and answer[1]["error"]["code"] == code, answer
    assert wiring.store().get_booking(booking_id).version == before


def test_resolution_needs_its_customer_a_key_and_a_case(provider):
    booking_id, _ = open_case(provider)
    assert resolve(booking_id, {"choice": "refund"}, customer="mallory")[0] == 403
    status, missing = call("bookings_api", api_event(
        "resolve_conflict.json", path_params={"booking_id": booking_id}, body={"choice": "refund"},
        headers={"X-Customer-Id": "ann"}, drop_headers=("Idempotency-Key",)))
    assert status == 400, missing
    assert resolve("0b6a6d7e-2f0f-4d7e-8a8e-000000000000", {"choice": "refund"})[0] == 404
    bob = [b for b in wiring.store().list_reviews()]  # only Ann's booking has a case
    assert [b.booking_id for b in bob] == [booking_id]


def test_an_operator_picks_the_alternative_from_the_reviews(provider):
    booking_id, payment_id = open_case(provider, mode="two_stage")
    status, listed = call("admin_api", api_event("list_reviews.json", headers=ORGANIZER))
    assert status == 200 and listed["reviews"][0]["resolution"]["operator"] == "on-call"
    body = {"action": "alternative", "operator": "olga", "note": "customer phoned", "choice": {"window": "12:30"}}
    status, done = call("admin_api", api_event("resolve_review.json", path_params={"booking_id": booking_id},
                                               headers=ORGANIZER, body=body))
    assert status == 200 and done["status"] == "CONFIRMED", done
    assert provider.payments[payment_id]["status"] == "succeeded"
    status, bad = call("admin_api", api_event("resolve_review.json", path_params={"booking_id": booking_id},
                                              headers=ORGANIZER, body=body | {"choice": {"window": ["x"]}}))
    assert status == 400, bad
