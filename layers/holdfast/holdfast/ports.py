"""The engine's ports: what the services need from storage, the payment provider, Step Functions,
e-mail and time, each as a narrow ``Protocol``, and the outcomes those parts report.

Services import this module, never an adapter: the adapters (holdfast/adapters/) implement these
Protocols structurally and raise the exceptions below, and wiring.py hands the concrete objects in.
A Protocol names only what one use case calls, so a fake for a service test implements a page, not
the whole table; a service that needs several composes them (``HoldStore`` below).

Nothing here does I/O or imports more than typing, dataclasses and datetime: every function
imports this module at its cold start (through the services and http.py), so it loads no SDK, no
pydantic and no adapter (tests/unit/test_ports.py keeps it so).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence

if TYPE_CHECKING:
    import random

    from .domain.booking import Booking, JournalEntry
    from .domain.fiscal import FiscalSettings
    from .domain.inventory import Move, Places, Pool, Swap

#: One item of a storage write and the label its failure is reported under. Services get these
#: from the store's methods and hand them back in a ``Change``; only the adapter looks inside.
Labelled = tuple[str, dict[str, Any]]


# ==================================================================================== outcomes

class StoreError(Exception):
    """Base of the storage outcomes callers branch on."""


class TransientStoreError(StoreError):
    """Throttling or a transaction conflict: nothing was written; retrying is safe."""


class StaleBooking(StoreError):
    """The booking changed since it was read; re-read and decide again."""


class PlacesTaken(StoreError):
    """A claim's conditional write failed: the places are not (or no longer) there."""

    def __init__(self, failed: list[str]) -> None:
        super().__init__(f"places not available: {failed}")
        self.failed = failed


class DuplicateRequest(StoreError):
    """The idempotency record exists: the request was already carried out."""


class ItemExists(StoreError):
    """A create found its item already there (an event, a resource id taken)."""


class SalesStopped(StoreError):
    """The event's sale gate is closed (it was cancelled): the hold wrote nothing."""


class HoldLimitReached(StoreError):
    """The customer already has as many active holds for the event as it allows; nothing written.
    ``offering``: which offering's limit (an order's further line), None for the booking's own."""

    def __init__(self, customer_id: str, offering: str | None = None) -> None:
        super().__init__(customer_id)
        self.offering = offering


class HoldsFromAddressReached(StoreError):
    """The network address the hold came from already has as many live holds for the offering as
    it allows, whatever accounts made them; nothing written. ``offering``: which offering's cap
    (an order's further offering), None for the booking's own."""

    def __init__(self, address: str, offering: str | None = None) -> None:
        super().__init__(address)
        self.offering = offering


class VerifierUnavailable(Exception):
    """The challenge verifier could not say whether a token is good (unreachable, an odd answer)."""


class ChallengeVerifier(Protocol):
    """Tells a solved challenge (CAPTCHA) token from any other (adapters/captcha.py)."""

    def verify(self, token: str, ip: str | None = None) -> bool: ...


class EventNotFound(StoreError):
    """The event to cancel does not exist."""


class AlreadyCancelled(StoreError):
    """The event was cancelled before (by another request key)."""


class KeyUsed(StoreError):
    """The organizer's Idempotency-Key already names a cancel request."""


class ProviderError(Exception):
    """Base of the payment provider's outcomes."""


class ProviderRejected(ProviderError):
    """The provider refused the request; nothing happened there."""

    def __init__(self, code: str, description: str = "", status: int | None = None) -> None:
        super().__init__(f"{code}: {description}")
        self.code = code
        self.status = status


class ProviderNotFound(ProviderRejected):
    """The provider has no such payment or refund."""


class ProviderOutcomeUnknown(ProviderError):
    """Timeout, dropped connection, 5xx, 202 or an unreadable answer: the effect may have happened."""


# ========================================================================= values the ports take

@dataclass(frozen=True)
class IdempotencyRecord:
    """What a hold stores under the customer's Idempotency-Key, in the hold's own transaction."""

    customer_id: str
    key: str
    scope: str
    fingerprint: str
    result_id: str
    #: Made by the system on the customer's behalf (a waitlist offer): kept apart from the keys
    #: customers send, so a customer can never pre-empt or replay a system request's key.
    system: bool = False


