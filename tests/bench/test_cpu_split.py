"""The bench's CPU per new hold (devstack/bench.py cpu_per_new_hold): each process group's CPU over
the run divided by the new holds, idle groups left out, the load generator counted, largest first.
Synthetic input: the figures are arithmetic on what the stack process reports."""
from __future__ import annotations

from devstack import bench


def test_cpu_per_new_hold_splits_every_process_group_over_the_new_holds():
    result = {"outcomes": {"201_new": 200}, "load_generator_cpu_s": 2.0,
              "stack_cpu": {"processes": {"stack process": 4.0, "workers BookingsApiFunction": 3.0,
                                          "workers AdminApiFunction": 0, "DynamoDB Local (java)": 6.0}}}
    split = bench.cpu_per_new_hold(result)
    assert split == {"DynamoDB Local (java)": 30.0, "stack process": 20.0, "BookingsApiFunction": 15.0,
                     "load generator": 10.0, "total": 75.0}
    assert list(split)[:2] == ["DynamoDB Local (java)", "stack process"]


def test_no_split_without_the_stack_s_figures_or_without_a_hold():
    assert bench.cpu_per_new_hold({"outcomes": {"201_new": 10}}) is None
    assert bench.cpu_per_new_hold({"outcomes": {"201_new": 0},
                                   "stack_cpu": {"processes": {"stack process": 1.0}}}) is None
