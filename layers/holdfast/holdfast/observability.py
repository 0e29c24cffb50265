"""One logger, tracer and metrics object for every function (service name from POWERTOOLS_SERVICE_NAME),
and the business metrics of the sale: their names, and the few choke points that count them.

Metrics are CloudWatch embedded metric format (EMF) lines printed by Powertools Metrics, one
namespace (``POWERTOOLS_METRICS_NAMESPACE``, ``Holdfast`` in the template) and one dimension,
``service`` = the stack's name (``HOLDFAST_METRICS_SERVICE``): every function counts into the same
series, so one alarm or one dashboard line covers a metric whichever function emitted it, and two
stacks in one account stay apart. Values are gathered during an invocation and printed once at its
end by ``log_metrics``; counted outside an invocation (tests, the model checker), they are dropped
at the next invocation's start, so nothing is printed and nothing grows.

Where they are counted (few places, so that new flows are counted without new calls):

* ``booking_written``: every booking write (``BookingRecords.commit`` of a change with a booking), after it
  succeeded: holds, confirmations, payments by outcome, late payments by path, reviews opened and
  resolved, reconciliation give-ups, expiries and their lag. Also one structured log line with the
  ids (never a payload).
* ``answered``: the HTTP error mapping (holdfast/entry/http.py): sold-out, conflict, busy answers.
* ``count`` directly: the store's transaction retry loop, the webhook's refusals, the waitlist's
  closed offers, the waiting room's admissions, and what a product counts of its own.
"""
from __future__ import annotations

import functools
import os
from collections import Counter
from datetime import datetime
from typing import Any, Callable

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger()


class SdkTracer:
    """Powertools' Tracer, built only where the X-Ray SDK is wanted (``HOLDFAST_XRAY_SDK=true``,
    the template's XRaySdkTracing parameter). The SDK and its patching of botocore and requests
    cost every cold start more than boto3's own import, and Lambda's active tracing already
    records each invocation without it (docs/performance.md, "Cold start"). Without it the
    decorators hand the function back untouched.

    With it, neither a return value nor an exception is put into the trace: Powertools' default
    copies both into the segment's metadata, and ours carry gate keys, entry and admission tokens,
    payment links and journals, which would then be readable by anyone allowed to read traces.
    The template's POWERTOOLS_TRACER_CAPTURE_* variables say the same for any other Tracer."""

    def __init__(self) -> None:
        self.enabled = os.environ.get("HOLDFAST_XRAY_SDK", "false").strip().lower() == "true"
        self._tracer: Any = None
        if self.enabled:
            from aws_lambda_powertools.tracing import Tracer

            self._tracer = Tracer()

    def capture_method(self, method: Callable[..., Any]) -> Callable[..., Any]:
        if not self._tracer:
            return method
        return self._tracer.capture_method(method, capture_response=False, capture_error=False)

    def capture_lambda_handler(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        if not self._tracer:
            return handler
        return self._tracer.capture_lambda_handler(handler, capture_response=False, capture_error=False)


tracer = SdkTracer()

NAMESPACE = "Holdfast"

# ------------------------------------------------------------------------------- metric names

HOLDS_MADE = "HoldsMade"
HOLDS_EXPIRED = "HoldsExpired"
EXPIRY_LAG = "ExpiryLagSeconds"                # seconds after hold_expires_at that the hold was released
CONFIRMATIONS = "Confirmations"                # any booking that became CONFIRMED
PAYMENTS_SUCCEEDED = "PaymentsSucceeded"       # confirmed on the provider's word (notification, check)
PAYMENTS_FAILED = "PaymentsFailed"             # rejected, cancelled, or no final answer within the limit
PAYMENT_OUTCOMES_UNKNOWN = "PaymentOutcomesUnknown"
LATE_RETAKEN = "LatePaymentsRetaken"           # paid after release, places still free: sold
LATE_REFUNDED = "LatePaymentsRefunded"         # paid after release, places resold: money back
LATE_TO_REVIEW = "LatePaymentsToReview"        # paid in time, reported after resale: an operator decides
REVIEWS_OPENED = "ReviewsOpened"
REVIEWS_RESOLVED = "ReviewsResolved"
RECONCILIATION_GIVE_UPS = "ReconciliationGiveUps"
SOLD_OUT_ANSWERS = "SoldOutAnswers"
CONFLICT_ANSWERS = "ConflictAnswers"
BUSY_ANSWERS = "BusyAnswers"
RATE_LIMITED_ANSWERS = "RateLimitedAnswers"
TRANSACTION_CONFLICTS = "TransactionConflicts"  # a DynamoDB transaction cancelled by a conflict or throttling
TRANSACTION_RETRIES = "TransactionRetries"      # ... and sent again
WEBHOOKS_REFUSED = "WebhooksRefused"            # notifications from a network that is not the provider's
WAITLIST_OFFERS_MADE = "WaitlistOffersMade"
WAITLIST_OFFERS_TAKEN = "WaitlistOffersTaken"
WAITING_ROOM_ADMISSIONS = "WaitingRoomAdmissions"
AUDIT_APPEND_FAILED = "AuditAppendFailed"       # an action done, its audit entry not written

SECONDS_METRICS = {EXPIRY_LAG}

#: Error codes of HTTP answers that are counted, and under which metric.
ANSWER_METRICS = {
    "sold_out": SOLD_OUT_ANSWERS,
    "request_in_progress": CONFLICT_ANSWERS, "booking_changed": CONFLICT_ANSWERS,
    "places_unavailable": CONFLICT_ANSWERS, "seats_unavailable": CONFLICT_ANSWERS,
    "busy": BUSY_ANSWERS, "too_busy": BUSY_ANSWERS,
    "rate_limited": RATE_LIMITED_ANSWERS,
}
#: Journal actions of a late payment, by the path it took.
LATE_PATHS = {
    "late_payment_places_retaken": LATE_RETAKEN, "late_authorisation_places_retaken": LATE_RETAKEN,
    "late_payment_refund_started": LATE_REFUNDED, "late_authorisation_cancelled": LATE_REFUNDED,
}
#: Review reasons that mean a payment was late (paid in time, but the places were resold meanwhile).
LATE_REVIEW_REASONS = {"paid_in_time_places_resold"}
#: Review reasons that mean reconciliation stopped without settling the money itself.
GIVE_UP_REASONS = {"refund_not_confirmed", "provider_unreachable", "authorisation_not_cancelled",
                   "reconciliation_stuck"}
#: Who speaks for the provider when a booking is confirmed or failed.
PROVIDER_ACTORS = {"provider", "reconciler"}
#: Cap on the samples of one value metric kept per invocation (a sweep may release many holds).
MAX_SAMPLES = 100

_counts: Counter[str] = Counter()
_samples: dict[str, list[float]] = {}


def count(name: str, value: int = 1) -> None:
    _counts[name] += value


def sample(name: str, value: float) -> None:
    values = _samples.setdefault(name, [])
    if len(values) < MAX_SAMPLES:
        values.append(float(value))


def pending() -> dict[str, Any]:
    """What this invocation counted so far (for tests and logs): counts and samples by name."""
    return {**dict(_counts), **{name: list(values) for name, values in _samples.items()}}


def discard() -> None:
    _counts.clear()
    _samples.clear()


def publish() -> None:
    """Print what was gathered as one EMF line (nothing when nothing was counted)."""
    if not _counts and not _samples:
        return
    metrics = emf()
    try:
        for name, value in sorted(_counts.items()):
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
        for name, values in sorted(_samples.items()):
            for value in values:
                metrics.add_metric(name=name, unit=MetricUnit.Seconds, value=value)
        metrics.flush_metrics()
    except Exception:  # noqa: BLE001 - a metric must never fail the request it describes
        logger.exception("metrics not published")
        metrics.clear_metrics()
    finally:
        discard()


def emf() -> Metrics:
    """The Powertools Metrics object, its namespace and dimension read from the environment when
    it is used: a process may import this module before a function's configuration is in place."""
    return Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or NAMESPACE,
                   service=os.environ.get("HOLDFAST_METRICS_SERVICE") or "holdfast")