@dataclass(frozen=True)
class Change:
    """Everything one write changes, committed by ``Commits.commit`` in one transaction or not at all.

    ``after`` alone (``before`` None) is a new hold: the booking, its claims (``move`` of
    ``places``, else the booking's own), the idempotency record and the customer's hold slot
    (``hold_limit``: the cap, None to count without one). ``before`` and ``after`` are a change of
    a booking, conditioned on ``before.version``. With neither it is a write of ``items`` alone (a
    gate pass, an exit payment, a drive-up ticket). ``items`` are the labelled items the store's own
    methods built (granules, tickets, gate passes and cases, exit payments), carried unopened.
    """

    before: Booking | None = None
    after: Booking | None = None
    journal: JournalEntry | None = None
    #: The booking's change event for the outbox (the store adds who and which version).
    outbox: dict[str, Any] | None = None
    move: Move | None = None
    places: Places | None = None
    items: tuple[Labelled, ...] = ()
    idempotency: IdempotencyRecord | None = None
    hold_limit: int | None = None
    #: A new hold: the version of the offering it decided on (the sale gate refuses it, SalesStopped,
    #: once the offering's terms moved past it).
    offering_version: int | None = None
    #: An order's other offerings: each one's version the hold decided on, checked at its own gate.
    other_versions: tuple[tuple[str, int], ...] = ()
    #: An order's other offerings whose hold limit its lines count toward: each one's cap.
    other_hold_limits: tuple[tuple[str, int], ...] = ()
    #: A new hold whose booking has a ``counted_address``: the cap on that address's live holds of
    #: the booking's offering, and of each further offering of an order (``other_address_limits``).
    #: (None: counted without a cap, an order's offering that sets none beside one that does)
    address_limit: int | None = None
    other_address_limits: tuple[tuple[str, int | None], ...] = ()
    #: A change of a booking that gives places back and takes others in the same write (an
    #: exchange): its taken claims fail as ``PlacesTaken``, its given ones as ``StaleBooking``.
    swap: Swap | None = None


# ======================================================================================= time

class Clock(Protocol):
    """Now, as an aware UTC datetime (clock.system_clock; tests pass a settable one)."""

    def __call__(self) -> datetime: ...


# ==================================================================================== storage

class EventReads(Protocol):
    def get_event(self, event_id: str, consistent: bool = False) -> dict[str, Any] | None: ...

    def event_cancelled(self, event_id: str) -> bool:
        """A strongly consistent look at the cancellation flag alone (never a cached event)."""
        ...


class BookingReads(Protocol):
    def get_booking(self, booking_id: str) -> Booking | None: ...

    def get_booking_with_journal(self, booking_id: str) -> tuple[Booking | None, list[JournalEntry]]: ...

    def get_bookings(self, booking_ids: list[str]) -> list[Booking]: ...


class Commits(Protocol):
    """The one way to write: a ``Change`` in one transaction. When it writes nothing it says why,
    from the label of the item whose condition failed: DuplicateRequest (the idempotency record),
    ItemExists (a new booking's id taken), StaleBooking (the booking's version, or any of the
    change's ``items``: what it guarded moved since it was read), SalesStopped (the sale gate),
    HoldLimitReached (the customer's hold slots), PlacesTaken (the claims, by unit), and
    TransientStoreError for a conflict that outlived the retries."""

    def commit(self, change: Change) -> None: ...


class BookingSaves(Commits, Protocol):
    """A status change: ``Change(before, after, ...)``."""


class InventoryReads(Protocol):
    """The inventory a kind reads through (adapters/inventory_store.py implements it)."""

    def read_pools(self, event_id: str) -> list[Pool]: ...

    def read_units(self, event_id: str, unit_ids: Iterable[str]) -> dict[str, dict[str, Any]]: ...

    def list_units(self, event_id: str) -> list[dict[str, Any]]:
        """Every unit as ``{"unit": id, "state": state}``, consistent, in unit order."""
        ...

    def seat_states(self, event_id: str) -> dict[str, str]: ...

    def read_granules(self, resource_id: str, utc_days: Iterable[str]) -> dict[str, dict[str, Any]]: ...


class InventoryBatch(Protocol):
    """The hold's one read: the inventory items and the items the hold also needs (its
    idempotency record, a sale gate shard) in one strongly consistent batch."""

    def pool_keys(self, event_id: str) -> list[dict[str, str]]: ...

    def unit_keys(self, event_id: str, unit_ids: Iterable[str]) -> list[dict[str, str]]: ...

    def batch_get(self, keys: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, Any]]: ...

    def pools_of(self, items: Iterable[dict[str, Any]]) -> list[Pool]: ...

    def units_of(self, found: dict[tuple[str, str], dict[str, Any]]) -> dict[str, dict[str, Any]]: ...


