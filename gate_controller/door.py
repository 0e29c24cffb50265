"""The offline program as an event's door: the gate's journal, queue, sync and key pinning, with a
ticket's rules (docs/doors.md).

A scan is written to the journal before the backend is asked. Online, the backend's answer is the
decision. Offline the door admits a ticket signed by the event's key, for this event, that its
configuration does not list as voided and that this door has not admitted already; an admitted
scan takes the door's next sequence number and waits in the queue for ``sync``. Two doors admitting
one ticket while apart is found at sync: the backend opens a check-in case and undoes nothing.
"""
from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

from .backend import Busy, DoorBackend, Refused, Unreachable
from .controller import DEFAULT_CACHE_TTL_SECONDS, Gate, _iso
from .offline import Decision, voided_list_fresh
from .tokens import b64url_decode, verify_ticket


class Door(Gate):
    backend: DoorBackend

    def scan(self, token: str) -> dict[str, Any]:
        now = self.clock()
        event_id = f"{self.gate_id[:24]}-{uuid.uuid4().hex}"
        ticket_id = _claimed_ticket(token)
        self.journal.begin_pass({"event_id": event_id, "kind": "entry", "token": token, "ticket_id": ticket_id,
                                 "basis": "token", "at": _iso(now)})
        try:
            self._sync_quietly()     # the backend hears earlier offline scans before this one
            answer = self.backend.scan({"event_id": event_id, "token": token})
        except Refused as exc:
            self.journal.decide(event_id, {"mode": "online", "opened": 0, "reason": exc.code}, queue=False)
            return {"event_id": event_id, "open": False, "mode": "online", "reason": exc.code}
        except Unreachable as exc:
            decision = self._offline(token, event_id, busy=isinstance(exc, Busy))
            return self._decide_offline(event_id, decision, exc.maybe_heard)
        admitted = bool(answer.get("admitted"))
        self.journal.decide(event_id, {"mode": "online", "opened": int(admitted), "answer": json.dumps(answer),
                                       "reason": answer.get("reason"), "ticket_id": answer.get("ticket_id")},
                            queue=False)
        return {"event_id": event_id, "open": admitted, "mode": "online", **answer}

    def _offline(self, token: str, event_id: str, busy: bool = False) -> Decision:
        """Unreachable: a ticket the event's key signed, not voided, not admitted here already.
        Answered busy (which a stranger can cause): the same, and only while the voided list is
        fresh, so that a busy backend never lets in a ticket voided since the last refresh."""
        if busy and not voided_list_fresh(self.journal, self.clock()):
            return Decision(False, "backend_busy")
        key = self.journal.get("keys") or self.journal.get("public_key")
        if not key:
            return Decision(False, "no_event_key")
        verdict = verify_ticket(token, key, self.lot_id, self.clock())
        if not verdict.ok:
            return Decision(False, verdict.reason)
        ticket_id = (verdict.payload or {})["tk"]
        if ticket_id in set(self.journal.get("voided_tickets") or ()):
            return Decision(False, "ticket_void")
        earlier = self.journal.last_entry("ticket_id", ticket_id)
        if earlier is not None and earlier["event_id"] != event_id:
            return Decision(False, "already_checked_in")
        return Decision(True, None, "token", {"ticket_id": ticket_id})

    @staticmethod
    def _sync_event(row: dict[str, Any]) -> dict[str, Any]:
        event = {"seq": row["seq"], "event_id": row["event_id"], "at": row["at"], "token": row["token"]}
        if not row["opened"]:
            # kept out without the backend's answer: the backend may have admitted it
            event.update(admitted=False, reason="kept_out_unanswered")
        return event

    def refresh(self, accept_kid: str | None = None) -> dict[str, Any]:
        """The event's key (pinned like a lot's) and the voided tickets, trusted until the backend says."""
        now = self.clock()
        config = self.backend.config()
        self._check_lot_key(config, accept_kid)
        until = config.get("voided_valid_until") or _iso(now + timedelta(seconds=DEFAULT_CACHE_TTL_SECONDS))
        self.journal.replace_cache(config, _iso(now), until)
        self._keep_voided("voided_tickets", config, now)
        return {"refreshed": True, "voided_tickets": len(config.get("voided_tickets") or ())}


def _claimed_ticket(token: str) -> str | None:
    """The ticket a token names (unverified: only to find this door's earlier scan of it)."""
    try:
        claimed = json.loads(b64url_decode(token.split(".")[0])).get("tk")
    except (ValueError, IndexError, AttributeError):
        return None
    return claimed if isinstance(claimed, str) else None

