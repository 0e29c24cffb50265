"""The local stack's clock (devstack/aws/clock.py): moving it fires what falls due, in order, and
the stack tells when it is idle. Each test reads the outcome once, right after the move: the move
returns only when the stack has settled, so there is nothing to wait for."""
from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
import requests

from holdfast.clock import parse_iso, system_clock

pytestmark = pytest.mark.integration


def new_customer() -> str:
    return f"cust-{uuid.uuid4().hex[:10]}"


def test_the_engine_and_the_test_read_the_stack_clock(system):
    stack = system["stack"]
    before = system_clock()
    answer = stack.advance_clock(3600)
    after = system_clock()
    assert after - before >= timedelta(seconds=3600)
    assert abs((parse_iso(answer["now"]) - after).total_seconds()) < 5
    # the sandbox keeps the same time
    sandbox_now = parse_iso(system["control"].clock()["now"])
    assert abs((sandbox_now - after).total_seconds()) < 5


def test_a_ten_minute_hold_expires_when_the_clock_passes_it(api, system):
    """The template's default hold (600 s): its expiry tick is a Wait until a moment, which the
    clock's move ends; nothing else is waited for."""
    stack = system["stack"]
    event = api.create_event(capacity=2, hold_ttl_seconds=600)
    ann = new_customer()
    booking = api.book(event["event_id"], ann, {"quantity": 2}).json()
    assert booking["status"] == "HELD"
    stack.advance_clock(540)
    assert api.booking(booking["booking_id"], ann)["status"] == "HELD"
    answer = stack.advance_clock(75)
    assert answer["idle"] is True, answer
    expired = api.booking(booking["booking_id"], ann)
    assert expired["status"] == "EXPIRED" and expired["journal"][-1]["actor"] == "timer"
    assert api.counts(event["event_id"]) == {"available": 2, "held": 0, "sold": 0}
    # the engine acted at the hold's end on its clock, not at the machine's time
    expired_at = parse_iso(expired["journal"][-1]["at"])
    assert expired_at >= parse_iso(booking["hold_expires_at"])


def test_the_sweeper_runs_when_the_clock_passes_its_schedule(system):
    stack = system["stack"]
    sweeper = next(p for p in stack.pollers.values() if p.kind == "schedule")
    runs = sweeper.stats.invocations
    stack.advance_clock(61)
    assert sweeper.stats.invocations == runs + 1
    # three minutes in one move: it runs at the steps other timers make and at the end, the runs
    # it missed in between coalesced (the sweeper looks at everything overdue)
    stack.advance_clock(180)
    assert sweeper.stats.invocations >= runs + 2


def test_the_clock_route_shows_and_moves_the_clock(api, system):
    base = system["stack"].api_url
    shown = requests.get(f"{base}/dev/clock", timeout=10)
    assert shown.status_code == 200 and {"now", "offset_seconds", "timers", "idle", "busy"} <= set(shown.json())
    moved = requests.post(f"{base}/dev/clock", json={"advance_seconds": 30}, timeout=60)
    assert moved.status_code == 200, moved.text
    assert parse_iso(moved.json()["now"]) - parse_iso(shown.json()["now"]) >= timedelta(seconds=30)
    for bad in ({"advance_seconds": -1}, {"advance_seconds": "soon"}, {"advance_seconds": True}, {},
                {"advance_seconds": 10 ** 12}):
        refused = requests.post(f"{base}/dev/clock", json=bad, timeout=10)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "advance_seconds_invalid", bad
    assert requests.post(f"{base}/dev/clock", data=b"{", timeout=10).json()["error"]["code"] == "body_invalid"
    assert requests.delete(f"{base}/dev/clock", timeout=10).status_code == 405


def test_an_unpaid_hold_is_reminded_when_the_clock_reaches_its_reminder(api, system):
    """HoldReminderSeconds=2 (conftest): the expiry tick's reminder bucket, two seconds before the
    hold's end, is a Wait on the stack's clock too."""
    from holdfast import wiring

    stack = system["stack"]
    event = api.create_event(capacity=1, hold_ttl_seconds=600)
    who = new_customer()
    booking = api.book(event["event_id"], who, {"quantity": 1, "contact_email": "rem@example.org"}).json()
    stack.advance_clock(580)
    kinds = [n["type"] for n in wiring.store().list_notifications(who)]
    assert "booking.hold_expiring" not in kinds, kinds
    stack.advance_clock(30)
    kinds = [n["type"] for n in wiring.store().list_notifications(who)]
    assert kinds.count("booking.hold_expiring") == 1 and kinds.count("booking.expired") == 1, kinds
    assert api.booking(booking["booking_id"], who)["status"] == "EXPIRED"


def test_a_dropped_notification_is_sent_again_when_the_clock_reaches_the_sandboxs_retry(api, sandbox, system):
    """The payment sandbox's webhook retries (ten seconds after a failed delivery, doubling) follow
    the stack's clock: nothing is sent again until it is moved past the retry."""
    stack = system["stack"]
    event = api.create_event(capacity=1)
    who = new_customer()
    booking = api.book(event["event_id"], who).json()
    payment_id = api.pay(booking["booking_id"], who).json()["payment_id"]
    sandbox.add_fault("drop_once", match={"object_id": payment_id})
    sandbox.pay(payment_id)
    stack.wait_idle()

    def outcomes():
        return [d["outcome"] for d in sandbox.deliveries(object_id=payment_id, event="payment.succeeded")]

    assert "delivered" not in outcomes(), outcomes()
    stack.advance_clock(11)
    assert outcomes().count("delivered") == 1, outcomes()
    assert api.booking(booking["booking_id"], who)["status"] == "CONFIRMED"


def test_personal_data_is_erased_by_the_sweeper_once_its_90_days_have_passed(api, sandbox, system):
    """The retention (PersonalDataRetentionDays, 90 by default) runs from the booking's end (its
    event's start here); the scheduled sweeper erases when the clock has passed it."""
    from holdfast import wiring
    from holdfast.clock import iso

    stack = system["stack"]
    who = new_customer()
    starts = system_clock().replace(microsecond=0) + timedelta(hours=2)
    event = api.create_event(capacity=2, starts_at=iso(starts))
    booking = api.book(event["event_id"], who, {"quantity": 1, "contact_email": "kept@example.org"}).json()
    payment_id = api.pay(booking["booking_id"], who).json()["payment_id"]
    sandbox.pay(payment_id)
    api.wait_status(booking["booking_id"], who, "CONFIRMED")

    def mine():
        return api.request("GET", "/customers/me/data", customer=who).json()["bookings"]

    stack.advance_clock((starts - system_clock()).total_seconds() + 89 * 86400)
    assert [b["contact_email"] for b in mine()] == ["kept@example.org"]
    stack.advance_clock(2 * 86400)
    # The sweeper erases one page of ended bookings a run, oldest first (functions/sweep_due). On
    # AWS it runs every minute; on the stack a move runs it once per step, so the two days above
    # may have swept a page or two, and the bookings the tests before this one left ended (hundreds
    # in a random order of the package) come before this one. A minute at a time, each sweep must
    # erase some of what is left ahead until this booking's turn.
    store = wiring.store()

    def ended_and_kept() -> int:
        return len(store.ended_bookings(iso(system_clock() - timedelta(days=90)), 100_000))

    left = ended_and_kept()
    while (kept := mine()) != []:
        assert left > 0, f"no ended booking is left to erase, yet the booking's personal data is kept: {kept}"
        stack.advance_clock(60)
        now_left = ended_and_kept()
        assert now_left < left, f"a sweep erased none of the {left} ended bookings left"
        left = now_left