class HoldWrites(Commits, Protocol):
    """A new hold is ``Change(after=booking, idempotency=..., hold_limit=...)``."""

    def get_idempotency(self, customer_id: str, key: str, scope: str, system: bool = False) -> dict[str, Any] | None: ...

    def idempotency_key(self, customer_id: str, key: str, scope: str, system: bool = False) -> dict[str, str]:
        """Where ``get_idempotency`` looks, for a batched read."""
        ...

    def sale_gate_key(self, event_id: str, rng: random.Random) -> dict[str, str]:
        """One shard of the event's sale gate, picked by ``rng`` (its ``cancelled_at`` says the
        event was cancelled)."""
        ...

    def customer_booking_ids(self, customer_id: str, event_id: str) -> list[str]: ...


class ExpiryIndex(Protocol):
    def bucket_booking_ids(self, bucket: str, event_id: str | None = None, indexed: bool = False) -> list[str]:
        """The holds due in the bucket; ``indexed``: only the shards its markers name
        (adapters/expiry_buckets.py), for a tick whose input says its markers are written."""
        ...

    def due_in_bucket(self, bucket: str, indexed: bool = False) -> list[str]:
        """Bookings whose next look falls in the bucket; ``indexed``: none without a payment check
        marked in the bucket (adapters/expiry_buckets.py)."""
        ...

    def due_bookings(self, before: str, limit: int = 100) -> list[str]: ...


class ReviewQueue(Protocol):
    def list_reviews(self) -> list[Booking]: ...

    def review_page(self, limit: int, cursor: str | None) -> tuple[list[Booking], str | None]:
        """Up to ``limit`` bookings in review and the opaque cursor of the next page (None: the
        last); ValueError for a cursor this store did not make."""
        ...


class LifecycleStore(EventReads, BookingReads, BookingSaves, Protocol):
    """What every booking lifecycle service uses: read the event and the booking, save a change."""


class Codes(Protocol):
    """An offering's codes and their counters (adapters/code_store.py, domain/codes.py)."""

    def put_code(self, offering_id: str, code: dict[str, Any]) -> None:
        """Raises ItemExists when the offering has the code already."""

    def get_code(self, offering_id: str, code: str) -> dict[str, Any] | None: ...

    def list_codes(self, offering_id: str) -> list[dict[str, Any]]: ...

    def end_code(self, offering_id: str, code: str, at: str) -> bool: ...

    def ensure_allowance(self, offering_id: str, code: str, customer_id: str, per_customer: int) -> None: ...

    def ensure_comps(self, offering_id: str) -> None:
        """The offering's counter of comps, made on its first comp."""

    def comps_given(self, offering_id: str) -> int:
        """The places of the offering given away and kept (confirmed comps)."""

    def count_code_try(self, customer_id: str, minute: str, limit: int, now_epoch: int) -> bool: ...


class Blocks(Protocol):
    """An offering's blocks: places the organizer keeps out of sale (adapters/block_store.py)."""

    def put_block(self, offering_id: str, block: dict[str, Any], places: Places) -> None:
        """Raises PlacesTaken (the claims that failed) or ItemExists; nothing is written then."""

    def get_block(self, offering_id: str, block_id: str) -> dict[str, Any] | None: ...

    def list_blocks(self, offering_id: str) -> list[dict[str, Any]]: ...

    def delete_block(self, offering_id: str, block: dict[str, Any]) -> bool:
        """False when the block was gone already (nothing written)."""

    def take_from_block(self, offering_id: str, block: dict[str, Any], places: Places, booking_id: str
                        ) -> tuple[Labelled, ...]:
        """The items that move ``places`` out of ``block`` (as read) into the booking's hold, for a
        ``Change``'s ``items``: the block's places less these (gone when none are left), on the
        condition that the block is as read, and each place moved from blocked to held."""


class BlockStore(Blocks, InventoryReads, EventReads, Protocol):
    """Blocks, the inventory a block is planned on and the offerings they are of (services/blocks.py)."""


