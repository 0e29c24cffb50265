"""The customer texts over the API: GET /texts (what the pages show) and a booking's own
sentences and error messages in the language its Accept-Language prefers."""
import json

from holdfast.domain.texts import TEXTS
from tests.handlers.test_catalog_api import create_event
from tests.handlers.test_parking_api import parking_env  # noqa: F401 (a fixture)
from tests.support.handlers import FakeLambdaContext, api_event, call, load_handler


def texts(query):
    event = api_event("get_customer_texts.json")
    event["queryStringParameters"] = query
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()} if query else None
    answer = load_handler("catalog_api").lambda_handler(event, FakeLambdaContext(function_name="catalog_api"))
    return answer["statusCode"], json.loads(answer["body"])


def test_the_pages_read_the_apis_own_texts(handler_env):
    from holdfast.kinds.products import customer_texts

    every = customer_texts()   # the core's texts and each product's own steps
    status, body = texts(None)
    assert status == 200 and body == {"default": "en", "languages": ["en", "ru"], "texts": every}
    assert TEXTS["en"].items() <= body["texts"]["en"].items() and "journal.vehicle_entered" in body["texts"]["en"]
    status, body = texts({"lang": "ru"})
    assert status == 200 and body["texts"] == {"ru": every["ru"]}
    assert body["texts"]["ru"]["journal.ticket_checked_in"] == "Билет прошёл на входе"
    for query in ({"lang": "de"}, {"language": "ru"}):
        status, body = texts(query)
        assert (status, body["error"]["code"]) == (400, "unknown_language"), query


def test_a_booking_speaks_the_language_its_reader_prefers(handler_env):
    event = create_event(capacity=3)
    status, held = call("bookings_api", api_event(
        "create_booking.json", path_params={"event_id": event["event_id"]},
        headers={"Idempotency-Key": "lang-1", "X-Customer-Id": "ivan", "Accept-Language": "ru-RU,ru;q=0.9,en;q=0.5"}))
    assert status == 201 and held["hold_next_step"].startswith("Места закреплены за вами до " + held["hold_expires_at"])

    def view(language):
        headers = {"X-Customer-Id": "ivan"} | ({"Accept-Language": language} if language else {})
        return call("bookings_api", api_event("get_booking.json", path_params={"booking_id": held["booking_id"]},
                                              headers=headers))

    # an event offers no other places to a late payment: its text promises only the money back
    english = view("en;q=0.9, ru;q=0.1")[1]
    assert english["hold_next_step"] == TEXTS["en"]["hold_next_step.refund_only"].format(until=held["hold_expires_at"])
    assert english["texts"] == {"hold_next_step": "hold_next_step.refund_only", "hold_ended": "hold_ended.refund_only"}
    assert "other places" not in english["hold_next_step"]
    assert view(None)[1]["hold_next_step"].startswith("Your places are held until")
    assert view("ru")[1]["hold_next_step"] == TEXTS["ru"]["hold_next_step.refund_only"].format(
        until=held["hold_expires_at"])

    missing = api_event("get_booking.json", path_params={"booking_id": "0b6a6d7e-2f0f-4d7e-8a8e-000000000000"},
                        headers={"X-Customer-Id": "ivan", "Accept-Language": "ru"})
    status, body = call("bookings_api", missing)
    assert (status, body["error"]) == (404, {"code": "booking_not_found", "message": "Такого бронирования нет."})
    missing["headers"]["Accept-Language"] = missing["multiValueHeaders"]["Accept-Language"][0] = "en"
    status, body = call("bookings_api", missing)
    assert body["error"]["message"].startswith("No booking ")


def test_a_products_error_speaks_the_readers_language_from_the_products_own_texts(parking_env):
    """lot_not_found is parking's: its Russian message is in products/parking/texts.py, not the core's."""
    body = json.loads(api_event("create_reservation.json")["body"])
    missing = api_event("create_reservation.json", path_params={"lot_id": "0" * 36}, body=body,
                        headers={"Idempotency-Key": "lang-lot", "X-Customer-Id": "ivan", "Accept-Language": "ru"})
    status, answer = call("parking_api", missing)
    assert (status, answer["error"]) == (404, {"code": "lot_not_found", "message": "Такой парковки нет."})
