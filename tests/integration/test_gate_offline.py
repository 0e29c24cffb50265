"""The gate controller program against the whole local system, through a partition.

The controller reaches the API only through a relay the test cuts (tests/support/gate_stub.py).
Cut off, it admits a paid reservation by its signed token and a subscriber by the cached list,
and gives two unknown cars local tickets; meanwhile a second gate, online, lets a drive-up take a
space. When the relay heals, the first sync loses its middle pass and its answer; the second
sync repeats the first two passes (duplicates), fills the gap and reports a conflict: the last
offline car came in when the lot had no space left for it, a case an operator finds in /admin/reviews
and closes.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from gate_controller.backend import Backend, Unreachable
from gate_controller.controller import Gate
from gate_controller.journal import Journal
from holdfast.clock import system_clock
from tests.support.flows import customer
from tests.support.gate_stub import GateProxy
from tests.support.stack_time import current_half_hour

pytestmark = pytest.mark.integration


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def created(answer, status: int = 201) -> dict:
    assert answer.status_code == status, answer.text
    return answer.json()


def make_lot(api) -> dict:
    spaces = [{"space_id": s, "type": t, "zone": "A", "priority": p}
              for s, t, p in (("R1", "REGULAR", 1), ("R2", "REGULAR", 2), ("R3", "REGULAR", 3), ("L1", "LARGE", 1))]
    body = {"name": "Offline gate lot", "timezone": "UTC", "spaces": spaces,
            "tariff": {"hourly": {"value": "150.00", "currency": "RUB"}, "daily_cap": {"value": "1200.00", "currency": "RUB"}, "grace_minutes": 10},
            "hold_ttl_seconds": 600, "no_show_grace_seconds": 3600, "early_entry_minutes": 60,
            "allow_offline_temporary_tickets": True}
    return created(api.request("POST", "/lots", organizer=True, key=customer(), json=body))


def paid_reservation(api, sandbox, lot_id: str, plate: str) -> dict:
    """A reservation from the current half hour on the stack's clock, with minutes to spare before
    the next one (a window whose start is already a half hour back is refused as begun)."""
    start = current_half_hour()
    who = customer()
    booking = created(api.request("POST", f"/lots/{lot_id}/reservations", customer=who, key=customer(), json={
        "vehicle_type": "REGULAR", "plate": plate, "from": iso(start), "to": iso(start + timedelta(hours=2))}))
    payment = created(api.pay(booking["booking_id"], who))
    sandbox.pay(payment["payment_id"])
    return api.wait_for(booking["booking_id"], who, lambda b: b["status"] == "CONFIRMED" and b.get("entry_token"),
                        what="a confirmed reservation with its entry token") | {"customer": who}


def test_gate_controller_through_a_partition_on_the_local_stack(api, sandbox, tmp_path):
    lot = make_lot(api)
    lot_id = lot["lot_id"]
    north = created(api.request("POST", f"/lots/{lot_id}/gates", organizer=True, json={"name": "North"}))
    south = created(api.request("POST", f"/lots/{lot_id}/gates", organizer=True, json={"name": "South"}))
    day = timedelta(days=1)
    created(api.request("POST", f"/lots/{lot_id}/subscriptions", organizer=True, json={
        "plate": "S100SS", "valid_from": iso(system_clock() - day),
        "valid_to": iso(system_clock() + day)}))
    reservation = paid_reservation(api, sandbox, lot_id, "A001AA")
    assert reservation["space_id"] == "R1"

    proxy = GateProxy(api.base)
    proxy.start()
    journal = Journal(str(tmp_path / "north.sqlite3"))
    # the gate program on the stack's clock too, as the engine it talks to
    gate = Gate(journal, Backend(proxy.url, lot_id, north["gate_id"], north["gate_key"], timeout=5), lot_id,
                north["gate_id"], clock=system_clock)
    try:
        assert gate.refresh()["subscriptions"] == 1
        proxy.stop()                                                   # the partition

        admitted = [gate.entry(token=reservation["entry_token"]), gate.entry(plate="S100SS"),
                    gate.entry(plate="X555XX"), gate.entry(plate="Y666YY")]
        assert [(o["open"], o["mode"], o["seq"]) for o in admitted] == [(True, "offline", n) for n in (1, 2, 3, 4)]
        assert [o["basis"] for o in admitted] == ["token", "subscription", "local_ticket", "local_ticket"]
        assert gate.entry(token=reservation["entry_token"])["reason"] == "token_already_used"

        # the other gate is online: a drive-up takes R2 while the north gate's cars are unknown upstairs
        drive_up = api.request("POST", f"/lots/{lot_id}/gates/{south['gate_id']}/entry",
                               headers={"X-Gate-Key": south["gate_key"]}, json={"event_id": "south-1", "plate": "D777DD"})
        assert created(drive_up, 200)["space_id"] == "R2"

        proxy.start()
        proxy.drop, proxy.lose_next_answer = {3}, True                 # a lost middle, then a lost answer
        with pytest.raises(Unreachable):
            gate.sync()
        summary = gate.sync()
    finally:
        proxy.stop()

    assert proxy.synced == [[1, 2, 4], [1, 2, 3, 4]]
    first, second = proxy.sync_answers
    assert first["expected_seq"] == 3 and [r["status"] for r in first["results"]] == ["applied", "applied", "held"]
    assert [(r["seq"], r["status"]) for r in second["results"]] == [(1, "duplicate"), (2, "duplicate"), (3, "applied"),
                                                                  (4, "applied")]
    assert [r["result"] for r in second["results"][:2]] == [r["result"] for r in first["results"][:2]]
    assert summary["expected_seq"] == 5 and summary["unsent"] == 0

    token_pass, subscriber, car_x, car_y = (r["result"] for r in second["results"])
    assert (token_pass["gate_open"], token_pass["space_id"]) == (True, "R1")
    assert (subscriber["gate_open"], subscriber["space_id"]) == (True, "R3")
    assert (car_x["gate_open"], car_x["space_id"]) == (True, "L1")   # in order: X before Y took the last space
    # no space was left for Y, then or now: the pass code refuses it and, the car being inside,
    # opens a case for an operator, named in the sync answer and listed with the reviews
    assert (car_y["gate_open"], car_y["reason"]) == (False, "lot_full")
    assert [c["seq"] for c in summary["conflicts"]] == [4]
    conflict = summary["conflicts"][0]["conflict"]
    assert conflict == car_y["conflict"] and (conflict["resolution"], conflict["needs_review"]) == ("review", True)
    cases = created(api.request("GET", "/admin/reviews", organizer=True), 200)["gate_cases"]
    mine = [c for c in cases if c["case_id"] == conflict["case_id"]]
    assert [(c["lot_id"], c["gate_id"], c["plate"], c["reason"]) for c in mine] == \
        [(lot_id, north["gate_id"], "Y666YY", "lot_full")]
    assert gate.status()["conflicts"][0]["seq"] == 4
    # an operator deals with the car at the lot and closes the case, once
    resolve = f"/admin/gate-cases/{conflict['case_id']}/resolve"
    decision = {"resolution": "charged_on_site", "operator": "olga", "note": "Y666YY paid the attendant"}
    closed = created(api.request("POST", resolve, organizer=True, json=decision), 200)
    assert (closed["status"], closed["journal"][-1]["action"]) == ("RESOLVED", "gate_case_resolved")
    assert created(api.request("POST", resolve, organizer=True, json=decision), 200) == closed
    other = api.request("POST", resolve, organizer=True, json={**decision, "resolution": "dismissed"})
    assert (other.status_code, other.json()["error"]["code"]) == (409, "case_already_resolved")
    cases = created(api.request("GET", "/admin/reviews", organizer=True), 200)["gate_cases"]
    assert conflict["case_id"] not in [c["case_id"] for c in cases]

    assert api.booking(reservation["booking_id"], reservation["customer"])["status"] == "CHECKED_IN"
    counts = created(api.request("GET", f"/lots/{lot_id}"), 200)["counts"]
    assert counts["REGULAR"]["occupied"] == 3 and counts["LARGE"]["occupied"] == 1
    journal.close()
