"""Gate cases through the handlers: a gate's sync (the parking function) reports an offline exit
the backend refuses and a pass dated ahead of the server's clock, each opening a case; the admin
function lists them with the reviews and resolves them on its sample event, once."""
from datetime import datetime, timedelta, timezone

from holdfast import wiring
from holdfast.products.parking import wiring as parking_wiring
from tests.handlers.test_gate_sync_api import registered_gate
from tests.handlers.test_parking_api import ORGANIZER, gate_call, parking_env  # noqa: F401
from tests.support.handlers import api_event, call
from tests.unit.test_review_pages import CountingClient


def iso(moment):
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def resolve(case_id, **body):
    event = api_event("resolve_gate_case.json", path_params={"case_id": case_id}, headers=ORGANIZER,
                      **({"body": {"resolution": "paid_on_site", "operator": "olga", "note": "cash"} | body}))
    return call("admin_api", event)


def test_offline_refusals_open_cases_an_operator_resolves_once(parking_env):
    lot_id, gate_id, key = registered_gate()
    now = datetime.now(timezone.utc)
    passes = [{"seq": 1, "event_id": "c-1", "kind": "entry", "at": iso(now - timedelta(hours=3)), "plate": "K1"},
              {"seq": 2, "event_id": "c-2", "kind": "exit", "at": iso(now), "plate": "K1"},
              {"seq": 3, "event_id": "c-3", "kind": "entry", "at": iso(now + timedelta(hours=1)), "plate": "K2"}]
    status, synced = gate_call("gate_sync.json", lot_id, gate_id, key, body={"events": passes})
    assert status == 200 and synced["expected_seq"] == 4
    entered, left, ahead = synced["results"]
    assert entered["status"] == "applied" and left["status"] == "applied"
    assert (left["result"]["reason"], left["conflict"]["resolution"]) == ("payment_required", "review")
    assert (ahead["status"], ahead["result"]["error"]["code"]) == ("failed", "pass_time_in_future")

    # the list reads the cases in one batch, not one read each (issue 34)
    store = wiring.store()
    client = store.client
    store.client = counting = CountingClient(client)
    try:
        listed_cases = parking_wiring.gate_cases().open_cases()
    finally:
        store.client = client
    assert len(listed_cases) == 2 and "get_item" not in counting.calls and counting.calls.count("batch_get_item") == 1
    status, listed = call("admin_api", api_event("list_reviews.json", headers=ORGANIZER))
    cases = {c["case_id"]: c for c in listed["gate_cases"]}
    exit_case, future_case = cases[left["conflict"]["case_id"]], cases[ahead["conflict"]["case_id"]]
    assert (exit_case["case_type"], exit_case["plate"], exit_case["amount_due"]["value"]) == ("exit", "K1", "450.00")
    assert (future_case["case_type"], future_case["reason"]) == ("entry", "pass_time_in_future")

    status, done = resolve(exit_case["case_id"])
    assert status == 200 and done["status"] == "RESOLVED" and done["journal"][-1]["action"] == "gate_case_resolved"
    assert resolve(exit_case["case_id"]) == (200, done)                                   # a repeat
    status, body = resolve(exit_case["case_id"], resolution="waived")
    assert (status, body["error"]["code"], body["error"]["details"]["resolution"]) == \
        (409, "case_already_resolved", "paid_on_site")
    status, body = resolve(future_case["case_id"])                                        # not for an entry
    assert (status, body["error"]["code"]) == (400, "resolution_not_allowed")
    assert resolve("0" * 36)[1]["error"]["code"] == "gate_case_not_found"
    assert resolve("x" * 3000)[0] == 404 and resolve("not-a-case")[1]["error"]["code"] == "gate_case_not_found"
    assert resolve(future_case["case_id"], note="")[1]["error"]["code"] == "validation_error"
    status, body = call("admin_api", api_event("resolve_gate_case.json", path_params={"case_id": "x"}))
    assert status == 401
    status, listed = call("admin_api", api_event("list_reviews.json", headers=ORGANIZER))
    assert [c["case_id"] for c in listed["gate_cases"]] == [future_case["case_id"]]


