"""A booking's ticket ids (products/events/tickets.py ``places``): derived from the booking, its
part and its credential issue and the place's position, and derived once per container for a
booking however many of its tickets a door scans (issue 49: 50 ``uuid5`` per scan of a booking of
50 were a measurable share of the scan's CPU)."""
from __future__ import annotations

import uuid
from dataclasses import replace

from holdfast.domain.booking import Booking
from holdfast.domain.inventory import Places
from holdfast.domain.statuses import BookingStatus
from holdfast.domain.transfers import ISSUE
from holdfast.products.events import tickets
from tests.unit.test_entry_rights import booking


def _of(quantity: int, booking_id: str, **details) -> Booking:
    given = booking(BookingStatus.CONFIRMED, **details)
    return replace(given, booking_id=booking_id, places=Places("general_admission", quantity, pools=(("p", quantity),)))


def test_ids_follow_the_booking_its_issue_and_the_position():
    plain = _of(3, "b-ids-1")
    assert tickets.places(plain) == [(str(uuid.uuid5(tickets.NAMESPACE, f"b-ids-1/{n}")), None) for n in (1, 2, 3)]
    reissued = _of(3, "b-ids-1", **{ISSUE: 2})
    assert [tid for tid, _ in tickets.places(reissued)] == [tickets.ticket_id("b-ids-1#2", n) for n in (1, 2, 3)]
    seated = replace(plain, places=Places("seat_map", 2, units=("A-1", "A-2")))
    assert tickets.places(seated) == [(tickets.ticket_id("b-ids-1", 1), "A-1"), (tickets.ticket_id("b-ids-1", 2), "A-2")]
    # a larger booking under the same id names its first tickets alike, and its further ones anew
    assert [tid for tid, _ in tickets.places(_of(5, "b-ids-1"))][:3] == [tid for tid, _ in tickets.places(plain)]


def test_a_booking_s_tickets_are_derived_once_however_many_scans_look_them_up(monkeypatch):
    derived = []
    real = tickets.ticket_id

    def counting(base: str, position: int) -> str:
        derived.append((base, position))
        return real(base, position)

    monkeypatch.setattr(tickets, "ticket_id", counting)
    fifty = _of(50, f"b-once-{uuid.uuid4()}")
    first = tickets.places(fifty)
    for _ in range(20):   # a door scanning the booking's tickets one after another
        assert tickets.places(fifty) == first
    assert len(derived) == 50
    assert len(set(tid for tid, _ in first)) == 50
