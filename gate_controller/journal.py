"""The gate's durable memory: one SQLite file in WAL mode with full synchronous commits.

- ``passes``: every pass the gate decided, written (and committed) before the barrier moves. A
  pass the backend has not seen gets the gate's next sequence number in the same transaction;
  the counter lives in ``meta`` and only ever grows, so a number is never given twice, even
  after a crash or a pass that was refused.
- ``meta``: the counter, the backend's ``expected_seq`` (from where the gate resends), the
  lot's public key and policy, when the cache was refreshed.
- ``subscriptions``, ``reservations``: the cache of the lot's active subscriptions and of the
  confirmed reservations of the coming hours (plate, window, space, booking id), replaced whole on
  each refresh; subscriptions are trusted only while the cache is fresh, reservations until the
  backend's ``reservations_valid_until`` and each only inside its window.

Plates and tokens never reach the file in clear: they are sealed under the gate's key and found
by a keyed hash (``plate_tag``); see sealing.py. Rows come back from here opened.
"""
from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from typing import Any, Iterator

from .sealing import KeyUnusable, Sealer, load_key

__all__ = ["Journal", "KeyUnusable"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS passes (
    event_id TEXT PRIMARY KEY,
    seq INTEGER UNIQUE,
    kind TEXT NOT NULL,
    at TEXT NOT NULL,
    token TEXT, plate TEXT, plate_tag TEXT, ticket_id TEXT, local_ticket_id TEXT, booking_id TEXT,
    basis TEXT,
    valid_to TEXT,
    mode TEXT NOT NULL,
    opened INTEGER NOT NULL DEFAULT 0,
    uncertain INTEGER NOT NULL DEFAULT 0,
    reason TEXT,
    answer TEXT,
    sync_status TEXT,
    conflict TEXT
);
CREATE TABLE IF NOT EXISTS subscriptions (plate_tag TEXT PRIMARY KEY, plate TEXT NOT NULL, valid_from TEXT NOT NULL,
                                          valid_to TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS reservations (booking_id TEXT PRIMARY KEY, plate_tag TEXT NOT NULL, plate TEXT NOT NULL,
                                         space_id TEXT, valid_from TEXT NOT NULL, valid_to TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS reservations_by_plate ON reservations (plate_tag);
-- a cache of tokens the backend never sent (journals of earlier versions)
DROP TABLE IF EXISTS tokens;
"""
PASS_FIELDS = ("event_id", "seq", "kind", "at", "token", "plate", "plate_tag", "ticket_id", "local_ticket_id", "booking_id",
               "basis", "valid_to", "mode", "opened", "uncertain", "reason", "answer", "sync_status", "conflict")


class Journal:
    def __init__(self, path: str, key: bytes | None = None) -> None:
        self.sealer = Sealer(key if key is not None else load_key(path))
        # autocommit off by hand: every write below is an explicit BEGIN IMMEDIATE ... COMMIT
        self.db = sqlite3.connect(path, isolation_level=None, timeout=30)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One transaction that takes the write lock at once, so two processes of the same gate
        (a pass and the background sync) never both read the same counter value."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # ------------------------------------------------------------------ meta
    def get(self, key: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row["value"]) if row else default

    @staticmethod
    def put(db: sqlite3.Connection, key: str, value: Any) -> None:
        db.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                   (key, json.dumps(value)))

    # ---------------------------------------------------------------- passes
    def begin_pass(self, record: dict[str, Any]) -> None:
        """The pass exists before the backend is asked: a crash mid-call leaves it on record."""
        with self.write() as db:
            self._insert(db, {**record, "mode": "calling"})

    def unanswered_pass(self, kind: str, record: dict[str, Any], since: str) -> dict[str, Any] | None:
        """This gate's last pass, if it was of ``kind`` for the vehicle ``record`` names (plate,
        ticket, local ticket or booking), at ``since`` or later, and refused offline without the
        backend's answer (or the gate stopped mid-call); else None."""
        keys = [(name, record[name]) for name in ("ticket_id", "local_ticket_id", "booking_id") if record.get(name)]
        if record.get("plate"):
            keys.append(("plate_tag", self.sealer.tag(record["plate"])))
        if not keys:
            return None
        where = " OR ".join(f"{name} = ?" for name, _ in keys)
        row = self.db.execute("SELECT rowid, * FROM passes ORDER BY rowid DESC LIMIT 1").fetchone()
        if row is None or row["kind"] != kind or row["at"] < since or row["opened"]:
            return None   # only the gate's last pass: the car may still be at the barrier
        if row["rowid"] <= self.get("lane_cleared_upto", 0):
            return None   # the lane's detector saw that car leave: whoever is there now is a new pass
        if self.db.execute(f"SELECT 1 FROM passes WHERE event_id = ? AND ({where})",
                           (row["event_id"], *[value for _, value in keys])).fetchone() is None:
            return None
        if not (row["mode"] == "calling" or (row["mode"] == "refused" and row["uncertain"])):
            return None
        return self._opened(row)

    def queue_kept_shut(self, before: str) -> None:
        """Queue the passes refused without the backend's answer that are no longer resent (older
        than ``before``, another pass came since, or the lane cleared after it): the backend hears that the barrier stayed
        shut, in case it had let the car through."""
        with self.write() as db:
            last = db.execute("SELECT MAX(rowid) FROM passes").fetchone()[0]
            cleared = self.get("lane_cleared_upto", 0)
            rows = db.execute("SELECT rowid, event_id FROM passes WHERE mode = 'refused' AND uncertain = 1 AND "
                              "seq IS NULL AND (at < ? OR rowid <> ? OR rowid <= ?) ORDER BY rowid",
                              (before, last, cleared)).fetchall()
            for row in rows:
                seq = self.get("last_seq", 0) + 1
                self.put(db, "last_seq", seq)
                db.execute("UPDATE passes SET seq = ? WHERE event_id = ?", (seq, row["event_id"]))

    def lane_cleared(self) -> None:
        """The vehicle at the barrier has left the lane: no pass made so far is resent."""
        with self.write() as db:
            last = db.execute("SELECT MAX(rowid) FROM passes").fetchone()[0]
            self.put(db, "lane_cleared_upto", last or 0)

    def resend_pass(self, event_id: str) -> dict[str, Any]:
        """An unanswered pass asked again: calling once more. Returns the request it was first sent
        with (the backend matches a repeat by how it names the vehicle)."""
        with self.write() as db:
            db.execute("UPDATE passes SET mode = 'calling', uncertain = 0, reason = NULL WHERE event_id = ?",
                       (event_id,))
        row = self.pass_(event_id)
        assert row is not None
        if row["kind"] == "entry":
            return {"token": row["token"]} if row["token"] else {"plate": row["plate"]}
        return {"ticket_id": row["ticket_id"]} if row["ticket_id"] else {"plate": row["plate"]}

    def decide(self, event_id: str, changes: dict[str, Any], *, queue: bool) -> int | None:
        """Store the decision; with ``queue``, give the pass the next sequence number (same commit)."""
        with self.write() as db:
            seq = None
            if queue:
                seq = self.get("last_seq", 0) + 1
                self.put(db, "last_seq", seq)
                changes = {**changes, "seq": seq}
            changes = self._sealed(changes)
            assignments = ", ".join(f"{name} = ?" for name in changes)
            db.execute(f"UPDATE passes SET {assignments} WHERE event_id = ?", (*changes.values(), event_id))
            return seq

    def _insert(self, db: sqlite3.Connection, record: dict[str, Any]) -> None:
        record = self._sealed(record)
        names = [name for name in PASS_FIELDS if name in record]
        db.execute(f"INSERT INTO passes ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                   [record[name] for name in names])

    def pass_(self, event_id: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT * FROM passes WHERE event_id = ?", (event_id,)).fetchone()
        return self._opened(row) if row else None

    def unsent(self, from_seq: int, limit: int) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT * FROM passes WHERE seq >= ? ORDER BY seq LIMIT ?", (from_seq, limit))
        return [self._opened(row) for row in rows]

    def passes(self) -> list[dict[str, Any]]:
        return [self._opened(row) for row in self.db.execute("SELECT * FROM passes ORDER BY rowid")]

    def last_entry(self, where: str, value: str) -> dict[str, Any] | None:
        """The latest opened entry matching ``where`` (a column name) = value."""
        assert where in ("booking_id", "plate", "ticket_id", "local_ticket_id")
        if where == "plate":
            where, value = "plate_tag", self.sealer.tag(value)
        row = self.db.execute(f"SELECT * FROM passes WHERE kind = 'entry' AND opened = 1 AND {where} = ? "
                              "ORDER BY rowid DESC LIMIT 1", (value,)).fetchone()
        return self._opened(row) if row else None

    def exited_after(self, entry: dict[str, Any]) -> bool:
        """Has an exit opened for the vehicle of ``entry`` since it came in?"""
        keys = [(name, entry[name]) for name in ("ticket_id", "local_ticket_id") if entry.get(name)]
        if entry.get("plate"):
            keys.append(("plate_tag", self.sealer.tag(entry["plate"])))
        where = " OR ".join(f"{name} = ?" for name, _ in keys)
        row = self.db.execute(
            f"SELECT 1 FROM passes WHERE kind = 'exit' AND opened = 1 AND rowid > "
            f"(SELECT rowid FROM passes WHERE event_id = ?) AND ({where}) LIMIT 1",
            (entry["event_id"], *[value for _, value in keys])).fetchone()
        return row is not None

    def record_sync(self, results: list[dict[str, Any]], expected_seq: int) -> None:
        with self.write() as db:
            for item in results:
                if item["status"] == "held":
                    continue
                result = item.get("result")
                ticket_id = result.get("ticket_id") if isinstance(result, dict) else None
                db.execute(
                    "UPDATE passes SET sync_status = ?, answer = ?, conflict = ?, "
                    "ticket_id = COALESCE(ticket_id, ?) WHERE seq = ? AND event_id = ?",
                    (item["status"], json.dumps(result) if result is not None else None,
                     json.dumps(item["conflict"]) if item.get("conflict") else None, ticket_id,
                     item["seq"], item["event_id"]))
            self.put(db, "expected_seq", expected_seq)

    # ----------------------------------------------------------------- cache
    def replace_cache(self, config: dict[str, Any], fetched_at: str, valid_until: str) -> None:
        """``config`` as GET .../config answers it; the cache is trusted from ``fetched_at`` until
        ``valid_until``; the lot's key and policy are kept until the next refresh replaces them."""
        policy = config.get("policy") or {}
        with self.write() as db:
            for key in ("public_key", "kid"):
                if config.get(key):
                    self.put(db, key, config[key])
            if config.get("public_key"):
                # every key passes are accepted under (a rotation lists two); none: the one above
                self.put(db, "keys", list(config.get("keys") or ()))
            self.put(db, "policy", {
                "offline_tickets": bool(policy.get("allow_offline_temporary_tickets", False)),
                "early_entry_minutes": int(config.get("early_entry_minutes", 15)),
            })
            self.put(db, "config_fetched_at", fetched_at)
            self.put(db, "cache_valid_until", valid_until)
            # without the backend's word, reservations are trusted no longer than subscriptions
            self.put(db, "reservations_valid_until", config.get("reservations_valid_until") or valid_until)
            db.execute("DELETE FROM subscriptions")
            seal, tag = self.sealer.seal, self.sealer.tag
            db.executemany("INSERT OR REPLACE INTO subscriptions VALUES (?, ?, ?, ?)",
                           [(tag(s["plate"]), seal("plate", s["plate"]), s["valid_from"], s["valid_to"])
                            for s in config.get("subscriptions", [])])
            db.execute("DELETE FROM reservations")
            db.executemany("INSERT OR REPLACE INTO reservations VALUES (?, ?, ?, ?, ?, ?)",
                           [(r["booking_id"], tag(r["plate"]), seal("plate", r["plate"]), r.get("space_id"), r["from"],
                             r["to"]) for r in config.get("reservations", [])])

    def subscription(self, plate: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT * FROM subscriptions WHERE plate_tag = ?", (self.sealer.tag(plate),)).fetchone()
        return self._opened(row) if row else None

    def cached_reservations(self, plate: str) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT * FROM reservations WHERE plate_tag = ? ORDER BY valid_from",
                               (self.sealer.tag(plate),))
        return [self._opened(row) for row in rows]

    # --------------------------------------------------------------- sealing
    def _sealed(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record as stored: plate and token sealed, the plate's keyed hash beside it."""
        out = dict(record)
        if "plate" in out:
            out["plate_tag"] = self.sealer.tag(out["plate"])
            out["plate"] = self.sealer.seal("plate", out["plate"])
        if "token" in out:
            out["token"] = self.sealer.seal("token", out["token"])
        return out

    def _opened(self, row: sqlite3.Row) -> dict[str, Any]:
        out = dict(row)
        out.pop("plate_tag", None)
        for column in ("plate", "token"):
            if column in out:
                out[column] = self.sealer.open(column, out[column])
        return out
