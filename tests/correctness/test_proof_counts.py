"""`make proof` counts what the operations did, not that they were drawn: an operation that finds
nothing to act on is not a run (its trace says so, or nothing), and a run that never reached an
operation or an outcome it owes fails instead of passing quietly."""
from __future__ import annotations

import random

from tests.correctness import proof
from tests.correctness.kind_cases import MODEL_CASES
from tests.correctness.model import BookingModel, RandomDraw, fake_storage


def test_an_operation_that_returns_early_is_not_counted_as_run(monkeypatch):
    model = BookingModel(fake_storage(), 11, kind=MODEL_CASES[0])
    monkeypatch.setattr(model, "time_paid_late", lambda draw: None)   # no conflict case can be staged
    model.reached = True
    before = len(model.trace)
    model.late_choice_after_cancel(RandomDraw(random.Random(1)))
    assert len(model.trace) > before and model.reached is False   # it said so, and did not act


def test_a_run_that_never_reaches_an_operation_fails(capsys):
    # one step per history, and the only operation allowed needs a booking made by an earlier step
    code = proof.main(["--histories", "2", "--steps", "1", "--workers", "1", "--seed", "5", "--only", "cancel",
                       "--compare-every", "0", "--every", "1000"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "never reached: ['cancel']" in out and "FAILED" in out


def test_a_run_that_reaches_its_operations_passes(capsys):
    code = proof.main(["--histories", "2", "--steps", "2", "--workers", "1", "--seed", "5", "--only", "create",
                       "--compare-every", "0", "--every", "1000"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "never reached: none" in out


def test_a_long_run_owes_the_paths_of_orders_codes_blocks_exchanges_and_transfers(capsys, monkeypatch):
    # two short histories reach none of them: held to the paths (as a run of 1,000 is), the run fails
    monkeypatch.setattr(proof, "FEATURE_PATHS_FROM", 2)
    code = proof.main(["--histories", "2", "--steps", "2", "--workers", "1", "--seed", "6",
                       "--compare-every", "0", "--gate-every", "0", "--every", "1000"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "'path:order:late_payment_places_retaken'" in out and "'transfer_accepted'" in out and "FAILED" in out


def test_the_settled_journals_tell_which_paths_an_order_took():
    from collections import Counter

    from tests.correctness.model import OPERATIONS

    skip = tuple(name for name in OPERATIONS if name not in ("place_order", "order_paid"))
    reached: Counter[str] = Counter()
    for seed in range(40, 46):
        violation, story, log = proof.run_history(seed, 8, None, skip=skip)
        assert violation is None, "\n".join(story)
        reached.update(log)
    assert reached.get("path:order:order_held") and reached.get("path:order:payment_succeeded"), sorted(reached)
    assert any(name.startswith("order_paid:late:") for name in reached), sorted(reached)
    assert reached.get("path:order:late_payment_places_retaken") or reached.get("path:order:late_payment_refund_started")
