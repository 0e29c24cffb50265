"""Inventory storage: the items claims change (pool shards and named units), their keys and reads.

Every inventory key is made here and nowhere else. One sale's writes must not all land on one
partition, so no claim item shares the offering's ``EVENT#<event_id>`` partition (its ``META``):

  EVENT#<event_id>                 INVENTORY     the layout: how many pools the offering has
  INV#<event_id>#POOL#<nnn>        POOL#<nnn>    a counted-inventory shard, its own partition:
                                                 capacity/available/held/sold
  INV#<event_id>#U<kk>             UNIT#<unit>   a named unit (seat): state, booking_id; ``kk`` is
                                                 a stable hash of the unit id modulo UNIT_PARTITIONS
  RES#<resource>#<day>             G#<HH:MM>     a time granule of a resource, shared by every
                                                 service on it (granule_claims.py)

Every pool and unit item also carries ``event_id``. The reads follow the keys: the pools are one
consistent read of the layout and one batch get; the units are one query per unit partition (or a
batch get of the named ones). Nothing scans.

A claim is one conditional change to one of these items; ``claim_items`` turns a booking's claims
and a move into labelled transaction items (``claim:<label>``), so that a cancelled transaction
names the claims that failed.
"""
from __future__ import annotations

import zlib
from typing import Any, Iterable

from ..domain.claims import OFFERING_SEPARATOR, Claim, CounterClaim, GranuleClaim, UnitClaim, claims_of
from ..domain.inventory import Move, Places, Pool
from .granule_claims import granule_claim
from ..ports import Labelled
from .codec import MAX_SORT_KEY_BYTES, Table, _attrs, _int

CLAIM = "claim:"
#: The partitions one offering's units are spread over. Part of the key format: changing it moves
#: every existing unit to another key, so it needs a migration (docs/performance.md).
UNIT_PARTITIONS = 8
LAYOUT_SK = "INVENTORY"
UNIT_PREFIX = "UNIT#"


def pool_id(index: int) -> str:
    return f"POOL#{index:03d}"


def pool_key(event_id: str, pool: str) -> dict[str, str]:
    return {"pk": f"INV#{event_id}#{pool}", "sk": pool}


def unit_partition(unit: str) -> int:
    """Which of UNIT_PARTITIONS a unit lives in: crc32, stable across processes and versions
    (Python's own ``hash`` of a str is salted per process)."""
    return zlib.crc32(unit.encode()) % UNIT_PARTITIONS


def unit_partition_pk(event_id: str, partition: int) -> str:
    return f"INV#{event_id}#U{partition:02d}"


def unit_key(event_id: str, unit: str) -> dict[str, str]:
    return {"pk": unit_partition_pk(event_id, unit_partition(unit)), "sk": UNIT_PREFIX + unit}


def layout_key(event_id: str) -> dict[str, str]:
    return {"pk": f"EVENT#{event_id}", "sk": LAYOUT_SK}


def inventory_items(event_id: str, pool_sizes: list[int] | None, unit_ids: list[str] | None) -> list[dict[str, Any]]:
    """What creating an offering writes for its inventory: the layout, every pool and every unit."""
    items: list[dict[str, Any]] = [{**layout_key(event_id), "pools": len(pool_sizes or [])}]
    for index, size in enumerate(pool_sizes or []):
        items.append({**pool_key(event_id, pool_id(index)), "event_id": event_id,
                      "capacity": size, "available": size, "held": 0, "sold": 0})
    for unit in unit_ids or []:
        items.append({**unit_key(event_id, unit), "event_id": event_id, "state": "available"})
    return items


def inventory_entry(item: dict[str, Any]) -> tuple[str, str, str] | None:
    """``(event_id, "pool" | "unit", pool or unit id)`` for a stored pool or unit item, else None."""
    if not str(item.get("pk", "")).startswith("INV#"):
        return None
    sk = item["sk"]
    if sk.startswith(UNIT_PREFIX):
        return item["event_id"], "unit", sk.removeprefix(UNIT_PREFIX)
    return item["event_id"], "pool", sk


def split_item(event_id: str, item: str) -> tuple[str, str]:
    """(offering, pool or unit id) of a claimed item: its own offering when it names one."""
    offering, sep, rest = item.partition(OFFERING_SEPARATOR)
    return (offering, rest) if sep else (event_id, item)


def claim_items(table: str, event_id: str, booking_id: str, places: Places, move: Move) -> list[Labelled]:
    """One labelled conditional update per claim of the places (domain/claims.py)."""
    return [(CLAIM + claim.label, render(table, event_id, booking_id, claim, move)) for claim in claims_of(places)]


def render(table: str, event_id: str, booking_id: str, claim: Claim, move: Move) -> dict:
    """A claim as one conditional update of its item (one branch per claim shape). A pool or unit
    id that names its offering (``<offering>/<item>``, an order's places: domain/claims.py) is
    that offering's item, whatever the booking's own offering."""
    if isinstance(claim, CounterClaim):
        offering, item = split_item(event_id, claim.item)
        return counter_claim(table, pool_key(offering, item), claim.count, move)
    if isinstance(claim, UnitClaim):
        offering, item = split_item(event_id, claim.item)
        return unit_claim(table, unit_key(offering, item), booking_id, move)
    if isinstance(claim, GranuleClaim):
        return granule_claim(table, claim.granule, booking_id, move)
    raise TypeError(f"no storage for {type(claim).__name__}")


