"""A code's ``max_uses`` under concurrent holds (issue 45), on both atomic backends (serialised
moto server, DynamoDB Local): the use is a guarded count in the hold's own transaction, so however
many holds race for one code, exactly ``max_uses`` hold it; a hold that lapses gives its use back,
and the next customer takes it."""
from __future__ import annotations

from collections import Counter

import pytest

from holdfast.domain.codes import InvalidCode
from holdfast.domain.statuses import HOLDING
from holdfast.schemas import BookingIn
from holdfast.services.bookings import BookingService
from holdfast.services.codes import CodeService

from .helpers import ManualClock, check_invariants, event_request, snapshot
from .test_concurrency import Services, attempt, run_pool

pytestmark = pytest.mark.timeout(300)

MAX_USES = 50


class CodedServices(Services):
    """Per-thread BookingService objects that know the offerings' codes."""

    def bookings(self) -> BookingService:
        service = super().bookings()
        service.codes = CodeService(self.store, self.clock)
        return service


def try_code(service: BookingService, event_id: str, customer: str) -> tuple:
    try:
        return attempt(service, event_id, customer, "k", BookingIn(quantity=1, code="race50"))
    except InvalidCode:
        return ("invalid_code",)


def uses(backend, event_id: str) -> dict[str, int]:
    item = backend.client.get_item(TableName=backend.table, ConsistentRead=True, Key={
        "pk": {"S": f"INV#{event_id}#CODE#RACE50"}, "sk": {"S": "CODE#RACE50"}})["Item"]
    return {name: int(item[name]["N"]) for name in ("available", "held", "sold")}


def test_exactly_max_uses_holds_take_a_code_and_a_lapsed_hold_gives_its_use_back(store_backend):
    clock = ManualClock()
    services = CodedServices(store_backend, clock)
    event_id = services.catalog.create_event(event_request(capacity=400, hold_ttl_seconds=600))["event_id"]
    CodeService(services.store, clock).create(event_id, {"code": "Race50", "kind": "percent", "value": 20,
                                                         "max_uses": MAX_USES}, None)

    outcomes = run_pool(lambda n: try_code(services.bookings(), event_id, f"c{n}"), range(90), threads=30)
    kinds = Counter(outcome[0] for outcome in outcomes)
    assert set(kinds) <= {"held", "invalid_code", "too_busy", "in_progress"}, kinds
    assert kinds["held"] <= MAX_USES, kinds
    # Whoever was turned away by contention alone tries again, one at a time, until the code is used up.
    late = 0
    while True:
        if try_code(services.bookings(), event_id, f"late{late}")[0] != "held":
            break
        late += 1
    held = kinds["held"] + late
    assert held == MAX_USES, (kinds, late)
    assert uses(store_backend, event_id) == {"available": 0, "held": MAX_USES, "sold": 0}
    snap = snapshot(store_backend.client, store_backend.table)
    check_invariants(snap)
    holding = [b for b in snap.of_event(event_id) if b.status in HOLDING]
    assert len(holding) == MAX_USES
    assert all(b.amount.text == "1200.00" for b in holding)

    # A hold lapses: its use comes back with its place, and exactly one more customer takes it.
    lapsed = holding[0]
    clock.advance(601)
    services.bookings().expire(lapsed.booking_id)
    assert uses(store_backend, event_id) == {"available": 1, "held": MAX_USES - 1, "sold": 0}
    again = run_pool(lambda n: try_code(services.bookings(), event_id, f"again{n}"), range(8), threads=8)
    assert Counter(outcome[0] for outcome in again)["held"] <= 1
    if not any(outcome[0] == "held" for outcome in again):   # contention turned all away: one more, alone
        assert try_code(services.bookings(), event_id, "again-alone")[0] == "held"
    assert uses(store_backend, event_id) == {"available": 0, "held": MAX_USES, "sold": 0}
    check_invariants(snapshot(store_backend.client, store_backend.table))
