"""Best available seats: a pure choice over a seat map's current states.

Seat ids created from rows are ``<row>-<n>``. The choice prefers, in order:

1. ``n`` adjacent seats in one row (consecutive numbers, all available);
2. placements that leave no single orphan seat between the new booking and a taken seat or the
   row's end (a lone seat nobody buying two can use);
3. front rows (rows in their natural order: A before B, 2 before 10);
4. the middle of the free run.

When no row has ``n`` adjacent seats, the seats come from as few rows as possible (largest runs
first), and when fewer than ``n`` seats are available in total there is no choice (None).
"""
from __future__ import annotations

import random
import re

from holdfast.domain.inventory import natural_key
from dataclasses import dataclass

_SEAT = re.compile(r"^(?P<row>.+)-(?P<number>\d+)$")


@dataclass(frozen=True)
class Run:
    row: str
    start: int          # first seat number of the run of available seats
    length: int
    #: The seat ids as the organizer wrote them ("A-07" stays "A-07", not "A-7").
    seats: tuple[str, ...] = ()


def parse_seat(seat_id: str) -> tuple[str, int] | None:
    match = _SEAT.match(seat_id)
    return (match["row"], int(match["number"])) if match else None


def runs(states: dict[str, str]) -> list[Run]:
    """Maximal runs of consecutively numbered available seats in each row.

    Walks the seats that exist in number order: a map with seats 1 and 10**14 costs two steps,
    not 10**14 (numbers are the organizer's and may be sparse).
    """
    rows: dict[str, list[tuple[int, str, str]]] = {}
    for seat_id, state in states.items():
        parsed = parse_seat(seat_id)
        if parsed:
            rows.setdefault(parsed[0], []).append((parsed[1], seat_id, state))
    found: list[Run] = []
    for row in sorted(rows, key=natural_key):
        current: list[tuple[int, str]] = []
        for number, seat_id, state in sorted(rows[row]):
            # Two ids with one number ("A-1", "A-01") are not neighbours: the second starts anew.
            adjacent = bool(current) and number == current[-1][0] + 1
            if current and (state != "available" or not adjacent):
                found.append(_run(row, current))
                current = []
            if state == "available":
                current.append((number, seat_id))
        if current:
            found.append(_run(row, current))
    return found


def _run(row: str, seats: list[tuple[int, str]]) -> Run:
    return Run(row, seats[0][0], len(seats), tuple(seat_id for _, seat_id in seats))


def choose_best_available(states: dict[str, str], quantity: int, rng: random.Random | None = None,
                          among: int = 1) -> tuple[str, ...] | None:
    """Pick ``quantity`` seats from ``{seat_id: state}`` (see the module doc), or None if too few.

    With ``among`` > 1 the choice is drawn at random from the ``among`` best placements: a hold
    that lost its seats to a concurrent one retries with a wider choice instead of colliding with
    everyone else on the single best block again.
    """
    if quantity < 1:
        raise ValueError("quantity must be positive")
    all_runs = runs(states)
    row_rank = {row: index for index, row in enumerate(dict.fromkeys(run.row for run in all_runs))}
    candidates: list[tuple[tuple, str, int]] = []
    for run in all_runs:
        if run.length < quantity:
            continue
        centre = run.start + (run.length - quantity) / 2
        for offset in range(run.length - quantity + 1):
            left_gap, right_gap = offset, run.length - quantity - offset
            orphans = (left_gap == 1) + (right_gap == 1)
            first = run.start + offset
            candidates.append(((orphans, row_rank[run.row], abs(first - centre), first), run, offset))
    if candidates:
        candidates.sort(key=lambda candidate: candidate[0])
        if among > 1:
            best_orphans = candidates[0][0][0]
            pool = [c for c in candidates if c[0][0] == best_orphans][:among]
            _, run, offset = (rng or random).choice(pool)
        else:
            _, run, offset = candidates[0]
        return run.seats[offset:offset + quantity]
    available = [seat for seat, state in states.items() if state == "available"]
    if len(available) < quantity:
        return None
    chosen: list[str] = []
    for run in sorted(all_runs, key=lambda r: (-r.length, row_rank[r.row], r.start)):
        take = min(run.length, quantity - len(chosen))
        chosen.extend(run.seats[:take])
        if len(chosen) == quantity:
            return tuple(chosen)
    # Seats whose ids are not <row>-<n> are used last, in id order.
    rest = sorted(seat for seat in available if parse_seat(seat) is None)
    chosen.extend(rest[:quantity - len(chosen)])
    return tuple(chosen) if len(chosen) == quantity else None
