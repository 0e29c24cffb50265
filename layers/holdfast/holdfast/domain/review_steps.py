"""What a customer is told will happen next: while their booking waits for an operator, by the
reason the review was opened (shown with the booking as ``review.next_step``), and while it is
only held (``hold_next_step``). The sentences are domain/texts.py's, in each language."""
from __future__ import annotations

from .texts import DEFAULT_LANGUAGE, TEXTS, text

#: The reasons with a sentence of their own (any other reads as ``default``).
REVIEW_REASONS = tuple(key.removeprefix("review.") for key in TEXTS[DEFAULT_LANGUAGE] if key.startswith("review."))


def next_step(reason: str, language: str = DEFAULT_LANGUAGE) -> str:
    """The sentence for a review reason; a rejected refund (``refund_rejected_<code>``) reads as
    ``refund``, and any reason without its own sentence gets the default."""
    own = reason.split("_rejected_")[0]
    return text(f"review.{own if own in REVIEW_REASONS else 'default'}", language)


def hold_next_step(hold_expires_at: str, language: str = DEFAULT_LANGUAGE) -> str:
    """Until when a hold lasts and what its end means, the same for every inventory kind (the late
    payment's outcomes are services/payments.py's and services/conflict_cases.py's)."""
    return text("hold_next_step", language, until=hold_expires_at)
