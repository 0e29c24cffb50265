"""DynamoDB storage: one table, conditional writes, and every multi-item change in one transaction.

The storage is split by aggregate, over one shared codec (codec.py: serialisation, the labelled
transaction; the outcomes it raises are holdfast/ports.py's):

  bookings_store.py   bookings, journal, outbox, idempotency, notifications, the due index
  inventory_store.py  the items claims change (pool shards, named units) and their reads
  offerings_store.py  events (offerings) and their catalog listing
  waitlist_store.py   the waitlist of each event
  expiry_buckets.py   the holds of each expiry bucket, and the due index by bucket
  cancellation_store.py  an event's cancellation, its bulk job's record, the event's booking index
  code_store.py       an offering's discount and access codes and their counters
  personal_data_store.py  the ended-bookings index and the items erased with a booking's personal data

``BookingStore`` is the whole table seen through all of them, for callers that need several
aggregates (the services). It holds each aggregate's store as a named part, every part on one
table handle (codec.Table: the table's name and client), and answers each port call (ports.py)
by handing it to the one part that ``PARTS`` names for it: a name claimed by two parts, or by a
part that lacks it, stops the import. A product keeps its own items through store parts of its
own (kinds/products.py, ``store_parts``: a lot's gates and tickets, a resource's opening hours);
the store holds one of each, on the same client, and hands it the calls no core part answers.
See docs/data-model.md for the item layout.
"""
from __future__ import annotations

from typing import Any

from ..kinds import products
from .bookings_store import BookingRecords
from .cancellation_store import CancellationStore
from .block_store import BlockStore
from .code_store import CodeStore
from .codec import Table
from .expiry_buckets import ExpiryIndex
from .inventory_store import InventoryStore
from .offerings_store import OfferingStore
from .personal_data_store import PersonalDataRecords
from .waitlist_store import WaitlistStore

#: The store's parts: the attribute each is kept under, its class, and the calls of the whole
#: store it answers. Every call is answered by exactly one part (checked below, at import).
PARTS: dict[str, tuple[type, tuple[str, ...]]] = {
    "bookings": (BookingRecords, (
        "commit", "get_booking", "get_booking_with_journal", "get_bookings", "customer_booking_ids",
        "get_idempotency", "idempotency_key", "sale_gate_key", "due_bookings", "list_reviews", "review_page",
        "record_notification", "notification_recorded", "message_reads", "forget_notification", "list_notifications",
        "mark_notification", "booking_outbox")),
    "inventory": (InventoryStore, (
        "pool_keys", "read_pools", "unit_keys", "pools_of", "units_of", "batch_get", "read_units",
        "list_units", "seat_states", "inventory_items")),
    "offerings": (OfferingStore, (
        "put_event", "get_event", "owned_offerings", "update_event_listing", "query_listing")),
    "waitlist": (WaitlistStore, (
        "waitlist_entry", "waitlist_queue_key", "waitlist_join", "waitlist_position", "waitlist_leave",
        "waitlist_head", "waitlist_offers", "waitlist_claim", "waitlist_offered", "waitlist_unclaim",
        "waitlist_close", "waitlist_skip", "waitlist_offer_failed", "waitlist_drop_offer")),
    "cancellations": (CancellationStore, (
        "event_cancelled", "mark_event_cancelled", "cancel_request", "next_cancel_attempt",
        "finish_cancellation", "cancelling_events", "event_booking_ids")),
    "expiry": (ExpiryIndex, ("due_in_bucket", "bucket_booking_ids")),
    "blocks": (BlockStore, ("put_block", "get_block", "list_blocks", "delete_block", "take_from_block")),
    "codes": (CodeStore, ("put_code", "get_code", "list_codes", "end_code", "ensure_allowance", "ensure_comps", "comps_given", "count_code_try")),
    "personal_data": (PersonalDataRecords, (
        "ended_bookings", "customer_bookings", "erase_booking_records", "erase_customer_notes",
        "erase_customer_lines")),
}


class _Answered:
    """A call of the store answered by one of its parts: ``store.get_booking(...)`` is
    ``store.bookings.get_booking(...)``. Read on the class it is the part's own function, so its
    signature is the one the ports are checked against."""

    def __init__(self, part: str, cls: type, name: str) -> None:
        self.part, self.cls, self.name = part, cls, name

    def __get__(self, store: Any, owner: type | None = None) -> Any:
        if store is None:
            return getattr(self.cls, self.name)
        return getattr(getattr(store, self.part), self.name)


class BookingStore:
    """The single table through every aggregate's store (its parts, on one table handle), and
    through the registered products' store parts."""

    def __init__(self, table_name: str, client: Any | None = None) -> None:
        self.db = Table(table_name, client)
        self.bookings = BookingRecords(self.db)
        self.inventory = InventoryStore(self.db)
        self.offerings = OfferingStore(self.db)
        self.waitlist = WaitlistStore(self.db)
        self.cancellations = CancellationStore(self.db)
        self.expiry = ExpiryIndex(self.db)
        self.codes = CodeStore(self.db)
        self.blocks = BlockStore(self.db)
        self.personal_data = PersonalDataRecords(self.db)
        self._parts: list[Any] | None = None

    @property
    def table(self) -> str:
        return self.db.table

    @property
    def client(self) -> Any:
        return self.db.client

    @client.setter
    def client(self, client: Any) -> None:
        # every part reads the client through the one handle: a swapped one (a test's counting
        # client) is theirs at once
        self.db.client = client

    def __getattr__(self, name: str) -> Any:
        # Only what no core part answers arrives here: a product's own reads and writes (never a
        # part's private helpers, nor the table handle's).
        if name.startswith("_"):
            raise AttributeError(name)
        for part in self._product_parts():
            found = getattr(part, name, None)
            if found is not None:
                return found
        raise AttributeError(f"{type(self).__name__} has no {name!r}, nor has any product's store part")

    def _product_parts(self) -> list[Any]:
        if self._parts is None:
            # made on the first product call: a function that never makes one never imports them
            self._parts = [products.resolve(reference)(self.db.table, self.db.client)
                           for product in products.registered() for reference in product.store_parts]
        for part in self._parts:
            part.client = self.db.client   # a product's part holds a client of its own: keep it the store's
        return self._parts


def answer_through_parts(store: type, parts: dict[str, tuple[type, tuple[str, ...]]]) -> None:
    """Give ``store`` one delegating attribute per routed call; TypeError for a call claimed by
    two parts, routed to a part that lacks it, or already the store's own."""
    claimed: dict[str, str] = {}
    for part, (cls, names) in parts.items():
        for name in names:
            if name in claimed:
                raise TypeError(f"{store.__name__}.{name} is claimed by both {claimed[name]!r} and {part!r}")
            if not callable(getattr(cls, name, None)):
                raise TypeError(f"{store.__name__}.{name} is routed to {part!r}, "
                                f"whose {cls.__name__} has no such method")
            if name in vars(store):
                raise TypeError(f"{store.__name__}.{name} is its own, not a part's")
            claimed[name] = part
    for name, part in claimed.items():
        setattr(store, name, _Answered(part, parts[part][0], name))


answer_through_parts(BookingStore, PARTS)
