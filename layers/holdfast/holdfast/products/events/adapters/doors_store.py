"""Doors, check-ins, door passes and check-in cases of events, on the shared table.

  DOORS#<event>                   DOOR#<door>        a door: name, sha256 of its key, organizer;
                                                     deleted_at once deleted (its key then answers 401)
  CHECKINS#<event>                T#<ticket>         a ticket checked in: when, at which door, by which
                                                     pass, online or not; put once (the guard: a ticket
                                                     is admitted by the one write that creates it)
  DOORPASS#<event>#<door>#<id>    scan               a door's scan applied, with the answer given
                                                     (adapters/checkin_passes.py)
  DOORSYNC#<event>#<door>         CURSOR | HELD#n | DONE#n   the door's numbered offline scans
                                                     (adapters/checkin_sync_store.py)
  CHECKINCASE#<case>              META               a check-in case (adapters/checkin_cases_store.py)

An event's check-ins are one partition: ``GET /events/{id}/checkins`` is one query. At 300 scans
a second (one door's bench) that is well under a partition's 1,000 writes a second.
"""
from __future__ import annotations

from typing import Any

from holdfast.adapters.booking_items import booking_from_item
from holdfast.adapters.checkin_cases_store import (case_get, case_opened_put, case_put, case_resolve, offering_owner,
                                                    open_cases)
from holdfast.adapters.checkin_passes import pass_item, pass_of, read_pass
from holdfast.adapters.checkin_sync_store import SequenceStore
from holdfast.adapters.codec import Table, _attrs, put_new
from holdfast.domain.booking import Booking
from holdfast.ports import Labelled

CASES = "CHECKINCASE"
_KEYS = ("pk", "sk")


def _booking_and_checkin(booking: dict[str, Any] | None, checkin: dict[str, Any] | None
                         ) -> tuple[Booking | None, dict[str, Any] | None]:
    return (booking_from_item(booking) if booking else None,
            {k: v for k, v in checkin.items() if k not in _KEYS} if checkin else None)


def _door_pass_pk(event_id: str, door_id: str, pass_id: str) -> str:
    return f"DOORPASS#{event_id}#{door_id}#{pass_id}"


class DoorSyncStore(SequenceStore):
    PREFIX = "DOORSYNC"


