"""A confirmed booking given to someone else (issue 45, "Transfer"): the pure rules.

The holder offers the booking to an address; the offer lives in the booking itself
(``kind_details["transfer"]``: its id, the digest of its token, the digest of the address, who
offered it and until when), so every decision about it is a decision about one booking version:
offering, withdrawing and accepting are each one conditional write of the booking, and a booking
that moved on (cancelled, checked in, given already) meanwhile refuses the write.

The link's token is the authority (like an address confirmation's): whoever signs in with it may
accept. Only its digest is kept with the booking. Accepting moves the booking to the taker, voids
the credentials it showed so far (``voided_credentials``, read by domain/entry_rights.py online and
by the doors' void list offline) and counts one more issue (``credential_issue``), from which the
kind derives new credentials. The last accepted transfer is remembered (``accepted_transfer``) so
that the same link pressed twice by its taker answers the same, and by anyone else ``transfer_used``.

Pure: no I/O.
"""
from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..clock import iso, parse_iso
from .booking import Booking
from .errors import Conflict, InvalidRequest
from .statuses import BookingStatus

#: How long an offered transfer's link works (on the stack's clock).
TRANSFER_DAYS = 7
PENDING, ACCEPTED = "transfer", "accepted_transfer"
VOIDED, ISSUE = "voided_credentials", "credential_issue"


def token_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def split_token(token: str) -> tuple[str, str]:
    """(transfer id, secret) of a link's token ``<transfer_id>.<secret>``; InvalidRequest otherwise."""
    transfer_id, _, secret = (token or "").partition(".") if isinstance(token, str) and len(token) <= 256 else ("", "", "")
    if not transfer_id or not secret:
        raise InvalidRequest("The transfer link is malformed.", code="transfer_invalid")
    return transfer_id, secret


def pending(booking: Booking, now: datetime | None = None) -> dict[str, Any] | None:
    """The booking's offered transfer still waiting (unexpired at ``now`` when given), else None.
    A booking no longer CONFIRMED has none: its offer lapsed with it."""
    offer = (booking.kind_details or {}).get(PENDING)
    if not offer or booking.status is not BookingStatus.CONFIRMED:
        return None
    if now is not None and str(offer.get("expires_at", "")) <= iso(now):
        return None
    return dict(offer)


def credential_issue(booking: Booking) -> int:
    """How many times the booking's credentials were issued anew (0: the first issue)."""
    return int((booking.kind_details or {}).get(ISSUE) or 0)


@dataclass(frozen=True)
class Rules:
    """What the booking's offering and kind say about transferring it."""

    allowed: bool          # the organizer's ``transfers_allowed`` (default true)
    supported: bool        # the kind can issue its credentials anew (Kind.transferable)
    admitted: int          # credentials already used at a door or gate (Kind.admitted)


def check_offer(booking: Booking, giver: str, rules: Rules, now: datetime, *, to_self: bool) -> None:
    """Whether ``giver`` may offer ``booking`` now; a Conflict with a code when not."""
    if booking.customer_id != giver:
        raise Conflict("This booking belongs to another customer.", code="not_holder")
    if booking.status is not BookingStatus.CONFIRMED:
        raise Conflict("Only a confirmed booking can be transferred.", code="booking_not_confirmed",
                       status=booking.status.value)
    if not rules.supported:
        raise Conflict("Bookings of this kind cannot be transferred.", code="transfer_not_supported")
    if not rules.allowed:
        raise Conflict("The organizer does not allow transfers for this offering.", code="transfers_not_allowed")
    if rules.admitted:
        raise Conflict("A ticket of this booking was checked in; it cannot be transferred.",
                       code="ticket_checked_in", checked_in=rules.admitted)
    if to_self:
        raise InvalidRequest("That is your own address; the booking is yours already.", code="transfer_to_self")
    offer = pending(booking, now)
    if offer is not None:
        raise Conflict("A transfer of this booking is waiting to be accepted; withdraw it first.",
                       code="transfer_pending", transfer_id=offer["transfer_id"], expires_at=offer["expires_at"])


