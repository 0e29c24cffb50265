"""Small steps the HTTP suites share: a fresh customer id, a booking's journal actions, a hold
with its payment started."""
from __future__ import annotations

import uuid


def customer() -> str:
    return f"cust-{uuid.uuid4().hex[:10]}"


def actions(booking):
    return [entry["action"] for entry in booking["journal"]]


def booked_and_paying(api, event, who, n=1):
    booking = api.book(event["event_id"], who, {"quantity": n}).json()
    answer = api.pay(booking["booking_id"], who)
    assert answer.status_code == 201, answer.text
    return booking["booking_id"], answer.json()["payment_id"]
