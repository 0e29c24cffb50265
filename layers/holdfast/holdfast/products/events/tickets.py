"""An event booking's tickets: one per place, each with its own id and a token a door checks
without the backend.

A ticket's id is derived from its booking and its place's position, so the view, the QR code, the
door and the sync all name it alike without storing it. The token is signed with the event's own
key (the core's scoped key of purpose ``holdfast-event-key``, docs/doors.md):

  payload = {"v": 1, "kid", "ev": event_id, "bk": booking_id, "tk": ticket_id, "seat": seat_id or null}

Whether a ticket admits is the core's one rule (domain/entry_rights.py): its booking CONFIRMED and
the ticket not voided on its own; the door, its configuration's void list and the booking view all
ask it.
"""
from __future__ import annotations

import uuid
from typing import Any, Callable

from holdfast.domain import entry_rights, transfers
from holdfast.domain.booking import Booking
from holdfast.domain.claims import PART
from holdfast.domain.signatures import ScopedKeys, TokenInvalid, verify
from holdfast.kinds.base import Kind

PURPOSE = "holdfast-event-key"
NAMESPACE = uuid.UUID("4b0e1c55-9a7f-4f0d-8c2e-6d31a8e07f12")


class EventKeys(ScopedKeys):
    def __init__(self, master_seed: bytes) -> None:
        super().__init__(master_seed, PURPOSE)

    def ticket_token(self, event_id: str, booking_id: str, ticket_id: str, seat_id: str | None) -> str:
        return self.sign(event_id, {"ev": event_id, "bk": booking_id, "tk": ticket_id, "seat": seat_id})


def ticket_id(booking_id: str, position: int) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{booking_id}/{position}"))


def places(booking: Booking) -> list[tuple[str, str | None]]:
    """``(ticket_id, seat_id)`` of each place of the booking, in its places' order."""
    seats: list[str | None] = list(booking.places.units) or [None] * booking.places.quantity
    # one offering's part of a booking of several (an order's line) numbers its own tickets
    part = (booking.kind_details or {}).get(PART)
    base = f"{booking.booking_id}/{part}" if part else booking.booking_id
    # a transferred booking's tickets are issued anew: each issue names its own (domain/transfers.py)
    issue = transfers.credential_issue(booking)
    base = f"{base}#{issue}" if issue else base
    return [(ticket_id(base, n), seat) for n, seat in enumerate(seats, start=1)]


def admits(booking: Booking, ticket: str | None = None) -> bool:
    """Whether ``ticket`` (any ticket of the booking, when None) admits now (domain/entry_rights.py)."""
    return entry_rights.admits(booking, ticket)


def revoked(booking: Booking) -> list[str]:
    """The booking's tickets an offline door must refuse (domain/entry_rights.py ``revoked``):
    those of its current issue, and those of earlier issues voided by a transfer."""
    voided = sorted(entry_rights.voided_credentials(booking))
    return entry_rights.revoked(booking, [tid for tid, _ in places(booking)] + voided)


def credential_ids(kind: Kind, booking: Booking) -> list[str]:
    """The ids of the tickets the booking shows now (a transfer voids them)."""
    return [tid for tid, _ in places(booking)]


def checked_in(booking: Booking) -> int:
    """How many of the booking's tickets were checked in at a door (services/doors.py keeps them)."""
    return len((booking.kind_details or {}).get("checked_in") or ())


def view(booking: Booking, credentials: Callable[[], EventKeys] | None) -> dict[str, Any]:
    """The booking view's ``tickets`` while the booking admits its holders."""
    if credentials is None or not admits(booking):
        return {}
    keys = credentials()
    return {"tickets": [{"ticket_id": tid, "seat_id": seat,
                         "token": keys.ticket_token(booking.event_id, booking.booking_id, tid, seat)}
                        for tid, seat in places(booking) if admits(booking, tid)]}


def by_id(booking: Booking, credentials: Callable[[], EventKeys] | None) -> dict[str, str]:
    """Each ticket's token by its id (none while the booking admits nobody)."""
    return {ticket["ticket_id"]: ticket["token"] for ticket in view(booking, credentials).get("tickets", [])}


def check(token: str, keys: EventKeys, event_id: str) -> dict[str, Any]:
    """The payload of a ticket of this event. ``TokenInvalid``: ``wrong_event`` for a genuine
    ticket of another event, ``bad_token`` for anything else."""
    try:
        payload = verify(token, keys.public_raw(event_id))
    except TokenInvalid:
        payload = None
    if payload is not None and payload.get("ev") == event_id and isinstance(payload.get("tk"), str) \
            and isinstance(payload.get("bk"), str):
        return payload
    other = _claimed_event(token)
    if other and other != event_id:
        try:
            if verify(token, keys.public_raw(other)).get("ev") == other:
                raise TokenInvalid("wrong_event")
        except TokenInvalid as exc:
            if exc.reason == "wrong_event":
                raise
    raise TokenInvalid("bad_token")


def _claimed_event(token: str) -> str | None:
    import json

    from holdfast.domain.signatures import unb64

    try:
        claimed = json.loads(unb64(token.split(".")[0])).get("ev")
    except (ValueError, AttributeError, IndexError):
        return None
    return claimed if isinstance(claimed, str) and len(claimed) <= 100 else None



# An event kind's hooks (kinds/base.py), the same for general admission and a seat map: each kind
# takes them as its methods, so ``kind`` is the kind itself.
def view_extras(kind: Kind, booking: Booking, credentials: Any) -> dict[str, Any]:
    return view(booking, credentials)


def passes(kind: Kind, booking: Booking, credentials: Any) -> dict[str, str]:
    return by_id(booking, credentials)


def admitted(kind: Kind, booking: Booking) -> int:
    return checked_in(booking)
