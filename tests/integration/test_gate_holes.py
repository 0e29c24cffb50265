"""Where gates meet the rest, over HTTP on the local stack (issue 28): a closed ticket shown again
at the exit, two gates numbering their passes alike, an exit the backend refused online while the
gate timed out and let the car out offline, and a reservation holder let in by plate offline."""
from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from gate_controller.backend import Backend
from gate_controller.controller import Gate
from gate_controller.journal import Journal
from tests.integration.test_gate_offline import paid_reservation
from holdfast.clock import system_clock
from tests.support.flows import customer
from tests.support.gate_stub import GateProxy

pytestmark = pytest.mark.integration


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def ok(answer, status: int = 200) -> dict:
    assert answer.status_code == status, answer.text
    return answer.json()


def make_lot(api, spaces=("R1", "R2"), grace_minutes=10) -> str:
    body = {"name": "Gate holes", "spaces": [{"space_id": s, "type": "REGULAR"} for s in spaces],
            "tariff": {"hourly": {"value": "120.00", "currency": "RUB"}, "grace_minutes": grace_minutes}}
    return ok(api.request("POST", "/lots", organizer=True, key=customer(), json=body), 201)["lot_id"]


def make_gate(api, lot_id: str, name: str) -> dict:
    return ok(api.request("POST", f"/lots/{lot_id}/gates", organizer=True, json={"name": name}), 201)


def pass_(api, lot_id, gate, direction, **body):
    return api.request("POST", f"/lots/{lot_id}/gates/{gate['gate_id']}/{direction}",
                       headers={"X-Gate-Key": gate["gate_key"]}, json=body)


def test_a_closed_ticket_opens_no_exit_and_each_gate_has_its_own_pass_ids(api):
    lot_id = make_lot(api)
    north, south = make_gate(api, lot_id, "North"), make_gate(api, lot_id, "South")
    first = ok(pass_(api, lot_id, north, "entry", event_id="1", plate="N111NN"))
    second = ok(pass_(api, lot_id, south, "entry", event_id="1", plate="S222SS"))     # the same id, another gate
    assert first["gate_open"] is True and second["gate_open"] is True and first["ticket_id"] != second["ticket_id"]
    assert ok(pass_(api, lot_id, north, "entry", event_id="1", plate="N111NN")) == first   # a repeat
    reused = pass_(api, lot_id, north, "entry", event_id="1", plate="X333XX")              # the id, another car
    assert (reused.status_code, reused.json()["error"]["code"]) == (409, "pass_id_reused")

    left = ok(pass_(api, lot_id, north, "exit", event_id="2", ticket_id=first["ticket_id"]))   # inside the grace
    assert left["exit_granted"] is True
    again = ok(pass_(api, lot_id, south, "exit", event_id="2", ticket_id=first["ticket_id"]))
    assert (again["exit_granted"], again["reason"]) == (False, "ticket_closed")
    assert ok(pass_(api, lot_id, north, "exit", event_id="2", ticket_id=first["ticket_id"])) == left
    view = ok(api.request("GET", f"/lots/{lot_id}"))
    assert view["counts"]["REGULAR"]["occupied"] == 1                   # the south car; the north space once freed


def pass_record(system, lot_id: str, gate_id: str, event_id: str) -> dict | None:
    stack = system["stack"]
    return stack.boto3_client("dynamodb").get_item(
        TableName=stack.resources["BookingsTable"], ConsistentRead=True,
        Key={"pk": {"S": f"PASS#{lot_id}#{gate_id}#{event_id}"}, "sk": {"S": "exit"}}).get("Item")


