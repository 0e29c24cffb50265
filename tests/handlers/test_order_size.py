"""The largest order POST /orders takes (issue 43): DynamoDB writes at most 100 items in one
transaction, and an order is held in one. Over the bookings function on moto (with the local
stack's transactions, which keep DynamoDB's limit): five lines of MAX_CLAIMS seats between them,
every offering capping an address's live holds, are held (201); one seat more is 400
``order_too_large`` with the most it takes, never a 5xx from the store."""
from __future__ import annotations

import json
import uuid

from tests.support.handlers import api_event, call

ORGANIZER = {"X-Api-Key": "organizer-test-key"}


def seat_map(name: str) -> str:
    body = json.loads(api_event("create_event.json")["body"])
    body.pop("capacity")
    body |= {"name": name, "max_per_booking": 50, "max_holds_per_address": 3,
             "seat_map": {"rows": [{"name": "A", "seats": 25}, {"name": "B", "seats": 25}]}}
    status, created = call("events_api", api_event("create_event.json", headers=ORGANIZER | {
        "Idempotency-Key": "size-" + uuid.uuid4().hex}, body=body))
    assert status == 201, created
    return created["event_id"]


def place(events: list[str], claims: int, customer: str) -> tuple[int, dict]:
    shares = [claims // len(events) + (1 if n < claims % len(events) else 0) for n in range(len(events))]
    lines = [{"event_id": event_id, "seats": [f"{'AB'[k // 25]}-{k % 25 + 1}" for k in range(share)]}
             for event_id, share in zip(events, shares)]
    event = api_event("create_booking.json", headers={"X-Customer-Id": customer,
                                                      "Idempotency-Key": "o-" + uuid.uuid4().hex},
                      body={"lines": lines})
    event.update(resource="/orders", path="/orders", pathParameters=None)
    return call("bookings_api", event)


def test_the_largest_order_is_held_and_one_seat_more_is_a_clear_400(handler_env):
    from holdfast.products.orders.services import MAX_CLAIMS, MAX_LINES

    events = [seat_map(f"Hall {n}") for n in range(MAX_LINES)]
    status, answer = place(events, MAX_CLAIMS + 1, "too-big")
    assert status == 400 and answer["error"]["code"] == "order_too_large", answer
    assert answer["error"]["details"]["max"] == MAX_CLAIMS
    status, answer = place(events, MAX_CLAIMS, "largest")
    assert status == 201 and answer["status"] == "HELD", answer
    assert sum(len(line["places"].get("seats") or ()) for line in answer["lines"]) == MAX_CLAIMS
