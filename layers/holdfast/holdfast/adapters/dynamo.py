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
by handing it to one part, declared on the class as ``get_booking = _Part("bookings",
BookingRecords.get_booking)``: "go to definition" on ``store.get_booking`` lands on that line, and
from there on the part's method. A product keeps its own items through store parts of its
own (kinds/products.py, ``store_parts``: a lot's gates and tickets, a resource's opening hours),
and each such part declares the calls it answers in its own class body, by the functions
themselves (``STORE_CALLS = (get_gate, put_gate, ...)``), so "go to definition" on a declared name
lands on the method. The store binds each declared call as it binds its own (``_ProductCall``),
holds one of each part on the same table handle, and answers nothing else: there is no fallback,
and a part's public method it does not declare is refused by tests/contract/test_composition.py.
See docs/data-model.md for the item layout.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, TypeVar

from ..kinds import products
from .bookings_store import BookingRecords
from .cancellation_store import DynamoCancellationStore
from .block_store import DynamoBlockStore
from .code_store import DynamoCodeStore
from .codec import Table
from .expiry_buckets import DynamoExpiryIndex
from .inventory_store import InventoryStore
from .offerings_store import OfferingStore
from .personal_data_store import PersonalDataRecords
from .waitlist_store import DynamoWaitlistStore


class _Part:
    """One call of the store answered by one of its parts, declared where an editor can follow it:
    ``get_booking = _Part("bookings", BookingRecords.get_booking)`` makes ``store.get_booking(...)``
    ``store.bookings.get_booking(...)``. Read on the class it is the part's own function, so its
    signature is the one the ports are checked against. A name that is not the function's (a call
    routed to another method) stops the import; a part without the method fails as the class is
    read (``BookingRecords.no_such`` is an AttributeError)."""

    def __init__(self, part: str, function: Callable[..., Any]) -> None:
        self.part, self.function = part, function
        module, owner = sys.modules[function.__module__], function.__qualname__.partition(".")[0]
        self.cls: type = getattr(module, owner)

    def __set_name__(self, store: type, name: str) -> None:
        if name != self.function.__name__:
            raise TypeError(f"{store.__name__}.{name} is routed to {self.part!r}'s {self.function.__qualname__}")
        self.name = name

    def __get__(self, store: Any, owner: type | None = None) -> Any:
        if store is None:
            return self.function
        return getattr(getattr(store, self.part), self.name)


_PartType = TypeVar("_PartType")


class _ProductCall:
    """One call of the store answered by a product's store part, as the part declares it in its
    ``STORE_CALLS``: read on the class it is the part's own function; on a store, the part's method
    on the store's table handle (``BookingStore.product_part``)."""

    def __init__(self, part: type, function: Callable[..., Any]) -> None:
        self.part, self.function = part, function

    def __get__(self, store: Any, owner: type | None = None) -> Any:
        if store is None:
            return self.function
        return getattr(store.product_part(self.part), self.function.__name__)


def declared_calls(part: type) -> tuple[Callable[..., Any], ...]:
    """The calls a product's store part declares (``STORE_CALLS``), checked: each one of its own
    functions, each once. A part that declares none is refused: its calls would reach nothing."""
    calls = vars(part).get("STORE_CALLS")
    if not isinstance(calls, tuple) or not calls:
        raise TypeError(f"{part.__qualname__} declares no STORE_CALLS: the store answers only declared calls")
    for function in calls:
        if not callable(function) or vars(part).get(getattr(function, "__name__", "")) is not function:
            raise TypeError(f"{part.__qualname__}.STORE_CALLS names {function!r}, not one of its own methods")
    names = [function.__name__ for function in calls]
    if len(set(names)) != len(names):
        raise TypeError(f"{part.__qualname__}.STORE_CALLS names a call twice")
    return calls


