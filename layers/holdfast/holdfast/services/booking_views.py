"""What a customer and an operator read of a booking: its view, and a conflict case as its
customer sees it. Pure functions of the stored booking (no store, no clock)."""
from __future__ import annotations

from typing import Any

from .. import kinds
from ..domain.booking import Booking
from ..domain.review_steps import hold_next_step, next_step
from ..domain.texts import DEFAULT_LANGUAGE
from ..domain.statuses import HOLDING


def describe(booking: Booking, language: str = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """The booking as its customer reads it, its sentences in ``language`` (domain/texts.py)."""
    payment = None
    if booking.payment is not None:
        payment = {
            "payment_id": booking.payment.payment_id,
            "status": booking.payment.provider_status or ("unknown" if booking.payment.state != "CREATED" else None),
            "confirmation_url": booking.payment.confirmation_url,
        }
        if booking.payment.refund:
            payment["refund"] = {key: booking.payment.refund.get(key) for key in ("refund_id", "status", "reason")}
    view: dict[str, Any] = {
        "booking_id": booking.booking_id, "event_id": booking.event_id, "status": booking.status.value,
        "places": kinds.of_booking(booking).describe_places(booking.places), "amount": booking.amount.as_dict(),
        "payment_mode": booking.payment_mode.value, "hold_expires_at": booking.hold_expires_at,
        "created_at": booking.created_at, "updated_at": booking.updated_at, "payment": payment,
    }
    if booking.status in HOLDING and not booking.places_secured:
        view["hold_next_step"] = hold_next_step(booking.hold_expires_at, language)
    if booking.review:
        view["review"] = dict(booking.review)
        if booking.review.get("reason"):   # stored as told then; told now in the reader's language
            view["review"]["next_step"] = next_step(booking.review["reason"], language)
    if booking.resolution:
        view["resolution"] = resolution_view(booking)
    if booking.contact_email:
        view["contact_email"] = booking.contact_email
    return view


def resolution_view(booking: Booking) -> dict[str, Any]:
    """The conflict case as its customer sees it: what was offered, until when, who is responsible,
    and, once decided, what was chosen (never the request key it was chosen with, an operator's
    note, nor which organizer and key decided: operators see those in the journal)."""
    case = dict(booking.resolution or {})
    decision = case.pop("decision", None)
    view = {"open": booking.resolution_open, **case}
    if decision:
        view["decision"] = {key: value for key, value in decision.items() if key not in ("key", "note", "who")}
    return view
