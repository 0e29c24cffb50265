"""Catalog search tokens and best-available seat choice: pure functions."""
import random

import pytest

from holdfast.domain import search
from holdfast.domain.inventory import natural_key
from holdfast.products.events.seating import choose_best_available, runs


def row(name, pattern):
    """'..x.' -> {name-1: available, name-2: available, name-3: sold, name-4: available}."""
    return {f"{name}-{i}": ("available" if c == "." else "sold") for i, c in enumerate(pattern, start=1)}


def test_tokens_casefold_unicode_and_yo():
    assert search.tokens("Ёлка в ЗАЛЕ", "Crocus City-Hall") == ["елка", "зале", "crocus", "city", "hall"]
    assert search.tokens("A b") == []  # single letters are not searchable words


def test_tokens_are_capped_and_distinct():
    words = search.tokens(" ".join(f"w{i}" for i in range(50)) + " w1 w1")
    assert len(words) == search.MAX_TOKENS and len(set(words)) == len(words)


def test_partitions_normalise_city_and_category():
    event = {"event_id": "e", "name": "Концерт", "venue": "Hall", "city": "Москва", "category": "Rock",
             "starts_at": "2031-01-01T00:00:00.000Z"}
    assert search.index_partitions(event) == [
        "LIST#ALL", "LIST#CITY#москва", "LIST#CAT#rock", "LIST#CITY#москва#CAT#rock"]
    assert search.list_partition("МОСКВА", None) == "LIST#CITY#москва"


def test_adjacent_seats_in_the_front_row_and_middle():
    states = row("A", "......") | row("B", "......")
    assert choose_best_available(states, 2) == ("A-3", "A-4")


def test_never_leaves_a_single_orphan_when_avoidable():
    # A: seats 1-4 free, 5 sold. Taking 2-3 or 3-4 would leave a lone seat; 1-2 leaves 3-4 (two seats).
    states = row("A", "....x")
    chosen = choose_best_available(states, 2)
    assert chosen in (("A-1", "A-2"), ("A-3", "A-4"))
    free = [s for s in states if states[s] == "available" and s not in chosen]
    assert len(free) != 1


def test_prefers_a_later_row_over_an_orphan_in_the_first():
    # A has exactly 3 free: taking 2 leaves an orphan; B fits 2 exactly.
    states = row("A", "...x") | row("B", "x..x")
    assert choose_best_available(states, 2) == ("B-2", "B-3")


def test_orphan_accepted_when_it_is_the_only_way_to_sit_together():
    assert choose_best_available(row("A", "...x"), 2) in (("A-1", "A-2"), ("A-2", "A-3"))


def test_falls_back_to_fewest_rows_then_none():
    states = row("A", ".x.x") | row("B", "..xx")
    assert sorted(choose_best_available(states, 3)) == ["A-1", "B-1", "B-2"]
    assert choose_best_available(states, 5) is None


def test_rows_in_natural_order_and_runs():
    states = row("10", "..") | row("2", "..")
    assert choose_best_available(states, 2) == ("2-1", "2-2")
    assert sorted(["A10", "A2", "B1"], key=natural_key) == ["A2", "A10", "B1"]
    assert [(r.row, r.start, r.length) for r in runs(row("A", ".x..."))] == [("A", 1, 1), ("A", 3, 3)]


@pytest.mark.parametrize("seed", range(30))
def test_random_maps_choose_only_available_seats(seed):
    rng = random.Random(seed)
    states = {f"{r}-{n}": rng.choice(["available", "available", "held", "sold"]) for r in "ABCD" for n in range(1, 9)}
    quantity = rng.randint(1, 6)
    chosen = choose_best_available(states, quantity)
    free = [s for s, st in states.items() if st == "available"]
    if len(free) < quantity:
        assert chosen is None
    else:
        assert len(chosen) == quantity == len(set(chosen)) and all(states[s] == "available" for s in chosen)
