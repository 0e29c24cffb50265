"""Surge control: the virtual waiting room of a high-demand event, the admission check on the
booking route, and per-customer rate limits.

The waiting room admits lazily: there is no timer. Numbers are handed out by one atomic counter
(``issued``), and the horizon (``admitted``: numbers up to it are let in) moves forward at the
configured rate whenever someone polls, by a write conditioned on the horizon it read. Two polls
racing to move it cannot both do it (the loser re-reads and sees the winner's horizon), and the
horizon never moves faster than the rate, whatever the number of pollers: correctness needs no
scheduler and costs nothing while nobody is waiting. Admission pauses while no place is available
and stops for good (``sold_out``) when none is available or held.
"""
from __future__ import annotations

import math
import time
from datetime import datetime, timezone
from typing import Any, Callable

from .. import kinds
from ..clock import iso
from ..domain import admission
from ..domain.errors import EventCancelled, NotFound
from ..observability import logger
from ..ports import AdmissionStore, Clock, RateLimits, SurgeQueue, TransientStoreError

EVENT_CACHE_SECONDS = 2.0
AVAILABILITY_CACHE_SECONDS = 1.0
CACHE_EVENTS = 500
HORIZON_ATTEMPTS = 3


def _ms(clock: Clock) -> int:
    return int(clock().timestamp() * 1000)


