"""Whether a booking's credentials admit (domain/entry_rights.py): one rule for doors and gates,
online and offline, and the booking's view (issue 42, finding 5)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from holdfast.domain import entry_rights
from holdfast.domain.booking import Booking, Payment, PaymentMode
from holdfast.domain.inventory import Places
from holdfast.domain.lifecycle import KindStatus
from holdfast.domain.money import Money
from holdfast.domain.statuses import BookingStatus

TICKETS = ["t1", "t2"]


def booking(status, paid=True, **details) -> Booking:
    return Booking(booking_id="b", event_id="e", customer_id="c", status=status,
                   places=Places("general_admission", 2, pools=(("p", 2),)), amount=Money.parse("10.00", "RUB"),
                   payment_mode=PaymentMode.ONE_STAGE, hold_expires_at="2030-01-01T00:10:00.000Z",
                   created_at="2030-01-01T00:00:00.000Z", updated_at="2030-01-01T00:00:00.000Z", version=1,
                   payment=Payment(idempotence_key="k", state="CREATED", payment_id="pay") if paid else None,
                   kind_details=details or None)


@pytest.mark.parametrize("status", [s for s in BookingStatus if s is not BookingStatus.CONFIRMED])
def test_a_booking_that_is_not_confirmed_admits_no_one_and_a_paid_one_is_on_the_offline_list(status):
    gone = booking(status)
    assert not entry_rights.admits(gone) and not any(entry_rights.admits(gone, t) for t in TICKETS)
    holding = status in (BookingStatus.HELD, BookingStatus.PAYMENT_PENDING)
    assert entry_rights.revoked(gone, TICKETS) == ([] if holding else TICKETS)


def test_manual_review_after_a_refused_refund_is_void_and_an_unpaid_hold_lists_nothing():
    assert entry_rights.revoked(booking(BookingStatus.MANUAL_REVIEW), TICKETS) == TICKETS
    assert entry_rights.revoked(booking(BookingStatus.EXPIRED, paid=False), TICKETS) == []
    assert not entry_rights.admits(booking(KindStatus("CHECKED_IN")))


def test_one_ticket_voided_on_its_own_in_a_confirmed_booking():
    kept = booking(BookingStatus.CONFIRMED, voided_credentials=["t2"])
    assert entry_rights.admits(kept) and entry_rights.admits(kept, "t1") and not entry_rights.admits(kept, "t2")
    assert entry_rights.revoked(kept, TICKETS) == ["t2"]
    assert entry_rights.revoked(replace(kept, kind_details=None), TICKETS) == []
