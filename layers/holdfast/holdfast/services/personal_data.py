"""A customer's personal data: erased once a booking has ended and the retention period passed
(the sweeper), shown to the customer who asks (``GET /customers/me/data``), and erased on their
request (``DELETE /customers/me``) as far as accounting allows.

What is erased and what stays is domain/personal_data.py's; which items carry it is the store's.
A booking is erased through ``commit`` like any other change, with a journal entry of its own, so
a payment or a timer that writes the booking at the same moment makes one of the two read again.

A customer who asks for erasure while a booking of theirs is live (places held, money unsettled,
a review open, or bought for a time still to come) is refused with 409 ``bookings_active``
naming those bookings, and nothing is erased: the live booking still needs their id (the pages,
the gate, a refund) and its contact address. They can cancel it, or ask again once it has ended;
the retention sweep erases it in any case once its period has passed.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from .. import kinds
from ..clock import iso
from ..domain.booking import Booking, JournalEntry
from ..domain.errors import Conflict
from ..domain.journal import customer_view
from ..domain.personal_data import DEFAULT_RETENTION_DAYS, ended_at, erased, with_current_end
from ..observability import logger
from ..ports import Change, Clock, PersonalDataStore, StaleBooking
from .booking_views import resolution_view
from .transitions import decide_again

ERASE_ATTEMPTS = 3


class PersonalDataService:
    def __init__(self, store: PersonalDataStore, clock: Clock, pseudonym_key: bytes,
                 retention_days: int = DEFAULT_RETENTION_DAYS) -> None:
        self.store = store
        self.clock = clock
        self.key = pseudonym_key
        self.retention = timedelta(days=retention_days)

    def erase_ended(self, limit: int = 100) -> dict[str, int]:
        """One page of the bookings whose retention has run out, oldest first. An erased booking
        leaves the index, so the next pass starts where this one stopped."""
        cutoff = iso(self.clock() - self.retention)
        counts = {"erased": 0, "skipped": 0, "failed": 0}
        for booking_id in self.store.ended_bookings(cutoff, limit):
            try:
                outcome = "erased" if self.erase(booking_id, ended_by=cutoff) else "skipped"
            except Exception:  # noqa: BLE001 - isolated: the others go on, the next sweep retries this one
                logger.exception("could not erase a booking's personal data", extra={"booking_id": booking_id})
                outcome = "failed"
            counts[outcome] += 1
        return counts

    def erase(self, booking_id: str, *, ended_by: str) -> bool:
        """Erase the booking's personal data if it ended by ``ended_by``; False when it is gone,
        already erased, or live again."""
        return decide_again(lambda: self._read(booking_id), lambda booking: self._erase(booking, ended_by),
                            attempts=ERASE_ATTEMPTS, exhausted=StaleBooking(booking_id), gone=lambda: False)

    def _read(self, booking_id: str) -> Booking | None:
        return self.store.get_booking(booking_id)

    def _erase(self, stored: Booking, ended_by: str) -> bool:
        booking = self._with_end(stored)
        ended = ended_at(booking)
        if ended is None or ended > ended_by:
            if ended is not None and booking.ends_at != stored.ends_at:
                # its event moved later: the index of ended bookings moves it to its new end, out
                # of the sweep's way until then, rather than have every sweep read it again
                self._reindex(stored, booking)
            return False
        self.store.erase_booking_records(booking.booking_id, booking.customer_id, booking.event_id, booking.updated_at)
        now = iso(self.clock())
        after = erased(booking, self.key, now, kinds.of_booking(booking).personal_details)
        entry = JournalEntry(at=now, action="personal_data_erased", actor="system", from_status=booking.status.value,
                             to_status=booking.status.value, decision="", ids={"booking_id": booking.booking_id})
        self.store.commit(Change(before=booking, after=after, journal=entry))
        return True

    # ------------------------------------------------------------------------------ the customer's own

    def _bookings(self, customer_id: str) -> list[Booking]:
        found = self.store.get_bookings(self.store.customer_bookings(customer_id))
        return sorted((self._with_end(booking) for booking in found if booking.customer_id == customer_id),
                      key=lambda booking: (booking.created_at, booking.booking_id))

    def _with_end(self, booking: Booking) -> Booking:
        """The booking with the end its places or its events give it now (domain
        ``with_current_end``): an event the organizer moved later is not over at its old start,
        an order not before its last line, and a booking written before ``ends_at`` existed gets
        one too."""
        return with_current_end(booking, lambda offering_id: str((self.store.get_event(offering_id) or {})
                                                                 .get("starts_at") or ""))

    def _reindex(self, stored: Booking, booking: Booking) -> None:
        now = iso(self.clock())
        after = replace(booking, version=stored.version + 1)
        entry = JournalEntry(at=now, action="end_moved", actor="system", from_status=booking.status.value,
                             to_status=booking.status.value, decision=f"ends {booking.ends_at}",
                             ids={"booking_id": booking.booking_id})
        self.store.commit(Change(before=stored, after=after, journal=entry))

    def export(self, customer_id: str) -> dict[str, Any]:
        """Every booking that still names the customer, with its whole journal and the personal
        fields held, and the notifications recorded for them."""
        bookings = []
        for booking in self._bookings(customer_id):
            _, journal = self.store.get_booking_with_journal(booking.booking_id)
            bookings.append({
                "booking_id": booking.booking_id, "event_id": booking.event_id, "status": booking.status.value,
                "created_at": booking.created_at, "updated_at": booking.updated_at, "ends_at": booking.ends_at,
                "amount": booking.amount.as_dict(), "contact_email": booking.contact_email,
                # what the booking's own view shows of its case and its journal: an operator's
                # name, key and notes and the internal checks stay out (domain/journal.py)
                "details": booking.kind_details or {},
                "resolution": resolution_view(booking) if booking.resolution else None,
                "payment": _payment(booking), "journal": customer_view(journal),
            })
        notes = [{key: value for key, value in note.items() if key not in ("pk", "sk")}
                 for note in self.store.list_notifications(customer_id)]
        return {"customer_id": customer_id, "bookings": bookings, "notifications": notes}

    def forget(self, customer_id: str) -> dict[str, Any]:
        """Erase every booking of the customer that has ended, their notifications and their turns
        in waitlists; refused whole (Conflict ``bookings_active``) while any is live, and
        (``offer_pending``) while a waitlist offer is being made for them. A repeat finds nothing
        left."""
        now = iso(self.clock())
        bookings = self._bookings(customer_id)
        active = [booking.booking_id for booking in bookings if _live(booking, now)]
        if active:
            raise Conflict("Some of your bookings are still active; cancel them or ask again once they have ended.",
                           code="bookings_active", bookings=active)
        # Asking to be forgotten is leaving every line too, and first: a turn the relay has claimed
        # for an offer stays (the relay makes its hold under the customer's id, a booking made
        # after the erasure otherwise), so nothing is erased while one is in flight. A turn still
        # waiting leaves before the relay can claim it (the claim needs its place in the queue).
        offering = self.store.erase_customer_lines(customer_id)
        if offering:
            raise Conflict("A waitlist offer is being made for you; ask again once it has been made (then cancel "
                           "its booking) or has lapsed.", code="offer_pending", events=sorted(offering))
        erased_count = sum(self.erase(booking.booking_id, ended_by=now) for booking in bookings)
        self.store.erase_customer_notes(customer_id)
        return {"erased": erased_count}


def _live(booking: Booking, now: str) -> bool:
    ended = ended_at(booking)
    return ended is None or ended > now


def _payment(booking: Booking) -> dict[str, Any] | None:
    if booking.payment is None:
        return None
    payment = booking.payment
    return {"payment_id": payment.payment_id, "provider_status": payment.provider_status, "refund": payment.refund}
