"""An in-memory store part for events' doors: what products/events/adapters/doors_store.py's
``DynamoDoorStore`` keeps beside the core's items (doors, check-ins, door passes, check-in cases), over
the ``MemoryTable`` of the fake booking store it is composed into (tests/support/fake_table.py).

Test code only: the deployed package (layers/) never imports this module.
"""
from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from holdfast.adapters.booking_items import booking_from_item
from holdfast.domain.booking import Booking
from holdfast.ports import Labelled
from holdfast.products.events.adapters.doors_store import CASES, _door_pass_pk
from tests.support import fake_checkins as checkins
from tests.support.fakes import _Fake, _set, absent


class FakeDoorItems(_Fake):
    """The members of events' ports (products/events/ports.py) that the adapter's part answers."""

    def put_door(self, event_id: str, door: dict[str, Any]) -> None:
        self.table.check_fault("put_door")
        if not self.table.write((f"DOORS#{event_id}", f"DOOR#{door['door_id']}"), absent, lambda _: dict(door)):
            raise ClientError({"Error": {"Code": "ConditionalCheckFailedException",
                                         "Message": "The conditional request failed"}}, "PutItem")

    def get_door(self, event_id: str, door_id: str) -> dict[str, Any] | None:
        self.table.check_fault("get_door")
        return self.table.get(f"DOORS#{event_id}", f"DOOR#{door_id}")

    def get_door_pass_and_ticket(self, event_id: str, door_id: str, pass_id: str, ticket: tuple[str, str] | None
                                 ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, Booking | None,
                                            dict[str, Any] | None]:
        door, done = self.get_door(event_id, door_id), self.get_door_pass(event_id, door_id, pass_id)
        return (door, done, *(self.get_booking_and_checkin(*ticket[:1], event_id, ticket[1]) if ticket
                              else (None, None)))

    def list_doors(self, event_id: str) -> list[dict[str, Any]]:
        return [checkins.without_keys(door) for door in self.table.query(f"DOORS#{event_id}", prefix="DOOR#")]

    def retire_door(self, event_id: str, door_id: str, at: str, revoked_after_seq: int) -> None:
        self.table.write((f"DOORS#{event_id}", f"DOOR#{door_id}"),
                         lambda item: item is not None and "deleted_at" not in item,
                         _set({"deleted_at": at, "revoked_after_seq": revoked_after_seq}))

    def checkin_put(self, event_id: str, checkin: dict[str, Any]) -> Labelled:
        return checkins.put_new("checkin", {"pk": f"CHECKINS#{event_id}", "sk": f"T#{checkin['ticket_id']}",
                                            **checkin})

    def get_checkin(self, event_id: str, ticket_id: str) -> dict[str, Any] | None:
        found = self.table.get(f"CHECKINS#{event_id}", f"T#{ticket_id}")
        return checkins.without_keys(found) if found else None

    def get_booking_and_checkin(self, booking_id: str, event_id: str, ticket_id: str
                                ) -> tuple[Booking | None, dict[str, Any] | None]:
        self.table.check_fault("get_booking")
        item = self.table.get(f"BOOKING#{booking_id}", "META")
        return (booking_from_item(item) if item else None), self.get_checkin(event_id, ticket_id)

    def event_checkins(self, event_id: str) -> list[dict[str, Any]]:
        return [checkins.without_keys(item) for item in self.table.query(f"CHECKINS#{event_id}", prefix="T#")]

    def get_door_pass(self, event_id: str, door_id: str, pass_id: str) -> dict[str, Any] | None:
        return checkins.read_pass(self.table, _door_pass_pk(event_id, door_id, pass_id), "scan")

    def door_pass_put(self, event_id: str, door_id: str, pass_id: str, answer: dict[str, Any], at: str, *,
                      offline: bool, body: dict[str, str]) -> Labelled:
        return checkins.put_new("pass", checkins.pass_item(_door_pass_pk(event_id, door_id, pass_id), "scan",
                                                           "door_id", door_id, answer, at, offline=offline, body=body))

    def checkin_case_put(self, case: dict[str, Any]) -> Labelled:
        return checkins.case_put(CASES, case, checkins.offering_owner(self.table, case["event_id"]))

    def checkin_case_items(self, case: dict[str, Any]) -> list[Labelled]:
        # the fakes model no stream: the case alone (its outbox item is the real store's, streamed)
        return [self.checkin_case_put(case)]

    def get_checkin_case(self, case_id: str) -> dict[str, Any] | None:
        return checkins.case_get(self.table, CASES, case_id)

    def checkin_case_resolve(self, case_id: str, resolution: dict[str, Any], entry: dict[str, Any]) -> bool:
        return checkins.case_resolve(self.table, CASES, case_id, resolution, entry)

    def list_checkin_cases(self, organizer_id: str | None, limit: int, cursor: str | None
                           ) -> tuple[list[dict[str, Any]], str | None]:
        return checkins.open_cases(self.table, CASES, organizer_id, limit, cursor)
