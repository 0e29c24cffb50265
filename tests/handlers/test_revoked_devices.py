"""Finding 9 of issue 42: a revoked device's key used to sync for ever, each junk pass opening a
case. Now a deleted gate or door may report only the passes numbered up to its last number (the last
one its sync had recorded when it was revoked, and signatures.REVOKED_PASS_ALLOWANCE after it), each
number opening at most one case, and only within signatures.REVOKED_SYNC_GRACE_SECONDS of its
revocation; then its key answers 401 on its sync too."""
from datetime import datetime, timedelta, timezone

from holdfast import wiring
from holdfast.adapters.codec import _attrs
from holdfast.domain.signatures import REVOKED_PASS_ALLOWANCE, REVOKED_SYNC_GRACE_SECONDS
from holdfast.products.events import wiring as events_wiring
from holdfast.products.parking import wiring as parking_wiring
from tests.handlers.test_doors_api import create_event, door, paid_tickets, request
from tests.handlers.test_gate_sync_api import registered_gate
from tests.handlers.test_parking_api import ORGANIZER, gate_call, parking_env  # noqa: F401
from tests.handlers.test_tickets_api import tickets_env  # noqa: F401 - the tickets' fixture
from tests.support.handlers import api_event, call


def iso(moment):
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def revoked_long_ago(pk: str, sk: str) -> None:
    """The device's revocation moved back past the grace (the table as a device revoked then left it)."""
    past = datetime.now(timezone.utc) - timedelta(seconds=REVOKED_SYNC_GRACE_SECONDS + 60)
    store = wiring.store()
    store.client.update_item(TableName=store.table, Key=_attrs({"pk": pk, "sk": sk}),
                             UpdateExpression="SET deleted_at = :at", ExpressionAttributeValues=_attrs({":at": iso(past)}))


def test_a_deleted_gate_reports_passes_only_up_to_its_last_number_and_only_within_the_grace(parking_env):
    lot_id, gate_id, key = registered_gate()
    now = datetime.now(timezone.utc)
    first = {"seq": 1, "event_id": "g-1", "kind": "entry", "at": iso(now - timedelta(minutes=5)), "plate": "A1"}
    assert gate_call("gate_sync.json", lot_id, gate_id, key, body={"events": [first]})[1]["expected_seq"] == 2
    status, _ = call("parking_api", api_event("delete_gate.json", path_params={"lot_id": lot_id, "gate_id": gate_id},
                                              headers=ORGANIZER))
    assert status == 204
    assert parking_wiring.parking().gate(lot_id, gate_id, key, deleted_too=True)["revoked_after_seq"] == 1
    cases_before = len(parking_wiring.gate_cases().open_cases())

    last = 1 + REVOKED_PASS_ALLOWANCE
    junk = [{"seq": seq, "event_id": f"j-{seq}", "kind": "entry", "at": iso(now - timedelta(minutes=1)), "plate": "Z9"}
            for seq in (2, last, last + 1, last + 500)]
    status, synced = gate_call("gate_sync.json", lot_id, gate_id, key, body={"events": junk})
    assert status == 200
    by_seq = {result["seq"]: result for result in synced["results"]}
    assert [by_seq[seq]["result"]["error"]["code"] for seq in (2, last)] == ["gate_deleted"] * 2
    assert all(by_seq[seq]["conflict"]["case_id"] for seq in (2, last))
    assert [by_seq[seq]["result"]["error"]["code"] for seq in (last + 1, last + 500)] == ["device_revoked"] * 2
    assert "conflict" not in by_seq[last + 1] and "conflict" not in by_seq[last + 500]
    # one number, one case: the same number under another pass id opens none
    again = [{**junk[0], "event_id": "j-2-again"}]
    assert gate_call("gate_sync.json", lot_id, gate_id, key, body={"events": again})[1]["results"][0]["conflict"] \
        == by_seq[2]["conflict"]
    assert len(parking_wiring.gate_cases().open_cases()) == cases_before + 2

    revoked_long_ago(f"LOT#{lot_id}", f"GATE#{gate_id}")
    status, denied = gate_call("gate_sync.json", lot_id, gate_id, key, body={"events": junk[:1]})
    assert (status, denied["error"]["code"]) == (401, "gate_unauthorized")


def test_a_revoked_door_reports_scans_only_up_to_its_last_number_and_only_within_the_grace(tickets_env):
    event = create_event("revoked-night", capacity=5)
    side = door(event["event_id"], "Side")
    _, tickets = paid_tickets(tickets_env, event["event_id"], 1, "rv-1")
    path = f"/events/{event['event_id']}/doors/{side['door_id']}"
    headers = {"X-Door-Key": side["door_key"]}
    assert request("DELETE", path, headers=ORGANIZER)[0] == 204
    cases_before = len(events_wiring.checkin_cases().open_cases())

    at = iso(datetime.now(timezone.utc) - timedelta(minutes=1))
    last = REVOKED_PASS_ALLOWANCE     # nothing was recorded before the revocation
    scans = [{"seq": seq, "event_id": f"d-{seq}", "token": tickets[0]["token"], "at": at}
             for seq in range(1, 3)] + [{"seq": last + 1, "event_id": "d-far", "token": "junk", "at": at}]
    status, synced = request("POST", f"{path}/sync", {"events": scans}, headers)
    assert status == 200, synced
    by_seq = {result["seq"]: result for result in synced["results"]}
    assert [by_seq[seq]["result"]["reason"] for seq in (1, 2)] == ["door_deleted"] * 2
    assert by_seq[last + 1]["result"]["error"]["code"] == "device_revoked" and "conflict" not in by_seq[last + 1]
    assert synced["expected_seq"] == last + 2
    assert len(events_wiring.checkin_cases().open_cases()) == cases_before + 2

    revoked_long_ago(f"DOORS#{event['event_id']}", f"DOOR#{side['door_id']}")
    status, denied = request("POST", f"{path}/sync", {"events": scans[:1]}, headers)
    assert (status, denied["error"]["code"]) == (401, "door_unauthorized")
