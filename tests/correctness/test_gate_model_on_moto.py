"""The gate world tells the same story on the fakes as on the adapters: test_gate_model.py plays its
histories on tests/support/fake_table.py, make proof plays them on moto in process; a seed of each
kind (every operation, and past findings 3 and 6) must give the same steps, answers, violations and
outcomes on both. The storage contract (tests/contract/storage/) holds each call of the fakes to
the adapters; this holds a whole history of them."""
from __future__ import annotations

from typing import Any

import pytest
from moto import mock_aws

from .gate_model import OPERATIONS, play_gate_history
from .helpers import DirectDynamoDB
from .test_gate_model import PAST_3_AND_6, STEPS


@pytest.fixture(scope="module")
def client() -> Any:
    with mock_aws():
        yield DirectDynamoDB()


@pytest.mark.parametrize(("seed", "skip"), [(322, ()), (416, PAST_3_AND_6)], ids=["seed322", "seed416-past3and6"])
def test_a_history_on_the_fakes_is_the_history_on_moto(client: Any, seed: int, skip: tuple[str, ...]) -> None:
    operations = {name: weight for name, weight in OPERATIONS.items() if name not in skip}
    on_fakes = play_gate_history(None, f"fakes-{seed}", seed, STEPS, operations)
    on_moto = play_gate_history(client, f"moto-{seed}", seed, STEPS, operations)
    assert on_fakes[1] == on_moto[1]                 # the story, step by step
    assert (on_fakes[0], on_fakes[2]) == (on_moto[0], on_moto[2])
    assert on_fakes[0] is None and sum(on_fakes[2].values()) > STEPS
