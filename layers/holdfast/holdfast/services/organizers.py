"""Organizers and their API keys: the platform creates, lists, suspends and resumes organizers;
an organizer reads itself and adds or deletes its own keys; every organizer request is
authenticated here, to a ``Caller``.

A key is shown once, when it is made, and stored only as its keyed hash (HMAC-SHA256 under a
secret of the deployment), so the table alone never yields a usable key and a key cannot be
recovered from its hash without that secret. Keys are random 256-bit strings, so one keyed hash
(no slow hashing) is enough, and it lets a request find its key with one read.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import uuid
from datetime import timedelta
from typing import Any, Callable

from ..clock import iso
from ..domain.errors import Conflict, Forbidden, InvalidRequest, NotFound, Unauthorized
from ..domain.organizers import (ACTIVE, LAST_USED_RESOLUTION_SECONDS, MAX_KEYS_PER_ORGANIZER, SUSPENDED,
                                 Caller, grant)
from ..domain.scopes import KEYS
from ..kinds.products import every_scope
from ..ports import Clock, ItemExists, OrganizerDirectory

KEY_PREFIX = "hk_"
#: What an imported key (an operator's own, e.g. the one used before organizers existed) must be.
_IMPORTED_KEY = re.compile(r"^[\x21-\x7e]{16,256}$")
MAX_NAME_LENGTH = 200


class OrganizerService:
    def __init__(self, store: OrganizerDirectory, clock: Clock, hash_key: Callable[[], bytes]) -> None:
        self.store = store
        self.clock = clock
        self._hash_key = hash_key

    def key_hash(self, api_key: str) -> str:
        return hmac.new(self._hash_key(), api_key.encode(), hashlib.sha256).hexdigest()

    # ------------------------------------------------------------------ authentication
    def authenticate(self, api_key: str | None) -> Caller:
        """The organizer and key behind ``api_key``; 401 (one answer for every reason) when the
        key is missing, unknown, deleted, or its organizer is suspended."""
        if not api_key or len(api_key) > 256:
            raise _unauthorized()
        presented = self.key_hash(api_key)
        owner = self.store.key_owner(presented)
        if owner is None or not hmac.compare_digest(str(owner.get("key_hash", "")), presented):
            raise _unauthorized()
        organizer = self.store.get_organizer(owner["organizer_id"])
        if organizer is None or organizer.get("status") != ACTIVE:
            raise _unauthorized()
        self._note_use(presented, owner.get("last_used_at"))
        return Caller(organizer_id=owner["organizer_id"], key_id=owner["key_id"], key_name=owner.get("name"),
                      scopes=frozenset(owner["scopes"]) if "scopes" in owner else None,
                      offerings=frozenset(owner["offerings"]) if "offerings" in owner else None)

    def _note_use(self, key_hash: str, last_used_at: str | None) -> None:
        now = self.clock()
        since = iso(now - timedelta(seconds=LAST_USED_RESOLUTION_SECONDS))
        if last_used_at is None or last_used_at < since:
            self.store.touch_key(key_hash, iso(now), since)

    # ------------------------------------------------------------------------ platform
    def create(self, name: str, *, api_key: str | None = None, organizer_id: str | None = None) -> dict[str, Any]:
        """A new organizer with one key, shown here only. ``api_key`` imports a key the operator
        already holds instead of making one (the tool that seeds a stack; the HTTP route never
        passes it)."""
        name = _name(name)
        if api_key is not None and not _IMPORTED_KEY.match(api_key):
            raise InvalidRequest("An imported key is 16-256 printable characters.", code="api_key_invalid")
        key = api_key or _new_key()
        organizer_id = organizer_id or str(uuid.uuid4())
        now = iso(self.clock())
        record = {"organizer_id": organizer_id, "name": name, "status": ACTIVE, "created_at": now}
        key_id = _new_key_id()
        try:
            self.store.put_organizer(record, {"key_id": key_id, "key_hash": self.key_hash(key), "created_at": now})
        except ItemExists:
            raise Conflict("That organizer or key exists already.", code="organizer_exists") from None
        return {"organizer_id": organizer_id, "name": name, "api_key": key, "key_id": key_id}

    def list(self) -> list[dict[str, Any]]:
        return [_describe(organizer) for organizer in self.store.list_organizers()]

    def suspend(self, organizer_id: str) -> dict[str, Any]:
        return self._set_status(organizer_id, SUSPENDED)

    def resume(self, organizer_id: str) -> dict[str, Any]:
        return self._set_status(organizer_id, ACTIVE)

    def _set_status(self, organizer_id: str, status: str) -> dict[str, Any]:
        # Setting the status it already has is a repeat: the same answer, nothing else changes.
        current = self.store.get_organizer(organizer_id)
        if current is None:
            raise NotFound(f"No organizer {organizer_id}.", code="organizer_not_found")
        if current.get("status") != status and not self.store.set_organizer_status(organizer_id, status,
                                                                                    iso(self.clock())):
            raise NotFound(f"No organizer {organizer_id}.", code="organizer_not_found")
        return _describe(self.store.get_organizer(organizer_id) or current | {"status": status})

    # -------------------------------------------------------------------- its own keys
    def me(self, caller: Caller) -> dict[str, Any]:
        """The organizer and what the calling key may do; the other keys only to a key holding
        ``keys`` (any key may read this, to learn its own rights)."""
        organizer = self.store.get_organizer(caller.organizer_id)
        if organizer is None:
            raise _unauthorized()
        answer = _describe(organizer) | {"key_id": caller.key_id, "key": _rights(caller)}
        if caller.holds(KEYS):
            answer["keys"] = self.list_keys(caller)
        return answer

    def list_keys(self, caller: Caller) -> list[dict[str, Any]]:
        """The organizer's live keys, oldest first: id, name, scopes, offerings, created and last used."""
        return [_key_view(key) for key in self.store.organizer_keys(caller.organizer_id)]

    def add_key(self, caller: Caller, name: str | None = None, scopes: list[str] | None = None,
                offerings: list[str] | None = None) -> dict[str, Any]:
        """Another key, shown only here. Its scopes are those named (every scope the calling key
        holds when none are), and a key can give only scopes it holds itself; a key limited to
        some offerings gives only those (all of them when none are named)."""
        granted = self._grantable(caller, scopes, offerings)
        key, key_id, now = _new_key(), _new_key_id(), iso(self.clock())
        record = {"key_id": key_id, "key_hash": self.key_hash(key), "created_at": now, "name": name, **granted}
        if not self.store.add_key(caller.organizer_id, record, MAX_KEYS_PER_ORGANIZER):
            raise Conflict(f"An organizer holds at most {MAX_KEYS_PER_ORGANIZER} keys; delete one first.",
                           code="too_many_keys", max_keys=MAX_KEYS_PER_ORGANIZER)
        return {"key_id": key_id, "api_key": key, "created_at": now, **_key_view(grant(record))}

    @staticmethod
    def _grantable(caller: Caller, scopes: list[str] | None, offerings: list[str] | None) -> dict[str, Any]:
        known = every_scope()
        unknown = sorted(set(scopes or ()) - set(known))
        if unknown:
            raise InvalidRequest("Unknown scopes.", code="unknown_scope", scopes=unknown, known=list(known))
        wanted = frozenset(scopes) if scopes is not None else caller.scopes
        lacking = sorted((wanted if wanted is not None else frozenset(known)) - frozenset(
            scope for scope in known if caller.holds(scope)))
        if lacking:
            raise Forbidden("A key can give only the scopes it holds.", code="scope_not_held", scopes=lacking)
        limited = frozenset(offerings) if offerings is not None else caller.offerings
        if caller.offerings is not None and limited is not None and not limited <= caller.offerings:
            raise Forbidden("A key limited to some offerings can give only those.", code="offering_not_held",
                            offerings=sorted(limited - caller.offerings))
        granted: dict[str, Any] = {}
        # A key holding every scope stores no list, so it also holds the scopes added later.
        if wanted is not None and not set(known) <= wanted:
            granted["scopes"] = [scope for scope in known if scope in wanted]
        if limited is not None:
            granted["offerings"] = sorted(limited)
        return granted

    def delete_key(self, caller: Caller, key_id: str) -> None:
        """A key deletes only keys with no more rights than its own (no scope it lacks, no offering
        beyond its own), so a lesser key can never lock its organizer's stronger keys out."""
        target = next((key for key in self.store.organizer_keys(caller.organizer_id) if key["key_id"] == key_id),
                      None)
        if target is not None:
            lacking = [scope for scope in _scopes_of(target) if not caller.holds(scope)]
            if lacking:
                raise Forbidden("A key can delete only keys with no scope it lacks.", code="scope_not_held",
                                scopes=lacking)
            offerings = target.get("offerings")
            if caller.offerings is not None and (offerings is None or not set(offerings) <= caller.offerings):
                raise Forbidden("A key limited to some offerings can delete only keys limited to them.",
                                code="offering_not_held")
        outcome = self.store.delete_key(caller.organizer_id, key_id)
        if outcome == "missing":
            raise NotFound(f"No key {key_id}.", code="key_not_found")
        if outcome == "last":
            raise Conflict("This is the organizer's last key; add another before deleting it.",
                           code="last_key")


