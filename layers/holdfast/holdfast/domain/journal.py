"""The customer's view of a booking's journal.

The journal is the operators' record: it carries operator names and notes, review reasons and
internal checks. A customer sees:

- every status change (they must be able to tell why their booking is where it is), and
- entries about their own requests and their payment (created, captured, cancelled, refunded),
  whichever path recorded them: the webhook consumer and reconciliation decide alike and race,
  so what is shown never depends on which of them won.

Journal-only entries of operators (review notes) and internal bookkeeping (reconciliation's
scheduled checks, retries of an unanswered provider call, a review opened on a booking that
stands) are not shown. Where an operator or a review decision is shown, its text is replaced by a fixed
sentence: what an operator writes is never meant for the customer. Ids are reduced to the ones
that name the customer's own things.
"""
from __future__ import annotations

from typing import Any, Iterable

from .booking import JournalEntry

#: Notes about our own retries, checks and doubts: nothing the customer can act on.
INTERNAL_ACTIONS = frozenset({"payment_outcome_unknown", "manual_review_opened", "reconciliation_check",
                              "reconciliation_limit_reached"})
PUBLIC_IDS = frozenset({"booking_id", "event_id", "idempotency_key", "request_key", "payment_id", "refund_id",
                        "waitlist_entry"})
#: Fixed wording for entries whose recorded decision is internal.
PUBLIC_DECISIONS = {
    "manual_review_opened": "our team is checking this booking's payment by hand",
    "review_confirmed": "checked by our team; booking confirmed",
    "review_places_pinned": "checked by our team; places secured, taking the payment",
    "review_capture_failed": "checked by our team; the payment could not be taken",
    "review_closed": "checked by our team; booking closed",
    "review_refund_started": "checked by our team; the money is being returned",
}
DEFAULT_PUBLIC_DECISION = "checked by our team"


def customer_facing(entry: JournalEntry) -> bool:
    if entry.from_status != entry.to_status:
        return True
    return entry.actor != "operator" and entry.action not in INTERNAL_ACTIONS


def customer_view(entries: Iterable[JournalEntry]) -> list[dict[str, Any]]:
    shown: list[dict[str, Any]] = []
    for entry in entries:
        if not customer_facing(entry):
            continue
        view = entry.as_dict()
        if entry.actor == "operator" or entry.action in PUBLIC_DECISIONS:
            view["decision"] = PUBLIC_DECISIONS.get(entry.action, DEFAULT_PUBLIC_DECISION)
        view["ids"] = {key: value for key, value in entry.ids.items() if key in PUBLIC_IDS}
        shown.append(view)
    return shown
