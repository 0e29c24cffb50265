"""Storage contention reaching a handler is a 4xx with a code, never a 500: a transaction that
keeps conflicting is 429 `busy` with Retry-After; a booking that changed under a decision is 409
`booking_changed`. The conflicts are injected into the table client's TransactWriteItems, the one
call every multi-item write goes through."""
from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from holdfast import wiring
from holdfast.ports import StaleBooking
from holdfast.services.bookings import BookingService
from tests.support.handlers import FakeLambdaContext, api_event, call, load_handler

ORGANIZER = {"X-Api-Key": "organizer-test-key"}
ALICE = {"X-Customer-Id": "alice"}


def conflict() -> ClientError:
    return ClientError({"Error": {"Code": "TransactionCanceledException", "Message": "conflict"},
                        "CancellationReasons": [{"Code": "TransactionConflict"}, {"Code": "None"}]},
                       "TransactWriteItems")


class Conflicts:
    """Makes the next ``times`` transactions fail with TransactionConflict (nothing written)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, times: int) -> None:
        client = wiring.store().client
        self.real = client.transact_write_items
        self.left = times
        self.calls = 0
        monkeypatch.setattr(client, "transact_write_items", self)

    def __call__(self, **kwargs):
        self.calls += 1
        if self.left > 0:
            self.left -= 1
            raise conflict()
        return self.real(**kwargs)


def create_event(**overrides):
    body = json.loads(api_event("create_event.json")["body"]) | overrides
    status, created = call("events_api", api_event("create_event.json", headers=ORGANIZER, body=body))
    assert status == 201, created
    return created["event_id"]


def hold(event_id, quantity=1):
    status, booking = call("bookings_api", api_event(
        "create_booking.json", path_params={"event_id": event_id}, body={"quantity": quantity},
        headers={"Idempotency-Key": "k-1", **ALICE}))
    assert status == 201, booking
    return booking["booking_id"]


def cancel(booking_id):
    return call("bookings_api", api_event("cancel_booking.json", path_params={"booking_id": booking_id}, headers=ALICE))


def assert_busy(status, body):
    assert (status, body["error"]["code"]) == (429, "busy"), body


def test_a_short_conflict_is_retried_inside_and_the_cancel_succeeds(handler_env, monkeypatch):
    booking_id = hold(create_event(capacity=3))
    conflicts = Conflicts(monkeypatch, times=2)
    status, body = cancel(booking_id)
    assert (status, body["status"]) == (200, "CANCELLED")
    assert conflicts.calls == 3


def test_a_lasting_conflict_on_cancel_is_429_busy_with_retry_after(handler_env, monkeypatch):
    booking_id = hold(create_event(capacity=3))
    Conflicts(monkeypatch, times=10_000)
    event = api_event("cancel_booking.json", path_params={"booking_id": booking_id}, headers=ALICE)
    response = load_handler("bookings_api").lambda_handler(event, FakeLambdaContext())
    assert response["statusCode"] == 429
    assert json.loads(response["body"])["error"]["code"] == "busy"
    headers = {key.lower(): value for source in (response.get("headers") or {}, response.get("multiValueHeaders") or {})
               for key, value in source.items()}
    retry_after = headers["retry-after"]
    assert int(retry_after[0] if isinstance(retry_after, list) else retry_after) >= 1
    monkeypatch.undo()
    status, body = call("bookings_api", api_event("get_booking.json", path_params={"booking_id": booking_id},
                                                  headers=ALICE))
    assert (status, body["status"]) == (200, "HELD")   # nothing was half-written


def test_a_lasting_conflict_on_payment_start_is_429_busy(handler_env, monkeypatch):
    booking_id = hold(create_event(capacity=3))
    Conflicts(monkeypatch, times=10_000)
    assert_busy(*call("bookings_api", api_event("start_payment.json", path_params={"booking_id": booking_id},
                                                headers={"Idempotency-Key": "p-1", **ALICE})))


def test_a_lasting_conflict_on_waitlist_join_is_429_busy(handler_env, monkeypatch):
    event_id = create_event(capacity=1)
    hold(event_id)
    Conflicts(monkeypatch, times=10_000)
    status, body = call("waitlist_api", api_event("join_waitlist.json", path_params={"event_id": event_id},
                                                  body={"quantity": 1}, headers={"X-Customer-Id": "bob"}))
    assert status == 429 and body["error"]["code"] == "busy", body


def test_a_lasting_conflict_on_review_resolve_is_429_busy(handler_env, monkeypatch):
    booking_id = hold(create_event(capacity=3))
    store = wiring.store()
    booking = store.get_booking(booking_id)
    wiring.payments().open_review(booking, "amount_mismatch", "test", {})
    Conflicts(monkeypatch, times=10_000)
    assert_busy(*call("admin_api", api_event(
        "resolve_review.json", path_params={"booking_id": booking_id}, headers=ORGANIZER,
        body={"action": "close", "operator": "olga", "note": "customer called"})))


def test_a_booking_that_changed_under_a_decision_is_409_booking_changed(handler_env, monkeypatch):
    booking_id = hold(create_event(capacity=3))

    def always_stale(self, *args, **kwargs):
        raise StaleBooking(booking_id)

    monkeypatch.setattr(BookingService, "cancel", always_stale)
    status, body = cancel(booking_id)
    assert (status, body["error"]["code"]) == (409, "booking_changed")