def _scopes_of(key: dict[str, Any]) -> list[str]:
    """A stored key's scopes in full (one stored without a list holds every scope)."""
    known = every_scope()
    return [scope for scope in known if "scopes" not in key or scope in key["scopes"]]


def _key_view(key: dict[str, Any]) -> dict[str, Any]:
    """A key as the organizer sees it: never its hash. ``scopes`` listed in full, ``offerings``
    null for every offering."""
    view = {field: key[field] for field in ("key_id", "created_at", "last_used_at") if field in key}
    return view | {"name": key.get("name"), "scopes": _scopes_of(key),
                   "offerings": sorted(key["offerings"]) if key.get("offerings") is not None else None}


def _rights(caller: Caller) -> dict[str, Any]:
    return {"key_id": caller.key_id, "name": caller.key_name,
            "scopes": [scope for scope in every_scope() if caller.holds(scope)],
            "offerings": sorted(caller.offerings) if caller.offerings is not None else None}


def _unauthorized() -> Unauthorized:
    return Unauthorized("An organizer API key (X-Api-Key) is required.")


def _new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def _new_key_id() -> str:
    return "key_" + secrets.token_hex(8)


def _name(name: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > MAX_NAME_LENGTH:
        raise InvalidRequest(f"name is 1-{MAX_NAME_LENGTH} characters.", code="validation_error")
    return name


def _describe(organizer: dict[str, Any]) -> dict[str, Any]:
    return {"organizer_id": organizer["organizer_id"], "name": organizer["name"], "status": organizer["status"],
            "created_at": organizer["created_at"], "key_count": int(organizer.get("key_count") or 0)}