def offered(booking: Booking, giver: str, transfer_id: str, secret: str, address_key: str,
            now: datetime) -> dict[str, Any]:
    """The booking's kind details with the offer in them (a lapsed earlier offer replaced)."""
    offer = {"transfer_id": transfer_id, "token_hash": token_digest(secret), "to_key": address_key,
             "from": giver, "at": iso(now), "expires_at": iso(now + timedelta(days=TRANSFER_DAYS))}
    return {**(booking.kind_details or {}), PENDING: offer}


def withdrawn(booking: Booking) -> dict[str, Any]:
    """The booking's kind details without its offer."""
    return {key: value for key, value in (booking.kind_details or {}).items() if key != PENDING}


@dataclass(frozen=True)
class Acceptance:
    """What a press of the link decides: ``replay`` (already accepted by this taker: the same
    answer, nothing written) or the offer to carry out."""

    offer: dict[str, Any] | None = None
    replay: bool = False


def check_accept(booking: Booking, transfer_id: str, secret: str, taker: str, now: datetime) -> Acceptance:
    """Whether ``taker`` holding the link (``transfer_id``, ``secret``) takes the booking now."""
    digest = token_digest(secret)
    details = booking.kind_details or {}
    done = details.get(ACCEPTED) or {}
    if done.get("transfer_id") == transfer_id and hmac.compare_digest(str(done.get("token_hash", "")), digest):
        if booking.customer_id == taker and done.get("to") == taker:
            return Acceptance(replay=True)
        raise Conflict("This transfer was accepted already.", code="transfer_used")
    offer = details.get(PENDING) or {}
    if offer.get("transfer_id") != transfer_id or not hmac.compare_digest(str(offer.get("token_hash", "")), digest):
        # withdrawn, replaced, or never this booking's: the same answer as a wrong token
        raise InvalidRequest("The transfer link is unknown or was withdrawn.", code="transfer_invalid")
    if booking.status is not BookingStatus.CONFIRMED:
        raise Conflict("The booking was cancelled; the transfer lapsed.", code="transfer_lapsed",
                       status=booking.status.value)
    if str(offer.get("expires_at", "")) <= iso(now):
        raise Conflict("The transfer link has expired.", code="transfer_expired", expires_at=offer["expires_at"])
    if taker == booking.customer_id:
        raise Conflict("The booking is yours already: a transfer goes to someone else.", code="transfer_to_self")
    return Acceptance(offer=dict(offer))


def accepted(booking: Booking, offer: dict[str, Any], taker: str, credentials: list[str],
             now: datetime) -> dict[str, Any]:
    """The booking's kind details once ``taker`` accepted ``offer``: the offer gone, the
    credentials shown so far (``credentials``) voided, the next issue counted, the acceptance kept."""
    details = withdrawn(booking)
    details[VOIDED] = sorted({*details.get(VOIDED, ()), *credentials})
    details[ISSUE] = credential_issue(booking) + 1
    details[ACCEPTED] = {"transfer_id": offer["transfer_id"], "token_hash": offer["token_hash"],
                         "from": booking.customer_id, "to": taker, "at": iso(now)}
    return details


def carried(before: Booking, details: dict[str, Any] | None) -> dict[str, Any] | None:
    """The kind details of a booking exchanged from ``before`` (``details``: its new places', its
    kind's reissue done) keeping the accepted transfer: the booking is still the one its taker
    accepted (a repeat press of the link answers it, the receipts stay its payer's)."""
    done = (before.kind_details or {}).get(ACCEPTED)
    return details if not done else {**(details or {}), ACCEPTED: done}


def view(booking: Booking, now: datetime) -> dict[str, Any]:
    """What the holder's booking view says of a waiting transfer (nothing when none)."""
    offer = pending(booking, now)
    if offer is None:
        return {}
    return {"transfer": {"transfer_id": offer["transfer_id"], "expires_at": offer["expires_at"],
                         "withdraw_with": f"DELETE /bookings/{booking.booking_id}/transfer"}}


def expires(offer: dict[str, Any]) -> datetime:
    return parse_iso(str(offer["expires_at"]))
