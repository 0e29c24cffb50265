"""POST /lots/{lot_id}/gates/{gate_id}/sync on its sample event: a gate's offline passes applied
in order through the real pass code, a repeat answered from the record, a gap held, a wrong key
401 and a bad batch 400 with nothing applied."""
import json

from tests.handlers.test_parking_api import ORGANIZER, create_lot, gate_call, parking_env  # noqa: F401
from tests.support.handlers import api_event, call


def registered_gate():
    lot = create_lot()[1]
    gate = call("parking_api", api_event("create_gate.json", path_params={"lot_id": lot["lot_id"]},
                                         headers=ORGANIZER))[1]
    return lot["lot_id"], gate["gate_id"], gate["gate_key"]


def sample_events():
    return json.loads(api_event("gate_sync.json")["body"])["events"]


def test_gate_sync_applies_in_order_repeats_answer_the_same_and_bad_input_is_4xx(parking_env):
    lot_id, gate_id, key = registered_gate()
    entry, leaving = sample_events()
    status, held = gate_call("gate_sync.json", lot_id, gate_id, key, body={"events": [leaving]})
    assert status == 200 and held["expected_seq"] == 1
    assert held["results"] == [{"seq": 2, "event_id": leaving["event_id"], "status": "held",
                                "reason": "waiting_for_earlier_seq"}]

    status, answer = gate_call("gate_sync.json", lot_id, gate_id, key)
    assert status == 200 and answer["expected_seq"] == 3
    entered, left = answer["results"]
    assert entered["status"] == "applied" and entered["result"]["gate_open"] is True
    assert entered["result"]["space_id"] in ("R1", "R2")            # a drive-up is taken for a regular car
    assert left["status"] == "applied" and left["result"]["exit_granted"] is True   # within the grace minutes

    status, again = gate_call("gate_sync.json", lot_id, gate_id, key)
    assert status == 200 and [item["status"] for item in again["results"]] == ["duplicate", "duplicate"]
    assert [item["result"] for item in again["results"]] == [entered["result"], left["result"]]

    status, body = gate_call("gate_sync.json", lot_id, gate_id, "gk_wrong")
    assert (status, body["error"]["code"]) == (401, "gate_unauthorized")
    later = {**entry, "seq": 3, "event_id": "north-off-0003"}
    for bad in ({"events": []}, {"events": [later, {**later, "event_id": "other"}]}, {"events": [{**later, "at": "08:00"}]}):
        status, body = gate_call("gate_sync.json", lot_id, gate_id, key, body=bad)
        assert (status, body["error"]["code"]) == (400, "validation_error"), bad
    status, last = gate_call("gate_sync.json", lot_id, gate_id, key, body={"events": [{**later, "seq": 4}]})
    assert last["expected_seq"] == 3     # nothing of the refused batches was applied or held
