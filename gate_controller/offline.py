"""What the gate may do on its own while the backend cannot be reached.

Entry opens only for: a token that verifies with the lot's public key (this lot, inside its
window, not already used to come in); a plate with an active subscription, only while the cache
is fresh (its TTL is short on purpose: a cancelled subscription must stop working soon); a plate
of a cached confirmed reservation, inside its window (early entry included), while the backend's
list of them is valid (as long as a token of it would verify, at most a few hours) and not
already used to come in; an unknown vehicle only when the lot's policy allows a local temporary
ticket. Exit opens only for a vehicle that has nothing to
pay at the gate (a subscription, or a reservation inside its window); anything that may owe money
waits for the connection. Everything else is refused with a reason.

A reservation the backend lists as voided (cancelled, refunded, in review, already used: its token
still verifies until its window ends) is refused by token or plate, whatever the list's age.

Answered busy (``busy``: a 429 or 5xx, which a stranger can cause, not a lost connection) the gate
is stricter: an entry by token or reservation opens only while the voided list is fresh, and an
unknown vehicle gets no local ticket (``backend_busy``). Subscriptions already need a fresh cache;
exits are the same (they charge nobody).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from .journal import Journal
from .tokens import parse_time, verify

DEFAULT_POLICY = {"offline_tickets": False, "early_entry_minutes": 15}


@dataclass
class Decision:
    open: bool
    reason: str | None = None
    basis: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)   # what the queued pass carries


def voided_list_fresh(journal: Journal, now: datetime) -> bool:
    """Whether the backend's list of voided passes (reservations, tickets) is still to be trusted."""
    fetched, until = journal.get("config_fetched_at"), journal.get("voided_valid_until")
    return fetched is not None and until is not None and parse_time(fetched) <= now < parse_time(until)


class OfflineRules:
    def __init__(self, journal: Journal, lot_id: str, gate_id: str, now: datetime, busy: bool = False) -> None:
        self.journal, self.lot_id, self.gate_id, self.now, self.busy = journal, lot_id, gate_id, now, busy
        self.policy = {**DEFAULT_POLICY, **(journal.get("policy") or {})}
        self.voided = set(journal.get("voided_reservations") or ())

    def _vouched(self) -> bool:
        """Whether a reservation may admit now: always offline; answered busy, only on a fresh list."""
        return not self.busy or voided_list_fresh(self.journal, self.now)

    def cache_fresh(self) -> bool:
        fetched, until = self.journal.get("config_fetched_at"), self.journal.get("cache_valid_until")
        return fetched is not None and until is not None and parse_time(fetched) <= self.now < parse_time(until)

    def entry(self, token: str | None, plate: str | None) -> Decision:
        if token is not None:
            return self._entry_by_token(token)
        assert plate is not None
        if self._inside("plate", plate):
            # This gate saw it come in and not leave; it may have left through another gate. A
            # reservation the backend listed after that entry (so it was not inside on it) admits it.
            entry = self.journal.last_entry("plate", plate)
            fetched = self.journal.get("config_fetched_at")
            if entry is not None and fetched is not None and entry["at"] < fetched:
                reservation = self._reservation(plate)
                if reservation is not None:
                    return reservation
            return Decision(False, "already_inside")
        if self.cache_fresh():
            subscription = self.journal.subscription(plate)
            if subscription and parse_time(subscription["valid_from"]) <= self.now < parse_time(subscription["valid_to"]):
                return Decision(True, basis="subscription", fields={"valid_to": subscription["valid_to"]})
        reservation = self._reservation(plate)
        if reservation is not None:
            return reservation
        if self.busy:
            return Decision(False, "backend_busy")   # an unknown vehicle waits for the backend
        if self.policy.get("offline_tickets"):
            local_ticket = f"L-{uuid.uuid4().hex[:16]}"
            return Decision(True, basis="local_ticket", fields={"local_ticket_id": local_ticket})
        return Decision(False, "offline_unknown_vehicle")

    def _entry_by_token(self, token: str) -> Decision:
        public_key = self.journal.get("keys") or self.journal.get("public_key")
        if not public_key:
            return Decision(False, "no_lot_key")
        early = timedelta(minutes=int(self.policy["early_entry_minutes"]))
        verdict = verify(token, public_key, self.lot_id, self.now, early)
        if not verdict.ok or verdict.payload is None:
            return Decision(False, verdict.reason)
        booking_id = verdict.payload["bk"]
        if booking_id in self.voided:
            return Decision(False, "reservation_void")
        if not self._vouched():
            return Decision(False, "backend_busy")
        if self._inside("booking_id", booking_id):
            return Decision(False, "token_already_used")
        return Decision(True, basis="token", fields={"token": token, "booking_id": booking_id,
                                                      "plate": verdict.payload.get("plate"),
                                                      "valid_to": verdict.payload["to"]})

    def _reservation(self, plate: str) -> Decision | None:
        """A cached reservation of this plate that admits it now, or None."""
        until = self.journal.get("reservations_valid_until")
        if until is None or self.now >= parse_time(until) or not self._vouched():
            return None
        early = timedelta(minutes=int(self.policy["early_entry_minutes"]))
        for cached in self.journal.cached_reservations(plate):
            if not parse_time(cached["valid_from"]) - early <= self.now < parse_time(cached["valid_to"]):
                continue
            if cached["booking_id"] in self.voided:
                continue
            if self.journal.last_entry("booking_id", cached["booking_id"]) is not None:
                continue   # a reservation admits one entry (the backend completes it at the exit)
            return Decision(True, basis="reservation", fields={"booking_id": cached["booking_id"],
                                                                "valid_to": cached["valid_to"]})
        return None

    def _inside(self, where: str, value: str) -> bool:
        entry = self.journal.last_entry(where, value)
        return entry is not None and not self.journal.exited_after(entry)

    def exit(self, entry: dict[str, Any] | None) -> Decision:
        if entry is None:
            return Decision(False, "offline_unknown_vehicle")
        subscription = self.journal.subscription(entry["plate"]) if entry.get("plate") else None
        if entry["basis"] == "subscription" or (
                subscription and self.cache_fresh()
                and parse_time(subscription["valid_from"]) <= self.now < parse_time(subscription["valid_to"])):
            return Decision(True, basis="subscription")
        if entry["basis"] in ("token", "reservation") and entry.get("valid_to") and \
                self.now < parse_time(entry["valid_to"]):
            return Decision(True, basis=entry["basis"])
        return Decision(False, "offline_payment_needs_connection")
