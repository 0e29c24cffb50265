"""Inventory: what a booking takes, and how the places move between states.

Two primitive kinds cover every product the engine is meant to sell:

- ``counted``: interchangeable places in pools (general admission; later, seats in a group
  appointment or untyped parking). Capacity is split over several pool items ("shards") so that
  300 holds a second do not all write one item.
- ``named``: individually identified units (a seat map; later, a room blocked whole or a typed
  parking space). Each unit is its own item.

Every change of places is one of five moves between the states ``available``, ``held`` and
``sold``; storage applies a move as a conditional write, so places can never be double counted.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any, Mapping


class InventoryKind(StrEnum):
    COUNTED = "counted"
    NAMED = "named"


class Move(Enum):
    HOLD = ("available", "held")
    RELEASE = ("held", "available")
    SELL = ("held", "sold")
    RETAKE = ("available", "sold")      # a late payment takes released places again
    UNSELL = ("sold", "available")      # a confirmed booking cancelled with a refund
    BLOCK = ("available", "blocked")    # the organizer keeps places out of sale (a block, issue 45)
    UNBLOCK = ("blocked", "available")  # the block ends: the places are on sale again
    GIVE_BLOCKED = ("blocked", "held")  # the organizer's order takes places out of its block

    @property
    def source(self) -> str:
        return self.value[0]

    @property
    def target(self) -> str:
        return self.value[1]


@dataclass(frozen=True)
class Pool:
    """One shard of a counted inventory, as last read."""

    pool_id: str
    capacity: int
    available: int
    held: int
    sold: int
    #: kept out of sale by the organizer's blocks
    blocked: int = 0


@dataclass(frozen=True)
class Granule:
    """One time granule of a resource a booking claims (products/appointments/timeslots.py): the whole resource
    (``session`` empty: the booking itself is the session, capacity 1), or ``seats`` of a group
    session named ``session`` (service and start) that has ``capacity`` seats. Every granule of a
    resource is one item, whatever service uses it, so private and group bookings compete on it."""

    resource_id: str
    at: str               # the granule's UTC start, "YYYY-MM-DDTHH:MM"
    seats: int = 1
    session: str = ""
    capacity: int = 1


@dataclass(frozen=True)
class Places:
    """What a booking occupies, whatever its kind: counts taken from counters (``pools``), named
    units (``units``) and time granules of resources (``granules``). Each entry is one claim on one
    inventory item. ``kind`` is the name of the inventory kind that planned them (holdfast/kinds),
    stored with the booking."""

    kind: str
    quantity: int
    pools: tuple[tuple[str, int], ...] = ()
    units: tuple[str, ...] = ()
    granules: tuple[Granule, ...] = ()


@dataclass(frozen=True)
class Swap:
    """Places one booking gives back and places it takes, in the same write (an exchange, issue 45):
    ``given`` of offering ``given_from`` go from sold to available, ``taken`` of offering
    ``taken_from`` from available to sold; if either claim fails, neither happens."""

    given_from: str
    given: Places
    taken_from: str
    taken: Places
    #: how the given places move: sold -> available (an exchange), or held -> available (the
    #: places a dearer exchange held for its difference payment, released when it lapses)
    give_move: "Move" = Move.UNSELL
    #: how the taken places move: available -> sold (an exchange, a late difference payment),
    #: available -> held (a dearer exchange waiting for its difference), held -> sold (paid)
    take_move: "Move" = Move.RETAKE

    @property
    def final(self) -> bool:
        """Whether the booking ends this write on the taken places (they are sold to it)."""
        return self.take_move.target == "sold" and bool(self.taken.quantity)


def without(places: Places, part: Places) -> Places:
    """``places`` less the claims of ``part``, one of its parts (an order's line given back on its
    own while the order stands): its counts out of each pool, its units and granules left out."""
    taken = dict(part.pools)
    pools = tuple((pool, count - taken.get(pool, 0)) for pool, count in places.pools
                  if count - taken.get(pool, 0) > 0)
    units = tuple(unit for unit in places.units if unit not in set(part.units))
    granules = tuple(granule for granule in places.granules if granule not in set(part.granules))
    return Places(places.kind, max(0, places.quantity - part.quantity), pools=pools, units=units, granules=granules)


def stored_places(places: Places) -> dict[str, Any]:
    """The claims of ``places`` as a booking's item (or an order's line) keeps them: ``pools``,
    ``units`` and ``granules``, each only when there are some."""
    stored: dict[str, Any] = {}
    if places.pools:
        stored["pools"] = {pool: count for pool, count in places.pools}
    if places.units:
        stored["units"] = list(places.units)
    if places.granules:
        stored["granules"] = [dict(granule.__dict__) for granule in places.granules]
    return stored


def places_from(kind: str, quantity: int, stored: Mapping[str, Any]) -> Places:
    """``Places`` back from ``stored_places`` (numbers as DynamoDB gives them: Decimal)."""
    granules = tuple(Granule(resource_id=g["resource_id"], at=g["at"], seats=int(g["seats"]), session=g["session"],
                             capacity=int(g["capacity"])) for g in stored.get("granules") or ())
    return Places(kind=kind, quantity=int(quantity),
                  pools=tuple(sorted((pool, int(count)) for pool, count in (stored.get("pools") or {}).items())),
                  units=tuple(stored.get("units") or ()), granules=granules)


def pool_sizes(capacity: int, per_pool: int = 25, max_pools: int = 40) -> list[int]:
    """Split a capacity evenly over pools of about ``per_pool`` places (at most ``max_pools``)."""
    count = max(1, min(max_pools, capacity // per_pool))
    base, extra = divmod(capacity, count)
    return [base + (1 if index < extra else 0) for index in range(count)]


def plan_counted(pools: list[Pool], quantity: int, rng: random.Random | None = None) -> tuple[tuple[str, int], ...] | None:
    """Choose where ``quantity`` places come from, or None when fewer are available in total.

    One pool with room is picked at random (spreading writes and conflicts); only when no single
    pool has room are several combined, largest first, so that a nearly sold-out event can still
    sell its last places.
    """
    rng = rng or random
    if sum(pool.available for pool in pools) < quantity:
        return None
    roomy = [pool for pool in pools if pool.available >= quantity]
    if roomy:
        return ((rng.choice(roomy).pool_id, quantity),)
    plan: list[tuple[str, int]] = []
    needed = quantity
    for pool in sorted(pools, key=lambda p: (-p.available, p.pool_id)):
        if needed == 0:
            break
        if pool.available:
            take = min(pool.available, needed)
            plan.append((pool.pool_id, take))
            needed -= take
    return tuple(plan)


def seat_ids_from_rows(rows: list[tuple[str, int]]) -> list[str]:
    return [f"{row}-{number}" for row, count in rows for number in range(1, count + 1)]


def natural_key(text: str) -> tuple:
    """Unit ids in the order people read them: A2 before A10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))
