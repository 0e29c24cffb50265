"""Check-in cases: what a check-in device (a lot's gate, an event's door) let through that the
backend could not settle by itself, and money a product could not place, left for an operator.

A case is opened in the same transaction as what found it, with an id derived from that (a pass's
event id, a payment's id), so a repeat neither loses nor doubles it. Its type says which
resolutions fit (the product's table). A resolution is journalled on the case (who, when, which,
why) and the case leaves the open list; the same resolution again answers the case as it is,
another one on a resolved case is 409 ``case_already_resolved``.
"""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..clock import iso
from ..domain.errors import Conflict, InvalidRequest, NotFound
from ..domain.organizers import Caller, owned_by
from ..ports import Clock, EventReads
from .listing import page_limit

#: The most open cases one page of ``GET /admin/reviews`` lists of each kind.
PAGE_SIZE = 100
#: A case id is a uuid5; anything else names no case (and never reaches the table as a key).
CASE_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def case_id(namespace: uuid.UUID, scope_id: str, *parts: str) -> str:
    return str(uuid.uuid5(namespace, "/".join((scope_id, "case", *parts))))


def new_case(identity: str, case_type: str, scope: tuple[str, str], reason: str, opened_at: str, actor: str,
             opened_action: str, **known: Any) -> dict[str, Any]:
    """``scope``: the field naming what the case is about and its id (``("lot_id", ...)``)."""
    field, scope_id = scope
    return {"case_id": identity, "case_type": case_type, field: scope_id, "reason": reason, "status": "OPEN",
            "opened_at": opened_at, **{k: v for k, v in known.items() if v is not None},
            "journal": [{"at": opened_at, "actor": actor, "action": opened_action, "decision": reason}]}


def conflict_of(case: dict[str, Any]) -> dict[str, Any]:
    """What a pass's answer (and the sync's) says about the case it opened."""
    return {"type": "refused_after_pass", "reason": case["reason"], "resolution": "review",
            "case_id": case["case_id"], "needs_review": True}


@dataclass(frozen=True)
class CaseKind:
    """How one product's cases are named and kept."""

    #: the case's field naming its scope (``lot_id``, ``event_id``): its organizer owns the case
    scope_field: str
    #: the resolutions each case type allows
    resolutions: dict[str, tuple[str, ...]]
    #: the 404 code of an unknown case, and the journal action of a resolution
    not_found_code: str
    resolved_action: str
    noun: str
    get: Callable[[str], "dict[str, Any] | None"]
    resolve_item: Callable[[str, dict[str, Any], dict[str, Any]], bool]
    #: a page of an organizer's open cases (None: those of no organizer) and the next page's cursor
    listed: Callable[[str | None, int, str | None], "tuple[list[dict[str, Any]], str | None]"]
    shown: Callable[[dict[str, Any]], dict[str, Any]] = lambda case: case


class CaseDesk:
    def __init__(self, store: EventReads, clock: Clock, kind: CaseKind,
                 organizers: Callable[[], Iterable[str]] = tuple) -> None:
        self.store = store
        #: every organizer's id (the engine's whole list reads each one's partition)
        self.organizers = organizers
        self.clock = clock
        self.kind = kind

    def _owned(self, case: dict[str, Any], caller: Caller | None, owners: dict[str, bool]) -> bool:
        if caller is None:
            return True
        scope_id = case[self.kind.scope_field]
        if scope_id not in owners:
            owners[scope_id] = owned_by(self.store.get_event(scope_id), caller)
        return owners[scope_id]

    def open_page(self, caller: Caller, limit: int | str = PAGE_SIZE, cursor: str | None = None) -> dict[str, Any]:
        """One page of the caller's open cases, oldest first, from its own index partition (never
        every organizer's cases filtered), and the cursor of the next (None at the end)."""
        limit = page_limit(limit, PAGE_SIZE, required=True)
        try:
            cases, following = self.kind.listed(caller.organizer_id, limit, cursor)
        except ValueError:
            raise InvalidRequest("cursor is not one this list gave.", code="invalid_cursor") from None
        return {"cases": [self.kind.shown(case) for case in cases], "next_cursor": following}

    def open_cases(self, caller: Caller | None = None) -> list[dict[str, Any]]:
        """Every open case of the caller's (page after page); without a caller (the engine, the
        operators' tool) those of no organizer and of every organizer's."""
        owners = [caller.organizer_id] if caller is not None else \
            [None, *self.organizers()]
        found: list[dict[str, Any]] = []
        for owner in owners:
            cursor: str | None = None
            while True:
                cases, cursor = self.kind.listed(owner, PAGE_SIZE, cursor)
                found += [self.kind.shown(case) for case in cases]
                if cursor is None:
                    break
        return sorted(found, key=lambda case: (case["opened_at"], case["case_id"]))

    def resolve(self, identity: str, resolution: str, operator: str, note: str,
                caller: Caller | None = None) -> dict[str, Any]:
        kind = self.kind
        for _ in range(2):
            case = kind.get(identity) if CASE_ID.fullmatch(identity) else None
            if case is None or not self._owned(case, caller, {}):
                # another organizer's case is answered like one that does not exist
                raise NotFound(f"No {kind.noun} {identity}.", code=kind.not_found_code)
            first_type = next(iter(kind.resolutions))
            if case["status"] != "OPEN":
                decided = (case.get("resolution") or {}).get("resolution")
                if decided == resolution:
                    return kind.shown(case)   # a repeat: the case as it is
                raise Conflict(f"This case was already resolved as {decided}.", code="case_already_resolved",
                               resolution=decided)
            case_type = case.get("case_type", first_type)
            allowed = kind.resolutions[case_type]
            if resolution not in allowed:
                raise InvalidRequest(f"A {case_type} case is resolved as one of {', '.join(allowed)}.",
                                     code="resolution_not_allowed", allowed=list(allowed))
            now = iso(self.clock())
            decision = {"resolution": resolution, "operator": operator, "note": note, "resolved_at": now}
            entry = {"at": now, "actor": "operator", "action": kind.resolved_action,
                     "decision": f"{operator}: {resolution}: {note}"[:500],
                     **({"ids": caller.journal_ids()} if caller else {})}
            if kind.resolve_item(identity, decision, entry):
                return kind.shown(kind.get(identity) or case)
            # resolved meanwhile by someone else: answered as a repeat or a conflict
        raise Conflict("The case changed meanwhile; look again.", code="case_changed")
