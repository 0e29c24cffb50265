"""Concurrent syncs of one gate on atomic stores (serialised moto, DynamoDB Local): every pass is
applied exactly once, in the gate's order, and every answer agrees with the one recorded.

A gate that timed out resends while its first request still runs, and a gate's batches can
arrive in any order (a lost middle, a retry of an old batch): the threads below do all of that to
one gate at the same moment.
"""
from __future__ import annotations

import threading
from typing import Any

import pytest

from holdfast.products.parking.adapters.gate_sync_store import GateSyncStore
from holdfast.products.parking.gate_sync_schemas import SyncPassIn
from holdfast.products.parking.services.gate_sync import GateSync
from tests.support.fake_gate_applier import FakeApplier

LOT, GATE = "lot-c", "gate-c"
PASSES = 12


def gate_pass(seq: int) -> dict[str, Any]:
    kind = "exit" if seq % 5 == 0 else "entry"
    body: dict[str, Any] = {"seq": seq, "event_id": f"ev{seq}", "kind": kind, "at": "2030-01-01T12:00:00Z"}
    body.update({"plate": f"P{seq}"} if kind == "entry" else {"local_ticket_id": f"L{seq}"})
    return SyncPassIn.model_validate(body).as_event()


def batches(seqs: list[int], size: int) -> list[list[int]]:
    return [seqs[i:i + size] for i in range(0, len(seqs), size)]


ALL = list(range(1, PASSES + 1))
#: Five syncs of one gate at once: the same whole batch twice (a gate that timed out and resent),
#: the batches in order, newest first (everything held until the first arrives), and odd numbers
#: before even ones (a gap at every other number).
PLANS = [[ALL], [ALL], batches(ALL, 4), batches(ALL, 4)[::-1], [ALL[0::2], ALL[1::2]]]


def test_concurrent_syncs_of_one_gate_apply_each_pass_once_in_order(store_backend):
    store = GateSyncStore(store_backend.table, store_backend.client)
    applier = FakeApplier()
    service = GateSync(store, applier)
    plans = PLANS
    start = threading.Barrier(len(plans))
    answers: list[dict[str, Any]] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def run(plan: list[list[int]]) -> None:
        try:
            start.wait(timeout=30)
            for seqs in plan:
                answer = service.sync(LOT, GATE, [gate_pass(seq) for seq in seqs])
                with lock:
                    answers.append(answer)
        except BaseException as exc:  # reported below, with the thread's traceback
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(plan,)) for plan in plans]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures, failures

    expected_ids = [f"ev{seq}" for seq in ALL]
    assert applier.effects == expected_ids                # once each, in the gate's order
    assert applier.out_of_order == []
    assert store.expected_seq(LOT, GATE) == PASSES + 1
    assert store.held_from(LOT, GATE, 1, 100) == {}
    for seq in ALL:
        assert store.done(LOT, GATE, seq) == {"event_id": f"ev{seq}", "result": applier.answers[f"ev{seq}"]}
    for answer in answers:
        for item in answer["results"]:
            assert item["status"] in ("applied", "duplicate", "held"), item
            if item["status"] != "held":
                assert item["result"] == applier.answers[item["event_id"]]
    print(f"{store_backend.name}: {len(applier.calls)} applier calls for {PASSES} passes")
