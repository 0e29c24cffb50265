"""A few seconds of the load generator against the local stack: the result has every field the
benchmark promises, nothing is oversold and nothing failed on the server. No timing assertions:
this machine is shared and slow, and the emulator serialises invocations."""
from __future__ import annotations

import json
import os

import pytest

from devstack.measure import bench

pytestmark = pytest.mark.integration


def test_bench_smoke(tmp_path):
    # The default run keeps the in-process stack on moto (the quick one). HOLDFAST_BENCH_SMOKE=workers
    # runs what make bench runs (worker processes, DynamoDB Local), small: one environment per function,
    # no yardstick; it costs ~30 s more on this machine (cold starts, DynamoDB Local, 429 retries).
    workers = os.environ.get("HOLDFAST_BENCH_SMOKE") == "workers"
    mode = ["--concurrency", "1", "--hold-concurrency", "1"] if workers else ["--in-process", "--moto-dynamodb"]
    code = bench.main(["--rate", "20", "--duration", "3", "--capacity", "30", "--workers", "32",
                       "--timeout", "20", "--confirm-timeout", "30", "--bare-seconds", "0", *mode,
                       "--out", str(tmp_path)])
    files = sorted(tmp_path.glob("bench-*.json"))
    assert len(files) == 1 and len(list(tmp_path.glob("bench-*.png"))) == 1
    result = json.loads(files[0].read_text())

    for field in ("config", "attempts", "offered_rate", "achieved_rate", "rates_per_second", "outcomes",
                  "latency_ms", "payments", "confirmed", "event_counts", "correctness", "server",
                  "where_the_time_goes", "served_per_second", "new_holds_per_second"):
        assert field in result, field
    assert result["attempts"] == 60
    for outcome in ("201_new", "201_replayed", "409_sold_out", "429", "other_4xx", "5xx", "timeout"):
        assert outcome in result["outcomes"], outcome
    assert sum(result["outcomes"].values()) == result["attempts"]
    for endpoint in (bench.HOLD_ENDPOINT + " (from send)", bench.PAY_ENDPOINT):
        assert {"p50", "p95", "p99"} <= set(result["latency_ms"][endpoint])
    rates = result["rates_per_second"]
    assert len(rates["offered"]) == len(rates["achieved"]) == len(rates["latency_ms"]["p95"])
    assert sum(sum(v) for v in rates["status_mix"].values()) == result["attempts"]
    assert result["server"]["by_route"]["POST /events/{event_id}/bookings"]["aws_op_ms_median"]
    if workers:
        assert result["server"]["pools"]["BookingsApiFunction"]["concurrency"] == 1

    correctness = result["correctness"]
    assert correctness["oversold_places"] == 0
    assert correctness["replay_mismatches"] == 0
    assert correctness["keys_with_two_new_bookings"] == 0
    assert correctness["held_plus_sold"] <= 30
    assert result["outcomes"]["5xx"] == 0
    assert result["outcomes"]["201_new"] >= 1
    assert code == 0
