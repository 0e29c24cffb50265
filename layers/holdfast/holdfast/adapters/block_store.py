"""The organizer's blocks of an offering (issue 45, services/blocks.py): places kept out of sale.

  EVENT#<offering>    BLOCK#<block_id>    the block: its label and the places it keeps

A block is written in one transaction with its claims, each moving its places from ``available``
to ``blocked`` (a pool's ``blocked`` count, a seat's state and the block's id on it), and deleted
in one transaction with the claims moving them back: a place is blocked exactly while its block
item exists, and a block never takes a place someone holds or bought (the claims' conditions).
"""
from __future__ import annotations

from typing import Any

from ..domain.inventory import Move, Places, places_from, stored_places
from ..ports import ItemExists, PlacesTaken, TransientStoreError
from .codec import Table, _attrs, put_new
from .inventory_store import CLAIM, claim_items

PREFIX = "BLOCK#"


def block_key(offering_id: str, block_id: str) -> dict[str, str]:
    return {"pk": f"EVENT#{offering_id}", "sk": f"{PREFIX}{block_id}"}


def block_places(item: dict[str, Any]) -> Places:
    return places_from(str(item["kind"]), int(item["quantity"]), item)


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
