"""The doors' sample events (events/*door*.json, get_checkins.json, resolve_checkin_case.json)
through their handlers, answered as the parity scenario expects them (tests/parity/test_parity.py)."""
import json

from tests.handlers.test_doors_api import ORGANIZER, create_event
from tests.handlers.test_tickets_api import tickets_env  # noqa: F401 - the tickets' fixture
from tests.support.handlers import api_event, call

SAMPLE_DOOR_KEY = "dk_sample-door-key-replaced-by-the-real-one"


def test_the_door_samples_answer_as_the_scenario_expects(tickets_env):
    event_id = create_event("samples")["event_id"]
    status, door = call("doors_api", api_event("create_door.json", path_params={"event_id": event_id}, headers=ORGANIZER))
    assert status == 201 and door["door_key"].startswith("dk_")
    ids = {"event_id": event_id, "door_id": door["door_id"]}
    keyed = {"X-Door-Key": door["door_key"]}
    status, config = call("doors_api", api_event("get_door_config.json", path_params=ids, headers=keyed))
    assert status == 200 and config["voided_tickets"] == []
    status, scanned = call("doors_api", api_event("door_scan.json", path_params=ids, headers=keyed))
    assert (status, scanned["reason"]) == (200, "bad_token")
    status, synced = call("doors_api", api_event("door_sync.json", path_params=ids, headers=keyed))
    assert status == 200 and synced["expected_seq"] == 2 and synced["results"][0]["conflict"]["needs_review"]
    assert call("doors_api", api_event("get_checkins.json", path_params={"event_id": event_id}, headers=ORGANIZER))[0] == 200
    assert call("doors_api", api_event("delete_door.json", path_params=ids, headers=ORGANIZER))[0] == 204
    status, gone = call("doors_api", api_event("get_door_config.json", path_params=ids, headers=keyed))
    assert (status, gone["error"]["code"]) == (401, "door_unauthorized")
    status, body = call("admin_api", api_event("resolve_checkin_case.json", headers=ORGANIZER))
    assert (status, body["error"]["code"]) == (404, "checkin_case_not_found")
    # the samples carry the door id and key the parity scenario swaps for the real ones
    assert SAMPLE_DOOR_KEY in json.dumps(api_event("door_scan.json"))
