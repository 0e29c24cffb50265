"""What of a booking names a person, when the booking has ended, and the booking with that erased.

A booking keeps a customer's personal data (their id, contact address, what the kind keeps of the
request such as a plate, anything they typed into a conflict case) only while it may still be
needed: until ``ended_at`` plus the retention period, or until the customer asks for erasure.
Erasing keeps everything the money needs (ids, amounts, statuses, times, the payment and refund
records) and puts a keyed hash in place of the customer id, so one customer's bookings still
group together for accounting without naming them. Pure: no I/O.
"""
from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping

from ..clock import iso, parse_iso
from . import lifecycle
from .booking import Booking, JournalEntry
from .inventory import Places, places_from
from .statuses import SOLD, BookingStatus

#: Customer ids of erased bookings start with this; no identity provider issues one like it.
PSEUDONYM_PREFIX = "erased-"
DEFAULT_RETENTION_DAYS = 90
#: Journal ids that name the customer or carry what they typed (their Idempotency-Keys are
#: free text): dropped when a journal is erased, with the ids each kind declares as naming a person
#: (``declare``); every other id (booking, payment, refund, ticket...) is kept for the money's sake.
PERSONAL_IDS = frozenset({"customer_id", "contact_email", "idempotency_key", "request_key"})
#: kind name -> its ``personal_details`` (a plate), declared by the kinds' registry as it registers
#: the kind: the domain knows no kind. The erasure (services/personal_data.py) loads the registry.
_DECLARED: dict[str, frozenset[str]] = {}


def declare(kind_name: str, personal_details: Iterable[str]) -> None:
    """A kind's details that name a person: erased from its bookings and from every journal entry."""
    _DECLARED[kind_name] = frozenset(personal_details)


def withdraw(kind_name: str) -> None:
    _DECLARED.pop(kind_name, None)


def pseudonym(key: bytes, customer_id: str) -> str:
    """The same customer always gets the same pseudonym under one key; without the key it cannot
    be recomputed from a guessed id."""
    if customer_id.startswith(PSEUDONYM_PREFIX):
        return customer_id
    digest = hmac.new(key, customer_id.encode(), hashlib.sha256).hexdigest()[:32]
    return f"{PSEUDONYM_PREFIX}{digest}"


def _sold(status: BookingStatus) -> bool:
    declared = lifecycle.places_state(status)
    return declared == "sold" if declared is not None else status in SOLD


def ended_at(booking: Booking) -> str | None:
    """When the booking stopped needing its customer's data, or None while it may still need it
    (places held, money unsettled, a review open, a timer pending, in use, already erased).

    A booking that sold its places ended with its event, slot or window (``ends_at``), or with its
    last change when that came later; one whose places were released ended with that change. A sold
    booking that does not know its end (written before ``ends_at`` existed) has none."""
    if booking.erased_at or booking.holds_places or not booking.settled or booking.review \
            or booking.status is BookingStatus.MANUAL_REVIEW or booking.due_at is not None \
            or lifecycle.in_use(booking.status):
        # in use (a car inside): its window's end says nothing of when the car leaves, and the
        # exit still needs what names it (the plate on its ticket)
        return None
    if not _sold(booking.status):
        return booking.updated_at
    if not booking.ends_at:
        return None
    return max(booking.ends_at, booking.updated_at)


def erased(booking: Booking, key: bytes, now: str, personal_details: Iterable[str]) -> Booking:
    """The booking one version on with its personal fields gone (``personal_details``: the names
    of the kind's details that name a person, such as a plate)."""
    details = {name: value for name, value in (booking.kind_details or {}).items() if name not in set(personal_details)}
    resolution = dict(booking.resolution) if booking.resolution else None
    if resolution and isinstance(resolution.get("decision"), dict):
        # what the customer typed when choosing (the fields, their key) goes; what was offered and chosen stays
        resolution["decision"] = {name: value for name, value in resolution["decision"].items()
                                  if name not in ("fields", "key")}
    return replace(booking, customer_id=pseudonym(key, booking.customer_id), contact_email=None,
                   contact_own=False, kind_details=details or None, resolution=resolution, version=booking.version + 1,
                   updated_at=now, erased_at=now)


def erased_entry(entry: JournalEntry) -> JournalEntry:
    """A journal entry with times, statuses, the action and the non-personal ids only: a decision's
    text may quote a plate, an address or an operator's note about the person."""
    personal = PERSONAL_IDS.union(*_DECLARED.values())
    return replace(entry, decision="", ids={name: value for name, value in entry.ids.items() if name not in personal})


def erased_copy(item: dict) -> dict:
    """An item outside the booking that copied what names its customer (a ticket, a case: linked
    to the booking, adapters/personal_data_store.py), without those fields: the customer's id and
    address and every kind's declared details. What it says about money, places and times stays."""
    personal = PERSONAL_IDS.union(*_DECLARED.values())
    return {name: value for name, value in item.items() if name not in personal}


def with_current_end(booking: Booking, start_of: Callable[[str], str]) -> Booking:
    """The booking with the end its places and its offerings' starts as they are now (``start_of``:
    an offering's start, "" when unknown: the stored end stays) give it. The end is never a fact of
    its own: a slot or a window ends with its last granule (which a conflict case's alternative
    moves with the places), an event with its start (which the organizer may move), an order with
    its last line, each line's end found alike from its own places and offering (and kept on the
    line, so that what a line's kind decides on, its ``ended``, reads it as it is now). The stored
    ``ends_at`` only places the booking in the index of ended bookings; every decision on whether
    a booking has ended reads the end through here. An offering's start is asked only of an event
    (places without granules)."""
    details = booking.kind_details or {}
    lines = details.get("lines")
    if not lines:
        end = places_end(booking.places, "" if booking.places.granules else start_of(booking.event_id)) \
            or booking.ends_at
        return booking if end == booking.ends_at else replace(booking, ends_at=end)
    current = [_line_with_current_end(line, start_of) for line in lines]
    ends = [str(line["ends_at"]) for line in current if line.get("ends_at")]
    end = iso(max(parse_iso(moment) for moment in ends)) if ends else booking.ends_at
    if end == booking.ends_at and current == list(lines):
        return booking
    return replace(booking, ends_at=end, kind_details={**details, "lines": current})


def _line_with_current_end(line: Mapping[str, Any], start_of: Callable[[str], str]) -> Mapping[str, Any]:
    """One stored line of an order (its ``kind_details["lines"]``) with its end as it is now."""
    places = places_from(str(line["kind"]), int(line["quantity"]), line)
    end = places_end(places, "" if places.granules else start_of(str(line["offering_id"]))) or line.get("ends_at")
    return line if end == line.get("ends_at") else {**line, "ends_at": end}


def unchanged_start(offering_id: str) -> str:
    """``with_current_end``'s ``start_of`` where no offering is read (a booking's item as it is
    written): an event's stored end stays, a granule's follows its places."""
    return ""


def places_end(places: Places, starts_at: str) -> str | None:
    """When what a booking bought ends, as ``clock.iso`` writes times: the start of its last
    granule (a slot, a parking window), else its event's start (an event names no end)."""
    moments = [granule.at for granule in places.granules] or ([starts_at] if starts_at else [])
    return iso(max(parse_iso(moment) for moment in moments)) if moments else None
