"""The storage events' doors need besides the core's (holdfast/ports.py): doors, check-ins, the
doors' passes and check-in cases. The outcomes these raise are the core's (StaleBooking when a
committed condition failed: a ticket checked in meanwhile, a pass recorded meanwhile)."""
from __future__ import annotations

from typing import Any, Protocol

from holdfast.domain.booking import Booking
from holdfast.ports import BookingReads, BookingSaves, EventBookings, EventReads, Labelled


class CheckinCaseItems(Protocol):
    def checkin_case_put(self, case: dict[str, Any]) -> Labelled: ...

    def checkin_case_items(self, case: dict[str, Any]) -> list[Labelled]:
        """The case and what is written with it (its ``case.opened`` fact)."""

    def get_checkin_case(self, case_id: str) -> dict[str, Any] | None: ...

    def checkin_case_resolve(self, case_id: str, resolution: dict[str, Any], entry: dict[str, Any]) -> bool: ...

    def list_checkin_cases(self, organizer_id: str | None, limit: int, cursor: str | None
                           ) -> tuple[list[dict[str, Any]], str | None]:
        """A page of the organizer's open cases (None: of no organizer) and the next page's cursor;
        ValueError for a cursor this did not give."""


class CheckinCaseStore(CheckinCaseItems, EventReads, Protocol):
    """Check-in cases as operators see them: each case's event tells whose case it is."""


class DoorStore(CheckinCaseItems, BookingSaves, BookingReads, EventBookings, EventReads, Protocol):
    """An event's doors and the scans through them (products/events/services/doors.py)."""

    def put_door(self, event_id: str, door: dict[str, Any]) -> None: ...

    def get_door(self, event_id: str, door_id: str) -> dict[str, Any] | None: ...

    def get_door_pass_and_ticket(self, event_id: str, door_id: str, pass_id: str, ticket: tuple[str, str] | None
                                 ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, Booking | None,
                                            dict[str, Any] | None]: ...

    def list_doors(self, event_id: str) -> list[dict[str, Any]]: ...

    def retire_door(self, event_id: str, door_id: str, at: str, revoked_after_seq: int) -> None: ...

    def checkin_put(self, event_id: str, checkin: dict[str, Any]) -> Labelled: ...

    def get_checkin(self, event_id: str, ticket_id: str) -> dict[str, Any] | None: ...

    def get_booking_and_checkin(self, booking_id: str, event_id: str, ticket_id: str
                                ) -> tuple[Booking | None, dict[str, Any] | None]: ...

    def event_checkins(self, event_id: str) -> list[dict[str, Any]]: ...

    def get_door_pass(self, event_id: str, door_id: str, pass_id: str) -> dict[str, Any] | None: ...

    def door_pass_put(self, event_id: str, door_id: str, pass_id: str, answer: dict[str, Any], at: str, *,
                      offline: bool, body: dict[str, str]) -> Labelled: ...
