"""DynamoDB storage: one table, conditional writes, and every multi-item change in one transaction.

The storage is split by aggregate, over one shared codec (codec.py: serialisation, the labelled
transaction; the outcomes it raises are holdfast/ports.py's):

  bookings_store.py   bookings, journal, outbox, idempotency, notifications, the due index
  inventory_store.py  the items claims change (pool shards, named units) and their reads
  offerings_store.py  events (offerings) and their catalog listing
  waitlist_store.py   the waitlist of each event
  cancellation_store.py  an event's cancellation, its bulk job's record, the event's booking index
  personal_data_store.py  the ended-bookings index and the items erased with a booking's personal data

``BookingStore`` is the whole table seen through all of them, for callers that need several
aggregates (the services). A product keeps its own items through store parts of its own
(kinds/products.py, ``store_parts``: a lot's gates and tickets, a resource's opening hours); the
store holds one of each, on the same client, and hands it the calls it alone answers. See
docs/data-model.md for the item layout.
"""
from __future__ import annotations

from typing import Any

from .booking_items import DUE_BUCKETS, booking_from_item, booking_item, due_bucket, idempotency_pk
from .bookings_store import IDEMPOTENCY_RETENTION_SECONDS, OUTBOX_RETENTION_SECONDS, BookingRecords
from .cancellation_store import CancellationStore
from ..kinds import products
from .codec import MAX_SORT_KEY_BYTES, TRANSACT_ATTEMPTS, Cancelled, _attrs, _code, _int, _plain, _ser
from .expiry_buckets import ExpiryIndex
from .inventory_store import InventoryStore
from .offerings_store import OfferingStore
from .personal_data_store import PersonalDataRecords
from .waitlist_store import WaitlistStore

__all__ = [
    "BookingStore", "BookingRecords", "InventoryStore", "OfferingStore", "WaitlistStore", "Cancelled",
    "idempotency_pk", "booking_item", "booking_from_item", "due_bucket",
    "DUE_BUCKETS", "IDEMPOTENCY_RETENTION_SECONDS", "OUTBOX_RETENTION_SECONDS", "MAX_SORT_KEY_BYTES",
    "TRANSACT_ATTEMPTS", "_attrs", "_code", "_int", "_plain", "_ser",
]


class BookingStore(BookingRecords, InventoryStore, OfferingStore, WaitlistStore, CancellationStore, ExpiryIndex,
                   PersonalDataRecords):
    """The single table through every aggregate's store (they share one client and table name),
    and through the registered products' store parts."""

    def __getattr__(self, name: str) -> Any:
        # Only what the core's stores lack arrives here: a product's own reads and writes.
        if name.startswith("__") or name == "_parts":
            raise AttributeError(name)
        for part in self._product_parts():
            found = getattr(part, name, None)
            if found is not None:
                return found
        raise AttributeError(f"{type(self).__name__} has no {name!r}, nor has any product's store part")

    def _product_parts(self) -> list[Any]:
        parts = self.__dict__.get("_parts")
        if parts is None:
            # made on the first product call: a function that never makes one never imports them
            parts = [products.resolve(reference)(self.table, self.client)
                     for product in products.registered() for reference in product.store_parts]
            self.__dict__["_parts"] = parts
        for part in parts:
            part.client = self.client   # a client swapped on the store (a test's counting one) is theirs too
        return parts
