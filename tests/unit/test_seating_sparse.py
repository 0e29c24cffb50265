"""Best available on sparse seat maps: the work grows with the seats that exist, never with the
gaps between their numbers (finding 11 of issue 11).

The bound is structural: a tracer counts the lines executed inside ``holdfast.products.events.seating``
and stops the call as soon as it passes a budget proportional to the number of seats. On the old
code, which walked every number between a row's lowest and highest seat, the gap below makes the
count run past the budget within milliseconds instead of looping for years.
"""
from __future__ import annotations

import random
import sys

import pytest

from holdfast.products.events import seating
from holdfast.products.events.seating import choose_best_available, runs

LINES_PER_SEAT = 60


class BudgetExceeded(Exception):
    pass


def run_counted(budget: int, function, *args):
    """Call ``function`` counting executed lines of the seating module; raise past ``budget``."""
    target = seating.__file__
    executed = 0

    def local(frame, event, _arg):
        nonlocal executed
        if event == "line":
            executed += 1
            if executed > budget:
                raise BudgetExceeded(f"more than {budget} lines executed")
        return local

    def global_(frame, event, _arg):
        return local if frame.f_code.co_filename == target else None

    sys.settrace(global_)
    try:
        result = function(*args)
    finally:
        sys.settrace(None)
    return result, executed


def sparse_map(rng: random.Random, seats: int) -> dict[str, str]:
    numbers = rng.sample(range(1, 10**15), seats)
    return {f"{row}-{n}": rng.choice(["available", "available", "sold"]) for row in "AB" for n in numbers}


def test_two_seats_far_apart_cost_a_few_steps():
    states = {"A-1": "available", "A-99999999999999": "available"}
    chosen, executed = run_counted(LINES_PER_SEAT * 2 + 200, choose_best_available, states, 2)
    # Not adjacent, so no block: the fewest-rows fallback takes both.
    assert sorted(chosen) == ["A-1", "A-99999999999999"]
    assert executed < LINES_PER_SEAT * 2 + 200


def test_runs_of_a_sparse_row_are_linear_in_its_seats():
    states = {f"A-{n}": "available" for n in (1, 2, 3, 10**14, 10**14 + 1, 10**15)}
    found, _ = run_counted(LINES_PER_SEAT * len(states), runs, states)
    assert [(r.row, r.start, r.length) for r in found] == [("A", 1, 3), ("A", 10**14, 2), ("A", 10**15, 1)]


@pytest.mark.parametrize("size", [50, 400])
def test_work_is_proportional_to_the_seats(size):
    states = sparse_map(random.Random(size), size)
    chosen, executed = run_counted(LINES_PER_SEAT * len(states), choose_best_available, states, 3)
    assert chosen is not None and all(states[seat] == "available" for seat in chosen)


def test_leading_zeros_name_the_seats_that_exist():
    # The ids are the organizer's: "A-01" must come back as "A-01", not as a seat "A-1" that
    # does not exist (the hold would then fail on an unknown seat, again and again).
    states = {"A-01": "available", "A-02": "available", "A-03": "sold"}
    assert choose_best_available(states, 2) == ("A-01", "A-02")


def test_one_number_written_twice_is_two_seats_not_neighbours():
    states = {"A-1": "available", "A-01": "available"}
    assert sorted(choose_best_available(states, 1) + choose_best_available(states, 2)) == ["A-01", "A-01", "A-1"]