def counter_claim(table: str, key: dict[str, str], count: int, move: Move) -> dict:
    # a pool's first block finds no ``blocked`` count yet (pools written before blocks have none)
    target = "if_not_exists(#dst, :zero)" if move is Move.BLOCK else "#dst"
    values = {":n": count, ":zero": 0} if move is Move.BLOCK else {":n": count}
    return {"Update": {
        "TableName": table,
        "Key": _attrs(key),
        "UpdateExpression": f"SET #src = #src - :n, #dst = {target} + :n",
        "ConditionExpression": "#src >= :n",
        "ExpressionAttributeNames": {"#src": move.source, "#dst": move.target},
        "ExpressionAttributeValues": _attrs(values),
    }}


def unit_claim(table: str, key: dict[str, str], booking_id: str, move: Move) -> dict:
    values: dict[str, Any] = {":src": move.source, ":dst": move.target}
    if move.source == "available":
        condition = "#state = :src"
    else:
        # Only the booking that holds a unit may move it on.
        condition = "#state = :src AND booking_id = :booking"
        values[":booking"] = booking_id
    if move.target == "available":
        expression = "SET #state = :dst REMOVE booking_id"
    else:
        expression = "SET #state = :dst, booking_id = :booking"
        values[":booking"] = booking_id
    return {"Update": {
        "TableName": table,
        "Key": _attrs(key),
        "UpdateExpression": expression,
        "ConditionExpression": f"attribute_exists(pk) AND {condition}",
        "ExpressionAttributeNames": {"#state": "state"},
        "ExpressionAttributeValues": _attrs(values),
    }}


#: Pool counts kept per store (one store per container): the layout never changes once the event
#: exists, so a container reads it once (a missing layout, an event still being created, is not
#: remembered).
_LAYOUTS_KEPT = 2000


def pools_of(items: Iterable[dict[str, Any]]) -> list[Pool]:
    return [Pool(item["sk"], _int(item["capacity"]), _int(item["available"]), _int(item["held"]), _int(item["sold"]),
                 _int(item.get("blocked")))
            for item in sorted(items, key=lambda item: item["sk"])]


class InventoryStore:
    """The inventory items and their reads, on the shared table handle."""

    def __init__(self, db: Table) -> None:
        self.db = db
        self._layouts: dict[str, int] = {}

    def pool_keys(self, event_id: str) -> list[dict[str, str]]:
        """The keys of the event's pools, from the layout read once per container."""
        layouts = self._layouts
        count = layouts.get(event_id)
        if count is None:
            layout = self.db._get(**layout_key(event_id), consistent=True)
            count = _int(layout and layout.get("pools"))
            if layout is not None:
                if len(layouts) >= _LAYOUTS_KEPT:
                    layouts.clear()
                layouts[event_id] = count
        return [pool_key(event_id, pool_id(index)) for index in range(count)]

    def read_pools(self, event_id: str) -> list[Pool]:
        return pools_of(self.db._batch_get(self.pool_keys(event_id)).values())

    @staticmethod
    def unit_keys(event_id: str, unit_ids: Iterable[str]) -> list[dict[str, str]]:
        # A seat id too long for a sort key cannot exist; DynamoDB would refuse the whole read.
        return [unit_key(event_id, unit) for unit in unit_ids
                if len((UNIT_PREFIX + unit).encode()) <= MAX_SORT_KEY_BYTES]

    @staticmethod
    def pools_of(items: Iterable[dict[str, Any]]) -> list[Pool]:
        """The pools among items read by ``pool_keys`` (``batch_get``), in pool order."""
        return pools_of(items)

    @staticmethod
    def units_of(found: dict[tuple[str, str], dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """The units among items read by ``unit_keys`` (``batch_get``), by unit id."""
        return {sk.removeprefix(UNIT_PREFIX): item for (_, sk), item in found.items()}

    def batch_get(self, keys: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        """The items of ``keys`` that exist, by (pk, sk), strongly consistent (one call per 100 keys)."""
        return self.db._batch_get(keys)

    def read_units(self, event_id: str, unit_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        return self.units_of(self.db._batch_get(self.unit_keys(event_id, unit_ids)))

    def list_units(self, event_id: str) -> list[dict[str, Any]]:
        """Every unit of an offering (``unit`` and ``state``), from consistent reads, in unit order."""
        return self._units(event_id, consistent=True)

    def seat_states(self, event_id: str) -> dict[str, str]:
        """Every seat of an event and its state, eventually consistent (the public seat map)."""
        return {unit["unit"]: unit["state"] for unit in self._units(event_id, consistent=False)}

    def inventory_items(self, event_id: str) -> list[dict[str, Any]]:
        """Every pool and unit item of an offering as stored (operators' and tests' view)."""
        pools = [pool_key(event_id, pool.pool_id) for pool in self.read_pools(event_id)]
        units = [unit_key(event_id, unit["unit"]) for unit in self.list_units(event_id)]
        return list(self.db._batch_get(pools + units).values())

    def _units(self, event_id: str, consistent: bool) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for partition in range(UNIT_PARTITIONS):
            found += self.db._query_all({
                "TableName": self.db.table, "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
                "ExpressionAttributeValues": _attrs({":pk": unit_partition_pk(event_id, partition), ":prefix": UNIT_PREFIX}),
                "ProjectionExpression": "sk, #state", "ExpressionAttributeNames": {"#state": "state"},
                "ConsistentRead": consistent,
            })
        found.sort(key=lambda item: item["sk"])
        return [{"unit": item["sk"].removeprefix(UNIT_PREFIX), "sk": item["sk"], "state": item["state"]} for item in found]