class DynamoDoorStore(Table):
    # ------------------------------------------------------------------------------- doors
    def put_door(self, event_id: str, door: dict[str, Any]) -> None:
        self.client.put_item(**put_new(self.table, {"pk": f"DOORS#{event_id}", "sk": f"DOOR#{door['door_id']}",
                                                    **door})["Put"])

    def get_door(self, event_id: str, door_id: str) -> dict[str, Any] | None:
        return self._get(f"DOORS#{event_id}", f"DOOR#{door_id}")

    def get_door_pass_and_ticket(self, event_id: str, door_id: str, pass_id: str, ticket: tuple[str, str] | None
                                 ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, Booking | None,
                                            dict[str, Any] | None]:
        """The door (as ``get_door``), its pass ``pass_id``'s record (as ``get_door_pass``) and, for
        ``ticket`` (booking id, ticket id), the booking and the ticket's check-in (as
        ``get_booking_and_checkin``), in one ``BatchGetItem``: an online scan needs them all."""
        keys = [(f"DOORS#{event_id}", f"DOOR#{door_id}"), (_door_pass_pk(event_id, door_id, pass_id), "scan")]
        if ticket is not None:
            keys += [(f"BOOKING#{ticket[0]}", "META"), (f"CHECKINS#{event_id}", f"T#{ticket[1]}")]
        found = self._batch_get([{"pk": pk, "sk": sk} for pk, sk in keys])
        door, done = found.get(keys[0]), pass_of(found.get(keys[1]))
        if ticket is None:
            return door, done, None, None
        return (door, done, *_booking_and_checkin(found.get(keys[2]), found.get(keys[3])))

    def list_doors(self, event_id: str) -> list[dict[str, Any]]:
        return [{k: v for k, v in door.items() if k not in _KEYS}
                for door in self._query_prefix(f"DOORS#{event_id}", "DOOR#")]

    def retire_door(self, event_id: str, door_id: str, at: str, revoked_after_seq: int) -> None:
        """Mark the door deleted, once (a repeat keeps the first time), with the last sequence number
        its sync had recorded then."""
        try:
            self.client.update_item(
                TableName=self.table, Key=_attrs({"pk": f"DOORS#{event_id}", "sk": f"DOOR#{door_id}"}),
                UpdateExpression="SET deleted_at = :at, revoked_after_seq = :seq",
                ConditionExpression="attribute_exists(pk) AND attribute_not_exists(deleted_at)",
                ExpressionAttributeValues=_attrs({":at": at, ":seq": revoked_after_seq}))
        except self.client.exceptions.ConditionalCheckFailedException:
            pass

    # ---------------------------------------------------------------------------- check-ins
    def checkin_put(self, event_id: str, checkin: dict[str, Any]) -> Labelled:
        """A ticket's check-in, new: a ticket already checked in fails the transaction (``checkin``)."""
        return ("checkin", put_new(self.table, {"pk": f"CHECKINS#{event_id}", "sk": f"T#{checkin['ticket_id']}",
                                                **checkin}))

    def get_checkin(self, event_id: str, ticket_id: str) -> dict[str, Any] | None:
        found = self._get(f"CHECKINS#{event_id}", f"T#{ticket_id}")
        return {k: v for k, v in found.items() if k not in _KEYS} if found else None

    def get_booking_and_checkin(self, booking_id: str, event_id: str, ticket_id: str
                                ) -> tuple[Booking | None, dict[str, Any] | None]:
        """The booking a ticket names and the ticket's check-in (as ``get_booking`` and
        ``get_checkin``), in one ``BatchGetItem``: both keys are in the ticket."""
        booking_key, checkin_key = (f"BOOKING#{booking_id}", "META"), (f"CHECKINS#{event_id}", f"T#{ticket_id}")
        found = self._batch_get([{"pk": pk, "sk": sk} for pk, sk in (booking_key, checkin_key)])
        return _booking_and_checkin(found.get(booking_key), found.get(checkin_key))

    def event_checkins(self, event_id: str) -> list[dict[str, Any]]:
        return [{k: v for k, v in item.items() if k not in _KEYS}
                for item in self._query_prefix(f"CHECKINS#{event_id}", "T#")]

    # ------------------------------------------------------------------------------ passes
    def get_door_pass(self, event_id: str, door_id: str, pass_id: str) -> dict[str, Any] | None:
        return read_pass(self, _door_pass_pk(event_id, door_id, pass_id), "scan")

    def door_pass_put(self, event_id: str, door_id: str, pass_id: str, answer: dict[str, Any], at: str, *,
                      offline: bool, body: dict[str, str]) -> Labelled:
        return ("pass", put_new(self.table, pass_item(_door_pass_pk(event_id, door_id, pass_id), "scan", "door_id",
                                                      door_id, answer, at, offline=offline, body=body)))

    # ------------------------------------------------------------------------------- cases
    def checkin_case_put(self, case: dict[str, Any]) -> Labelled:
        return case_put(self, CASES, case, offering_owner(self, case["event_id"]))

    def checkin_case_items(self, case: dict[str, Any]) -> list[Labelled]:
        """The case and its ``case.opened`` outbox item (the organizer's webhooks hear of it)."""
        return [self.checkin_case_put(case),
                case_opened_put(self, CASES, case, "event_id", ("door_id", "ticket_id"))]

    def get_checkin_case(self, case_id: str) -> dict[str, Any] | None:
        return case_get(self, CASES, case_id)

    def checkin_case_resolve(self, case_id: str, resolution: dict[str, Any], entry: dict[str, Any]) -> bool:
        return case_resolve(self, CASES, case_id, resolution, entry)

    def list_checkin_cases(self, organizer_id: str | None, limit: int, cursor: str | None
                           ) -> tuple[list[dict[str, Any]], str | None]:
        return open_cases(self, CASES, organizer_id, limit, cursor)

    #: the calls the table's store answers through this part (adapters/dynamo.py binds each)
    STORE_CALLS = (put_door, get_door, get_door_pass_and_ticket, list_doors, retire_door, checkin_put,
                   get_checkin, get_booking_and_checkin, event_checkins, get_door_pass, door_pass_put,
                   checkin_case_put, checkin_case_items, get_checkin_case, checkin_case_resolve,
                   list_checkin_cases)
