"""The transfer rules (domain/transfers.py) and their service on the fake store (services/transfers.py):
who may offer what, each refusal's code, what a press of the link decides (the same taker again, a
third customer, the giver, a withdrawn or replaced link, an expired one, a cancelled booking), and
that an acceptance voids the credentials shown so far and counts the next issue."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from holdfast.domain import entry_rights, transfers
from holdfast.domain.errors import BookingError
from holdfast.domain.statuses import BookingStatus
from holdfast.products.events import tickets
from tests.unit.test_entry_rights import booking

NOW = datetime(2030, 1, 1, 12, tzinfo=timezone.utc)
OPEN = transfers.Rules(allowed=True, supported=True, admitted=0)


def code_of(call) -> str:
    with pytest.raises(BookingError) as raised:
        call()
    return raised.value.code


def offered(holder: str = "c", secret: str = "s3cret"):
    given = booking(BookingStatus.CONFIRMED)
    details = transfers.offered(given, holder, "t1", secret, "key", NOW)
    return replace(given, kind_details=details)


@pytest.mark.parametrize("rules, status, to_self, code", [
    (OPEN, BookingStatus.HELD, False, "booking_not_confirmed"),
    (OPEN, BookingStatus.REFUNDED, False, "booking_not_confirmed"),
    (transfers.Rules(True, False, 0), BookingStatus.CONFIRMED, False, "transfer_not_supported"),
    (transfers.Rules(False, True, 0), BookingStatus.CONFIRMED, False, "transfers_not_allowed"),
    (transfers.Rules(True, True, 1), BookingStatus.CONFIRMED, False, "ticket_checked_in"),
    (OPEN, BookingStatus.CONFIRMED, True, "transfer_to_self"),
])
def test_an_offer_is_refused_with_its_code(rules, status, to_self, code):
    assert code_of(lambda: transfers.check_offer(booking(status), "c", rules, NOW, to_self=to_self)) == code


def test_one_offer_waits_at_a_time_and_a_lapsed_one_is_replaced():
    waiting = offered()
    assert code_of(lambda: transfers.check_offer(waiting, "c", OPEN, NOW, to_self=False)) == "transfer_pending"
    later = NOW + timedelta(days=transfers.TRANSFER_DAYS, seconds=1)
    transfers.check_offer(waiting, "c", OPEN, later, to_self=False)   # lapsed: a new offer may be made
    assert transfers.pending(waiting, later) is None and transfers.pending(waiting, NOW)["transfer_id"] == "t1"
    # a booking that left CONFIRMED has no waiting offer: it lapsed with it
    assert transfers.pending(replace(waiting, status=BookingStatus.CANCELLED)) is None


def test_what_a_press_of_the_link_decides():
    waiting = offered()
    assert code_of(lambda: transfers.check_accept(waiting, "t1", "wrong", "d", NOW)) == "transfer_invalid"
    assert code_of(lambda: transfers.check_accept(waiting, "t0", "s3cret", "d", NOW)) == "transfer_invalid"
    assert code_of(lambda: transfers.check_accept(waiting, "t1", "s3cret", "c", NOW)) == "transfer_to_self"
    late = NOW + timedelta(days=transfers.TRANSFER_DAYS)
    assert code_of(lambda: transfers.check_accept(waiting, "t1", "s3cret", "d", late)) == "transfer_expired"
    cancelled = replace(waiting, status=BookingStatus.CANCELLED)
    assert code_of(lambda: transfers.check_accept(cancelled, "t1", "s3cret", "d", NOW)) == "transfer_lapsed"
    assert code_of(lambda: transfers.split_token("no-dot")) == "transfer_invalid"

    verdict = transfers.check_accept(waiting, "t1", "s3cret", "d", NOW)
    assert verdict.offer["transfer_id"] == "t1" and not verdict.replay
    taken = replace(waiting, customer_id="d",
                    kind_details=transfers.accepted(waiting, verdict.offer, "d", ["old-1", "old-2"], NOW))
    assert transfers.check_accept(taken, "t1", "s3cret", "d", NOW).replay
    assert code_of(lambda: transfers.check_accept(taken, "t1", "s3cret", "e", NOW)) == "transfer_used"
    withdrawn = replace(waiting, kind_details=transfers.withdrawn(waiting))
    assert code_of(lambda: transfers.check_accept(withdrawn, "t1", "s3cret", "d", NOW)) == "transfer_invalid"


def test_an_acceptance_voids_the_tickets_shown_and_issues_new_ones():
    waiting = offered()
    before = [tid for tid, _ in tickets.places(waiting)]
    offer = transfers.check_accept(waiting, "t1", "s3cret", "d", NOW).offer
    taken = replace(waiting, customer_id="d", kind_details=transfers.accepted(waiting, offer, "d", before, NOW))
    after = [tid for tid, _ in tickets.places(taken)]
    assert transfers.credential_issue(taken) == 1 and not set(before) & set(after)
    assert not any(entry_rights.admits(taken, tid) for tid in before)
    assert all(entry_rights.admits(taken, tid) for tid in after)
    assert tickets.revoked(taken) == sorted(before)   # the offline void list names the old ones only
    assert "transfer" not in taken.kind_details and taken.kind_details["accepted_transfer"]["from"] == "c"
