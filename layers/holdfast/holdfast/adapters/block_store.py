"""The organizer's blocks of an offering (issue 45, services/blocks.py): places kept out of sale.

  EVENT#<offering>    BLOCK#<block_id>    the block: its label and the places it keeps

A block is written in one transaction with its claims, each moving its places from ``available``
to ``blocked`` (a pool's ``blocked`` count, a seat's state and the block's id on it), and deleted
in one transaction with the claims moving them back: a place is blocked exactly while its block
item exists, and a block never takes a place someone holds or bought (the claims' conditions).
The organizer's order that sells places out of a block (products/orders) takes them in its own
write: the block item less those places (deleted when none are left), conditioned on the block
as read, and each place moved from blocked to held under the order's booking id.
"""
from __future__ import annotations

from typing import Any

from ..domain.inventory import Move, Places, places_from, stored_places
from ..domain.claims import CounterClaim, UnitClaim, claims_of
from ..ports import ItemExists, Labelled, PlacesTaken, TransientStoreError
from .codec import Table, _attrs, put_new
from .inventory_store import CLAIM, claim_items, counter_claim, pool_key, split_item, unit_key

PREFIX = "BLOCK#"


def block_key(offering_id: str, block_id: str) -> dict[str, str]:
    return {"pk": f"EVENT#{offering_id}", "sk": f"{PREFIX}{block_id}"}


def block_places(item: dict[str, Any]) -> Places:
    return places_from(str(item["kind"]), int(item["quantity"]), item)


def block_left(item: dict[str, Any], taken: Places) -> dict[str, Any]:
    """The block's stored places once ``taken`` are out of it: ``quantity``, ``pools`` and ``units``."""
    pools = {pool: int(count) for pool, count in (item.get("pools") or {}).items()}
    for pool, count in taken.pools:
        pools[pool] = pools.get(pool, 0) - count
    units = [unit for unit in item.get("units") or () if unit not in set(taken.units)]
    return {"quantity": int(item["quantity"]) - taken.quantity,
            "pools": {pool: count for pool, count in pools.items() if count > 0}, "units": units}


#: The label of the block item in an order's write that takes places out of it.
TAKE = "block_take"


class DynamoBlockStore:
    """The blocks part of the table (dynamo.py ``PARTS``)."""

    def __init__(self, db: Table) -> None:
        self.db = db

    def put_block(self, offering_id: str, block: dict[str, Any], places: Places) -> None:
        """The block and its claims in one write; PlacesTaken (the claims that failed) when a
        place is no longer available, ItemExists when the block id is taken."""
        item = {**block_key(offering_id, block["block_id"]), **block, "offering_id": offering_id,
                "kind": str(places.kind), "quantity": places.quantity, **stored_places(places)}
        cancelled = self.db._transact([("block", put_new(self.db.table, item)),
                                       *claim_items(self.db.table, offering_id, block["block_id"], places, Move.BLOCK)])
        if cancelled is None:
            return
        if cancelled.failed("block"):
            raise ItemExists(block["block_id"])
        failed = cancelled.failed_under(CLAIM)
        if failed:
            raise PlacesTaken(failed)
        raise TransientStoreError("block transaction conflict")

    def get_block(self, offering_id: str, block_id: str) -> dict[str, Any] | None:
        return self.db._get(**block_key(offering_id, block_id))

    def list_blocks(self, offering_id: str) -> list[dict[str, Any]]:
        return self.db._query_prefix(f"EVENT#{offering_id}", PREFIX)

    def delete_block(self, offering_id: str, block: dict[str, Any]) -> bool:
        """The block gone and its places back on sale in one write; False when it was gone already."""
        places = block_places(block)
        delete = {"Delete": {"TableName": self.db.table, "Key": _attrs(block_key(offering_id, block["block_id"])),
                             "ConditionExpression": "attribute_exists(pk)"}}
        return self.db._transact_all([("block", delete),
                                      *claim_items(self.db.table, offering_id, block["block_id"], places,
                                                   Move.UNBLOCK)])

    def take_from_block(self, offering_id: str, block: dict[str, Any], places: Places, booking_id: str
                        ) -> tuple[Labelled, ...]:
        key = _attrs(block_key(offering_id, block["block_id"]))
        left = block_left(block, places)
        # the block as read (its quantity): another take or its end meanwhile fails this write
        condition = {"ConditionExpression": "attribute_exists(pk) AND quantity = :q",
                     "ExpressionAttributeValues": _attrs({":q": int(block["quantity"])})}
        if left["quantity"] <= 0:
            block_item: dict[str, Any] = {"Delete": {"TableName": self.db.table, "Key": key, **condition}}
        else:
            values = {":q": int(block["quantity"]), ":left": left["quantity"], ":pools": left["pools"],
                      ":units": left["units"]}
            block_item = {"Update": {"TableName": self.db.table, "Key": key,
                                     "UpdateExpression": "SET quantity = :left, pools = :pools, units = :units",
                                     "ConditionExpression": condition["ConditionExpression"],
                                     "ExpressionAttributeValues": _attrs(values)}}
        items: list[Labelled] = [(f"{TAKE}:{offering_id}", block_item)]
        for claim in claims_of(places):
            offering, item = split_item(offering_id, claim.item)
            if isinstance(claim, CounterClaim):
                write = counter_claim(self.db.table, pool_key(offering, item), claim.count, Move.GIVE_BLOCKED)
            elif isinstance(claim, UnitClaim):
                write = {"Update": {
                    "TableName": self.db.table, "Key": _attrs(unit_key(offering, item)),
                    "UpdateExpression": "SET #state = :dst, booking_id = :booking",
                    # a seat of this very block, moved to the order that takes it
                    "ConditionExpression": "attribute_exists(pk) AND #state = :src AND booking_id = :block",
                    "ExpressionAttributeNames": {"#state": "state"},
                    "ExpressionAttributeValues": _attrs({":src": "blocked", ":dst": "held", ":booking": booking_id,
                                                         ":block": block["block_id"]})}}
            else:
                raise TypeError(f"no block holds {type(claim).__name__}")
            items.append((f"{TAKE}:{CLAIM}{claim.label}", write))
        return tuple(items)
