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


def hold_text_keys(alternatives: bool) -> dict[str, str]:
    """The texts of a hold and of its end: a late payment whose places are gone is offered other
    places only by a kind that has alternatives (services/conflict_cases.py); otherwise it is given
    back, and the text says only that."""
    suffix = "" if alternatives else ".refund_only"
    return {"hold_next_step": "hold_next_step" + suffix, "hold_ended": "hold_ended" + suffix}


def hold_next_step(hold_expires_at: str, language: str = DEFAULT_LANGUAGE, alternatives: bool = True) -> str:
    """Until when a hold lasts and what its end means (the late payment's outcomes are
    services/payments.py's and services/conflict_cases.py's)."""
    return text(hold_text_keys(alternatives)["hold_next_step"], language, until=hold_expires_at)


def line_refund_review(code: str) -> dict[str, str]:
    """The review an order carries while a line's refund the provider refused (``code``) is not
    settled: on the operators' list, and in its customer's view with what happens next."""
    reason = f"line_refund_rejected_{code}"
    return {"reason": reason, "next_step": next_step(reason)}
