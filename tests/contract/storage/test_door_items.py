"""Events' door store part (products/events/adapters/doors_store.py), reached through the table's
store as the door services reach it, held to the fake (tests/support/fake_doors.py) on every
backend: doors put once and retired once, a ticket checked in once, a door's pass recorded once
with its answer, and check-in cases listed while open, oldest first, and resolved once. Every
member of ``FakeDoorItems`` is called here."""
from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from .bookings import AT, booking, counted, new_hold, offering
from .cases import check_cases, commit, refused

LATER = "2030-01-01T12:30:00.000Z"


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
    store.retire_door(event, main["door_id"], AT, 7)
    store.retire_door(event, main["door_id"], LATER, 9)              # a repeat keeps the first time
    retired = store.get_door(event, main["door_id"])
    assert (retired["deleted_at"], retired["revoked_after_seq"]) == (AT, 7)
    assert store.list_doors(event) == [{**main, "deleted_at": AT, "revoked_after_seq": 7}]   # still listed
    store.retire_door(event, ids("no-door"), AT, 1)
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


def test_a_scan_reads_the_door_with_its_pass_and_the_booking_with_its_checkin_as_one_read_each(backend, ids):
    store, event, main = backend.store, ids("event"), door(ids, "main")
    assert store.get_door_pass_and_ticket(event, main["door_id"], "p-1", None) == (None,) * 4
    store.put_door(event, main)
    answer = {"admitted": True, "ticket_id": "T1"}
    the_door = store.get_door(event, main["door_id"])
    assert store.get_door_pass_and_ticket(event, main["door_id"], "p-1", None) == (the_door, None, None, None)
    commit(store, store.door_pass_put(event, main["door_id"], "p-1", answer, AT, offline=False, body={"token": "x"}))
    recorded = {"answer": answer, "mode": "online", "body": {"token": "x"}}
    assert store.get_door_pass_and_ticket(event, main["door_id"], "p-1", None) == (the_door, recorded, None, None)
    assert store.get_door_pass_and_ticket(event, ids("side"), "p-1", None) == (None,) * 4

    offering(store, event, pools=[10])
    held = booking(ids("b"), event, counted(2))
    assert store.get_booking_and_checkin(held.booking_id, event, "T1") == (None, None)
    store.commit(new_hold(held))
    assert store.get_booking_and_checkin(held.booking_id, event, "T1") == (store.get_booking(held.booking_id), None)
    checkin = {"ticket_id": "T1", "booking_id": held.booking_id, "door_id": main["door_id"], "checked_in_at": AT,
               "pass_id": "p-1", "mode": "online"}
    commit(store, store.checkin_put(event, checkin))
    found, first = store.get_booking_and_checkin(held.booking_id, event, "T1")
    assert (found.booking_id, found.version, first) == (held.booking_id, 1, checkin)
    assert store.get_booking_and_checkin(held.booking_id, ids("other-event"), "T1")[1] is None
    door_read, pass_read, booking_read, checkin_read = store.get_door_pass_and_ticket(
        event, main["door_id"], "p-1", (held.booking_id, "T1"))
    assert (door_read, pass_read, booking_read.version, checkin_read) == (the_door, recorded, 1, checkin)
    assert store.get_door_pass_and_ticket(event, main["door_id"], "p-2", (ids("none"), "T9")) == (
        the_door, None, None, None)


def test_checkin_cases_are_listed_while_open_oldest_first_and_resolved_once(backend, ids):
    event = ids("event")

    def case_of(name, opened):
        return {"case_id": ids(name), "case_type": "checkin", "event_id": event, "reason": "double_checkin",
                "status": "OPEN", "opened_at": opened, "door_id": ids("main"), "pass_id": f"p-{name}",
                "journal": [{"at": opened, "actor": "door_sync", "action": "checkin_case_opened",
                             "decision": "double_checkin"}]}

    check_cases(backend, ids, case_of=case_of, put="checkin_case_put", get="get_checkin_case",
                resolve="checkin_case_resolve", listing="list_checkin_cases", resolved_action="checkin_case_resolved")


def test_a_checkin_case_with_what_is_written_with_it_is_put_once(backend, ids):
    """``checkin_case_items``: the case (and, on the table, its ``case.opened`` outbox item) in one
    change; the same case again is refused on its own label and leaves the first as it was."""
    store, event = backend.store, ids("event")
    case = {"case_id": ids("case"), "case_type": "checkin", "event_id": event, "reason": "pass_time_in_future",
            "status": "OPEN", "opened_at": AT, "door_id": ids("main"), "pass_id": "p-1",
            "journal": [{"at": AT, "actor": "door_sync", "action": "checkin_case_opened",
                         "decision": "pass_time_in_future"}]}
    commit(store, *store.checkin_case_items(case))
    assert store.get_checkin_case(case["case_id"])["reason"] == "pass_time_in_future"
    assert "case" in refused(store, *store.checkin_case_items({**case, "reason": "double_checkin"}))
    assert store.get_checkin_case(case["case_id"])["reason"] == "pass_time_in_future"