class _Ttl:
    """A tiny per-container cache: one answer per key for a second or two."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.items: dict[str, tuple[float, Any]] = {}

    def get(self, key: str, load: Callable[[], Any]) -> Any:
        now = time.monotonic()
        hit = self.items.get(key)
        if hit and now - hit[0] < self.seconds:
            return hit[1]
        value = load()
        if len(self.items) >= CACHE_EVENTS:
            self.items.clear()
        self.items[key] = (now, value)
        return value


class WaitingRoomService:
    def __init__(self, store: AdmissionStore, surge: SurgeQueue, clock: Clock, token_key: Callable[[], bytes], *,
                 admit_per_second: float, token_ttl_seconds: int) -> None:
        self.store = store
        self.surge = surge
        self.clock = clock
        self.token_key = token_key
        self.rate = float(admit_per_second)
        self.burst = max(1, math.ceil(self.rate))
        self.token_ttl_ms = int(token_ttl_seconds) * 1000
        self._events = _Ttl(EVENT_CACHE_SECONDS)
        self._availability = _Ttl(AVAILABILITY_CACHE_SECONDS)

    # -------------------------------------------------------------------------------- booking

    def check_admission(self, event_id: str, customer_id: str, token: str | None) -> None:
        """Nothing for an ordinary event (or an unknown one: the booking service answers 404);
        for a high-demand event, a valid token for this customer and event, or AdmissionDenied."""
        event = self._event_or_none(event_id)
        if event is None or not event.get("high_demand"):
            return
        admission.check_token(self.token_key(), token, event_id, customer_id, self.clock().timestamp())

    def check_waitlist_admission(self, event_id: str, customer_id: str, token: str | None) -> None:
        """A waitlist offer is a hold made for the customer, so while a high-demand event's queue
        is open (places available or held) joining its waitlist needs the same token as a hold.
        Once the queue has closed (nothing available or held: every place sold) the waitlist is the
        only line left and admits no one ahead of anyone: it needs no token."""
        event = self._event_or_none(event_id)
        if event is None or not event.get("high_demand"):
            return
        if self._places(event) == (0, 0):
            return
        admission.check_token(self.token_key(), token, event_id, customer_id, self.clock().timestamp())

    # ---------------------------------------------------------------------------------- queue

    def join(self, event_id: str, customer_id: str) -> dict[str, Any]:
        """Take a place in the queue. Idempotent: a customer who has a place (waiting, or admitted
        and still within the token's lifetime) keeps it; only a lapsed admission takes a new one."""
        event = self._event(event_id)
        if self.store.event_cancelled(event_id):
            raise EventCancelled(event_id)
        if not event.get("high_demand"):
            return self._not_required(event_id)
        now_ms = _ms(self.clock)
        entry = self.surge.get_entry(event_id, customer_id)
        if entry is not None and not self._lapsed(entry, now_ms):
            return self._view(event, entry, now_ms)
        available, held = self._places(event)
        if available == 0 and held == 0:
            return self._sold_out(event_id, entry)
        state = self.surge.take_number(event_id, now_ms)
        seq = state["issued"]
        replaces = int(entry["seq"]) if entry is not None else None
        if self.surge.put_entry(event_id, customer_id, seq, now_ms, replaces):
            return self._view(event, {"seq": seq, "joined_at": now_ms, "customer_id": customer_id}, now_ms, state)
        # The same customer joined concurrently and won: that place is theirs (our number is a gap).
        entry = self.surge.get_entry(event_id, customer_id) or {"seq": seq, "customer_id": customer_id}
        return self._view(event, entry, now_ms)

    def status(self, event_id: str, customer_id: str) -> dict[str, Any]:
        event = self._event(event_id)
        if not event.get("high_demand"):
            return self._not_required(event_id)
        if self.store.event_cancelled(event_id):
            raise EventCancelled(event_id)
        available, held = self._places(event)
        if available == 0 and held == 0:  # final, whoever asks: no read of the entry needed
            return self._sold_out(event_id, None)
        entry = self.surge.get_entry(event_id, customer_id)
        if entry is None:
            raise NotFound("You are not in this event's queue: join it with POST.", code="not_in_queue",
                           queue=f"/events/{event_id}/queue")
        return self._view(event, entry, _ms(self.clock))

    # -------------------------------------------------------------------------------- helpers

    def _view(self, event: dict[str, Any], entry: dict[str, Any], now_ms: int,
              state: dict[str, int] | None = None) -> dict[str, Any]:
        event_id = event["event_id"]
        seq = int(entry["seq"])
        available, held = self._places(event)
        if available == 0 and held == 0:
            return self._sold_out(event_id, entry)
        state = state or self.surge.queue_state(event_id)
        if available > 0:
            state = self._advance(event_id, state, now_ms)
        base = {"event_id": event_id, "queue_number": seq, "admitted_through": state["admitted"]}
        if seq > state["admitted"]:
            position = seq - state["admitted"]
            wait = math.ceil(position / self.rate) if self.rate > 0 else None
            return {**base, "status": "waiting", "position": position, "paused": available == 0,
                    "estimated_wait_seconds": wait, "poll_after_seconds": max(1, min(10, (wait or 10) // 2))}
        customer = str(entry["customer_id"])
        admitted_at = entry.get("admitted_at")
        admitted_at = int(admitted_at) if admitted_at is not None else self.surge.mark_admitted(
            event_id, customer, seq, now_ms)
        expires_ms = admitted_at + self.token_ttl_ms
        if now_ms >= expires_ms:
            return {**base, "status": "expired", "position": 0,
                    "message": "Your admission lapsed unused; join the queue again."}
        expires = expires_ms // 1000
        return {**base, "status": "admitted", "position": 0,
                "admission_token": admission.sign_token(self.token_key(), event_id, customer, seq, expires),
                "token_expires_at": iso(datetime.fromtimestamp(expires, timezone.utc))}

    def _advance(self, event_id: str, state: dict[str, int], now_ms: int) -> dict[str, int]:
        for _ in range(HORIZON_ATTEMPTS):
            step = admission.advance(state["issued"], state["admitted"], state["advanced_at"], now_ms,
                                     self.rate, self.burst)
            if step is None:
                return state
            if self.surge.advance_horizon(event_id, state["admitted"], step.admitted, step.advanced_at_ms):
                return {**state, "admitted": step.admitted, "advanced_at": step.advanced_at_ms}
            state = self.surge.queue_state(event_id)  # another poll moved it: take theirs
        return state

    def _lapsed(self, entry: dict[str, Any], now_ms: int) -> bool:
        admitted_at = entry.get("admitted_at")
        return admitted_at is not None and now_ms >= int(admitted_at) + self.token_ttl_ms

    def _places(self, event: dict[str, Any]) -> tuple[int, int]:
        """(available, held) of the event, at most a second old."""
        def load() -> tuple[int, int]:
            counts = kinds.of_event(event).counts(self.store, event["event_id"], consistent=False)
            return counts["available"], counts["held"]
        return self._availability.get(event["event_id"], load)

    def _event_or_none(self, event_id: str) -> dict[str, Any] | None:
        return self._events.get(event_id, lambda: self.store.get_event(event_id))

    def _event(self, event_id: str) -> dict[str, Any]:
        event = self._event_or_none(event_id)
        if event is None:
            raise NotFound(f"No event {event_id}.", code="event_not_found")
        return event

    @staticmethod
    def _not_required(event_id: str) -> dict[str, Any]:
        return {"event_id": event_id, "status": "not_required", "position": 0,
                "message": "This event has no waiting room: book directly."}

    @staticmethod
    def _sold_out(event_id: str, entry: dict[str, Any] | None) -> dict[str, Any]:
        view: dict[str, Any] = {"event_id": event_id, "status": "sold_out", "position": None,
                                "message": "Every place is sold; the queue is closed."}
        if entry is not None:
            view["queue_number"] = int(entry["seq"])
        return view


class RateLimiter:
    """Per-customer limits by scope (``booking``, ``queue``), kept in the table (GCRA)."""

    def __init__(self, surge: RateLimits, clock: Clock, rules: dict[str, admission.RateRule]) -> None:
        self.surge = surge
        self.clock = clock
        self.rules = rules

    def take(self, scope: str, customer_id: str) -> None:
        rule = self.rules.get(scope)
        if rule is None or rule.per_minute <= 0:
            return
        now_ms = _ms(self.clock)
        try:
            tat = self.surge.rate_take(scope, customer_id, now_ms, rule.interval_ms, rule.ceiling(now_ms))
        except TransientStoreError:
            logger.warning("rate limit store throttled; letting the request through", extra={"scope": scope})
            return
        if tat is not None:
            raise admission.RateLimited(rule.retry_after(tat, now_ms))