class CodeStore(Codes, EventReads, Protocol):
    """Codes and the offerings they are of (services/codes.py)."""


class HoldStore(LifecycleStore, InventoryReads, InventoryBatch, HoldWrites, ExpiryIndex, Protocol):
    """Holds, their releases and expiry (services/bookings.py, releases.py, hold_reads.py)."""


class Catalog(Protocol):
    def put_event(self, event: dict[str, Any], pool_sizes: list[int] | None, unit_ids: list[str] | None,
                  fingerprint: str) -> None: ...

    def get_event(self, event_id: str, consistent: bool = False) -> dict[str, Any] | None: ...

    def query_listing(self, pk: str, lower: str, upper: str, limit: int, start: dict[str, str] | None,
                      one_request: bool = False) -> tuple[list[dict[str, Any]], bool]: ...

    def owned_offerings(self, organizer_id: str) -> list[dict[str, Any]]:
        """The organizer's offerings, newest first."""

    def comps_given(self, offering_id: str) -> int:
        """The places of the offering given away and kept (confirmed comps)."""

    def update_event_listing(self, event_id: str, expected_version: int, changes: dict[str, Any],
                             drop_index: list[tuple[str, str]], put_index: list[dict[str, Any]],
                             outbox: dict[str, Any] | None = None, terms_version: int | None = None) -> None: ...


class CatalogStore(Catalog, InventoryReads, Protocol):
    """Creating and listing offerings (their counts come from the inventory)."""


class Waitlist(Protocol):
    def waitlist_entry(self, event_id: str, customer_id: str) -> dict[str, Any] | None: ...

    def waitlist_queue_key(self, joined_at: str, entry_id: str) -> str: ...

    def waitlist_join(self, event_id: str, entry: dict[str, Any], rejoin_states: tuple[str, ...]) -> bool: ...

    def waitlist_position(self, event_id: str, queue_sk: str) -> int: ...

    def waitlist_leave(self, event_id: str, customer_id: str, entry: dict[str, Any]) -> bool: ...

    def waitlist_head(self, event_id: str) -> dict[str, Any] | None: ...

    def waitlist_line(self, event_id: str, limit: int) -> list[dict[str, Any]]: ...

    def waitlist_offers(self, event_id: str) -> list[dict[str, Any]]: ...

    def waitlist_claim(self, event_id: str, head: dict[str, Any], at: str) -> bool: ...

    def waitlist_offered(self, event_id: str, offer: dict[str, Any], booking_id: str, hold_expires_at: str) -> bool: ...

    def waitlist_unclaim(self, event_id: str, offer: dict[str, Any]) -> bool: ...

    def waitlist_close(self, event_id: str, offer: dict[str, Any], state: str) -> bool: ...

    def waitlist_skip(self, event_id: str, head: dict[str, Any], reason: str) -> bool: ...

    def waitlist_offer_failed(self, event_id: str, offer: dict[str, Any], failures: int) -> bool: ...

    def waitlist_drop_offer(self, event_id: str, offer: dict[str, Any], reason: str) -> bool: ...


class WaitlistStore(LifecycleStore, Waitlist, InventoryReads, HoldWrites, Protocol):
    """The waitlist offers held places through the hold (services/waitlist.py)."""


class EventBookings(Protocol):
    """The index of an event's bookings, which the cancellation job and announcements walk."""

    def event_booking_ids(self, event_id: str) -> list[str]: ...

    def get_bookings(self, booking_ids: list[str]) -> list[Booking]: ...


class Cancellations(EventBookings, Protocol):
    def mark_event_cancelled(self, event_id: str, reason: str, key: str, fingerprint: str, at: str,
                             by: dict[str, str] | None = None, catalog_version: int | None = None,
                             drop_index: Sequence[tuple[str, str]] = ()) -> None:
        """Raises EventNotFound, AlreadyCancelled, KeyUsed or (with ``catalog_version``, the event
        changed since it was read) StaleBooking when it changed nothing; ``drop_index``: the
        listing's index items of the event as read, deleted with the cancel."""
        ...

    def cancel_request(self, key: str) -> dict[str, Any] | None: ...

    def next_cancel_attempt(self, event_id: str, expected: int) -> bool: ...

    def finish_cancellation(self, event_id: str, summary: dict[str, Any], at: str) -> bool: ...

    def cancelling_events(self) -> list[str]: ...