class BookingStore:
    """The single table through every aggregate's store (its parts, on one table handle), and
    through the registered products' store parts, each call declared (``_Part``, ``_ProductCall``)."""

    # bookings_store.py: bookings, journal, outbox, idempotency, notifications, the due index
    commit = _Part("bookings", BookingRecords.commit)
    get_booking = _Part("bookings", BookingRecords.get_booking)
    get_booking_with_journal = _Part("bookings", BookingRecords.get_booking_with_journal)
    get_bookings = _Part("bookings", BookingRecords.get_bookings)
    customer_booking_ids = _Part("bookings", BookingRecords.customer_booking_ids)
    get_idempotency = _Part("bookings", BookingRecords.get_idempotency)
    idempotency_key = _Part("bookings", BookingRecords.idempotency_key)
    sale_gate_key = _Part("bookings", BookingRecords.sale_gate_key)
    due_bookings = _Part("bookings", BookingRecords.due_bookings)
    list_reviews = _Part("bookings", BookingRecords.list_reviews)
    review_page = _Part("bookings", BookingRecords.review_page)
    record_notification = _Part("bookings", BookingRecords.record_notification)
    notification_recorded = _Part("bookings", BookingRecords.notification_recorded)
    message_reads = _Part("bookings", BookingRecords.message_reads)
    forget_notification = _Part("bookings", BookingRecords.forget_notification)
    list_notifications = _Part("bookings", BookingRecords.list_notifications)
    mark_notification = _Part("bookings", BookingRecords.mark_notification)
    booking_outbox = _Part("bookings", BookingRecords.booking_outbox)

    # inventory_store.py: the items claims change (pool shards, named units) and their reads
    pool_keys = _Part("inventory", InventoryStore.pool_keys)
    read_pools = _Part("inventory", InventoryStore.read_pools)
    unit_keys = _Part("inventory", InventoryStore.unit_keys)
    pools_of = _Part("inventory", InventoryStore.pools_of)
    units_of = _Part("inventory", InventoryStore.units_of)
    batch_get = _Part("inventory", InventoryStore.batch_get)
    read_units = _Part("inventory", InventoryStore.read_units)
    list_units = _Part("inventory", InventoryStore.list_units)
    seat_states = _Part("inventory", InventoryStore.seat_states)
    inventory_items = _Part("inventory", InventoryStore.inventory_items)

    # offerings_store.py: events (offerings) and their catalog listing
    put_event = _Part("offerings", OfferingStore.put_event)
    get_event = _Part("offerings", OfferingStore.get_event)
    owned_offerings = _Part("offerings", OfferingStore.owned_offerings)
    owned_offering_ids = _Part("offerings", OfferingStore.owned_offering_ids)
    update_event_listing = _Part("offerings", OfferingStore.update_event_listing)
    query_listing = _Part("offerings", OfferingStore.query_listing)

    # waitlist_store.py: the waitlist of each event
    waitlist_entry = _Part("waitlist", DynamoWaitlistStore.waitlist_entry)
    waitlist_queue_key = _Part("waitlist", DynamoWaitlistStore.waitlist_queue_key)
    waitlist_join = _Part("waitlist", DynamoWaitlistStore.waitlist_join)
    waitlist_position = _Part("waitlist", DynamoWaitlistStore.waitlist_position)
    waitlist_leave = _Part("waitlist", DynamoWaitlistStore.waitlist_leave)
    waitlist_head = _Part("waitlist", DynamoWaitlistStore.waitlist_head)
    waitlist_offers = _Part("waitlist", DynamoWaitlistStore.waitlist_offers)
    waitlist_claim = _Part("waitlist", DynamoWaitlistStore.waitlist_claim)
    waitlist_offered = _Part("waitlist", DynamoWaitlistStore.waitlist_offered)
    waitlist_unclaim = _Part("waitlist", DynamoWaitlistStore.waitlist_unclaim)
    waitlist_close = _Part("waitlist", DynamoWaitlistStore.waitlist_close)
    waitlist_skip = _Part("waitlist", DynamoWaitlistStore.waitlist_skip)
    waitlist_offer_failed = _Part("waitlist", DynamoWaitlistStore.waitlist_offer_failed)
    waitlist_drop_offer = _Part("waitlist", DynamoWaitlistStore.waitlist_drop_offer)
    waitlist_line = _Part("waitlist", DynamoWaitlistStore.waitlist_line)

    # cancellation_store.py: an event's cancellation, its bulk job, its booking index
    event_cancelled = _Part("cancellations", DynamoCancellationStore.event_cancelled)
    mark_event_cancelled = _Part("cancellations", DynamoCancellationStore.mark_event_cancelled)
    cancel_request = _Part("cancellations", DynamoCancellationStore.cancel_request)
    next_cancel_attempt = _Part("cancellations", DynamoCancellationStore.next_cancel_attempt)
    finish_cancellation = _Part("cancellations", DynamoCancellationStore.finish_cancellation)
    cancelling_events = _Part("cancellations", DynamoCancellationStore.cancelling_events)
    event_booking_ids = _Part("cancellations", DynamoCancellationStore.event_booking_ids)
    event_booking_page = _Part("cancellations", DynamoCancellationStore.event_booking_page)
    event_booking_times = _Part("cancellations", DynamoCancellationStore.event_booking_times)
    sold_positions = _Part("cancellations", DynamoCancellationStore.sold_positions)

    # expiry_buckets.py: the holds of each expiry bucket
    due_in_bucket = _Part("expiry", DynamoExpiryIndex.due_in_bucket)
    bucket_booking_ids = _Part("expiry", DynamoExpiryIndex.bucket_booking_ids)

    # block_store.py: an offering's blocked places
    put_block = _Part("blocks", DynamoBlockStore.put_block)
    get_block = _Part("blocks", DynamoBlockStore.get_block)
    list_blocks = _Part("blocks", DynamoBlockStore.list_blocks)
    delete_block = _Part("blocks", DynamoBlockStore.delete_block)
    take_from_block = _Part("blocks", DynamoBlockStore.take_from_block)

    # code_store.py: an offering's discount and access codes and their counters
    put_code = _Part("codes", DynamoCodeStore.put_code)
    get_code = _Part("codes", DynamoCodeStore.get_code)
    list_codes = _Part("codes", DynamoCodeStore.list_codes)
    end_code = _Part("codes", DynamoCodeStore.end_code)
    ensure_allowance = _Part("codes", DynamoCodeStore.ensure_allowance)
    ensure_comps = _Part("codes", DynamoCodeStore.ensure_comps)
    comps_given = _Part("codes", DynamoCodeStore.comps_given)
    count_code_try = _Part("codes", DynamoCodeStore.count_code_try)

    # personal_data_store.py: the ended-bookings index and a booking's personal data
    ended_bookings = _Part("personal_data", PersonalDataRecords.ended_bookings)
    customer_bookings = _Part("personal_data", PersonalDataRecords.customer_bookings)
    erase_booking_records = _Part("personal_data", PersonalDataRecords.erase_booking_records)
    erase_customer_notes = _Part("personal_data", PersonalDataRecords.erase_customer_notes)
    erase_customer_lines = _Part("personal_data", PersonalDataRecords.erase_customer_lines)

    def __init__(self, table_name: str, client: Any | None = None) -> None:
        self.db = Table(table_name, client)
        self.bookings = BookingRecords(self.db)
        self.inventory = InventoryStore(self.db)
        self.offerings = OfferingStore(self.db)
        self.waitlist = DynamoWaitlistStore(self.db)
        self.cancellations = DynamoCancellationStore(self.db)
        self.expiry = DynamoExpiryIndex(self.db)
        self.codes = DynamoCodeStore(self.db)
        self.blocks = DynamoBlockStore(self.db)
        self.personal_data = PersonalDataRecords(self.db)
        self._parts_made: dict[type, Any] = {}
        bind_product_calls()

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

    def product_part(self, part: type[_PartType]) -> _PartType:
        """The product's store part of that class on this store's table handle (made on the first
        call of a product's: a function that never makes one never builds them)."""
        found = self._parts_made.get(part)
        if found is None:
            found = self._parts_made[part] = part(self.db.table, self.db.client)
        found.client = self.db.client   # a product's part holds a client of its own: keep it the store's
        return found

    def _product_parts(self) -> list[Any]:
        """Every registered product's store part on this store's handle."""
        return [self.product_part(part) for part in bind_product_calls()]


