"""Whether a booking's credentials let anyone in: the one rule for an event's tickets at a door and
a parking reservation's pass at a gate, online and offline, and for the booking's own view.

``status_admits`` and ``status_revoked`` are the same decisions for a caller that has a booking's
status (and whether it had a payment) but not the booking: a parking gate's configuration.

A credential (a ticket, an entry pass) admits while its booking is CONFIRMED and the credential
itself has not been voided (``voided_credentials`` in the booking's kind details: one ticket of a
booking that stays confirmed, given away by a transfer). Every other status admits no one:
cancelled, refunded, a refund the provider refused (MANUAL_REVIEW), an expired hold, a declared
state such as parking's CHECKED_IN (that car is inside: its pass does not let it in again).

A device that works offline keeps a list of credentials that no longer admit (``revoked``): those
of bookings that may have shown them (a payment exists, the booking no longer holds its places)
and do not admit now, and the voided ones of bookings that still do. Pure: no I/O.
"""
from __future__ import annotations

from typing import Iterable

from .booking import Booking
from .statuses import HOLDING, BookingStatus

#: The booking statuses whose credentials admit (with the credential's own state).
ADMITTING = frozenset({BookingStatus.CONFIRMED.value})
#: Statuses of a booking that has never been CONFIRMED (nothing leads back to them from it), so
#: never showed a credential, paid for or not.
NEVER_SHOWN = frozenset(status.value for status in HOLDING)


def status_admits(status: str) -> bool:
    """Whether a booking in ``status`` lets anyone in (its credentials' own state aside): the
    decision for callers that hold a booking's summary rather than the booking (a parking lot's
    reservations as its gate configuration reads them)."""
    return str(status) in ADMITTING


def status_revoked(status: str, had_payment: bool) -> bool:
    """Whether every credential of a booking in ``status`` is one an offline device must refuse:
    it may have shown them (it has a payment and has left the hold it began in) and admits no one
    now."""
    return had_payment and str(status) not in NEVER_SHOWN and not status_admits(status)


def voided_credentials(booking: Booking) -> frozenset[str]:
    """The credentials of the booking voided on their own (a transferred ticket)."""
    return frozenset((booking.kind_details or {}).get("voided_credentials") or ())


def admits(booking: Booking, credential_id: str | None = None) -> bool:
    """Whether the booking's credential ``credential_id`` (any of them, when None) admits now."""
    if not status_admits(booking.status):
        return False
    return credential_id is None or credential_id not in voided_credentials(booking)


def revoked(booking: Booking, credential_ids: Iterable[str]) -> list[str]:
    """Of the booking's ``credential_ids``, those an offline device must refuse: all of them when
    the booking may have shown them and admits no one now, else the ones voided on their own. A hold
    never paid for showed none (its view carries no credential) and lists none; a comp (nothing to
    pay, confirmed without a payment) may have shown them, and lists them once it is given up."""
    ids = list(credential_ids)
    if status_admits(booking.status):
        return [credential for credential in ids if not admits(booking, credential)]
    # a comp (nothing to pay, confirmed without a payment) may have shown its credentials too
    return ids if status_revoked(booking.status, booking.payment is not None or booking.comp) else []
