"""An organizer cancels an event: sales stop at once, and one durable job (a Step Functions
execution, ``statemachines/cancel_event.asl.json``) releases every hold and refunds every paid
booking exactly once (``services/cancellation_job.py``).

One job per event: the cancel request and the flag that stops sales are one conditional
transaction with the organizer's Idempotency-Key, and the job's execution is named
``cancel-<event>-<n>``: a repeated request starts nothing (Step Functions refuses a used name),
and only a job whose execution ended without its summary is resumed, under the next number,
after a conditional bump that only one resumer can win (the sweeper, or a repeated request).
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from ..clock import iso
from ..domain.cancellation import of_event, tally
from ..domain.errors import Busy, IdempotencyKeyReused, InvalidRequest, NotFound
from ..domain.organizers import Caller, require_owner
from ..observability import logger
from ..ports import (AlreadyCancelled, CancellationJobs, Clock, EventCancellationStore, EventNotFound, KeyUsed,
                     StaleBooking, TransientStoreError)
from .listing import index_items_of

#: Reads of the event before its cancel gives up (Busy) on edits landing between read and write.
CANCEL_ATTEMPTS = 5


class EventCancellationService:
    def __init__(self, store: EventCancellationStore, clock: Clock, jobs: CancellationJobs | None) -> None:
        self.store = store
        self.clock = clock
        self.jobs = jobs

    def cancel(self, event_id: str, key: str, reason: str, caller: Caller | None = None
               ) -> tuple[dict[str, Any], bool]:
        """Cancel the event. Returns (progress, replayed): replayed for a repeat of this request.
        A request with another key for an event already cancelled gets the cancellation as it
        stands (its first reason) and starts nothing. An organizer cancels only its own events,
        and its key is its own: another organizer's same key is another request."""
        if caller is not None:
            key = caller.scoped(key)
        fingerprint = hashlib.sha256(json.dumps([event_id, reason]).encode()).hexdigest()
        replayed = False
        try:
            for attempt in range(CANCEL_ATTEMPTS):
                event = require_owner(self.store.get_event(event_id, consistent=True), caller,
                                      NotFound(f"No event {event_id}.", code="event_not_found"))
                # the listing's copies of the event (its index items) leave in the cancel's own
                # transaction: a cancelled event is neither listed nor found by search
                drop = [(item["pk"], item["sk"]) for item in index_items_of(event)] if event.get("published") else []
                try:
                    self.store.mark_event_cancelled(event_id, reason, key, fingerprint, iso(self.clock()),
                                                    by=caller.journal_ids() if caller else None,
                                                    catalog_version=int(event.get("catalog_version") or 0),
                                                    drop_index=drop)
                    break
                except StaleBooking:
                    continue   # an edit or publish came between: its index items are the ones to drop
            else:
                raise Busy()
        except KeyUsed:
            record = self.store.cancel_request(key)
            if record is None or record["fingerprint"] != fingerprint:
                raise IdempotencyKeyReused() from None
            replayed = True
        except AlreadyCancelled:
            pass
        except EventNotFound:
            raise NotFound(f"No event {event_id}.", code="event_not_found") from None
        except TransientStoreError:
            raise Busy() from None
        self.resume(event_id)
        return self.progress(event_id), replayed

    def resume(self, event_id: str) -> str:
        """Make sure the event's job runs: start it if it never started, start its next execution
        if the last one ended without a summary, leave it alone otherwise."""
        event = self.store.get_event(event_id)
        if self.jobs is None or event is None or not event.get("cancelled_at") or event.get("cancel_summary"):
            return "nothing_to_do"
        attempt = int(event.get("cancel_attempt") or 1)
        state = self.jobs.state(event_id, attempt)
        if state is None:
            self.jobs.start(event_id, attempt, str(event.get("cancel_reason", "")))
            return "started"
        if state == "RUNNING":
            return "running"
        if not self.store.next_cancel_attempt(event_id, attempt):
            return "resumed_elsewhere"
        logger.warning("event cancellation resumed", extra={"event_id": event_id, "attempt": attempt + 1,
                                                             "previous": state})
        self.jobs.start(event_id, attempt + 1, str(event.get("cancel_reason", "")))
        return "resumed"

    def resume_all(self) -> dict[str, int]:
        """The sweeper's pass over every event whose job has no summary yet."""
        outcomes: dict[str, int] = {}
        for event_id in self.store.cancelling_events():
            try:
                outcome = self.resume(event_id)
            except Exception:  # noqa: BLE001 - one event's failure must not stop the others
                logger.exception("could not resume an event cancellation", extra={"event_id": event_id})
                outcome = "failed"
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
        return outcomes

    def progress(self, event_id: str, caller: Caller | None = None) -> dict[str, Any]:
        event = require_owner(self.store.get_event(event_id, consistent=True), caller,
                              NotFound(f"No event {event_id}.", code="event_not_found"))
        if not event.get("cancelled_at"):
            raise NotFound("This event is not cancelled.", code="event_not_cancelled")
        bookings = of_event(self.store.get_bookings(self.store.event_booking_ids(event_id)), event_id)
        summary = event.get("cancel_summary")
        view = {"event_id": event_id, "reason": event.get("cancel_reason"), "cancelled_at": event["cancelled_at"],
                "state": "finished" if summary else "running", "attempt": int(event.get("cancel_attempt") or 1),
                "counts": tally(bookings)}
        if summary:
            view["summary"] = _plain_numbers(summary)
            view["finished_at"] = event.get("cancel_finished_at")
        return view


def validate_reason(reason: str) -> str:
    reason = " ".join(reason.split())
    if not reason:
        raise InvalidRequest("A reason is required.", code="validation_error", field="reason")
    return reason


def _plain_numbers(value: Any) -> Any:
    """DynamoDB gives numbers back as Decimal; the summary is read as JSON."""
    if isinstance(value, dict):
        return {key: _plain_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain_numbers(item) for item in value]
    if hasattr(value, "as_integer_ratio") and not isinstance(value, (int, float)):
        return int(value) if value == int(value) else float(value)
    return value
