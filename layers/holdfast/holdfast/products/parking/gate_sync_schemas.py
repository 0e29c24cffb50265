"""The body of ``POST /lots/{lot_id}/gates/{gate_id}/sync``: a batch of a gate's queued passes.

Each pass is what the gate saw and did while it could not reach the backend (or could not hear
its answer): the sequence number the gate gave it, the pass's own event_id, entry or exit, when,
and how the vehicle identified itself (a plate admitted as a cached reservation's also names it).
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from holdfast.schemas import PASS_ID, PassTime, distinct_passes, pass_time_text
from .schemas import ID_PATTERN, PLATE_PATTERN

MAX_EVENTS_PER_SYNC = 100
#: The online gate routes' event id, so a pass keeps its id whichever way it reaches the backend.
EVENT_ID = PASS_ID


TicketId = Annotated[str, Field(pattern=ID_PATTERN)]


class SyncPassIn(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, defer_build=True)

    seq: int = Field(ge=1, le=10**12 - 1)
    event_id: str = Field(pattern=EVENT_ID)
    kind: Literal["entry", "exit"]
    at: PassTime
    token: str | None = Field(default=None, min_length=10, max_length=2000)
    plate: str | None = Field(default=None, pattern=PLATE_PATTERN)
    ticket_id: TicketId | None = None
    local_ticket_id: TicketId | None = None
    #: the reservation (from the gate's configuration) an offline gate let this plate in for
    booking_id: TicketId | None = None
    #: false: the gate kept the barrier shut on this pass without hearing the backend's answer (the
    #: backend may have acted on it); absent: the gate let the car through
    gate_opened: Literal[False] | None = None

    @model_validator(mode="after")
    def _identified(self) -> "SyncPassIn":
        direction = self.kind   # a pass's direction, not an inventory kind
        if direction == "entry" and (self.token is None) == (self.plate is None):
            raise ValueError("an entry carries exactly one of token or plate")
        if self.booking_id is not None and (direction != "entry" or self.plate is None):
            raise ValueError("booking_id goes with an entry by plate")
        if direction == "exit" and not (self.ticket_id or self.local_ticket_id or self.plate):
            raise ValueError("an exit carries ticket_id, local_ticket_id or plate")
        return self

    def as_event(self) -> dict[str, Any]:
        """The pass as the applier and the held copy see it (``at`` as ISO text, no empty fields)."""
        body = self.model_dump(exclude_none=True)
        body["at"] = pass_time_text(self.at)
        return body


class GateSyncIn(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    events: list[SyncPassIn] = Field(min_length=1, max_length=MAX_EVENTS_PER_SYNC)

    @model_validator(mode="after")
    def _distinct(self) -> "GateSyncIn":
        distinct_passes(self.events)
        return self

