"""The idempotence keys of every provider call a booking makes, and the outcome-unknown signal.

Each key derives from the booking (or its payment) and the purpose, so any repeat of the same
decision, by whichever path, is the same request at the provider."""
from __future__ import annotations


class PaymentOutcomeUnknown(Exception):
    """A provider call's outcome is unknown; the caller (queue, state machine) retries later."""


def payment_key(booking_id: str) -> str:
    return f"hf-pay-{booking_id}"


def capture_key(booking_id: str) -> str:
    return f"hf-cap-{booking_id}"


def void_key(booking_id: str) -> str:
    return f"hf-void-{booking_id}"


def operator_key(action: str, booking_id: str) -> str:
    """An operator's capture or void: its own key, so a refusal the provider stored for an earlier
    automatic attempt under the booking's key is not replayed to the operator."""
    return f"hf-{action}-op-{booking_id}"


def refund_key(payment_id: str, reason: str) -> str:
    return f"rf-{payment_id}-{reason}"[:64]


__all__ = ["PaymentOutcomeUnknown", "capture_key", "operator_key", "payment_key", "refund_key", "void_key"]
