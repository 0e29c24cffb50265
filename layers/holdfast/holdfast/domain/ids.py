"""Ids of what organizers create (events, services, resources, lots).

With an Idempotency-Key the id is derived from it, so a repeated request addresses the object the
first one made; the derivation is keyed with the deployment's own salt (HOLDFAST_ID_SALT, which the
template sets from the stack's id), so two deployments given the same key make different ids. The
salt is no secret (the stack id shows in the public sign-in domain): ids are public names, and the
key is scoped to its organizer, whose id nobody else is shown (docs/deploy.md). Without a key the
id is random.
"""
from __future__ import annotations

import hashlib
import hmac
import uuid


def created_id(salt: str, purpose: str, idempotency_key: str | None) -> str:
    if not idempotency_key:
        return str(uuid.uuid4())
    if not salt:
        raise ValueError("an id derived from an Idempotency-Key needs the deployment's salt")
    digest = hmac.new(salt.encode(), f"{purpose}\0{idempotency_key}".encode(), hashlib.sha256).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))
