"""The blocks part of the table in memory (adapters/block_store.py's items and semantics), over the
fake booking store's table so that a block's claims move the same pool and seat items a hold's do.

Test code only: the deployed package (layers/) never imports this module."""
from __future__ import annotations

from typing import Any

from holdfast.adapters.block_store import PREFIX, TAKE, block_key, block_left, block_places
from holdfast.adapters.inventory_store import CLAIM, pool_key, split_item, unit_key
from holdfast.domain.claims import CounterClaim, UnitClaim, claims_of
from holdfast.domain.inventory import Move, Places, stored_places
from holdfast.ports import ItemExists, Labelled, PlacesTaken
from tests.support.fake_store import FakeBookingStore, _counter, fake_item
from tests.support.fakes import MemoryTable, Write, _Fake, absent


def _key(key: dict[str, str]) -> tuple[str, str]:
    return key["pk"], key["sk"]


class FakeBlocks(_Fake):
    def __init__(self, table: MemoryTable | None = None) -> None:
        super().__init__(table)
        self._claims = FakeBookingStore(self.table)._claims   # the one fake rendering of claims

    def put_block(self, offering_id: str, block: dict[str, Any], places: Places) -> None:
        self.table.check_fault("put_block")
        item = {**block_key(offering_id, block["block_id"]), **block, "offering_id": offering_id,
                "kind": str(places.kind), "quantity": places.quantity, **stored_places(places)}
        failed = self.table.transact([Write("block", _key(block_key(offering_id, block["block_id"])), absent,
                                            lambda _: dict(item)),
                                      *self._claims(offering_id, block["block_id"], places, Move.BLOCK)])
        if "block" in failed:
            raise ItemExists(block["block_id"])
        if failed:
            raise PlacesTaken([label.removeprefix("claim:") for label in failed])

    def get_block(self, offering_id: str, block_id: str) -> dict[str, Any] | None:
        return self.table.get(*_key(block_key(offering_id, block_id)))

    def list_blocks(self, offering_id: str) -> list[dict[str, Any]]:
        return self.table.query(f"EVENT#{offering_id}", prefix=PREFIX)

    def delete_block(self, offering_id: str, block: dict[str, Any]) -> bool:
        self.table.check_fault("delete_block")
        failed = self.table.transact([Write("block", _key(block_key(offering_id, block["block_id"])),
                                            lambda item: item is not None, lambda _: None),
                                      *self._claims(offering_id, block["block_id"], block_places(block),
                                                    Move.UNBLOCK)])
        return not failed

    def take_from_block(self, offering_id: str, block: dict[str, Any], places: Places, booking_id: str
                        ) -> tuple[Labelled, ...]:
        left = block_left(block, places)
        quantity = int(block["quantity"])

        def as_read(item: dict[str, Any] | None) -> bool:
            return item is not None and int(item["quantity"]) == quantity

        def change(item: dict[str, Any] | None) -> dict[str, Any] | None:
            return None if left["quantity"] <= 0 else {**(item or {}), **left}

        items = [fake_item(Write(f"{TAKE}:{offering_id}", _key(block_key(offering_id, block["block_id"])),
                                 as_read, change))]
        for claim in claims_of(places):
            offering, name = split_item(offering_id, claim.item)
            if isinstance(claim, CounterClaim):
                write = _counter(_key(pool_key(offering, name)), claim.count, Move.GIVE_BLOCKED)
            elif isinstance(claim, UnitClaim):
                write = Write("", _key(unit_key(offering, name)),
                              lambda item, block_id=block["block_id"]: item is not None
                              and item.get("state") == "blocked" and item.get("booking_id") == block_id,
                              lambda item: {**(item or {}), "state": "held", "booking_id": booking_id})
            else:
                raise TypeError(f"no block holds {type(claim).__name__}")
            items.append(fake_item(Write(f"{TAKE}:{CLAIM}{claim.label}", write.key, write.condition, write.change)))
        return tuple(items)
