"""Organizer holds (blocks, issue 45): places an organizer keeps out of sale (for sponsors, the
press, a camera platform) until it ends the block.

A block is planned like a hold, by the offering's own kind (named seats, or a quantity of a zone or
of the whole), and written with its claims in one transaction (adapters/block_store.py): each
claim moves its places from available to blocked under the same condition a hold's claim has, so
a block never takes a place someone holds or bought, and no hold takes a blocked one. Ending it
moves them back in one transaction with the block's deletion.
"""
from __future__ import annotations

import random
import uuid
from typing import Any, Mapping

from .. import kinds
from ..clock import iso
from ..domain.commands import HoldPlaces
from ..domain.errors import Conflict, InvalidRequest, NotFound
from ..domain.organizers import Caller, require_owner
from ..ports import BlockStore, Clock, ItemExists, PlacesTaken
from .releases import HOLD_ATTEMPTS


class BlockService:
    def __init__(self, store: BlockStore, clock: Clock, rng: random.Random | None = None) -> None:
        self.store = store
        self.clock = clock
        self.rng = rng or random.Random()

    def create(self, offering_id: str, request: HoldPlaces, label: str, caller: Caller | None) -> dict[str, Any]:
        """Keep the places asked (``seats``, or ``quantity`` of a ``zone`` or of the whole) out of
        sale: 201 ``{"block_id"}``; 409 ``places_unavailable`` when they are not all available."""
        offering = kinds.offering(self._owned(offering_id, caller))
        kind = kinds.of_event(offering)
        wanted = kind.validate(offering, request)
        for attempt in range(HOLD_ATTEMPTS):
            places = kind.plan(self.store, offering, wanted, self.rng, attempt, now=self.clock())
            if places.granules:   # places sold per time (a slot, a parking window) are not blocked
                raise InvalidRequest("Only counted places and named seats can be blocked.",
                                     code="blocks_not_supported")
            block = {"block_id": str(uuid.uuid4()), "label": label, "created_at": iso(self.clock())}
            if caller is not None:
                block["organizer_id"] = caller.organizer_id
            try:
                self.store.put_block(offering_id, block, places)
            except PlacesTaken:
                if request.seats:   # named seats went meanwhile: say so, as a hold does
                    break
                continue            # a quantity: plan again on what is left
            except ItemExists:
                continue
            return shown(block, places.quantity, places)
        raise Conflict("Those places are not all available.", code="places_unavailable")

    def list(self, offering_id: str, caller: Caller | None) -> dict[str, Any]:
        self._owned(offering_id, caller)
        blocks = sorted(self.store.list_blocks(offering_id), key=lambda item: item["created_at"])
        return {"blocks": [shown(item, int(item["quantity"])) for item in blocks]}

    def end(self, offering_id: str, block_id: str, caller: Caller | None) -> None:
        """The block's places back on sale; 404 ``block_not_found`` for an unknown or ended one
        (a repeat of an ended block's DELETE finds it gone)."""
        self._owned(offering_id, caller)
        block = self.store.get_block(offering_id, block_id)
        if block is None or not self.store.delete_block(offering_id, block):
            raise NotFound(f"No block {block_id}.", code="block_not_found")

    def _owned(self, offering_id: str, caller: Caller | None) -> dict[str, Any]:
        return require_owner(self.store.get_event(offering_id), caller,
                             NotFound(f"No event {offering_id}.", code="event_not_found"))


def shown(block: Mapping[str, Any], quantity: int, places: Any = None) -> dict[str, Any]:
    answer = {"block_id": block["block_id"], "label": block.get("label", ""), "quantity": quantity,
              "created_at": block.get("created_at")}
    units = list(places.units) if places is not None else list(block.get("units") or ())
    if units:
        answer["seats"] = units
    return answer
