"""The gate world (gate_model.py) over a few seeded histories: two real gate controllers, the
parking services on the fakes (tests/support/fake_table.py, held to the adapters on moto and
DynamoDB Local by tests/contract/storage/), lost answers, repeats, offline passes and syncs in any order.

Each history must end with no violation of the gate rules (G1-G8), the parking and booking rules
and the money rule of the reservations. A history that breaks one on today's code is marked with
the rule and the reason (``history(seed, rule=..., reason=...)``, xfail strict: a history that
starts passing fails the suite until its mark is removed, and one that breaks another rule than
its mark's fails at once); none is marked today: issue 28's findings 3, 4, 6 and 11 and the holes
the model found (a car stranded by a lost exit answer, an overstaying drive-up's space given away,
a reservation holder read by plate taken for a drive-up, a local ticket unknown at the other gate,
a ticket opened for a car that drove away) are fixed, and the histories that showed them stay.
Replay any of them with its story:

  PYTHONPATH=layers/holdfast:. .venv/bin/python -m tests.correctness.gate_model --seed N [--skip ops]
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from .gate_model import OPERATIONS, play_gate_history

STEPS = 30
#: Operations left out to look past findings 3 and 6, which every history with them meets first.
PAST_3_AND_6 = ("exit_on_old_ticket", "repeat_pass", "other_gate_reuses_id")


def history(seed: int, skip: tuple[str, ...] = (), rule: str | None = None, reason: str | None = None) -> Any:
    """A seeded history; ``rule``: the rule today's code breaks in it (and why), marked to fail."""
    marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)] if rule else []
    return pytest.param(seed, skip, rule, marks=marks, id=f"seed{seed}{'-past3and6' if skip else ''}")


HISTORIES = [
    history(322),
    history(326),
    history(400, PAST_3_AND_6),
    history(402, PAST_3_AND_6),
    history(407, PAST_3_AND_6),
    history(304),
    history(313),
    history(309),
    history(416, PAST_3_AND_6),
    history(422, PAST_3_AND_6),
    history(401, PAST_3_AND_6),
    history(408, PAST_3_AND_6),
    history(300),
    history(317),   # a reservation holder read by plate online (was a drive-up: G8)
    history(308),   # a local ticket shown online at the other gate; a car left at a shut exit
    history(350),   # an entry opened online, its answer lost, the driver went away: a case at sync
    history(1069),  # a holder whose space a reservation's car overstays on is put on a free space
]

#: What the histories exercised (read by test_every_operation_runs), by seed.
RAN: dict[tuple[int, tuple[str, ...]], Counter[str]] = {}


def run(seed: int, skip: tuple[str, ...]) -> tuple[str | None, list[str]]:
    operations = {name: weight for name, weight in OPERATIONS.items() if name not in skip}
    violation, story, ran = play_gate_history(None, f"gates-{seed}", seed, STEPS, operations)
    RAN[(seed, skip)] = ran
    return violation, story


@pytest.mark.parametrize(("seed", "skip", "rule"), HISTORIES)
def test_gate_history(seed: int, skip: tuple[str, ...], rule: str | None) -> None:
    violation, story = run(seed, skip)
    if violation is not None and rule is not None and not violation.startswith(rule + " "):
        # not the finding it is marked with: a plain failure, never taken for the expected one
        pytest.fail(f"expected {rule}, found {violation}\n" + "\n".join(story[-25:]))
    assert violation is None, f"{violation}\n" + "\n".join(story[-25:])


def test_every_operation_runs() -> None:
    """Every gate operation is exercised by the histories above (none is proof-only)."""
    for param in HISTORIES:
        seed, skip, _ = param.values
        if (seed, skip) not in RAN:   # run alone (-k): the histories are run here
            run(seed, skip)
    ran: Counter[str] = sum(RAN.values(), Counter())
    missing = [name for name in OPERATIONS if not ran[f"op:{name}"]]
    assert not missing, f"operations never run: {missing}"
    # and the paths that matter ran, not only the operations' names
    for outcome in ("entry:offline:open", "entry:online:open", "exit:online:open", "exit:online:payment_required",
                    "sync:lost:ok", "sync:None:ok", "exit:resent:open", "sync:out_of_order"):
        assert ran[outcome], f"no history reached {outcome}: {sorted(ran)}"
