"""The bench's CPU per new hold (devstack/measure/bench.py cpu_per_new_hold): each process group's CPU over
the run divided by the new holds, idle groups left out, the load generator counted, largest first.
Synthetic input: the figures are arithmetic on what the stack process reports."""
from __future__ import annotations

from devstack.measure import bench


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


def test_the_sales_own_figure_is_printed_beside_the_whole_window():
    """Issue 35: the window also held the bench's own check (a GET of every booking after the sale);
    the figure taken before it is printed next to the whole window's, which stays as it was."""
    result = {"offered_rate": 10, "achieved_rate": 10, "outcomes": {"201_new": 100},
              "cpu_ms_per_new_hold": {"stack process": 20.0, "total": 30.0},
              "cpu_ms_per_bare_transaction": {"total": 10.0, "DynamoDB Local": 7.0, "clients": 3.0},
              "cpu_ratio_to_bare": 0.33, "cpu_ms_per_new_hold_before_final_reads": {"total": 25.0},
              "cpu_ratio_to_bare_before_final_reads": 0.4}
    [line] = [line for line in bench.explain(result) if line.startswith("CPU per new hold")]
    assert "30.0 ms" in line and "0.33 of a hold's" in line
    assert "before the bench read every booking back, 25.0 ms per new hold (ratio 0.4)" in line
