"""The organizers every local stack starts with, and their fixed keys (local development only).

`make run`, the HTTP suites and the browser tests sign organizer routes in with these keys: the
first organizer owns what the demo creates, the second owns nothing, so any page or test can show
that one organizer never sees or changes the other's objects. They are written through the same
service the platform route uses (keys stored as their keyed hash, never as they are), with the
keys imported instead of made.
"""
from __future__ import annotations

from typing import Any

#: The platform's key on a local stack (devstack/aws/stack.py puts it in the provider secret).
PLATFORM_KEY = "local-platform-key"
#: The secret under which a local stack hashes organizers' keys (not a secret: local only).
KEY_HASH_KEY = "local-api-key-hash-key-not-secret"
#: (organizer_id, name, key): the demo organizer first.
LOCAL_ORGANIZERS = (
    ("org-demo", "Demo organizer", "local-organizer-key"),
    ("org-second", "Second organizer", "local-organizer-key-2"),
)


def seed(table_name: str, client: Any, hash_key: str = KEY_HASH_KEY,
         organizers: tuple[tuple[str, str, str], ...] = LOCAL_ORGANIZERS) -> None:
    """Create each organizer with its key; one already there is left as it is (a restart)."""
    from holdfast.adapters.organizers_store import OrganizerStore
    from holdfast.clock import system_clock
    from holdfast.domain.errors import Conflict
    from holdfast.services.organizers import OrganizerService

    service = OrganizerService(OrganizerStore(table_name, client), system_clock, hash_key.encode)
    for organizer_id, name, key in organizers:
        try:
            service.create(name, api_key=key, organizer_id=organizer_id)
        except Conflict:
            pass
