"""Claims: what a booking takes, as one conditional change per inventory item.

``Places`` (domain/inventory.py) is what a kind plans and a booking stores; ``claims_of`` is the
one place it becomes claims. Each claim shape is a frozen dataclass with a ``label`` that names it
in a transaction (a failed claim comes back by that label, never by position); storage renders
each shape as one conditional update (adapters/inventory_store.py: ``render``). A new shape is one
more class here, one more line in ``claims_of`` and one more branch in ``render``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .inventory import Granule, Places

#: Between an offering's id and a pool or unit id in the places of a booking that takes places of
#: several offerings (an order: products/orders): ``<offering>/POOL#003``, ``<offering>/A-12``.
#: Neither a pool id, a seat id (schemas.SEAT_ID) nor an offering id can contain it.
OFFERING_SEPARATOR = "/"


#: In the kind details of one offering's part of such a booking (``Kind.part``): which part it is,
#: so what is derived from the booking's id (an event's ticket ids) is the part's own.
PART = "part_of"


def of_offering(offering: str, item: str) -> str:
    """A pool or unit id qualified by its offering."""
    return f"{offering}{OFFERING_SEPARATOR}{item}"


def other_offerings(own: str, places: Places) -> list[str]:
    """The offerings besides ``own`` whose pools or units the places name, in first-named order."""
    found: list[str] = []
    for item in [pool for pool, _ in places.pools] + list(places.units):
        offering, sep, _ = item.partition(OFFERING_SEPARATOR)
        if sep and offering != own and offering not in found:
            found.append(offering)
    return found


@dataclass(frozen=True)
class CounterClaim:
    """Take ``count`` from a counter item (a pool shard)."""

    item: str
    count: int

    @property
    def label(self) -> str:
        return self.item


@dataclass(frozen=True)
class UnitClaim:
    """Take one named unit (a seat)."""

    item: str

    @property
    def label(self) -> str:
        return self.item


@dataclass(frozen=True)
class GranuleClaim:
    """Take a resource for one time granule: the whole of it, or seats of a group session on it
    (adapters/granule_claims.py says how the two exclude each other)."""

    granule: Granule

    @property
    def label(self) -> str:
        return f"{self.granule.resource_id}/{self.granule.at}"


Claim = Union[CounterClaim, UnitClaim, GranuleClaim]


def claims_of(places: Places) -> list[Claim]:
    """Every claim the places make, counters first, in the order the kind planned them."""
    claims: list[Claim] = [CounterClaim(item, count) for item, count in places.pools]
    claims += [UnitClaim(unit) for unit in places.units]
    claims += [GranuleClaim(granule) for granule in places.granules]
    return claims


def offerings_of(event_id: str, places: Places) -> list[str]:
    """Every offering a booking of ``event_id`` takes places of: its own, and those its places name."""
    return [event_id, *other_offerings(event_id, places)]
