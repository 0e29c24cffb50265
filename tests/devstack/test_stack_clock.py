"""The stack's clock alone (devstack/aws/clock.py), without a stack: what holdfast.clock reads from
it, how a move steps through the moments timers wait for and settles at each, and how a scheduled
rule's timer follows the steps instead of making its own."""
from __future__ import annotations

import threading
import time

import pytest

from devstack.aws.clock import StackClock
from holdfast import clock as holdfast_clock


@pytest.fixture
def clock(monkeypatch):
    made = StackClock()
    monkeypatch.setenv(*made.variable)
    try:
        yield made
    finally:
        made.uninstall()


def sleeper(clock: StackClock, seconds: float, fired: list, name: str, **kwargs) -> threading.Thread:
    due = clock.now_seconds() + seconds

    def run() -> None:
        if clock.sleep_until(due, kind=name, **kwargs):
            fired.append((name, round(clock.now_seconds() - due, 3)))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def until(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline
        time.sleep(0.005)


def test_holdfast_clock_reads_the_offset_the_stack_clock_writes(clock):
    before = holdfast_clock.system_clock()
    clock.advance(86400)
    moved = holdfast_clock.system_clock() - before
    assert 86400 <= moved.total_seconds() < 86400 + 5
    assert abs(holdfast_clock.epoch_seconds() - clock.now_seconds()) < 1


def test_without_the_variable_it_is_the_machines_time(monkeypatch):
    monkeypatch.delenv(holdfast_clock.CLOCK_FILE_VARIABLE, raising=False)
    assert holdfast_clock.offset_seconds() == 0.0
    assert abs(holdfast_clock.epoch_seconds() - time.time()) < 1


def test_a_move_steps_to_each_timer_in_order_and_settles_at_each(clock):
    fired: list = []
    settled: list = []
    threads = [sleeper(clock, seconds, fired, name) for name, seconds in (("late", 300), ("early", 60), ("mid", 120))]
    until(lambda: len(clock.timers()) == 3)

    def settle():
        until(lambda: not clock.overdue())   # what fell due has run
        settled.append(len(fired))

    answer = clock.advance(600, settle=settle)
    for thread in threads:
        thread.join(5)
    assert [name for name, _ in fired] == ["early", "mid", "late"]
    assert all(0 <= late < 1 for _, late in fired), fired          # each woke at its own moment
    assert answer["steps"] == 4 and settled == [0, 1, 2, 3, 3]    # before, at each timer, at the end


def test_a_follower_runs_at_the_steps_others_make_not_at_its_own(clock):
    fired: list = []
    sleeper(clock, 60, fired, "schedule", step=False)
    until(lambda: len(clock.timers()) == 1)
    assert clock.next_due() is None                                # it makes no step of its own
    answer = clock.advance(3600, settle=lambda: until(lambda: not clock.overdue()))
    assert answer["steps"] == 1 and [name for name, _ in fired] == ["schedule"]


def test_a_stopped_sleeper_returns_false_and_the_clock_only_moves_forward(clock):
    stop = threading.Event()
    result: list = []
    thread = threading.Thread(target=lambda: result.append(clock.sleep(3600, stop=stop)), daemon=True)
    thread.start()
    stop.set()
    clock.wake()
    thread.join(5)
    assert result == [False]
    for bad in (-1, float("inf"), float("nan"), True):
        with pytest.raises(ValueError):
            clock.advance(bad)


def test_two_timers_due_inside_one_long_move_fire_in_due_order_and_the_schedule_runs_once_per_step(clock):
    """A day's move with two timers due inside it: it steps to each (in due order, each seeing its
    own moment), not minute by minute, and a scheduled rule due 1,440 times in that day runs once
    at each step that passes its moment (three here: two timers and the end), not 1,440 times."""
    fired: list = []
    runs: list = []
    stop = threading.Event()

    def schedule() -> None:   # a rate(1 minute) rule, as devstack/aws/pollers.py ScheduleInvoker
        while clock.sleep(60, kind="schedule", stop=stop, step=False):
            runs.append(clock.now_seconds())

    threading.Thread(target=schedule, daemon=True).start()
    sleeper(clock, 5 * 3600, fired, "second")
    sleeper(clock, 2 * 3600, fired, "first")
    until(lambda: len(clock.timers()) == 3)
    start = clock.now_seconds()
    # settled: nothing overdue, and the rule has recorded its run and waits for its next moment
    answer = clock.advance(86400, settle=lambda: until(
        lambda: not clock.overdue() and [kind for _, kind in clock.timers()].count("schedule") == 1))
    stop.set()
    clock.wake()
    assert [name for name, _ in fired] == ["first", "second"]
    assert all(0 <= late < 1 for _, late in fired), fired
    assert answer["steps"] == 3
    assert [round((at - start) / 3600) for at in runs] == [2, 5, 24]
    assert [step[1] for step in list(clock.step_log)[-3:]] == [
        ["first", "schedule"], ["second", "schedule"], ["end of the move", "schedule"]]