class Listing(Catalog, EventReads, InventoryReads, Protocol):
    """The public catalog and seat maps (services/listing.py)."""


class NotificationLog(Protocol):
    def record_notification(self, customer_id: str, dedup_id: str, notification: dict[str, Any]) -> bool: ...

    def notification_recorded(self, customer_id: str, dedup_id: str) -> bool: ...

    def forget_notification(self, customer_id: str, dedup_id: str) -> None: ...

    def list_notifications(self, customer_id: str) -> list[dict[str, Any]]: ...

    def mark_notification(self, customer_id: str, dedup_id: str, was: str, now: str) -> bool:
        """Set a recorded notification's ``delivery`` from ``was`` to ``now``; False when it was not
        ``was`` (another delivery moved it first)."""
        ...

    def booking_outbox(self, booking_id: str, version: int) -> dict[str, Any] | None:
        """The outbox event of the booking's change ``version`` while it is kept, else None."""
        ...


class MessageReads(Protocol):
    """What a message says about a booking: the booking and its offering as they are now."""

    def get_booking(self, booking_id: str) -> Booking | None: ...

    def get_event(self, event_id: str, consistent: bool = False) -> dict[str, Any] | None: ...

    def message_reads(self, booking_ids: list[str], event_ids: list[str], notes: list[tuple[str, str]]
                      ) -> tuple[dict[str, Booking], dict[str, dict[str, Any]], set[tuple[str, str]]]:
        """What a batch of messages reads, in one request where the store can: the bookings and
        offerings that exist, by id, and which (customer, dedup id) notifications are recorded."""
        ...


class NotificationStore(NotificationLog, EventBookings, MessageReads, Protocol):
    """E-mails sent once per notification, to one booking or to an event's bookings."""


class PersonalData(Protocol):
    """The ended bookings whose personal data is due for erasure, a customer's bookings, and the
    items besides the booking that carry personal data (adapters/personal_data_store.py)."""

    def ended_bookings(self, before: str, limit: int = 100) -> list[str]: ...

    def customer_bookings(self, customer_id: str) -> list[str]: ...

    def list_notifications(self, customer_id: str) -> list[dict[str, Any]]: ...

    def erase_booking_records(self, booking_id: str, customer_id: str, event_id: str,
                              last_change: str | None = None) -> None: ...

    def erase_customer_notes(self, customer_id: str) -> None: ...

    def erase_customer_lines(self, customer_id: str) -> list[str]:
        """Leave every line the customer joined; returns the events whose turn of theirs is left
        because an offer is in flight for it (claimed, or held for them)."""
        ...


class PersonalDataStore(EventReads, BookingReads, BookingSaves, PersonalData, Protocol):
    """What erasing and exporting a customer's data reads and writes."""


class SurgeQueue(Protocol):
    """The waiting room's numbers (adapters/surge.py)."""

    def queue_state(self, event_id: str) -> dict[str, int]: ...

    def take_number(self, event_id: str, now_ms: int) -> dict[str, int]: ...

    def advance_horizon(self, event_id: str, expected_admitted: int, admitted: int, advanced_at_ms: int) -> bool: ...

    def get_entry(self, event_id: str, customer_id: str) -> dict[str, Any] | None: ...

    def put_entry(self, event_id: str, customer_id: str, seq: int, now_ms: int, replaces_seq: int | None) -> bool: ...

    def mark_admitted(self, event_id: str, customer_id: str, seq: int, now_ms: int) -> int: ...


class RateLimits(Protocol):
    def rate_take(self, scope: str, customer_id: str, now_ms: int, interval_ms: int, ceiling_ms: int) -> int | None:
        """None when the request is allowed, else the stored arrival time (TransientStoreError when
        the store throttled)."""
        ...


class AdmissionStore(EventReads, InventoryReads, Protocol):
    """What the waiting room reads of the event itself."""


class PaymentStore(LifecycleStore, InventoryReads, ExpiryIndex, ReviewQueue, Protocol):
    """Payments, refunds, reconciliation, reviews and resolutions (they replan places). A payment
    that is not a booking's goes to its product's handler with this same store (kinds/products.py)."""


class CancellationStore(PaymentStore, Cancellations, Protocol):
    """An event's cancellation and its bulk job (which resolves each booking as payments do)."""


class EventCancellationStore(Cancellations, EventReads, Protocol):
    """The organizer's cancel request and the sweeper's look for a job that died."""


