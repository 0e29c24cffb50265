"""Hot items stay cold (issue 12): one sale's claims do not all write one partition.

The claims are built by the store itself (``claim_items``) for every pool and every seat of an
offering, and applied in one transaction, so the keys checked are the keys the items really have."""
from __future__ import annotations

from collections import Counter

from holdfast.adapters.codec import _plain
from holdfast.adapters.inventory_store import claim_items
from holdfast.domain.inventory import Move, Places

from .conftest import event_request

ROWS = [{"name": "A", "seats": 20}, {"name": "B", "seats": 20}]


def meta_partition(store, event_id):
    """The partition key of the offering's own item, wherever it lives."""
    items = [_plain(item) for item in store.client.scan(TableName=store.table)["Items"]]
    [meta] = [item for item in items if item["sk"] == "META" and item.get("event_id") == event_id]
    return meta["pk"]


def claimed_partitions(store, event_id, places):
    claims = claim_items(store.table, event_id, "b-all", places, Move.HOLD)
    assert store.db._transact(claims) is None, "every claim's item exists under the key it is claimed by"
    return [item["Update"]["Key"]["pk"]["S"] for _, item in claims]


def test_pool_claims_each_have_a_partition_of_their_own(catalog, store):
    event = catalog.create_event(event_request(capacity=100))
    pools = store.read_pools(event["event_id"])
    assert len(pools) > 1
    places = Places("counted", len(pools), pools=tuple((pool.pool_id, 1) for pool in pools))
    partitions = claimed_partitions(store, event["event_id"], places)
    assert meta_partition(store, event["event_id"]) not in partitions
    assert len(set(partitions)) == len(pools), Counter(partitions)


def test_seat_claims_spread_over_several_partitions_none_of_them_the_offerings(catalog, store):
    event = catalog.create_event(event_request(capacity=None, seat_map={"rows": ROWS}))
    seats = tuple(f"{row['name']}-{n}" for row in ROWS for n in range(1, row["seats"] + 1))
    partitions = claimed_partitions(store, event["event_id"], Places("named", len(seats), units=seats))
    assert meta_partition(store, event["event_id"]) not in partitions
    spread = Counter(partitions)
    assert len(spread) > 1 and max(spread.values()) <= len(seats) // 2, spread
    # The reads find every seat wherever it is kept.
    assert sorted(store.seat_states(event["event_id"])) == sorted(seats)
    assert {seat: unit["state"] for seat, unit in store.read_units(event["event_id"], seats).items()} == \
        dict.fromkeys(seats, "held")
