"""Customer notifications from outbox events. The outbox item's key (booking and version) is the
de-duplication id, so a change produces one notification however often it is delivered."""
from __future__ import annotations

from typing import Any

from ..adapters.dynamo import BookingStore
from ..faults import crash_point

MESSAGES = {
    "booking.held": "Your places are held until {hold_expires_at}. Pay before then to keep them.",
    "booking.confirmed": "Your booking is confirmed.",
    "booking.expired": "Your hold ran out before payment arrived; the places were released.",
    "booking.cancelled": "Your booking was cancelled.",
    "booking.payment_failed": "Your payment did not go through; the places were released.",
    "booking.refund_pending": "We are refunding your payment.",
    "booking.refunded": "Your payment was refunded.",
    "booking.manual_review": "Our team is looking at your booking and will contact you.",
}


def record_outbox_event(store: BookingStore, image: dict[str, Any]) -> bool:
    kind = str(image.get("type", ""))
    text = MESSAGES.get(kind, "Your booking changed.").format_map({"hold_expires_at": image.get("hold_expires_at", "")})
    dedup = f"{image['booking_id']}#{int(image['version']):06d}"
    crash_point("outbox.before_publish")
    return store.record_notification(str(image["customer_id"]), dedup, {
        "type": kind, "booking_id": image["booking_id"], "status": image.get("status"), "at": image.get("at"),
        "channel": "record", "message": text,
    })