class ExportStore(EventBookings, Protocol):
    """What the CSV exports read (services/exports.py): the organizer's offerings and each one's
    bookings (a product's export reads its own items through the same store)."""

    def owned_offerings(self, organizer_id: str) -> list[dict[str, Any]]: ...

    def owned_offering_ids(self, organizer_id: str) -> list[str]:
        """The organizer's offerings' ids from its index alone, in id order (one still being
        created may be among them)."""

    def get_event(self, event_id: str, consistent: bool = False) -> dict[str, Any] | None: ...

    def event_booking_page(self, event_id: str, after: str | None, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` ``(position, booking_id)`` of the event's bookings after ``after``, in
        ``event_booking_ids``' order; fewer only at the end."""

    def sold_positions(self, event_id: str, before: tuple[str, str] | None, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` of the event's confirmed bookings as ``(placed_at, booking_id)``, newest
        first, older than the position ``before`` (None: from the newest); fewer only at the end."""

    def event_booking_times(self, event_id: str) -> list[tuple[str, str]]:
        """Every booking of the event as ``(placed_at, booking_id)`` from its index alone, in no
        particular order ("" for an entry written before the index carried the time)."""


class ExportJobStore(Protocol):
    """Export jobs (services/export_jobs.py): stored once, read, and finished once."""

    def add_job(self, organizer_id: str, job: dict[str, Any], ttl: int) -> bool: ...

    def get_job(self, organizer_id: str, export_id: str) -> dict[str, Any] | None: ...

    def finish_job(self, organizer_id: str, export_id: str, changes: dict[str, Any]) -> bool: ...

    def note_running(self, organizer_id: str, export_id: str, facts: dict[str, Any]) -> bool:
        """Note facts on a job still running (an attempt that began, a message queued again);
        False when the job had an outcome."""

    def job_page(self, organizer_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
        """Up to ``limit`` jobs, newest first, after the position ``after``; and the position to
        read on from (None at the end)."""


class ExportJobQueue(Protocol):
    """The queue that runs export jobs: a message names one job."""

    def send(self, message: dict[str, Any]) -> None: ...


class ExportFiles(Protocol):
    """Where an export job's file is written, and a link that downloads it for a while."""

    def put(self, key: str, body: bytes, filename: str) -> None: ...

    def link(self, key: str, seconds: int) -> str: ...


class AuditLog(Protocol):
    """Each organizer's audit log (domain/audit.py's entries), append-only."""

    def append(self, organizer_id: str, entry: dict[str, Any]) -> None: ...

    def page(self, organizer_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
        """Up to ``limit`` entries, newest first, after the sort key ``after``; and the sort key
        to read on from (None at the end)."""


class WebhookStore(Protocol):
    """An organizer's webhook endpoints and their deliveries (docs/api.md, "Webhooks")."""

    def add_webhook(self, organizer_id: str, webhook: dict[str, Any], most: int) -> bool:
        """Store a new endpoint unless the organizer has ``most`` already (False then)."""

    def list_webhooks(self, organizer_id: str) -> list[dict[str, Any]]: ...

    def get_webhook(self, organizer_id: str, webhook_id: str) -> dict[str, Any] | None: ...

    def delete_webhook(self, organizer_id: str, webhook_id: str) -> bool:
        """False when there was none."""

    def add_delivery(self, delivery: dict[str, Any]) -> bool:
        """Store a new delivery; False when one with its id exists (a repeated fact)."""

    def get_delivery(self, webhook_id: str, delivery_id: str) -> dict[str, Any] | None: ...

    def update_delivery(self, webhook_id: str, delivery_id: str, generation: int, changes: dict[str, Any]) -> bool:
        """Set ``changes`` if the delivery is still at ``generation``; False otherwise."""

    def delivery_page(self, webhook_id: str, limit: int, after: str | None
                      ) -> tuple[list[dict[str, Any]], str | None]:
        """Up to ``limit`` deliveries, newest first, after the index key ``after``; and the key to read on from."""


class WebhookAttempts(Protocol):
    """The queue of delivery attempts: a message is one attempt, due after ``delay`` seconds."""

    def send(self, message: dict[str, Any], delay: int = 0) -> None: ...


class WebhookTransport(Protocol):
    """The network, as an attempt sees it: names resolved now, and one POST to one address."""

    def resolve(self, host: str, port: int) -> list[str]: ...

    def post(self, scheme: str, host: str, port: int, path: str, address: str, headers: dict[str, str],
             body: bytes, timeout: float) -> int:
        """The answer's status code; raises OSError (or a subclass) when there is none."""


class FiscalReads(Protocol):
    def get_fiscal(self, organizer_id: str) -> FiscalSettings | None:
        """The organizer's fiscal settings (receipts on), or None (receipts off)."""


class OrganizerDirectory(FiscalReads, Protocol):
    """Organizers and their API keys, stored by the keyed hash of each key (never the key)."""

    def put_organizer(self, organizer: dict[str, Any], key: dict[str, Any]) -> None:
        """The organizer with its first key, together; ItemExists if the id or the key is taken."""

    def get_organizer(self, organizer_id: str) -> dict[str, Any] | None: ...

    def list_organizers(self) -> list[dict[str, Any]]: ...

    def set_organizer_status(self, organizer_id: str, status: str, at: str) -> bool:
        """False when there is no such organizer."""

    def key_owner(self, key_hash: str) -> dict[str, Any] | None:
        """``{organizer_id, key_id, key_hash, last_used_at?}`` of a live key (a consistent read)."""

    def organizer_keys(self, organizer_id: str) -> list[dict[str, Any]]:
        """Each live key's ``key_id``, ``created_at`` and ``last_used_at`` (no hash)."""

    def add_key(self, organizer_id: str, key: dict[str, Any], max_keys: int) -> bool:
        """False when the organizer already holds ``max_keys`` (nothing written); ItemExists if the
        key is taken."""

    def delete_key(self, organizer_id: str, key_id: str) -> str:
        """``deleted``, ``missing`` (no such key of this organizer) or ``last`` (its only key: kept)."""

    def touch_key(self, key_hash: str, at: str, unless_since: str) -> None:
        """Record ``at`` as the key's last use unless it was used at ``unless_since`` or later;
        best effort (a lost touch costs a minute of precision, never the request)."""

    def put_fiscal(self, organizer_id: str, settings: FiscalSettings, at: str) -> None:
        """Replace the organizer's fiscal settings whole."""

    def delete_fiscal(self, organizer_id: str) -> bool:
        """Turn receipts off; False when they were off already."""


# ======================================================================== the world outside

class PaymentProvider(Protocol):
    """A YooKassa-API-v3 provider (adapters/provider.py). Every call ends in an answer,
    ProviderRejected (nothing happened) or ProviderOutcomeUnknown (repeat with the same key)."""

    def create_payment(self, *, amount: dict[str, str], description: str, metadata: dict[str, str],
                       capture: bool, return_url: str, idempotence_key: str,
                       receipt: dict[str, Any] | None = None) -> dict[str, Any]:
        """``receipt``: the fiscal receipt (54-FZ) of an organizer with receipts on (domain/fiscal.py)."""

    def get_payment(self, payment_id: str) -> dict[str, Any]: ...

    def capture_payment(self, payment_id: str, amount: dict[str, str], idempotence_key: str) -> dict[str, Any]: ...

    def cancel_payment(self, payment_id: str, idempotence_key: str) -> dict[str, Any]: ...

    def find_payments(self, *, created_gte: str, created_lte: str, metadata: dict[str, str]) -> list[dict[str, Any]]: ...

    def create_refund(self, payment_id: str, amount: dict[str, str], description: str,
                      idempotence_key: str, receipt: dict[str, Any] | None = None) -> dict[str, Any]:
        """``receipt``: the refunded items, when the payment carried a receipt."""

    def get_refund(self, refund_id: str) -> dict[str, Any]: ...

    def list_refunds(self, payment_id: str) -> list[dict[str, Any]]: ...

    def create_receipt(self, body: dict[str, Any], idempotence_key: str) -> dict[str, Any]:
        """A fiscal receipt of its own (``POST /v3/receipts``): the settlement of a prepayment."""

    def get_receipt(self, receipt_id: str) -> dict[str, Any]:
        """A receipt as the provider has it now (``GET /v3/receipts/{id}``): ``pending`` while the
        register takes it, then ``succeeded`` or ``canceled``."""


class HoldExpiryScheduler(Protocol):
    """Starts the Step Functions execution that expires a hold's bucket."""

    def schedule(self, event_id: str, hold_expires_at: str) -> bool: ...


class ReconciliationStarter(Protocol):
    """Starts a reconciliation execution; a repeated (booking, tag) is a no-op."""

    def start(self, booking_id: str, tag: str, wait_seconds: float = 0) -> bool: ...


class CancellationJobs(Protocol):
    """The executions of an event's cancellation job, one name per attempt."""

    def start(self, event_id: str, attempt: int, reason: str) -> bool: ...

    def state(self, event_id: str, attempt: int) -> str | None:
        """RUNNING, SUCCEEDED, FAILED, TIMED_OUT or ABORTED; None if it was never started."""
        ...


class PaymentEventsQueue(Protocol):
    """The FIFO queue between the provider's webhook and the consumer."""

    def enqueue(self, *, event: str, object_id: str, status: str, payment_id: str) -> str: ...


@dataclass(frozen=True)
class Attachment:
    """A file sent with a message (a calendar entry, a parking pass's QR image)."""

    name: str
    content_type: str   # "text/calendar; method=REQUEST", "image/png"
    data: bytes


@dataclass(frozen=True)
class Message:
    """One rendered email (services/messages.py): what the sender puts on the wire, nothing more.
    ``inline`` attachments are shown inside the HTML (``cid:<name>``), the others are files."""

    subject: str
    text: str
    html: str = ""
    attachments: tuple[Attachment, ...] = ()
    inline: tuple[Attachment, ...] = ()


class EmailSender(Protocol):
    def send(self, to: str, message: Message) -> str:
        """Send one message; returns the provider's message id."""


class MailPolicy(Protocol):
    """Who may be mailed (services/mail_policy.py). An address appears only as its key (a digest of
    the normalised address, ``mail_policy.address_key``): the table keeps no address of its own."""

    def is_suppressed(self, address_key: str) -> bool: ...

    def suppress(self, address_key: str, reason: str, at: str) -> bool:
        """Put the address on the suppression list; False when it was on it already."""
        ...

    def contact(self, customer_id: str, address_key: str) -> dict[str, Any] | None:
        """The customer's standing with the address: ``status`` ``pending`` (with ``token_hash``
        and ``expires_at``) or ``confirmed``; None when the customer never used it."""
        ...

    def request_confirmation(self, customer_id: str, address_key: str, token_hash: str, expires_at: str,
                             at: str) -> bool:
        """Start the address's confirmation: True for exactly one caller while no request is
        pending (an expired one may be replaced) and the address is not confirmed."""
        ...

    def withdraw_confirmation(self, customer_id: str, address_key: str, token_hash: str) -> None:
        """Take back a pending request whose message could not be sent (only that request)."""
        ...

    def confirm_contact(self, customer_id: str, address_key: str, token_hash: str, now: str) -> bool:
        """Confirm on the pending request's token before it expires; True also when already confirmed."""
        ...

    def pending_contacts(self, customer_id: str, now: str) -> int:
        """How many addresses the customer named are waiting to be confirmed (not lapsed at ``now``)."""
        ...

    def claim_new_address(self, customer_id: str, address_key: str, day: str, limit: int, expires: int) -> bool:
        """Count ``address_key`` among the customer's new unconfirmed addresses of ``day`` (once
        however often it is named); False when ``limit`` others were counted that day already."""
        ...

    def own_contact(self, customer_id: str, address_key: str, at: str) -> None:
        """The customer's own verified address (their identity's): confirmed without a message."""
        ...

    def count_send(self, address_key: str, hour: str, dedup_id: str, limit: int, expires: int) -> bool:
        """Count one message to the address in the hour; False when ``limit`` are counted already.
        The same ``dedup_id`` counts once, however often it is asked."""
        ...


class SequenceLedger(Protocol):
    """Each check-in device's numbered passes, applied in order (adapters/checkin_sync_store.py;
    services/checkin_sync.py): a lot's gates, an event's doors."""

    def expected_seq(self, scope_id: str, device_id: str) -> int: ...

    def done(self, scope_id: str, device_id: str, seq: int) -> dict[str, Any] | None: ...

    def held_from(self, scope_id: str, device_id: str, seq: int, limit: int) -> dict[int, dict[str, Any]]: ...

    def hold(self, scope_id: str, device_id: str, seen: dict[str, Any]) -> str: ...

    def advance(self, scope_id: str, device_id: str, seq: int, pass_id: str, result: dict[str, Any]) -> bool: ...
