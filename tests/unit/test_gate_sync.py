"""The backend's per-gate sync sequencing (products/parking/services/gate_sync.py), on the in-memory ledger.

tests/contract/storage/test_gate_sync_ledger.py holds the fake to what the adapter does on moto
and DynamoDB Local; tests/correctness/test_gate_sync_concurrency.py races real syncs there."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from holdfast.domain.errors import InvalidRequest
from holdfast.products.parking.gate_sync_schemas import SyncPassIn, GateSyncIn
from holdfast.products.parking.services.gate_sync import GateSync
from tests.support.fake_gate_applier import FakeApplier
from tests.support.fakes import FakeGateSyncLedger

LOT, GATE = "lot1", "gate1"


def passes(*seqs: int, prefix: str = "ev", plate: str = "A123BC") -> list[dict]:
    return [SyncPassIn(seq=seq, event_id=f"{prefix}{seq}", kind="entry", at="2030-01-01T12:00:00Z",
                       plate=plate).as_event() for seq in seqs]


@pytest.fixture
def gate_store() -> FakeGateSyncLedger:
    return FakeGateSyncLedger()


@pytest.fixture
def applier() -> FakeApplier:
    return FakeApplier(conflicting_plates=("K777KK",))


@pytest.fixture
def gate_sync(gate_store, applier) -> GateSync:
    return GateSync(gate_store, applier)


def statuses(answer: dict) -> dict[int, str]:
    return {item["seq"]: item["status"] for item in answer["results"]}


def test_gate_sync_applies_a_batch_in_order_and_answers_the_next_seq(gate_sync, applier):
    answer = gate_sync.sync(LOT, GATE, passes(3, 1, 2))
    assert answer["expected_seq"] == 4
    assert statuses(answer) == {1: "applied", 2: "applied", 3: "applied"}
    assert applier.effects == ["ev1", "ev2", "ev3"]
    assert [item["result"]["ticket_id"] for item in answer["results"]] == ["T1", "T2", "T3"]


def test_gate_sync_repeat_gets_the_recorded_answers_without_applying_again(gate_sync, applier):
    first = gate_sync.sync(LOT, GATE, passes(1, 2))
    again = gate_sync.sync(LOT, GATE, passes(1, 2, 3))
    assert statuses(again) == {1: "duplicate", 2: "duplicate", 3: "applied"}
    assert [item["result"] for item in again["results"][:2]] == [item["result"] for item in first["results"]]
    assert applier.calls == ["ev1", "ev2", "ev3"]
    assert again["expected_seq"] == 4


def test_gate_sync_holds_passes_beyond_a_gap_until_it_is_filled(gate_sync, gate_store, applier):
    gapped = gate_sync.sync(LOT, GATE, passes(1, 2, 4, 5))
    assert gapped["expected_seq"] == 3
    assert statuses(gapped) == {1: "applied", 2: "applied", 4: "held", 5: "held"}
    assert applier.effects == ["ev1", "ev2"]
    assert sorted(gate_store.held_from(LOT, GATE, 1, 10)) == [4, 5]

    filled = gate_sync.sync(LOT, GATE, passes(3))
    assert filled["expected_seq"] == 6
    assert statuses(filled) == {3: "applied"}
    assert applier.effects == ["ev1", "ev2", "ev3", "ev4", "ev5"]
    assert applier.out_of_order == []
    assert gate_store.held_from(LOT, GATE, 1, 10) == {}

    resent = gate_sync.sync(LOT, GATE, passes(3, 4, 5))
    assert statuses(resent) == {3: "duplicate", 4: "duplicate", 5: "duplicate"}
    assert [item["result"]["ticket_id"] for item in resent["results"]] == ["T3", "T4", "T5"]


def test_gate_sync_a_resent_batch_fills_the_gap_and_applies_the_held_ones(gate_sync, applier):
    gate_sync.sync(LOT, GATE, passes(2, 3))
    answer = gate_sync.sync(LOT, GATE, passes(1, 2, 3))
    assert statuses(answer) == {1: "applied", 2: "applied", 3: "applied"}
    assert answer["expected_seq"] == 4
    assert applier.effects == ["ev1", "ev2", "ev3"]


def test_gate_sync_rejects_a_number_another_event_already_has(gate_sync, applier):
    gate_sync.sync(LOT, GATE, passes(1, 3))
    applied_taken = gate_sync.sync(LOT, GATE, passes(1, prefix="other"))
    held_taken = gate_sync.sync(LOT, GATE, passes(3, prefix="other"))
    assert applied_taken["results"][0] == {"seq": 1, "event_id": "other1", "status": "rejected", "reason": "seq_taken"}
    assert held_taken["results"][0]["status"] == "rejected"
    gate_sync.sync(LOT, GATE, passes(2))
    assert applier.effects == ["ev1", "ev2", "ev3"]


def test_gate_sync_carries_the_appliers_conflict(gate_sync):
    answer = gate_sync.sync(LOT, GATE, passes(1) + passes(2, plate="K777KK"))
    assert "conflict" not in answer["results"][0]
    assert answer["results"][1]["conflict"] == {"space_id": "S2", "moved_to": "S2b", "review": False}
    repeat = gate_sync.sync(LOT, GATE, passes(2, plate="K777KK"))
    assert repeat["results"][0]["conflict"]["moved_to"] == "S2b"


def test_gate_sync_records_a_pass_the_applier_refuses_and_moves_on(gate_store):
    def refusing(lot_id, gate_id, event, *, at, offline):
        if event["seq"] == 1:
            raise InvalidRequest("That token is not for this lot.", code="invalid_token")
        return {"gate_open": True, "ticket_id": "T2", "space_id": "S2", "reason": None}

    answer = GateSync(gate_store, refusing).sync(LOT, GATE, passes(1, 2))
    assert answer["expected_seq"] == 3
    assert answer["results"][0]["status"] == "failed"
    assert answer["results"][0]["result"]["error"]["code"] == "invalid_token"
    assert answer["results"][1]["status"] == "applied"


def test_gate_sync_gates_are_sequenced_apart(gate_sync):
    gate_sync.sync(LOT, GATE, passes(1, 2))
    other = gate_sync.sync(LOT, "gate2", passes(1, prefix="g2-"))
    assert other["expected_seq"] == 2
    assert other["results"][0]["status"] == "applied"


@pytest.mark.parametrize("body", [
    {"events": []},
    {"events": [{"seq": 1, "event_id": "e1", "kind": "entry", "at": "2030-01-01T12:00:00Z"}]},
    {"events": [{"seq": 1, "event_id": "e1", "kind": "entry", "at": "2030-01-01T12:00:00Z", "plate": "A1",
                 "token": "x.y"}]},
    {"events": [{"seq": 1, "event_id": "e1", "kind": "exit", "at": "2030-01-01T12:00:00Z"}]},
    {"events": [{"seq": 1, "event_id": "e1", "kind": "entry", "at": "2030-01-01T12:00:00", "plate": "A1"}]},
    {"events": [{"seq": 0, "event_id": "e1", "kind": "entry", "at": "2030-01-01T12:00:00Z", "plate": "A1"}]},
    {"events": [{"seq": 1, "event_id": "e 1", "kind": "entry", "at": "2030-01-01T12:00:00Z", "plate": "A1"}]},
    {"events": [{"seq": 1, "event_id": "e1", "kind": "entry", "at": "2030-01-01T12:00:00Z", "plate": "A1"},
                {"seq": 1, "event_id": "e2", "kind": "entry", "at": "2030-01-01T12:00:00Z", "plate": "A1"}]},
    {"events": [{"seq": 1, "event_id": "e1", "kind": "entry", "at": "2030-01-01T12:00:00Z", "plate": "A1"},
                {"seq": 2, "event_id": "e1", "kind": "entry", "at": "2030-01-01T12:00:00Z", "plate": "A1"}]},
])
def test_gate_sync_body_rejects_malformed_batches(body):
    with pytest.raises(ValidationError):
        GateSyncIn.model_validate(body)


def test_gate_sync_flags_a_pass_the_backend_refuses_after_the_gate_let_it_through(gate_store):
    def full_lot(lot_id, gate_id, event, *, at, offline):
        if event["kind"] == "entry":
            return {"gate_open": False, "ticket_id": None, "space_id": None, "reason": "lot_full"}
        return {"exit_granted": False, "amount_due": {"value": "150.00", "currency": "RUB"},
                "confirmation_url": "http://x", "reason": "payment_required"}

    leaving = SyncPassIn(seq=2, event_id="ev2", kind="exit", at="2030-01-01T12:30:00Z", plate="A123BC").as_event()
    answer = GateSync(gate_store, full_lot).sync(LOT, GATE, passes(1) + [leaving])
    assert [item["conflict"] for item in answer["results"]] == [
        {"type": "refused_after_pass", "reason": "lot_full", "needs_review": True},
        {"type": "refused_after_pass", "reason": "payment_required", "needs_review": True}]


def test_gate_sync_does_not_record_an_appliers_busy_answer(gate_store):
    tries = []

    def busy_once(lot_id, gate_id, event, *, at, offline):
        tries.append(event["seq"])
        if event["seq"] == 2 and tries.count(2) <= 2:   # busy on this request's two tries
            return {"gate_open": False, "ticket_id": None, "space_id": None, "reason": "busy"}
        return {"gate_open": True, "ticket_id": f"T{event['seq']}", "space_id": "S", "reason": None}

    service = GateSync(gate_store, busy_once)
    first = service.sync(LOT, GATE, passes(1, 2, 3))
    assert first["expected_seq"] == 2
    assert [(item["status"], item.get("reason")) for item in first["results"]] == [
        ("applied", None), ("held", "busy_retry_later"), ("held", "waiting_for_earlier_seq")]
    second = service.sync(LOT, GATE, passes(2, 3))
    assert second["expected_seq"] == 4 and second["results"][0]["result"]["ticket_id"] == "T2"


# ------------------------------------------------------------------ any order of deliveries
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

PASS_COUNT = 6
deliveries = st.lists(st.lists(st.integers(1, PASS_COUNT), min_size=1, max_size=5, unique=True), min_size=1,
                      max_size=5)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=deliveries)
def test_gate_sync_any_deliveries_apply_in_order_once_and_the_cursor_is_the_first_never_delivered(gate_store, plan):
    """Batches arrive in any order, any subset, with repeats; then the gate resends from
    expected_seq until done. After every delivery the cursor is the smallest number never
    delivered, every pass below it is applied with its recorded answer, and at the end every pass
    took effect once, in order."""
    import uuid

    gate, applier = f"gate-{uuid.uuid4().hex[:8]}", FakeApplier()
    service, delivered = GateSync(gate_store, applier), set()
    for batch in plan:
        answer = service.sync(LOT, gate, passes(*batch))
        delivered |= set(batch)
        first_missing = min(set(range(1, PASS_COUNT + 2)) - delivered)
        assert answer["expected_seq"] == first_missing
        for item in answer["results"]:
            expected = ("applied", "duplicate") if item["seq"] < first_missing else ("held",)
            assert item["status"] in expected, (batch, item)
            if item["seq"] < first_missing:
                assert item["result"] == applier.answers[item["event_id"]]
    while (expected_seq := gate_store.expected_seq(LOT, gate)) <= PASS_COUNT:
        service.sync(LOT, gate, passes(*range(expected_seq, PASS_COUNT + 1)))
    assert applier.effects == [f"ev{seq}" for seq in range(1, PASS_COUNT + 1)]
    assert applier.out_of_order == [] and gate_store.held_from(LOT, gate, 1, 100) == {}


@pytest.mark.parametrize("error", ["provider_away", "busy"])
def test_gate_sync_records_nothing_when_the_pass_code_fails_for_now(gate_store, error):
    from holdfast.domain.errors import Busy, PaymentProviderUnavailable

    transient = Busy() if error == "busy" else PaymentProviderUnavailable("The provider cannot be reached.")

    def provider_away(lot_id, gate_id, event, *, at, offline):
        if event["seq"] == 2:
            raise transient
        return {"gate_open": True, "ticket_id": "T1", "space_id": "S", "reason": None}

    with pytest.raises(type(transient)):
        GateSync(gate_store, provider_away).sync(LOT, GATE, passes(1, 2, 3))
    assert gate_store.expected_seq(LOT, GATE) == 2 and gate_store.done(LOT, GATE, 2) is None


def test_gate_sync_a_store_that_throttles_records_nothing_and_the_resend_applies_once(gate_store, applier):
    from holdfast.ports import TransientStoreError

    gate_store.fail("advance", TransientStoreError("throttled"))
    with pytest.raises(TransientStoreError):
        GateSync(gate_store, applier).sync(LOT, GATE, passes(1, 2))
    assert gate_store.expected_seq(LOT, GATE) == 1 and gate_store.done(LOT, GATE, 1) is None
    answer = GateSync(gate_store, applier).sync(LOT, GATE, passes(1, 2))
    assert answer["expected_seq"] == 3 and statuses(answer) == {1: "applied", 2: "applied"}
    assert applier.effects == ["ev1", "ev2"]


def test_a_devices_pass_id_is_read_in_one_place_and_keeps_its_wire_name():
    """One name per thing (issue 48): in code a gate's or door's pass has a ``pass_id``, read by
    ``signatures.pass_id_of``; the devices still send it, and the sync's records keep it, as
    ``event_id``. The sync and the modules that apply or refuse a pass spell that field nowhere."""
    import ast
    from pathlib import Path

    from holdfast.domain.signatures import PASS_ID_FIELD, pass_id_of

    assert PASS_ID_FIELD == "event_id" and pass_id_of({"event_id": 7, "seq": 1}) == "7"
    package = Path(__file__).resolve().parents[2] / "layers" / "holdfast" / "holdfast"
    readers = ["services/checkin_sync.py", "products/parking/services/retired_gates.py"]
    spelled = [path for path in readers for node in ast.walk(ast.parse((package / path).read_text()))
               if isinstance(node, ast.Constant) and node.value == "event_id"]
    assert spelled == []