def test_an_exit_refused_online_while_the_gate_timed_out_is_applied_at_sync_with_a_case(api, sandbox, system, tmp_path):
    lot_id = make_lot(api, spaces=("R1",), grace_minutes=0)
    north = make_gate(api, lot_id, "North")
    proxy = GateProxy(api.base)
    proxy.start()
    journal = Journal(str(tmp_path / "north.sqlite3"))
    backend = Backend(proxy.url, lot_id, north["gate_id"], north["gate_key"], timeout=10)
    gate = Gate(journal, backend, lot_id, north["gate_id"], clock=system_clock)   # the stack's clock
    try:
        entered = gate.entry(plate="P404PP")
        assert entered["open"] is True and entered["mode"] == "online"
        # the car's plate becomes a subscriber's after it came in: its ticket still pays, while
        # the gate's offline rules would let a subscriber out
        day = timedelta(days=1)
        ok(api.request("POST", f"/lots/{lot_id}/subscriptions", organizer=True, json={
            "plate": "P404PP", "valid_from": iso(system_clock() - day),
            "valid_to": iso(system_clock() + day)}), 201)
        gate.refresh()
        # the provider answers slowly (within the backend's own timeout), the gate does not wait
        sandbox.add_fault("delay", route="POST /v3/payments", seconds=2, times=1)
        backend.timeout = 0.5
        left = gate.exit(plate="P404PP")
        assert (left["open"], left["mode"], left["basis"]) == (True, "offline", "subscription")
        deadline = time.monotonic() + 30                       # the backend finishes and records its answer
        while pass_record(system, lot_id, north["gate_id"], left["event_id"]) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        record = pass_record(system, lot_id, north["gate_id"], left["event_id"])
        assert record is not None and record["mode"]["S"] == "online" and '"payment_required"' in record["answer"]["S"]
        backend.timeout = 10
        summary = gate.sync()
    finally:
        proxy.stop()
        journal.close()

    [result] = proxy.sync_answers[-1]["results"]
    assert result["status"] == "applied" and result["result"]["reason"] == "payment_required"
    assert result["result"]["amount_due"] == {"value": "120.00", "currency": "RUB"}
    assert summary["conflicts"][0]["conflict"]["case_id"] == result["conflict"]["case_id"]
    cases = ok(api.request("GET", "/admin/reviews", organizer=True))["gate_cases"]
    [case] = [c for c in cases if c["case_id"] == result["conflict"]["case_id"]]
    assert (case["case_type"], case["reason"], case["plate"]) == ("exit", "payment_required", "P404PP")
    # nothing stuck: the space is free and the plate comes in again
    assert ok(api.request("GET", f"/lots/{lot_id}"))["counts"]["REGULAR"]["occupied"] == 0
    again = ok(pass_(api, lot_id, north, "entry", event_id="back", plate="P404PP"))
    assert again["gate_open"] is True


def test_an_offline_gate_lets_a_reservation_holder_in_by_plate(api, sandbox, tmp_path):
    body = {"name": "Reserved", "spaces": [{"space_id": "R1", "type": "REGULAR"}, {"space_id": "R2", "type": "REGULAR"}],
            "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}}
    lot_id = ok(api.request("POST", "/lots", organizer=True, key=customer(), json=body), 201)["lot_id"]
    north = make_gate(api, lot_id, "North")
    reservation = paid_reservation(api, sandbox, lot_id, "A001AA")
    config = ok(api.request("GET", f"/lots/{lot_id}/gates/{north['gate_id']}/config",
                            headers={"X-Gate-Key": north["gate_key"]}))
    assert config["reservations"] == [{"booking_id": reservation["booking_id"], "plate": "A001AA",
                                       "space_id": reservation["space_id"], "from": reservation["from"],
                                       "to": reservation["to"]}]
    proxy = GateProxy(api.base)
    proxy.start()
    journal = Journal(str(tmp_path / "north.sqlite3"))
    gate = Gate(journal, Backend(proxy.url, lot_id, north["gate_id"], north["gate_key"], timeout=5), lot_id,
                north["gate_id"], clock=system_clock)
    try:
        assert gate.refresh()["reservations"] == 1
        proxy.stop()                                                    # the partition
        admitted = gate.entry(plate="A001AA")
        assert (admitted["open"], admitted["basis"], admitted["booking_id"]) == (True, "reservation",
                                                                                 reservation["booking_id"])
        assert gate.entry(plate="B002BB")["reason"] == "offline_unknown_vehicle"
        proxy.start()
        summary = gate.sync()
    finally:
        proxy.stop()
        journal.close()
    assert summary["expected_seq"] == 2 and summary["conflicts"] == []
    [result] = proxy.sync_answers[-1]["results"]
    assert (result["status"], result["result"]["gate_open"], result["result"]["space_id"]) == \
        ("applied", True, reservation["space_id"])
    assert api.booking(reservation["booking_id"], reservation["customer"])["status"] == "CHECKED_IN"


def test_a_holder_read_by_plate_online_comes_in_on_the_reservation_and_a_closed_ticket_shown_leaves_a_case(
        api, sandbox):
    lot_id = make_lot(api)
    north, south = make_gate(api, lot_id, "North"), make_gate(api, lot_id, "South")
    reservation = paid_reservation(api, sandbox, lot_id, "P001PP")
    came = ok(pass_(api, lot_id, north, "entry", event_id="in", plate="P001PP"))      # the camera, no QR code
    assert (came["gate_open"], came["space_id"]) == (True, reservation["space_id"])
    assert api.booking(reservation["booking_id"], reservation["customer"])["status"] == "CHECKED_IN"
    left = ok(pass_(api, lot_id, north, "exit", event_id="out", ticket_id=came["ticket_id"]))
    assert left["exit_granted"] is True                                # inside its window: prepaid
    # the same ticket at the other gate (its own car whose answer north lost, or another car)
    again = ok(pass_(api, lot_id, south, "exit", event_id="out", ticket_id=came["ticket_id"]))
    assert (again["exit_granted"], again["reason"]) == (False, "ticket_closed")
    cases = ok(api.request("GET", "/admin/reviews", organizer=True))["gate_cases"]
    [case] = [c for c in cases if c.get("ticket_id") == came["ticket_id"]]
    assert (case["reason"], case["plate"], case["gate_id"]) == ("ticket_closed", "P001PP", south["gate_id"])
