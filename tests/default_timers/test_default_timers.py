"""Timers at their deployed size, passed by moving the stack's clock (docs/testing.md, "Every
timer"): the provider cancelling a payment nobody completed (the sandbox's one hour) and
reconciliation's 24-hour limit (ReconcileLimitSeconds, checked on the default schedule
30, 60, 120, 300, 900, 1800 then hourly). A day of the engine's time takes seconds of real time."""
from __future__ import annotations

from datetime import timedelta

import pytest

from holdfast.clock import parse_iso
from tests.support.flows import actions, booked_and_paying, customer
from tests.support.template import template

pytestmark = pytest.mark.integration

#: The template's defaults (template.yaml), read where they live so the test follows a change.
PARAMETERS = template()["Parameters"]
RECONCILE_LIMIT = int(PARAMETERS["ReconcileLimitSeconds"]["Default"])
SCHEDULE = [int(s) for s in PARAMETERS["ReconcileScheduleSeconds"]["Default"].split(",")]


def stored(booking_id: str):
    """The booking and its whole journal as stored (the customer's view leaves out the
    reconciler's checks: docs/api.md, the journal)."""
    from holdfast import wiring

    booking, journal = wiring.store().get_booking_with_journal(booking_id)
    assert booking is not None
    return booking, [entry.action for entry in journal], journal


def test_a_payment_nobody_completes_is_cancelled_by_the_provider_at_its_deadline(api, sandbox, system):
    """The provider (here the sandbox, one hour by default) cancels a pending payment at its own
    deadline (expired_on_confirmation) and notifies; the engine releases the places."""
    stack = system["stack"]
    window = system["sandbox"].store.pending_expiry.total_seconds()
    event = api.create_event(capacity=2, hold_ttl_seconds=int(window * 2))   # the hold outlives the payment
    who = customer()
    booking_id, payment_id = booked_and_paying(api, event, who)
    created = parse_iso(sandbox.payment(payment_id)["created_at"])
    assert SCHEDULE and sum(SCHEDULE) > window, "reconciliation at its default schedule is still checking then"

    stack.advance_clock(window - 10)
    assert sandbox.payment(payment_id)["status"] == "pending"
    waiting, journal, _ = stored(booking_id)
    assert waiting.status.value == "PAYMENT_PENDING", journal
    assert "reconciliation_check" in journal    # its first checks found it pending

    stack.advance_clock(20)
    cancelled = sandbox.payment(payment_id)
    assert cancelled["status"] == "canceled"
    assert cancelled["cancellation_details"]["reason"] == "expired_on_confirmation"
    failed = api.booking(booking_id, who)
    assert failed["status"] == "PAYMENT_FAILED" and actions(failed)[-1] == "payment_canceled", actions(failed)
    assert "expired_on_confirmation" in failed["journal"][-1]["decision"]
    assert parse_iso(failed["journal"][-1]["at"]) - created >= timedelta(seconds=window)
    assert api.counts(event["event_id"]) == {"available": 2, "held": 0, "sold": 0}


@pytest.fixture
def provider_keeps_pending(system):
    """The sandbox's payments stay pending for two days (the provider's window longer than the
    engine's limit), so the limit, not the provider, ends the wait; restored after the test."""
    store = system["sandbox"].store
    kept = store.pending_expiry
    store.pending_expiry = timedelta(seconds=2 * RECONCILE_LIMIT)
    yield
    store.pending_expiry = kept


def test_reconciliation_gives_up_at_its_24_hour_limit_on_the_default_schedule(api, sandbox, system,
                                                                                provider_keeps_pending):
    """A payment whose outcome never becomes final is checked on the default schedule, then hourly,
    until the limit (24 hours after the attempt): the last wait is cut to end at the limit, and that
    check stops checking (it used to be the first hourly check past the limit, up to an hour late)."""
    stack = system["stack"]
    event = api.create_event(capacity=2)
    who = customer()
    booking_id, payment_id = booked_and_paying(api, event, who)
    booking, _, _ = stored(booking_id)
    attempt = parse_iso(booking.payment.requested_at)

    stack.advance_clock(RECONCILE_LIMIT - 60)
    checking, journal, _ = stored(booking_id)
    assert "reconciliation_limit_reached" not in journal
    assert checking.status.value == "EXPIRED", journal   # the hold (600 s) ended; the payment is still looked after
    # the first check 30 s after the attempt; after the n-th, the n-th wait of the schedule (the
    # last repeating): 30, 60, 120, 240, 540, 1440, 3240 s, then hourly: 30 checks before 86,340 s
    moments = [SCHEDULE[0]]
    while moments[-1] + SCHEDULE[min(len(moments) - 1, len(SCHEDULE) - 1)] < RECONCILE_LIMIT - 60:
        moments.append(moments[-1] + SCHEDULE[min(len(moments) - 1, len(SCHEDULE) - 1)])
    assert journal.count("reconciliation_check") == len(moments), (journal.count("reconciliation_check"), moments)
    assert checking.payment.next_check_at
    assert sandbox.payment(payment_id)["status"] == "pending"

    stack.advance_clock(60 + SCHEDULE[-1] + 60)   # past the limit and the first hourly check after it
    stopped, journal, entries = stored(booking_id)
    assert journal[-1] == "reconciliation_limit_reached", journal[-5:]
    at = parse_iso(entries[-1].at)
    assert timedelta(seconds=RECONCILE_LIMIT) <= at - attempt <= timedelta(seconds=RECONCILE_LIMIT + SCHEDULE[-1] + 60)
    assert at - attempt <= timedelta(seconds=RECONCILE_LIMIT + 5), at - attempt   # at the limit, not an hour on
    assert not stopped.payment.next_check_at
    stack.advance_clock(2 * SCHEDULE[-1])
    assert stored(booking_id)[1] == journal   # nothing more is checked
