"""A booking as a stored item, and back; the idempotency record's key.

  BOOKING#<booking_id>    META             the booking, its payment record, version
  IDEM#<customer>#<key>   <scope>          idempotency record of a customer request
"""
from __future__ import annotations

from typing import Any

from ..domain.booking import Booking, Payment, PaymentMode
from ..domain.inventory import places_from, stored_places
from ..domain.money import Money
from ..domain import lifecycle
from ..domain.personal_data import ended_at, unchanged_start, with_current_end
from ..domain.statuses import BookingStatus
from .codec import _int

DUE_BUCKETS = 8


def due_bucket(booking_id: str) -> str:
    return f"DUE#{sum(booking_id.encode()) % DUE_BUCKETS}"


def ended_bucket(booking_id: str) -> str:
    return f"ENDED#{sum(booking_id.encode()) % DUE_BUCKETS}"


def idempotency_pk(customer_id: str, key: str, system: bool = False) -> str:
    # Customer ids and keys cannot contain "#", and no customer request writes the SYSIDEM prefix.
    return f"{'SYSIDEM' if system else 'IDEM'}#{customer_id}#{key}"



def booking_item(booking: Booking) -> dict[str, Any]:
    # a slot's or window's end follows its places (a conflict case's alternative moves them), an
    # order's its lines' (each line's kept on it); an event's is the start it was last judged by
    # (services read it from the offering)
    booking = with_current_end(booking, unchanged_start)
    item: dict[str, Any] = {
        "pk": f"BOOKING#{booking.booking_id}", "sk": "META",
        "booking_id": booking.booking_id, "event_id": booking.event_id, "customer_id": booking.customer_id,
        "status": booking.status.value, "inventory_kind": str(booking.places.kind),
        "quantity": booking.places.quantity, "amount": booking.amount.text, "currency": booking.amount.currency,
        "payment_mode": booking.payment_mode.value, "hold_expires_at": booking.hold_expires_at,
        "created_at": booking.created_at, "updated_at": booking.updated_at, "version": booking.version,
        "places_secured": booking.places_secured,
    }
    item |= stored_places(booking.places)
    if booking.payment is not None:
        item["payment"] = booking.payment.as_dict()
    if booking.review:
        item["review"] = dict(booking.review)
    if booking.contact_email:
        item["contact_email"] = booking.contact_email
        if booking.contact_own:
            item["contact_own"] = True
    if booking.language != "en":
        item["language"] = booking.language
    if booking.resolution:
        item["resolution"] = booking.resolution
    if booking.cancelled_by_customer:
        item["cancelled_by_customer"] = True
    if booking.event_cancelled:
        item["event_cancelled"] = True
    if booking.kind_details:
        item["kind_details"] = dict(booking.kind_details)
    if booking.counted_hold and booking.holds_places:
        item["counted_hold"] = True
    if booking.counted_address and booking.holds_places:
        # kept only while it counts: the write that ends the hold frees the slot and drops the key
        item["counted_address"] = booking.counted_address
    if booking.ends_at:
        item["ends_at"] = booking.ends_at
    if booking.erased_at:
        item["erased_at"] = booking.erased_at
    if booking.differences:
        item["differences"] = [dict(entry) for entry in booking.differences]
    # Bookings sit in the due index while a hold runs or a payment is unsettled, so the sweeper
    # finds any whose timer or reconciliation execution never started or died.
    due_at = booking.due_at
    if booking.status is BookingStatus.MANUAL_REVIEW or booking.review:
        item["gsi1pk"] = "REVIEW"
        item["gsi1sk"] = f"{booking.updated_at}#{booking.booking_id}"
    elif due_at:
        item["gsi1pk"] = due_bucket(booking.booking_id)
        item["gsi1sk"] = f"{due_at}#{booking.booking_id}"
    elif (ended := ended_at(booking)) is not None:
        # Out of every other index: the retention sweep finds it here once the period has passed,
        # and erasing it takes it out (erased_at), so a sweep resumes where the last one stopped.
        item["gsi1pk"] = ended_bucket(booking.booking_id)
        item["gsi1sk"] = f"{ended}#{booking.booking_id}"
    return item


def booking_from_item(item: dict[str, Any]) -> Booking:
    payment = item.get("payment")
    return Booking(
        booking_id=item["booking_id"], event_id=item["event_id"], customer_id=item["customer_id"],
        status=lifecycle.status_of(item["status"]),
        places=places_from(str(item["inventory_kind"]), _int(item["quantity"]), item),
        amount=Money.stored(item["amount"], item["currency"]), payment_mode=PaymentMode(item["payment_mode"]),
        hold_expires_at=item["hold_expires_at"], created_at=item["created_at"], updated_at=item["updated_at"],
        version=_int(item["version"]),
        payment=Payment(**{key: (_int(value) if key in ("checks", "restarts") else value) for key, value in payment.items()})
        if payment else None,
        places_secured=bool(item.get("places_secured")),
        review=dict(item["review"]) if item.get("review") else None,
        contact_email=item.get("contact_email"),
        contact_own=bool(item.get("contact_own")) and bool(item.get("contact_email")),
        language=item.get("language") or "en",
        counted_hold=bool(item.get("counted_hold")),
        counted_address=item.get("counted_address") or None,
        cancelled_by_customer=bool(item.get("cancelled_by_customer")),
        resolution=_numbers(item["resolution"]) if item.get("resolution") else None,
        event_cancelled=bool(item.get("event_cancelled")),
        kind_details=_numbers(item["kind_details"]) if item.get("kind_details") else None,
        ends_at=item.get("ends_at"), erased_at=item.get("erased_at"),
        differences=_numbers(item["differences"]) if item.get("differences") else None,
    )


def _numbers(value: Any) -> Any:
    """A stored nested value with DynamoDB's decimals back as ints (a kind's alternatives count places)."""
    if isinstance(value, dict):
        return {key: _numbers(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_numbers(inner) for inner in value]
    if type(value).__name__ == "Decimal":
        return int(value) if value == int(value) else float(value)
    return value
