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


def move_past_the_hold(api, booking_id, who):
    """Move the running stack's clock to the moment the booking's hold expiry tick runs (the end of
    its hold's 5-second bucket) and no further, then read the booking. The way to lapse a short hold
    while its payment is pending: the move passes as much of the package's reconciliation limit as
    waiting for the hold in real time did, in a fraction of the wall time."""
    from holdfast.adapters.expiry_buckets import bucket_of
    from holdfast.clock import parse_iso, system_clock
    from tests.support.stack_time import running_stack

    tick = parse_iso(bucket_of(api.booking(booking_id, who)["hold_expires_at"]))
    running_stack().advance_clock(max(0.0, (tick - system_clock()).total_seconds()) + 0.1)
    return api.booking(booking_id, who)
