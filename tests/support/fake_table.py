"""The table's fake store as wiring hands it to the services: the core's fake stores
(``FakeWaitlistStore``: bookings, inventory, offerings, the expiry index, reviews, cancellations,
the waitlist) and one fake of each product's store part, all over one ``MemoryTable``.

The adapter's ``BookingStore`` is assembled the same way (adapters/dynamo.py): it answers what the
core's stores answer and the calls the products' store parts declare (``Product.store_parts``,
each part's ``STORE_CALLS``), and nothing else; so does this fake. ``FAKE_PARTS`` names the fake standing for each of those parts;
tests/contract/storage/test_fakes_cover_the_ports.py fails when a product under holdfast/products
registers a part with no fake here, or a fake lacks a member of its product's ports.

Test code only: the deployed package (layers/) never imports this module.
"""
from __future__ import annotations

from typing import Any

from holdfast.adapters.dynamo import BookingStore, bind_product_calls
from tests.support.fake_blocks import FakeBlocks
from tests.support.fake_codes import FakeCodes
from tests.support.fake_doors import FakeDoorItems
from tests.support.fake_parking import FakeParkingItems
from tests.support.fake_store import FakeWaitlistStore
from tests.support.fakes import FakeResources, MemoryTable

#: ``Product.store_parts`` reference -> the fake of that part.
FAKE_PARTS: dict[str, type] = {
    "holdfast.products.parking.adapters.store:DynamoParkingStore": FakeParkingItems,
    "holdfast.products.appointments.adapters:ResourceStore": FakeResources,
    "holdfast.products.events.adapters.doors_store:DynamoDoorStore": FakeDoorItems,
}


class FakeTableStore(FakeWaitlistStore):
    """The core's fake store, and the products' fake parts for what it does not answer."""

    def __init__(self, table: MemoryTable | None = None) -> None:
        super().__init__(table)
        bind_product_calls()
        self.parts = tuple(fake(self.table) for fake in (*FAKE_PARTS.values(), FakeCodes, FakeBlocks))

    def __getattr__(self, name: str) -> Any:
        # only what the core's fakes lack arrives here: a call the adapter's BookingStore declares
        # (its own, or a product part's STORE_CALLS), never another (it would fail on DynamoDB)
        if name.startswith("__") or name == "parts" or not hasattr(BookingStore, name):
            raise AttributeError(name)
        for part in self.__dict__.get("parts", ()):
            found = getattr(part, name, None)
            if found is not None:
                return found
        raise AttributeError(f"{type(self).__name__} has no {name!r}, nor has any product's fake part")
