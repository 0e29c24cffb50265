"""Events' door store part (products/events/adapters/doors_store.py), reached through the table's
store as the door services reach it, held to the fake (tests/support/fake_doors.py) on every
backend: doors put once and retired once, a ticket checked in once, a door's pass recorded once
with its answer, and check-in cases listed while open, oldest first, and resolved once. Every
member of ``FakeDoorItems`` is called here."""
from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from holdfast.ports import Change, StaleBooking

from .bookings import AT

LATER = "2030-01-01T12:30:00.000Z"


def commit(store, *items) -> None:
    store.commit(Change(items=tuple(items)))


def refused(store, *items) -> str:
    """The labels a change of ``items`` alone was refused with (it must be refused)."""
    with pytest.raises(StaleBooking) as failed:
        commit(store, *items)
    return str(failed.value)


def door(ids, name: str, label: str = "Main") -> dict:
    return {"door_id": ids(name), "name": label, "key_sha256": "a" * 64, "created_at": AT}


def test_a_door_is_put_once_read_whole_and_listed_without_keys(backend, ids):
    store, event = backend.store, ids("event")
    main, side = door(ids, "main"), door(ids, "side", "Side")
    assert store.get_door(event, main["door_id"]) is None and store.list_doors(event) == []
    store.put_door(event, main)
    assert store.get_door(event, main["door_id"]) == {"pk": f"DOORS#{event}", "sk": f"DOOR#{main['door_id']}", **main}
    with pytest.raises(ClientError) as again:
        store.put_door(event, {**main, "name": "Other"})
    assert again.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert store.get_door(event, main["door_id"])["name"] == "Main"
    store.put_door(event, side)
    store.put_door(ids("other-event"), door(ids, "elsewhere"))
    assert sorted(store.list_doors(event), key=lambda d: d["name"]) == [main, side]


def test_a_door_is_retired_once_and_a_missing_one_is_not_made(backend, ids):
    store, event = backend.store, ids("event")
    main = door(ids, "main")
    store.put_door(event, main)
    store.retire_door(event, main["door_id"], AT)
    store.retire_door(event, main["door_id"], LATER)                 # a repeat keeps the first time
    assert store.get_door(event, main["door_id"])["deleted_at"] == AT
    assert store.list_doors(event) == [{**main, "deleted_at": AT}]   # a retired door is still listed
    store.retire_door(event, ids("no-door"), AT)
    assert store.get_door(event, ids("no-door")) is None              # nothing made


def test_a_ticket_is_checked_in_once_and_read_without_keys(backend, ids):
    store, event = backend.store, ids("event")
    first = {"ticket_id": ids("t1"), "booking_id": ids("b"), "door_id": ids("main"), "checked_in_at": AT,
             "pass_id": "p-1", "mode": "online"}
    assert store.get_checkin(event, first["ticket_id"]) is None
    commit(store, store.checkin_put(event, first))
    assert store.get_checkin(event, first["ticket_id"]) == first
    assert refused(store, store.checkin_put(event, {**first, "door_id": ids("side")})) == "checkin"
    assert store.get_checkin(event, first["ticket_id"]) == first      # the first check-in stands
    second = {**first, "ticket_id": ids("t2"), "pass_id": "p-2"}
    commit(store, store.checkin_put(event, second))
    commit(store, store.checkin_put(ids("other-event"), {**first, "ticket_id": ids("t3")}))
    assert sorted(store.event_checkins(event), key=lambda c: c["pass_id"]) == [first, second]


def test_a_doors_pass_is_recorded_once_with_its_answer_mode_and_body(backend, ids):
    store, event, main = backend.store, ids("event"), ids("main")
    answer = {"admitted": True, "ticket_id": "T1", "reason": None}
    body = {"token": "ab12"}
    assert store.get_door_pass(event, main, "p-1") is None
    commit(store, store.door_pass_put(event, main, "p-1", answer, AT, offline=False, body=body))
    assert store.get_door_pass(event, main, "p-1") == {"answer": answer, "mode": "online", "body": body}
    again = store.door_pass_put(event, main, "p-1", {**answer, "admitted": False}, LATER, offline=True, body=body)
    assert refused(store, again) == "pass"
    assert store.get_door_pass(event, main, "p-1") == {"answer": answer, "mode": "online", "body": body}
    commit(store, store.door_pass_put(event, main, "p-2", answer, AT, offline=True, body={"token": "cd34"}))
    assert store.get_door_pass(event, main, "p-2")["mode"] == "offline"
    assert store.get_door_pass(event, ids("side"), "p-1") is None     # a pass id is the door's own


def test_checkin_cases_are_listed_while_open_oldest_first_and_resolved_once(backend, ids):
    store, event = backend.store, ids("event")
    cases = [{"case_id": ids(name), "case_type": "checkin", "event_id": event, "reason": "double_checkin",
              "status": "OPEN", "opened_at": opened, "door_id": ids("main"), "pass_id": f"p-{name}",
              "journal": [{"at": opened, "actor": "door_sync", "action": "checkin_case_opened",
                           "decision": "double_checkin"}]}
             for name, opened in (("late", "2030-01-01T12:05:00.000Z"), ("early", "2030-01-01T12:00:00.000Z"),
                                  ("middle", "2030-01-01T12:01:00.000Z"))]
    for case in cases:
        commit(store, store.checkin_case_put(case))
    mine = {case["case_id"] for case in cases}

    def open_ones():
        return [c for c in store.list_checkin_cases() if c["case_id"] in mine]

    assert [c["case_id"] for c in open_ones()] == [ids("early"), ids("middle"), ids("late")]
    assert open_ones()[0] == cases[1]                                      # no keys, as written
    assert store.get_checkin_case(ids("late")) == cases[0]
    entry = {"at": AT, "actor": "ops", "action": "checkin_case_resolved", "decision": "admitted"}
    resolution = {"resolution": "admitted", "operator": "ops", "note": "seen at the door", "at": AT}
    assert store.checkin_case_resolve(ids("middle"), resolution, entry) is True
    done = store.get_checkin_case(ids("middle"))
    assert (done["status"], done["resolution"]) == ("RESOLVED", resolution)
    assert done["journal"] == [*cases[2]["journal"], entry]
    assert [c["case_id"] for c in open_ones()] == [ids("early"), ids("late")]
    assert store.checkin_case_resolve(ids("middle"), {**resolution, "operator": "bob"}, entry) is False
    assert store.get_checkin_case(ids("middle")) == done
    assert store.checkin_case_resolve(ids("nothing"), resolution, entry) is False
    assert store.get_checkin_case(ids("nothing")) is None                 # nothing made
    assert refused(store, store.checkin_case_put({**cases[0], "reason": "other"})) == "case"
