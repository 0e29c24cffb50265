"""The audit log: every action an organizer's key or the platform takes on an organizer's things,
appended to that organizer's log (domain/audit.py says what an entry holds and leaves out), and
read back by the organizer a page at a time, newest first.

The request router appends the entry once the action has answered with success
(``holdfast.entry.http.make_resolver(audit=...)``), so every organizer route is logged by one rule, not
by each handler. It is a second write after the action's own: should it fail, the action stands,
the failure is logged and counted (metric ``AuditAppendFailed``), and the entry is missing.
"""
from __future__ import annotations

import uuid
from typing import Any, Mapping

from ..clock import iso
from ..domain import audit
from ..domain.organizers import Caller
from ..ports import AuditLog, Clock
from .listing import decode_cursor, encode_cursor, page_limit

PAGE_SIZE = 50


class AuditService:
    def __init__(self, store: AuditLog, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def record(self, who: Caller | str, action: str, path_parameters: Mapping[str, str] | None, answer: Any,
               status: int) -> dict[str, Any] | None:
        """Append the entry of an action that succeeded; None when it concerns no organizer."""
        objects = audit.object_ids(path_parameters, answer)
        organizer_id = who.organizer_id if isinstance(who, Caller) else objects.get("organizer_id")
        if not organizer_id:
            return None
        entry = audit.entry(uuid.uuid4().hex, iso(self.clock()), organizer_id, who, action, objects, status)
        self.store.append(organizer_id, entry)
        return entry

    def page(self, caller: Caller, limit: int | str | None = None, cursor: str | None = None) -> dict[str, Any]:
        size = page_limit(limit, PAGE_SIZE)
        partition = f"AUDIT#{caller.organizer_id}"
        after = decode_cursor(cursor, partition, "", "\uffff")["sk"] if cursor else None
        entries, following = self.store.page(caller.organizer_id, size, after)
        return {"entries": entries, "next_cursor": encode_cursor(partition, following) if following else None}
