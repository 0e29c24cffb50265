"""An ``event.changed`` announcement (a change of start time or venue) turned into one notification
per customer holding places of the event: a CONFIRMED booking or an open hold (HELD,
PAYMENT_PENDING), at the address the best of their bookings gives (``_reaches_best``). The notifier runs it for each delivery of the announcement; the de-duplication id
is the event and the change's version, recorded under the customer, so a customer with several
bookings hears once per change, and a redelivery (or a crash half way through) notifies nobody twice.
"""
from __future__ import annotations

from typing import Any

from ..domain.cancellation import of_event
from ..domain.statuses import HOLDING, BookingStatus
from ..ports import EmailSender, NotificationStore
from .mail_policy import MailGate
from .messages import Site
from .notifications import notify

#: Whose places a change concerns.
CONCERNED = frozenset(HOLDING | {BookingStatus.CONFIRMED})


def announce(store: NotificationStore, detail: dict[str, Any], sender: EmailSender | None = None,
             site: Site | None = None, gate: MailGate | None = None) -> int:
    """Notify every concerned customer once; returns how many were notified by this call."""
    event_id = str(detail["event_id"])
    bookings = of_event(store.get_bookings(store.event_booking_ids(event_id)), event_id)   # (not one exchanged away)
    by_customer: dict[str, Any] = {}
    for booking in sorted(bookings, key=_reaches_best):
        if booking.status in CONCERNED:
            by_customer[booking.customer_id] = booking   # the last, best, wins
    sent = 0
    for customer_id, booking in by_customer.items():
        personal = {
            "type": "event.changed", "event_id": event_id, "version": int(detail["version"]), "at": detail.get("at"),
            "booking_id": booking.booking_id, "customer_id": customer_id, "status": booking.status.value,
            "name": detail.get("name", ""), "changes": detail.get("changes") or {},
        }
        if detail.get("change_refund_until"):
            personal["change_refund_until"] = detail["change_refund_until"]
        if booking.contact_email:
            personal["contact_email"] = booking.contact_email
            if booking.contact_own:
                personal["contact_own"] = True
        sent += notify(store, personal, sender, site, gate)
    return sent



def event_changed(store: Any, detail: dict[str, Any], sender: EmailSender | None = None, site: Site | None = None,
                  gate: MailGate | None = None) -> int:
    """An ``event.changed`` fact, whole: every concerned customer told once (``announce``), and a
    settlement receipt owed at the start follows a moved start, earlier too (services/settlements.py).
    Returns how many customers this call notified."""
    sent = announce(store, detail, sender, site, gate)
    if "starts_at" in (detail.get("changes") or {}):
        from ..clock import system_clock
        from .settlements import follow_start

        follow_start(store, system_clock, str(detail["event_id"]))
    return sent


def _reaches_best(booking: Any) -> tuple[bool, bool, str, str]:
    """The order in which a customer's bookings are asked for the address a change goes to, best
    last: one carrying the customer's own (verified) address, then one with any address, the most
    recent of those (the address they gave last). Each booking's address lives on the booking;
    the earliest booking's was chosen before, even when it named an address never confirmed and a
    later one was their own, so the change became a request to confirm a stranger's address."""
    return (bool(booking.contact_email and booking.contact_own), bool(booking.contact_email),
            booking.created_at, booking.booking_id)