class RecordingClient(CountingClient):
    """Records the index partitions the table is queried on."""

    def __init__(self, client) -> None:
        super().__init__(client)
        self.partitions: list[str] = []

    def query(self, **request):
        if request.get("IndexName") == "gsi1":
            self.partitions.append(request["ExpressionAttributeValues"][":key"]["S"])
        return self.client.query(**request)


def test_the_reviews_route_pages_the_organizers_own_open_cases(parking_env):
    """Finding 9 of issue 42: the route reads the caller's partition of open cases, a page at a time,
    never one partition of every organizer's cases."""
    lot_id, gate_id, key = registered_gate()
    now = datetime.now(timezone.utc)
    ahead = [{"seq": n, "event_id": f"f-{n}", "kind": "entry", "at": iso(now + timedelta(hours=1)), "plate": f"F{n}"}
             for n in (1, 2, 3)]
    assert gate_call("gate_sync.json", lot_id, gate_id, key, body={"events": ahead})[0] == 200
    organizer_id = wiring.authenticate_organizer(ORGANIZER["X-Api-Key"]).organizer_id
    store = wiring.store()
    client = store.client
    store.client = recording = RecordingClient(client)
    try:
        seen, cursor = [], None
        for _ in range(5):
            query = {"limit": "2", **({"gate_cases_cursor": cursor} if cursor else {})}
            status, listed = call("admin_api", {**api_event("list_reviews.json", headers=ORGANIZER),
                                                "queryStringParameters": query})
            assert status == 200, listed
            seen += [case["case_id"] for case in listed["gate_cases"]]
            cursor = listed["gate_cases_next_cursor"]
            if cursor is None:
                break
    finally:
        store.client = client
    assert len(seen) == len(set(seen)) == 3
    assert set(recording.partitions) == {"REVIEW", f"GATECASE#{organizer_id}", f"CHECKINCASE#{organizer_id}"}
    status, refused = call("admin_api", {**api_event("list_reviews.json", headers=ORGANIZER),
                                         "queryStringParameters": {"gate_cases_cursor": "bm90LWEtY3Vyc29y"}})
    assert (status, refused["error"]["code"]) == (400, "invalid_cursor")


def test_open_cases_indexed_before_the_per_organizer_index_are_moved_to_their_organizers_list(parking_env):
    from holdfast.adapters.checkin_cases_store import rekey_open_cases
    from holdfast.adapters.codec import Table, _attrs

    lot_id, gate_id, key = registered_gate()
    now = datetime.now(timezone.utc)
    ahead = [{"seq": 1, "event_id": "old-1", "kind": "entry", "at": iso(now + timedelta(hours=1)), "plate": "O1"}]
    case_id = gate_call("gate_sync.json", lot_id, gate_id, key, body={"events": ahead})[1]["results"][0]["conflict"][
        "case_id"]
    store = wiring.store()
    store.client.update_item(TableName=store.table, Key=_attrs({"pk": f"GATECASE#{case_id}", "sk": "META"}),
                             UpdateExpression="SET gsi1pk = :legacy REMOVE organizer_id",
                             ExpressionAttributeValues=_attrs({":legacy": "GATECASE"}))   # as an older release wrote it
    caller = wiring.authenticate_organizer(ORGANIZER["X-Api-Key"])
    assert parking_wiring.gate_cases().open_page(caller)["cases"] == []
    table = Table(store.table, store.client)
    assert rekey_open_cases(table, "GATECASE", "lot_id") == (1, 0)
    assert [c["case_id"] for c in parking_wiring.gate_cases().open_page(caller)["cases"]] == [case_id]
    assert rekey_open_cases(table, "GATECASE", "lot_id") == (0, 0)       # a second run moves nothing
