"""Organizers: who is calling an organizer route, and which objects are theirs.

An organizer holds one or more API keys; a request names its organizer only through the key it
sends, resolved to a ``Caller`` (the organizer and which of its keys). Every object an organizer
creates (an event, a service, a resource, a lot, a gate, a subscription) records its
``organizer_id``; another organizer's object is answered exactly like one that does not exist,
so ids cannot be probed. Objects written before organizers existed carry no owner and belong to
no organizer (the engine's own jobs still see them).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import Forbidden, NotFound
from .scopes import ANY_KEY

#: How many live keys one organizer may hold: a team's keys, one or two per person or system with
#: the scopes it needs (ten scopes now), and room to rotate each; more is a leak waiting to happen.
MAX_KEYS_PER_ORGANIZER = 30
#: ``last_used_at`` is written at most this often per key: reads stay reads.
LAST_USED_RESOLUTION_SECONDS = 60
ACTIVE, SUSPENDED = "active", "suspended"
#: What a key may do, written once with the key (on its item and on its lookup) and never changed:
#: its name, its scopes (absent: every scope) and the offerings it is limited to (absent: all).
GRANT_FIELDS = ("name", "scopes", "offerings")


def grant(key: dict[str, Any]) -> dict[str, Any]:
    return {field: key[field] for field in GRANT_FIELDS if key.get(field) is not None}


@dataclass(frozen=True)
class Caller:
    """An organizer authenticated by one of its keys (the key itself is never kept)."""

    organizer_id: str
    key_id: str
    #: the key's name, as its organizer gave it (none for a key made before keys had names)
    key_name: str | None = None
    #: the key's scopes; None: every scope (a key made before scopes, or holding them all)
    scopes: frozenset[str] | None = None
    #: the offerings the key is limited to; None: every offering of its organizer
    offerings: frozenset[str] | None = None

    def require(self, scope: str) -> None:
        """403 ``scope_required`` naming the scope, unless the key holds it."""
        if not self.holds(scope):
            raise Forbidden(f"This key lacks the scope {scope}.", code="scope_required", scope=scope)

    def holds(self, scope: str) -> bool:
        return scope == ANY_KEY or self.scopes is None or scope in self.scopes

    def sees_offering(self, offering_id: str | None) -> bool:
        return self.offerings is None or offering_id in self.offerings

    def journal_ids(self) -> dict[str, str]:
        """What a journal entry of this caller's action records about who took it."""
        return {"organizer_id": self.organizer_id, "key_id": self.key_id}

    def scoped(self, idempotency_key: str) -> str:
        """The organizer's Idempotency-Key as the engine derives ids from it: two organizers sending
        the same key name two requests."""
        return f"{self.organizer_id}/{idempotency_key}"


def owned_by(item: dict[str, Any] | None, caller: Caller | None) -> bool:
    """Whether ``caller`` may see ``item``; ``None`` is the engine itself (a job, a tool), which
    sees everything."""
    if item is None or caller is None:
        return item is not None
    # a key limited to some offerings sees only those; anything else (a resource) is not an offering
    return item.get("organizer_id") == caller.organizer_id and caller.sees_offering(item.get("event_id"))


def require_owner(item: dict[str, Any] | None, caller: Caller | None, missing: NotFound) -> dict[str, Any]:
    """The item when the caller may see it. Another organizer's item raises ``missing``, the very
    answer the route gives for an id that does not exist, so no one learns which ids are taken."""
    if not owned_by(item, caller):
        raise missing
    assert item is not None
    return item
