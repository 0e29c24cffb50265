"""Issue 32's offline door test, over HTTP on the local stack: two doors (gate_controller's Door)
apart from the backend while 20 tickets are scanned, two of them at both doors; then sync with a
lost middle scan (a gap held) and a lost answer. At the end every ticket is checked in once, and
the two doubles are check-in cases for an operator (both people are inside: nothing undone)."""
from __future__ import annotations

import pytest

from holdfast.clock import system_clock
from gate_controller.backend import DoorBackend, Unreachable
from gate_controller.door import Door
from gate_controller.journal import Journal
from tests.integration.test_doors_flow import make_door, ok, tickets_of
from tests.support.gate_stub import GateProxy

pytestmark = pytest.mark.integration


def test_two_doors_through_a_partition_check_each_ticket_in_once(api, sandbox, tmp_path):
    event = api.create_event(capacity=30)
    tickets = [t for _ in range(4) for t in tickets_of(api, sandbox, event["event_id"], 5)[2]]
    assert len(tickets) == 20
    doors, proxies = {}, {}
    for name in ("east", "west"):
        made = make_door(api, event["event_id"], name)
        proxies[name] = GateProxy(api.base)
        proxies[name].start()
        doors[name] = Door(Journal(str(tmp_path / f"{name}.sqlite3")),
                           DoorBackend(proxies[name].url, event["event_id"], made["door_id"], made["door_key"], timeout=5),
                           event["event_id"], made["door_id"], clock=system_clock)   # the stack's clock
    try:
        assert doors["east"].refresh()["refreshed"] and doors["west"].refresh()["refreshed"]
        for proxy in proxies.values():
            proxy.stop()                                               # the partition

        east = [doors["east"].scan(t["token"]) for t in tickets[:11]]   # 0..10
        west = [doors["west"].scan(t["token"]) for t in tickets[9:]]    # 9..19: tickets 9 and 10 at both
        assert all(o["open"] and o["mode"] == "offline" for o in east + west)
        assert [o["seq"] for o in east] == list(range(1, 12)) and [o["seq"] for o in west] == list(range(1, 12))
        again = doors["east"].scan(tickets[0]["token"])                  # this door knows it let that one in
        assert (again["open"], again["reason"]) == (False, "already_checked_in")
        forged = doors["east"].scan(tickets[1]["token"][:-6] + "AAAAAA")
        assert (forged["open"], forged["reason"]) == (False, "bad_token")

        for proxy in proxies.values():
            proxy.start()
        proxies["east"].drop, proxies["east"].lose_next_answer = {4}, True     # a lost middle, a lost answer
        with pytest.raises(Unreachable):
            doors["east"].sync()
        east_summary = doors["east"].sync()
        west_summary = doors["west"].sync()
    finally:
        for proxy in proxies.values():
            proxy.stop()

    first = proxies["east"].sync_answers[0]
    assert first["expected_seq"] == 4 and [r["status"] for r in first["results"]][3:5] == ["held", "held"]
    assert east_summary["expected_seq"] == 12 and east_summary["unsent"] == 0 and not east_summary["conflicts"]
    assert west_summary["expected_seq"] == 12 and west_summary["unsent"] == 0
    doubles = {c["seq"]: c for c in west_summary["conflicts"]}
    assert sorted(doubles) == [1, 2]                               # the west door's scans of tickets 9 and 10
    assert {c["result"]["reason"] for c in doubles.values()} == {"already_checked_in"}

    seen = ok(api.request("GET", f"/events/{event['event_id']}/checkins", organizer=True))
    assert seen["checked_in"] == 20
    assert {d["name"]: d["checked_in"] for d in seen["doors"]} == {"east": 11, "west": 9}
    reviews = ok(api.request("GET", "/admin/reviews", organizer=True))
    cases = [c for c in reviews["checkin_cases"] if c["event_id"] == event["event_id"]]
    assert sorted(c["ticket_id"] for c in cases) == sorted(t["ticket_id"] for t in tickets[9:11])
    assert {c["reason"] for c in cases} == {"double_checkin"}
