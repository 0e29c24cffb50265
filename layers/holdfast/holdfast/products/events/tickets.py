"""An event booking's tickets: one per place, each with its own id and a token a door checks
without the backend.

A ticket's id is derived from its booking and its place's position, so the view, the QR code, the
door and the sync all name it alike without storing it. The token is signed with the event's own
key (the core's scoped key of purpose ``holdfast-event-key``, docs/doors.md):

  payload = {"v": 1, "kid", "ev": event_id, "bk": booking_id, "tk": ticket_id, "seat": seat_id or null, "exp"}

``exp`` is VALID_AFTER_START after the event's start as the event says it when the ticket is
signed (``TicketSigner.start_of``), never a copy of the start kept on the booking or its order's
line: an event the organizer moved later is admitted until its new start + 12 h (issue 42).

Whether a ticket admits is the core's one rule (domain/entry_rights.py): its booking CONFIRMED and
the ticket not voided on its own; the door, its configuration's void list and the booking view all
ask it.
"""
from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Callable, Sequence

from holdfast.clock import parse_iso

from holdfast.domain import entry_rights, transfers
from holdfast.domain.booking import Booking
from holdfast.domain.claims import PART
from holdfast.domain.transfers import ISSUE, VOIDED
from holdfast.domain.signatures import PublicKeys, SigningKeys, TokenInvalid, expired
from holdfast.kinds.base import Kind
from holdfast.ports import EventReads

PURPOSE = "holdfast-event-key"
NAMESPACE = uuid.UUID("4b0e1c55-9a7f-4f0d-8c2e-6d31a8e07f12")
#: How long after its event's start a ticket still admits (events name no end): its ``exp``.
VALID_AFTER_START = timedelta(hours=12)


class EventKeys(SigningKeys):
    def __init__(self, master_seed: bytes, published: Sequence[bytes] | None = None) -> None:
        super().__init__(master_seed, PURPOSE, published)

    def ticket_token(self, event_id: str, booking_id: str, ticket_id: str, seat_id: str | None, *,
                     starts_at: str) -> str:
        """A ticket of the event starting at ``starts_at``, valid until VALID_AFTER_START after it."""
        return self.sign({"ev": event_id, "bk": booking_id, "tk": ticket_id, "seat": seat_id},
                         expires=parse_iso(starts_at) + VALID_AFTER_START)


@dataclass(frozen=True)
class TicketSigner:
    """What an event booking's view signs its tickets with (events' view credentials,
    kinds/products.py): the keys, and where the events are read, since each ticket's expiry
    follows its event's start as the event says it now (the offering's ``starts_at``, its one
    place: no copy on the booking or its order's line)."""

    keys: Callable[[], EventKeys]
    events: EventReads

    def start_of(self, event_id: str) -> str | None:
        """The event's start, read consistently (a message built just after a ``PATCH`` of the
        start signs with the new one); None when the event is gone."""
        return (self.events.get_event(event_id, consistent=True) or {}).get("starts_at")


def ticket_id(booking_id: str, position: int) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{booking_id}/{position}"))


@functools.lru_cache(maxsize=256)
def _ticket_ids(base: str, count: int) -> tuple[str, ...]:
    """The ids of a booking's (or its part's, or its issue's) first ``count`` tickets. Remembered
    per container: a door scans the tickets of one booking one after another, and each scan looks
    its ticket up among all of them (50 ``uuid5`` of a booking of 50 were ~0.5-0.9 ms of a scan's
    CPU). The ids follow from ``base`` and the position alone, so nothing remembered can go stale."""
    return tuple(ticket_id(base, n) for n in range(1, count + 1))


def places(booking: Booking) -> list[tuple[str, str | None]]:
    """``(ticket_id, seat_id)`` of each place of the booking, in its places' order."""
    seats: list[str | None] = list(booking.places.units) or [None] * booking.places.quantity
    # one offering's part of a booking of several (an order's line) numbers its own tickets
    details = booking.kind_details or {}
    part = details.get(PART)
    base = f"{booking.booking_id}/{part}" if part else booking.booking_id
    # a transferred or exchanged booking's tickets are issued anew: each issue names its own (one
    # counter for both, domain/transfers.py)
    issue = transfers.credential_issue(booking)
    base = f"{base}#{issue}" if issue else base
    return list(zip(_ticket_ids(base, len(seats)), seats))