def log_metrics(handler: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Handler decorator: start the invocation with nothing counted, print its metrics at the end
    (also when the handler raised: what was written before the error happened)."""
    @functools.wraps(handler)
    def wrapper(event: Any, context: Any) -> Any:
        discard()
        try:
            return handler(event, context)
        finally:
            publish()
    return wrapper


def answered(code: str) -> None:
    """An error answer of the API, by its machine-readable code."""
    name = ANSWER_METRICS.get(code)
    if name:
        count(name)


def booking_written(before: Any, after: Any, entry: Any) -> None:
    """A booking write that succeeded: ``before`` is None for a new hold. Counts what the change
    means and logs it with its ids."""
    action, actor = entry.action, entry.actor
    old = before.status.value if before is not None else None
    new = after.status.value
    logger.info("booking written", extra={
        "booking_id": after.booking_id, "event_id": after.event_id, "action": action, "actor": actor,
        "from_status": old, "to_status": new, "version": after.version,
        "payment_id": after.payment.payment_id if after.payment else None,
    })
    if before is None:
        if action == "hold_created":
            count(WAITLIST_OFFERS_MADE if actor == "waitlist" else HOLDS_MADE)
        return
    if action == "payment_outcome_unknown":
        count(PAYMENT_OUTCOMES_UNKNOWN)
    if action in LATE_PATHS:
        count(LATE_PATHS[action])
    if action == "reconciliation_limit_reached":
        count(RECONCILIATION_GIVE_UPS)
    if after.review and after.review != before.review:
        reason = after.review.get("reason")
        count(REVIEWS_OPENED)
        if reason in LATE_REVIEW_REASONS:
            count(LATE_TO_REVIEW)
        if reason in GIVE_UP_REASONS:
            count(RECONCILIATION_GIVE_UPS)
    elif before.review and not after.review:
        count(REVIEWS_RESOLVED)
    if old == new:
        return
    if new == "CONFIRMED":
        count(CONFIRMATIONS)
        if actor in PROVIDER_ACTORS:
            count(PAYMENTS_SUCCEEDED)
    elif new == "PAYMENT_FAILED":
        count(PAYMENTS_FAILED)
    elif new == "EXPIRED":
        count(HOLDS_EXPIRED)
        lag = _seconds_between(before.hold_expires_at, entry.at)
        if lag is not None:
            sample(EXPIRY_LAG, max(0.0, lag))


def _seconds_between(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    try:
        return (_parse(end) - _parse(start)).total_seconds()
    except ValueError:
        return None


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
