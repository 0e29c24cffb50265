"""What a customer is told will happen next: while their booking waits for an operator, by the
reason the review was opened (shown with the booking as ``review.next_step``), and while it is
only held (``hold_next_step``)."""
from __future__ import annotations

REVIEW_NEXT_STEPS = {
    "paid_in_time_places_resold": "You paid in time but your places were released before we heard from the payment "
                                  "provider. Our team will offer you other places or a full refund within one working day.",
    "places_taken_alternatives_offered": "Your payment arrived after your hold ended and the places went to someone "
                                         "else. Choose one of the alternatives listed with your booking, or ask for "
                                         "your money back; if you do not choose in time, it is returned.",
    "amount_mismatch": "The amount paid does not match your booking. Our team will check it and contact you; "
                       "no further payment is needed.",
    "second_payment_for_booking": "We received a second payment for this booking. Our team will refund the extra payment.",
    "refund": "Your refund could not be completed automatically. Our team will complete it within one working day.",
    "default": "Our team is checking this booking and will contact you within one working day.",
}


def next_step(reason: str) -> str:
    """The sentence for a review reason; a rejected refund (``refund_rejected_<code>``) reads as
    ``refund``, and any reason without its own sentence gets the default."""
    return REVIEW_NEXT_STEPS.get(reason.split("_rejected_")[0], REVIEW_NEXT_STEPS["default"])


def hold_next_step(hold_expires_at: str) -> str:
    """Until when a hold lasts and what its end means, the same for every inventory kind (the late
    payment's outcomes are services/payments.py's and services/conflict_cases.py's)."""
    return (f"Your places are held until {hold_expires_at}. Pay before then to confirm the booking; after that "
            "they are released to other customers. A payment that reaches us later confirms the booking if the "
            "places are still free; otherwise you are offered other places where there are any, or your money back.")
