"""The whole local system for the fuzz run: the embedded AWS stack deployed from template.yaml and the
payment sandbox, both on loopback ports chosen by the OS.

Module scope on purpose: only one EmbeddedStack may live in a process at a time, and the integration
suite's ``system`` (package scope) ends before another folder's stack starts in the same process.
The sandbox stays up (no fault knobs), so the payment route has no reason to answer 503.
"""
from __future__ import annotations

import uuid

import pytest

from devstack.organizers import LOCAL_ORGANIZERS
from tests.support.api import BookingApi
from tests.support.system import local_system

FUZZ_CUSTOMER = "fuzz-customer"
OTHER_CUSTOMER = "fuzz-other"
#: the stack's second organizer (devstack/organizers.py): the export routes are fuzzed as it
EXPORT_ORGANIZER_KEY = LOCAL_ORGANIZERS[1][2]


@pytest.fixture(scope="module")
def live():
    # The per-customer limiter stays on, wide enough that the fuzz customer's requests over every
    # booking route (five share its bucket) do not drain it before the hold route's turn comes.
    with local_system(ProviderTimeoutSeconds="3", BookingRatePerMinute="3000", BookingRateBurst="1000") as running:
        api = running["api"]
        yield {"base_url": running["stack"].api_url, "api": api, "ids": _seed(api)}


def _seed(api: BookingApi) -> dict[str, list[str]]:
    """Real ids for the path parameters, so generated requests reach past the 404s."""
    counted = api.create_event(name="Fuzz GA", capacity=100_000, max_per_booking=50)["event_id"]
    seated = api.create_event(name="Fuzz seated", capacity=None, max_per_booking=50,
                              seat_map={"rows": [{"name": "A", "seats": 40}, {"name": "B", "seats": 40}]})["event_id"]
    bookings = []
    for body, event in (({"quantity": 2}, counted), ({"quantity": 1}, counted), ({"seats": ["A-1", "A-2"]}, seated)):
        answer = api.book(event, FUZZ_CUSTOMER, body)
        assert answer.status_code == 201, answer.text
        bookings.append(answer.json()["booking_id"])
    paid = api.pay(bookings[1], FUZZ_CUSTOMER)
    assert paid.status_code == 201, paid.text
    foreign = api.book(counted, OTHER_CUSTOMER, {"quantity": 1}, key=str(uuid.uuid4()))
    assert foreign.status_code == 201, foreign.text
    room = api.create_resource(name="Fuzz hall")["resource_id"]
    services = [api.create_service([room], name="Fuzz group")["service_id"],
                api.create_service([room], name="Fuzz private", mode="private", capacity=None)["service_id"]]
    # Cancelling an event ends its sale for good: the cancel route gets events of its own, so the
    # hold route still finds the two above selling whatever order the operations run in.
    doomed = [api.create_event(name=f"Fuzz cancellable {n}", capacity=10)["event_id"] for n in (1, 2)]
    # An edit may move an event's start into the past, which ends its sale at once (a hold decides
    # on the start as it is now): the edit route gets events of its own too.
    edited = [api.create_event(name=f"Fuzz edited {n}", capacity=10)["event_id"] for n in (1, 2)]
    lot = api.request("POST", "/lots", organizer=True, json={
        "name": "Fuzz lot", "spaces": [{"space_id": f"S{n}", "type": t} for n, t in
                                       enumerate(["COMPACT", "REGULAR", "LARGE", "HANDICAP"] * 5)],
        "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}}).json()["lot_id"]
    gate = api.request("POST", f"/lots/{lot}/gates", organizer=True, json={"name": "Fuzz gate"}).json()
    # Rotating a gate's key or deleting the gate ends its key: those routes get a gate of their own,
    # so the pass routes still find the one above answering whatever order the operations run in.
    doomed_gate = api.request("POST", f"/lots/{lot}/gates", organizer=True, json={"name": "Fuzz gate to retire"}).json()
    # the export organizer's one event, so its export jobs have an offering to read
    BookingApi(api.base, organizer_key=EXPORT_ORGANIZER_KEY).create_event(name="Fuzz exported", capacity=10)
    return {"event_id": [counted, seated], "booking_id": bookings + [foreign.json()["booking_id"]],
            "service_id": services, "cancellable_event_id": doomed, "edited_event_id": edited, "lot_id": [lot], "gate_id": [gate["gate_id"]],
            "gate_key": [gate["gate_key"]], "doomed_gate_id": [doomed_gate["gate_id"]]}


def pytest_collection_modifyitems(items):
    """One node id per API operation, as the test's name already says (`...[GET /events]`).

    schemathesis 4.32 names each operation's item but leaves pytest 9's structured id without the
    parameter, so every operation shares one node id. A single process runs them all the same;
    pytest-xdist schedules by node id (make test runs two processes) and ran only the first.
    """
    for item in items:
        label = getattr(item, "operation_label", None)
        node_id = getattr(item, "_id", None)
        if label and node_id is not None and getattr(node_id, "params", "") is None:
            item._id = node_id.with_params(label)
