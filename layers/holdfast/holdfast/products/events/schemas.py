"""The request models of an event's doors (functions/doors_api): a door, a scan, a door's sync of
the scans it made offline."""
from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from holdfast.schemas import PASS_ID, PassTime, _Strict, distinct_passes, pass_time_text

MAX_SCANS_PER_SYNC = 100
REASON = r"^[a-z_]{1,40}$"


class DoorIn(_Strict):
    name: str = Field(min_length=1, max_length=100)


class ScanIn(_Strict):
    """An online scan: the door's own id of the scan and the ticket's token."""

    event_id: str = Field(pattern=PASS_ID)
    token: str = Field(min_length=1, max_length=2000)


class SyncScanIn(_Strict):
    """A scan the door made while offline, numbered by the door. ``admitted`` false: the door kept
    the holder out by itself (``reason``, say ``ticket_void`` from its configuration)."""

    seq: int = Field(ge=1, le=10**12 - 1)
    event_id: str = Field(pattern=PASS_ID)
    at: PassTime
    token: str = Field(min_length=1, max_length=2000)
    admitted: bool | None = None
    reason: str | None = Field(default=None, pattern=REASON)

    def as_event(self) -> dict[str, Any]:
        """The scan as the applier and the held copy see it (``at`` as ISO text, no empty fields)."""
        return {**self.model_dump(exclude_none=True), "at": pass_time_text(self.at)}


class DoorSyncIn(_Strict):
    events: list[SyncScanIn] = Field(min_length=1, max_length=MAX_SCANS_PER_SYNC)

    @model_validator(mode="after")
    def _distinct(self) -> "DoorSyncIn":
        distinct_passes(self.events)
        return self


class CheckinCaseResolveIn(_Strict):
    """An operator's resolution of a check-in case (POST /admin/checkin-cases/{id}/resolve)."""

    resolution: str = Field(pattern=REASON)
    operator: str = Field(min_length=1, max_length=100)
    note: str = Field(min_length=1, max_length=1000)
