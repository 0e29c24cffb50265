"""The audit log's entries: who (an organizer's key, or the platform), what (the route), when, and
on which objects, for every action an organizer or the platform takes on an organizer's things.

An entry is made from what identifies the action, never from what the request carried: the
route, the ids in its path and the ids of what it created. So no body ever reaches the log (a
customer's name in a note, an operator's words), nor any key or secret (a new key, a door's or
gate's key, are never ids), nor a customer's id: the log can be shown to the whole team.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from .organizers import Caller

#: An id, as the engine makes them: nothing else is copied from an answer into the log.
_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,100}$")
#: ids that name a person rather than a thing
_PERSONAL = frozenset({"customer_id"})
PLATFORM = "platform"


def actor_of(who: Caller | str) -> dict[str, Any]:
    if isinstance(who, Caller):
        return {"kind": "key", "key_id": who.key_id, "key_name": who.key_name}
    return {"kind": PLATFORM}


def object_ids(path_parameters: Mapping[str, str] | None, answer: Any) -> dict[str, str]:
    """The ids an action was on: its path's, and the top-level ``*_id`` fields of its answer
    (what it created), a person's id left out."""
    found = {name: value for name, value in (path_parameters or {}).items()
             if isinstance(value, str) and _ID.match(value)}
    if isinstance(answer, dict):
        for name, value in answer.items():
            if name.endswith("_id") and name not in _PERSONAL and isinstance(value, str) and _ID.match(value):
                found.setdefault(name, value)
    return {name: value for name, value in sorted(found.items()) if name not in _PERSONAL}


def entry(entry_id: str, at: str, organizer_id: str, who: Caller | str, action: str,
          objects: Mapping[str, str], status: int) -> dict[str, Any]:
    return {"entry_id": entry_id, "at": at, "organizer_id": organizer_id, "actor": actor_of(who),
            "action": action, "objects": dict(objects), "status": status}