def reissue(kind: Kind, before: Booking, details: dict[str, Any] | None) -> dict[str, Any]:
    """An exchanged booking's tickets (``Kind.reissue``): every ticket of ``before`` void (online
    and in the doors' void lists), new ones under the next issue number, none checked in."""
    voided = sorted({*entry_rights.voided_credentials(before), *(tid for tid, _ in places(before))})
    return {**(details or {}), VOIDED: voided, ISSUE: transfers.credential_issue(before) + 1}


def admits(booking: Booking, ticket: str | None = None) -> bool:
    """Whether ``ticket`` (any ticket of the booking, when None) admits now (domain/entry_rights.py)."""
    return entry_rights.admits(booking, ticket)


def revoked(booking: Booking) -> list[str]:
    """The booking's tickets an offline door must refuse (domain/entry_rights.py ``revoked``),
    those an exchange voided included."""
    current = [tid for tid, _ in places(booking)]
    return entry_rights.revoked(booking, current + sorted(entry_rights.voided_credentials(booking) - set(current)))


def credential_ids(kind: Kind, booking: Booking) -> list[str]:
    """The ids of the tickets the booking shows now (a transfer voids them)."""
    return [tid for tid, _ in places(booking)]


def checked_in(booking: Booking) -> int:
    """How many of the booking's tickets were checked in at a door (services/doors.py keeps them)."""
    return len((booking.kind_details or {}).get("checked_in") or ())


def view(booking: Booking, credentials: TicketSigner | None) -> dict[str, Any]:
    """The booking view's ``tickets`` while the booking admits its holders, each expiring with its
    event's start as the event says it now (``booking``: a booking of one event, or an order's line
    of one as ``Line.as_booking`` gives it, whose ``event_id`` is the line's offering)."""
    if credentials is None or not admits(booking):
        return {}
    starts_at = credentials.start_of(booking.event_id)
    if not starts_at:
        return {}   # its event is gone: no start to sign an expiry with
    keys = credentials.keys()
    return {"tickets": [{"ticket_id": tid, "seat_id": seat,
                         "token": keys.ticket_token(booking.event_id, booking.booking_id, tid, seat,
                                                    starts_at=starts_at)}
                        for tid, seat in places(booking) if admits(booking, tid)]}


def by_id(booking: Booking, credentials: TicketSigner | None) -> dict[str, str]:
    """Each ticket's token by its id (none while the booking admits nobody)."""
    return {ticket["ticket_id"]: ticket["token"] for ticket in view(booking, credentials).get("tickets", [])}


def check(token: str, keys: PublicKeys, event_id: str, at: datetime | None = None) -> dict[str, Any]:
    """The payload of a ticket of this event, signed by one of events' published keys and (``at``
    given) not expired then. ``TokenInvalid``: ``wrong_event`` for a genuine ticket of another
    event, ``ticket_expired`` past its exp, ``bad_token`` for anything else."""
    try:
        payload = keys.verify(token)
    except TokenInvalid:
        raise TokenInvalid("bad_token") from None
    if not (isinstance(payload.get("tk"), str) and isinstance(payload.get("bk"), str)):
        raise TokenInvalid("bad_token")
    if payload.get("ev") != event_id:
        raise TokenInvalid("wrong_event")
    if at is not None and expired(payload, at):
        raise TokenInvalid("ticket_expired")
    return payload


# An event kind's hooks (kinds/base.py), the same for general admission and a seat map: each kind
# takes them as its methods, so ``kind`` is the kind itself.
def view_extras(kind: Kind, booking: Booking, credentials: Any) -> dict[str, Any]:
    return view(booking, credentials)


def passes(kind: Kind, booking: Booking, credentials: Any) -> dict[str, str]:
    return by_id(booking, credentials)


def admitted(kind: Kind, booking: Booking) -> int:
    return checked_in(booking)
