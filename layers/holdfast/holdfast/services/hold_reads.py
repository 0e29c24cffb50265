"""What one hold attempt reads: at most one call on its normal path (docs/performance.md).

A kind plans through ``HoldReads`` (the ``InventoryReads`` port) instead of the store:

- the event's pools (and a seat map's unit states) come from a per-container availability
  snapshot, so a busy sale does not read every pool on every hold. The snapshot only chooses what
  the transaction asks for: its claims are conditional, so a stale snapshot can make a transaction
  fail (the service then plans again from a fresh read, and drops the snapshot), never succeed
  wrongly. Two ages: a snapshot at most ``SNAPSHOT_SECONDS`` old is used as it is, a refusal
  (sold out) included; an older one, up to ``plan_seconds`` (5x that), only to choose where to
  try while it still shows room (``planned_on_old``): a refusal planned on it is never answered,
  the service plans again from a fresh read. So a container that keeps selling reads its pools
  every few seconds, not every second, and a sold-out answer is still at most a second old;
- a read the kind does make (the pools when the snapshot is old, the seats a customer named) is
  one ``BatchGetItem`` that also carries the request's idempotency record and one shard of the
  event's sale gate, so a repeat and a cancelled event are recognised without another call;
- on a refusal (sold out, seats taken, a time already begun) the service asks ``extras()``: free
  when the kind's read carried them, otherwise one ``BatchGetItem`` of the two items.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable, Iterable

from ..domain.inventory import Places, Pool
from ..ports import HoldStore

SNAPSHOT_SECONDS = 1.0
#: how much older than ``seconds`` a snapshot may be to choose where to try (never to refuse)
PLAN_AGE_FACTOR = 5.0
SNAPSHOTS_KEPT = 500


class Snapshots:
    """Per-container availability snapshots, by event, each used for at most ``seconds``."""

    def __init__(self, seconds: float = SNAPSHOT_SECONDS, now: Callable[[], float] = time.monotonic,
                 plan_seconds: float | None = None) -> None:
        self.seconds = seconds
        self.plan_seconds = seconds * PLAN_AGE_FACTOR if plan_seconds is None else max(seconds, plan_seconds)
        self.now = now
        self.items: dict[tuple[str, str], tuple[float, Any]] = {}
        self.cancelled: set[str] = set()   # a cancellation is for good: remembered without a limit of age

    def get(self, what: str, event_id: str, max_age: float | None = None) -> Any:
        hit = self.items.get((what, event_id))
        if hit is None or self.now() - hit[0] >= (self.seconds if max_age is None else max_age):
            return None
        return hit[1]

    def put(self, what: str, event_id: str, value: Any) -> None:
        if len(self.items) >= SNAPSHOTS_KEPT:
            self.items.clear()
        self.items[(what, event_id)] = (self.now(), value)

    def took(self, event_id: str, places: Places) -> None:
        """Our own hold's move, applied to the snapshots it came from (what this container just
        took it knows exactly; a sale-out within one container is seen at once)."""
        pools = self.items.get(("pools", event_id))
        if pools is not None and places.pools:
            taken = dict(places.pools)
            moved = [replace(pool, available=pool.available - taken[pool.pool_id], held=pool.held + taken[pool.pool_id])
                     if pool.pool_id in taken else pool for pool in pools[1]]
            self.items[("pools", event_id)] = (pools[0], moved)
        units = self.items.get(("units", event_id))
        if units is not None and places.units:
            named = set(places.units)
            marked = [{**unit, "state": "held"} if unit["unit"] in named else unit for unit in units[1]]
            self.items[("units", event_id)] = (units[0], marked)

    def drop(self, event_id: str) -> None:
        for what in ("pools", "units"):
            self.items.pop((what, event_id), None)


class HoldReads:
    """The inventory reads of one hold attempt (see the module's docstring)."""

    def __init__(self, store: HoldStore, snapshots: Snapshots, extra_keys: list[dict[str, str]], fresh: bool) -> None:
        self.store = store
        self.snapshots = snapshots
        self.extra_keys = extra_keys
        self.fresh = fresh
        #: whether a plan came from a snapshot older than ``snapshots.seconds`` (it may not refuse)
        self.planned_on_old = False
        self._extras: dict[tuple[str, str], dict[str, Any]] | None = None

    def _cached(self, what: str, event_id: str, has_room: Callable[[Any], bool]) -> Any:
        if self.fresh:
            return None
        cached = self.snapshots.get(what, event_id)
        if cached is not None:
            return cached
        older = self.snapshots.get(what, event_id, self.snapshots.plan_seconds)
        if older is not None and has_room(older):
            self.planned_on_old = True
            return older
        return None

    # ------------------------------------------------------------------ InventoryReads
    def read_pools(self, event_id: str) -> list[Pool]:
        cached = self._cached("pools", event_id, lambda pools: any(pool.available > 0 for pool in pools))
        if cached is not None:
            return cached
        pools = self.store.pools_of(self._batch(self.store.pool_keys(event_id)).values())
        self.snapshots.put("pools", event_id, pools)
        return pools

    def read_units(self, event_id: str, unit_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        return self.store.units_of(self._batch(self.store.unit_keys(event_id, unit_ids)))

    def list_units(self, event_id: str) -> list[dict[str, Any]]:
        cached = self._cached("units", event_id, lambda units: any(u.get("state") == "available" for u in units))
        if cached is not None:
            return cached
        units = self.store.list_units(event_id)
        self.snapshots.put("units", event_id, units)
        return units

    def seat_states(self, event_id: str) -> dict[str, str]:
        return self.store.seat_states(event_id)

    def read_granules(self, resource_id: str, utc_days: Iterable[str]) -> dict[str, dict[str, Any]]:
        return self.store.read_granules(resource_id, utc_days)

    def __getattr__(self, name: str) -> Any:
        # Any other read a kind makes goes to the store as it is.
        return getattr(self.store, name)

    # ---------------------------------------------------------------------- the extras
    def extras_read(self) -> bool:
        return self._extras is not None

    def extra(self, key: dict[str, str]) -> dict[str, Any] | None:
        """One of the extra items (None if it does not exist), read now if no read carried it."""
        if self._extras is None:
            self._batch([])
        assert self._extras is not None
        return self._extras.get((key["pk"], key["sk"]))

    def _batch(self, keys: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        extra = [] if self._extras is not None else self.extra_keys
        found = self.store.batch_get(keys + extra)
        if extra:
            wanted = {(key["pk"], key["sk"]) for key in extra}
            self._extras = {key: item for key, item in found.items() if key in wanted}
            found = {key: item for key, item in found.items() if key not in wanted}
        return found
