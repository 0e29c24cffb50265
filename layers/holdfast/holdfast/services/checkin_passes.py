"""One pass of a check-in device answered once: the device numbers its passes (``event_id``), the
backend records each pass's answer with what it changed, and a repeat of the id gets that answer
back. A repeat must name what it let through as the first sending did (digests of the fields
both carry): the same id naming something else is refused, never answered with the stored answer.

An offline pass is applied at the time the device recorded, so a device whose clock runs ahead (or a
forged sync) could date what it let through into the future: past a tolerance such a pass is
refused for good (``pass_time_in_future``), whatever the product."""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any, Callable

from ..clock import iso
from ..domain.errors import Conflict

#: How far ahead of the backend's clock an offline pass may be dated unless configured
#: (GATE_CLOCK_SKEW_SECONDS, the template's GateClockSkewSeconds).
DEFAULT_MAX_CLOCK_SKEW_SECONDS = 120


class PassIdReused(Conflict):
    """The same device sent an event_id again naming something else (its passes are numbered wrong)."""

    def __init__(self, event_id: str, named: str = "vehicle", device: str = "gate") -> None:
        super().__init__(f"This pass id was used for another {named} at this {device}; give each pass its own "
                         "event_id.", code="pass_id_reused", event_id=event_id)


def naming(event: dict[str, Any], fields: tuple[str, ...],
           normalise: Callable[[str, str], str] = lambda name, raw: raw) -> dict[str, str]:
    """How a pass names what it let through, as digests (a token is a credential and is not stored)."""
    return {name: hashlib.sha256(normalise(name, str(event[name])).encode()).hexdigest()[:16]
            for name in fields if event.get(name)}


def names_another(stored: dict[str, str] | None, sent: dict[str, str]) -> bool:
    """A repeat may carry more than the first sending (a device's queued copy adds what it knows),
    so it names another where both name it and differ; and where they share no way of naming it,
    nothing says it is the same: it is not taken for one."""
    if stored is None:
        return False
    shared = stored.keys() & sent.keys()
    return not shared or any(stored[name] != sent[name] for name in shared)


def dated_ahead(at: datetime, now: datetime, max_skew: timedelta) -> dict[str, Any] | None:
    """The answer refusing an offline pass dated more than ``max_skew`` after ``now``, or None. The
    device already let the holder through, so the product records it with a case for an operator;
    the answer is an error, so the sync reports the pass ``failed`` and the sequence moves on."""
    if at <= now + max_skew:
        return None
    return {"error": {"code": "pass_time_in_future",
                      "message": "The pass is dated ahead of the server's clock; check the device's clock.",
                      "details": {"at": iso(at), "server_time": iso(now),
                                  "max_skew_seconds": int(max_skew.total_seconds())}}}
