"""The local stack's wait for idle gives up on a stack that is stuck, not on one that is slow."""
from __future__ import annotations

from devstack.aws.timecontrol import ProgressDeadline


class Moment:
    def __init__(self) -> None:
        self.at = 0.0

    def __call__(self) -> float:
        return self.at


def test_work_that_keeps_calling_aws_keeps_the_wait_going_past_the_timeout():
    now, calls = Moment(), [0]
    deadline = ProgressDeadline(60, lambda: calls[0], now=now)
    for second in range(1, 200):   # a sweep making a call a second for 199 s (load 40)
        now.at, calls[0] = second, second
        assert not deadline.passed(), second


def test_a_stack_with_no_progress_is_given_up_on_after_the_timeout():
    now, calls = Moment(), [7]
    deadline = ProgressDeadline(60, lambda: calls[0], now=now)
    now.at = 59.9
    assert not deadline.passed()
    now.at = 60
    assert deadline.passed()


def test_progress_that_stops_ends_the_wait_one_whole_window_later_and_the_cap_ends_it_anyway():
    now, calls = Moment(), [0]
    deadline = ProgressDeadline(60, lambda: calls[0], now=now, cap=5)
    now.at, calls[0] = 30, 1          # progress in the first window
    now.at = 60
    assert not deadline.passed()      # extended to 120
    now.at = 119
    assert not deadline.passed()
    now.at = 120
    assert deadline.passed()          # nothing since 30
    capped = ProgressDeadline(60, lambda: calls[0], now=now, cap=5)
    for second in range(121, 120 + 300):
        now.at, calls[0] = second, second
        assert not capped.passed(), second
    now.at, calls[0] = 420, 421
    assert capped.passed()            # five windows in all, progress or not
    assert capped.waited() == 300


def test_an_execution_moto_has_listed_but_not_yet_started_counts_as_running(monkeypatch):
    from types import SimpleNamespace

    from moto.stepfunctions.parser import models
    from moto.stepfunctions.parser.api import ExecutionStatus

    from devstack.aws.timecontrol import StackTime

    machine = SimpleNamespace(executions=[SimpleNamespace(exec_status=None),   # being started
                                          SimpleNamespace(exec_status=ExecutionStatus.RUNNING),
                                          SimpleNamespace(exec_status=ExecutionStatus.SUCCEEDED)])
    monkeypatch.setattr(models, "stepfunctions_parser_backends",
                        {"123456789012": {"eu-central-1": SimpleNamespace(state_machines=[machine])}})
    clock = SimpleNamespace(now_seconds=lambda: 0.0, timers=lambda: [], add_due_source=lambda *_: None,
                            add_listener=lambda *_: None)
    assert StackTime(SimpleNamespace(), clock)._executions_between_states() == 2
