"""The gate: decides each pass, remembers it durably, and reports offline passes in order.

A pass is written to the journal before the backend is asked and its decision is committed
before the barrier opens. Online, the backend's answer is the decision. When the backend cannot
be reached (or its answer is lost), the offline rules decide; a pass that opened the barrier gets
the gate's next sequence number and waits in the queue. ``sync`` sends the queue in order, in
batches, from the backend's ``expected_seq``; a pass is resent until the backend has recorded
it, and its event_id makes every resend harmless.
"""
from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from .backend import Backend, Busy, Refused, Unreachable
from .journal import Journal
from .offline import Decision, OfflineRules
from .tokens import b64url_decode, key_id

SYNC_BATCH = 50
#: The API refuses bodies over 64 KiB (413): a batch is cut to stay well below that.
MAX_SYNC_BODY_BYTES = 48 * 1024
DEFAULT_CACHE_TTL_SECONDS = 300
#: How long a pass whose answer never came is resent under its own id when the same vehicle tries
#: again at this gate (the driver still at the barrier: no pass since, the lane not cleared); later
#: it is a new pass.
RESEND_SECONDS = 120
EVENT_FIELDS = ("token", "plate", "ticket_id", "local_ticket_id")


class LotKeyRefused(Exception):
    """The backend's answer carries a lot key the gate does not trust (nothing of it is kept)."""


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Gate:
    def __init__(self, journal: Journal, backend: Backend, lot_id: str, gate_id: str,
                 clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> None:
        self.journal, self.backend, self.lot_id, self.gate_id, self.clock = journal, backend, lot_id, gate_id, clock

    # ------------------------------------------------------------------ passes
    def entry(self, *, token: str | None = None, plate: str | None = None) -> dict[str, Any]:
        if (token is None) == (plate is None):
            raise ValueError("an entry needs exactly one of token or plate")
        plate = _plate(plate) if plate else None
        request = {"token": token} if token else {"plate": plate}
        return self._pass("entry", request, lambda rules: rules.entry(token, plate), _token_fields(token))

    def exit(self, *, ticket: str | None = None, plate: str | None = None) -> dict[str, Any]:
        if (ticket is None) == (plate is None):
            raise ValueError("an exit needs exactly one of ticket or plate")
        entry = self._entry_for(ticket, _plate(plate) if plate else None)
        request = self._exit_request(ticket, _plate(plate) if plate else None, entry)
        known = {"plate": (entry or {}).get("plate")}
        if entry and ticket and entry.get("local_ticket_id") == ticket:
            known["local_ticket_id"] = ticket
        return self._pass("exit", request, lambda rules: rules.exit(entry), known)

    def _pass(self, kind: str, request: dict[str, Any], offline_rule: Callable[[OfflineRules], Decision],
              known: dict[str, Any]) -> dict[str, Any]:
        now = self.clock()
        record = {**{k: v for k, v in known.items() if v is not None}, **request, "kind": kind, "at": _iso(now)}
        unanswered = self.journal.unanswered_pass(kind, record, _iso(now - timedelta(seconds=RESEND_SECONDS)))
        if unanswered is not None:
            # The vehicle's last pass here never got its answer (lost, or timed out) and the backend
            # may have acted on it (an exit that closed the ticket): it is asked again under the same
            # id, so the backend answers what it decided then instead of judging a new pass on a
            # ticket that pass closed. What kept the barrier shut then is judged afresh, as a new pass.
            first_request = self.journal.resend_pass(unanswered["event_id"])
            outcome = self._ask(kind, unanswered["event_id"], first_request, offline_rule, now)
            if outcome["open"] or outcome["mode"] != "online":
                return outcome
        event_id = f"{self.gate_id[:24]}-{uuid.uuid4().hex}"
        self.journal.begin_pass({**record, "event_id": event_id})
        return self._ask(kind, event_id, request, offline_rule, now)

    def lane_cleared(self) -> dict[str, Any]:
        """The lane's presence detector (induction loop) reports the vehicle at the barrier gone.
        A pass it left unanswered is not resent from now on, whoever shows the same ticket or plate
        next: that is another car, or the same one on a later visit, and so a new pass. The
        unanswered pass is queued at once, for the backend to hear the barrier stayed shut."""
        self.journal.lane_cleared()
        self._queue_kept_shut()
        return {"lane_cleared": True, "unsent": len(self.journal.unsent(int(self.journal.get("expected_seq", 1)), 10**9))}

    def _ask(self, kind: str, event_id: str, request: dict[str, Any],
             offline_rule: Callable[[OfflineRules], Decision], now: datetime) -> dict[str, Any]:
        try:
            self._sync_quietly()     # the backend hears earlier offline passes before this one
            answer = (self.backend.entry if kind == "entry" else self.backend.exit)({"event_id": event_id, **request})
        except Refused as exc:
            self.journal.decide(event_id, {"mode": "online", "opened": 0, "reason": exc.code}, queue=False)
            return {"event_id": event_id, "open": False, "mode": "online", "reason": exc.code}
        except Unreachable as exc:
            # answered busy (Busy): only what a fresh configuration vouches for, never an unknown pass
            rules = OfflineRules(self.journal, self.lot_id, self.gate_id, now, busy=isinstance(exc, Busy))
            return self._decide_offline(event_id, offline_rule(rules), exc.maybe_heard)
        opened = bool(answer.get("gate_open") if kind == "entry" else answer.get("exit_granted"))
        self.journal.decide(event_id, {
            "mode": "online", "opened": int(opened), "answer": json.dumps(answer), "reason": answer.get("reason"),
            "ticket_id": answer.get("ticket_id") or request.get("ticket_id"),
            "basis": "token" if "token" in request else "plate",
        }, queue=False)
        return {"event_id": event_id, "open": opened, "mode": "online", **answer}

    def _decide_offline(self, event_id: str, decision: Decision, maybe_heard: bool) -> dict[str, Any]:
        if not decision.open:
            # uncertain: the backend may have applied the pass the gate now refuses (README)
            self.journal.decide(event_id, {"mode": "refused", "opened": 0, "reason": decision.reason,
                                           "uncertain": int(maybe_heard)}, queue=False)
            return {"event_id": event_id, "open": False, "mode": "offline", "reason": decision.reason}
        changes = {"mode": "offline", "opened": 1, "basis": decision.basis, **decision.fields}
        seq = self.journal.decide(event_id, changes, queue=True)
        return {"event_id": event_id, "open": True, "mode": "offline", "seq": seq, "basis": decision.basis,
                **{k: v for k, v in decision.fields.items() if k in ("local_ticket_id", "booking_id")}}

    def _entry_for(self, ticket: str | None, plate: str | None) -> dict[str, Any] | None:
        if plate:
            return self.journal.last_entry("plate", plate)
        return self.journal.last_entry("ticket_id", ticket) or self.journal.last_entry("local_ticket_id", ticket)

    @staticmethod
    def _exit_request(ticket: str | None, plate: str | None, entry: dict[str, Any] | None) -> dict[str, Any]:
        """Online exits name the backend's ticket; a local ticket is known to the backend once its
        entry was synced (the sync answer carries the real ticket id), else by its plate."""
        if plate:
            return {"plate": plate}
        if entry and entry.get("local_ticket_id") == ticket:
            return {"ticket_id": entry["ticket_id"]} if entry.get("ticket_id") else {"plate": entry["plate"]}
        return {"ticket_id": ticket}

    # -------------------------------------------------------------------- sync
    def sync(self) -> dict[str, Any]:
        """Send the queue from the backend's ``expected_seq`` until it has everything (or stops
        making progress: a pass the backend keeps holding, or a lost connection)."""
        sent = stalled = 0
        conflicts: list[dict[str, Any]] = []
        self._queue_kept_shut()
        while True:
            expected = int(self.journal.get("expected_seq", 1))
            rows = self.journal.unsent(expected, SYNC_BATCH)
            if not rows:
                break
            if rows[0]["seq"] != expected:
                raise SyncStuck(f"the backend expects seq {expected}, which this gate does not have")
            answer = self.backend.sync(fitting_batch([self._sync_event(row) for row in rows]))
            self.journal.record_sync(answer["results"], int(answer["expected_seq"]))
            sent += len(rows)
            conflicts += [item for item in answer["results"] if item.get("conflict")]
            # no progress: resend once at once (a lost request), then leave it to the next sync
            stalled = stalled + 1 if int(answer["expected_seq"]) <= expected else 0
            if stalled >= 2:
                break
        return {"sent": sent, "expected_seq": int(self.journal.get("expected_seq", 1)), "conflicts": conflicts,
                "unsent": len(self.journal.unsent(int(self.journal.get("expected_seq", 1)), 10**9))}

    @staticmethod
    def _sync_event(row: dict[str, Any]) -> dict[str, Any]:
        return _event(row)

    def _sync_quietly(self) -> None:
        """Before an online pass: a lost connection shows here (and the pass is decided offline);
        a backend that refuses the batch must not turn this pass into a refusal."""
        self._queue_kept_shut()
        if self.journal.unsent(int(self.journal.get("expected_seq", 1)), 1):
            try:
                self.sync()
            except (Refused, SyncStuck):
                pass

    def _queue_kept_shut(self) -> None:
        self.journal.queue_kept_shut(_iso(self.clock() - timedelta(seconds=RESEND_SECONDS)))

    # ------------------------------------------------------------------ config
    def refresh(self, accept_kid: str | None = None) -> dict[str, Any]:
        """Fetch the lot key, policy and lists. The first lot key fetched is pinned: a later answer
        with another key is refused (whoever answers as the backend could otherwise make the gate
        trust tokens it signed) unless the operator names the new key's id in ``accept_kid``."""
        now = self.clock()
        config = self.backend.config()
        self._check_lot_key(config, accept_kid)
        # the backend says how long its subscription list may be trusted; without that, 5 minutes
        until = config.get("subscriptions_valid_until") or _iso(now + timedelta(seconds=DEFAULT_CACHE_TTL_SECONDS))
        self.journal.replace_cache(config, _iso(now), until)
        self._keep_voided("voided_reservations", config, now)
        return {"refreshed": True, "subscriptions": len(config.get("subscriptions", [])),
                "reservations": len(config.get("reservations", [])),
                "voided_reservations": len(config.get("voided_reservations") or ())}

    def _keep_voided(self, name: str, config: dict[str, Any], now: datetime) -> None:
        """The passes the backend says no longer admit (a lot's reservations, an event's tickets),
        and until when that list is fresh: offline they are refused whatever its age; answered
        busy, the gate admits a pass only while the list is fresh (offline.py)."""
        until = config.get("voided_valid_until") or _iso(now + timedelta(seconds=DEFAULT_CACHE_TTL_SECONDS))
        with self.journal.write() as db:
            self.journal.put(db, name, sorted(config.get(name) or ()))
            self.journal.put(db, "voided_valid_until", until)

    def _check_lot_key(self, config: dict[str, Any], accept_kid: str | None) -> None:
        """The keys offered (``public_key``/``kid``, and ``keys``, every key passes are accepted
        under while one is rotated) each match their ids, and none is new to this device unless the
        operator named it (``accept_kid``); the first keys fetched are trusted as they come."""
        offered, kid = config.get("public_key"), config.get("kid")
        if not offered:
            return
        listed = [(kid, offered)] + [(entry.get("kid"), entry.get("public_key")) for entry in config.get("keys") or ()]
        for claimed, text in listed:
            try:
                genuine = claimed == key_id(b64url_decode(str(text)))
            except (ValueError, TypeError):
                genuine = False
            if not genuine:
                raise LotKeyRefused(f"the lot key offered does not match its id {claimed!r}")
        pinned = self.journal.get("kid")
        if not pinned:
            return
        trusted = {pinned} | {entry.get("kid") for entry in self.journal.get("keys") or ()}
        new = sorted({claimed for claimed, _ in listed} - trusted - {accept_kid})
        if new:
            raise LotKeyRefused(f"the backend offers lot key {new[0]}, this gate trusts {sorted(trusted)}: if the "
                                f"key was rotated, refresh with --accept-lot-key {new[0]}")

    def status(self) -> dict[str, Any]:
        passes = self.journal.passes()
        expected = int(self.journal.get("expected_seq", 1))
        rules = OfflineRules(self.journal, self.lot_id, self.gate_id, self.clock())
        return {
            "lot_id": self.lot_id, "gate_id": self.gate_id, "last_seq": self.journal.get("last_seq", 0),
            "expected_seq": expected, "unsent": sum(1 for p in passes if p["seq"] and p["seq"] >= expected),
            "conflicts": [{"seq": p["seq"], **json.loads(p["conflict"])} for p in passes if p["conflict"]],
            "uncertain": sum(1 for p in passes if p["mode"] == "calling" or p["uncertain"]),
            # passes the backend will not apply: refused for good, or their number was another's
            "not_applied": [{"seq": p["seq"], "status": p["sync_status"]} for p in passes
                            if p["sync_status"] in ("failed", "rejected")],
            "cache_fresh": rules.cache_fresh(), "has_lot_key": bool(self.journal.get("public_key")),
            "policy": rules.policy,
        }


def fitting_batch(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The longest prefix of ``events`` whose sync body stays under MAX_SYNC_BODY_BYTES (at least one)."""
    size, kept = len('{"events": []}'), []
    for event in events:
        size += len(json.dumps(event).encode()) + 2
        if kept and size > MAX_SYNC_BODY_BYTES:
            break
        kept.append(event)
    return kept


class SyncStuck(Exception):
    """The backend waits for a sequence number this gate's journal does not hold."""


def _event(row: dict[str, Any]) -> dict[str, Any]:
    event = {"seq": row["seq"], "event_id": row["event_id"], "kind": row["kind"], "at": row["at"]}
    if row["kind"] == "entry":
        event.update({"token": row["token"]} if row["token"] else {"plate": row["plate"]})
        if row["basis"] == "reservation":   # the backend checks that reservation in
            event["booking_id"] = row["booking_id"]
        if row["local_ticket_id"]:
            event["local_ticket_id"] = row["local_ticket_id"]
    else:
        event.update({name: row[name] for name in ("ticket_id", "local_ticket_id", "plate") if row[name]})
    if not row["opened"]:
        event["gate_opened"] = False   # refused on its own, unanswered: the backend may have let it through
    return event


def _plate(plate: str) -> str:
    return "".join(plate.split()).upper()


def _token_fields(token: str | None) -> dict[str, Any]:
    """The booking and plate a token names (unverified: only to find the vehicle again at exit)."""
    if not token:
        return {}
    try:
        payload = json.loads(b64url_decode(token.split(".")[0]))
        return {"booking_id": payload.get("bk"), "plate": payload.get("plate"), "valid_to": payload.get("to")}
    except (ValueError, IndexError, AttributeError):
        return {}
