"""`make bench-coldstart`'s ``--steps``: statements run one after another in one cold interpreter,
each timed alone, so a module already imported by an earlier step costs a later one nothing."""
from __future__ import annotations

import pytest

from devstack.measure import coldstart
from devstack.measure.coldstart_env import Layout, probe_steps


def test_each_step_runs_after_the_ones_before_it_in_one_interpreter():
    layout = Layout("source", "none")
    # a later step sees what an earlier one left in the process (the modules it imported)
    spent = probe_steps(layout, None, {}, ["import sys; sys.holdfast_step = 1", "import json",
                                           "import sys; assert sys.holdfast_step == 1", "x = 1"])
    assert len(spent) == 4 and all(seconds >= 0 for seconds in spent)
    # a failing statement is reported, not timed as zero; the next probe is a fresh interpreter
    with pytest.raises(RuntimeError, match="AssertionError"):
        probe_steps(layout, None, {}, ["import sys; assert getattr(sys, 'holdfast_step', 0) == 1"])


def test_steps_need_one_function(capsys):
    with pytest.raises(SystemExit):
        coldstart.main(["--layout", "source", "--steps", "import json"])
    assert "--steps needs --only with one function" in capsys.readouterr().err
