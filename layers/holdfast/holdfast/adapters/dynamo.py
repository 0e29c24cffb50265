"""DynamoDB storage: one table, conditional writes, and every multi-item change in one transaction.

The storage is split by aggregate, over one shared codec (codec.py: serialisation, the labelled
transaction; the outcomes it raises are holdfast/ports.py's):

  bookings_store.py   bookings, journal, outbox, idempotency, notifications, the due index
  inventory_store.py  the items claims change (pool shards, named units) and their reads
  offerings_store.py  events (offerings) and their catalog listing
  waitlist_store.py   the waitlist of each event
  resources_store.py  resources of appointment services, reads of their time granules
  cancellation_store.py  an event's cancellation, its bulk job's record, the event's booking index
  parking_store.py    parking lots' granules, gates, tickets, gate passes, subscriptions

``BookingStore`` is the whole table seen through all of them, for callers that need several
aggregates (the services); see docs/data-model.md for the item layout.
"""
from __future__ import annotations

from .booking_items import DUE_BUCKETS, booking_from_item, booking_item, due_bucket, idempotency_pk
from .bookings_store import IDEMPOTENCY_RETENTION_SECONDS, OUTBOX_RETENTION_SECONDS, BookingRecords
from .cancellation_store import CancellationStore
from .codec import MAX_SORT_KEY_BYTES, TRANSACT_ATTEMPTS, Cancelled, _attrs, _code, _int, _plain, _ser
from .expiry_buckets import ExpiryIndex
from .inventory_store import InventoryStore
from .offerings_store import OfferingStore
from .parking_store import ParkingStore
from .resources_store import ResourceStore
from .waitlist_store import WaitlistStore

__all__ = [
    "BookingStore", "BookingRecords", "InventoryStore", "OfferingStore", "WaitlistStore", "Cancelled",
    "idempotency_pk", "booking_item", "booking_from_item", "due_bucket",
    "DUE_BUCKETS", "IDEMPOTENCY_RETENTION_SECONDS", "OUTBOX_RETENTION_SECONDS", "MAX_SORT_KEY_BYTES",
    "TRANSACT_ATTEMPTS", "_attrs", "_code", "_int", "_plain", "_ser",
]


class BookingStore(BookingRecords, InventoryStore, OfferingStore, WaitlistStore, ResourceStore, CancellationStore,
                   ParkingStore, ExpiryIndex):
    """The single table through every aggregate's store (they share one client and table name)."""