#: product part class -> the names the store answers through it (bound so far)
_BOUND: dict[type, tuple[str, ...]] = {}


def bind_product_calls() -> dict[type, tuple[str, ...]]:
    """Declare on ``BookingStore`` every call the registered products' store parts declare, as
    its own calls are declared (once per part; a product registered later is bound by the next
    store made; one no longer registered, such as a test's, loses its calls). A call the core
    answers, or another part declares, stops it."""
    current = [products.resolve(reference) for product in products.registered() for reference in product.store_parts]
    for part in [part for part in _BOUND if part not in current]:
        for name in _BOUND.pop(part):
            delattr(BookingStore, name)
    for part in current:
        if part in _BOUND:
            continue
        calls = declared_calls(part)
        for function in calls:
            if function.__name__ in vars(BookingStore):
                raise TypeError(f"{part.__qualname__}.{function.__name__} is a call BookingStore already answers")
        for function in calls:
            setattr(BookingStore, function.__name__, _ProductCall(part, function))
        _BOUND[part] = tuple(function.__name__ for function in calls)
    return dict(_BOUND)


def parts_of(store: type) -> dict[str, tuple[type, tuple[str, ...]]]:
    """The store's parts as declared on it: part attribute -> (its class, the calls it answers)."""
    found: dict[str, tuple[type, tuple[str, ...]]] = {}
    for name, value in vars(store).items():
        if isinstance(value, _Part):
            cls, names = found.get(value.part, (value.cls, ()))
            found[value.part] = (cls, (*names, name))
    return found


#: The store's parts: the attribute each is kept under, its class, and the calls of the whole store
#: it answers (read from the declarations above; each call is declared once, as a class attribute).
PARTS = parts_of(BookingStore)
