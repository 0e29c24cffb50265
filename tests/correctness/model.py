"""The booking system as one model: every operation a customer, the organizer, the provider, a
timer, the queue consumer, reconciliation, the sweeper or an operator can perform, run against the
real services with a controllable clock and an in-memory provider that injects faults and lets one
actor step in while another is half way (a capture in flight, a write about to land). The services
keep their items in a ``ModelStorage``: the table's fakes (``fake_storage``, tests/support/
fake_table.py, held to the adapters by tests/contract/storage/) or the adapters on moto in process
(``moto_storage``); the model is the same on both, and test_model_on_moto.py requires a handful of
seeds to tell the same story on each.

Two drivers share it: the hypothesis state machine in ``test_stateful.py`` (shrinks a failure to a
short story) and the seeded random walker in ``proof.py`` (``make proof``: thousands of histories,
each reproducible from its seed). Every operation draws its arguments from a ``Draw`` so that both
drivers run the same rules. After every operation the invariants of docs/invariants.md are checked
against the table and the provider's own records; ``settle`` ends a history by delivering whatever
is outstanding and checks the settled money rule.

Failures are AssertionErrors whose message starts with the rule's code (I1-I10, M1-M5, S1-S4,
E1-E3, R2-R4, W1-W3, SW1-SW2, X1-X2, C1-C2, A1, T1, V1, H1, O1-O3, Z1, B1, XC1-XC4, AH1), so a report names what broke.
"""
from __future__ import annotations

import hashlib
import json
import random
import sys
import uuid
from collections import Counter
from dataclasses import dataclass, replace
from datetime import timedelta
from decimal import Decimal
from typing import Any, Callable, Protocol, Sequence, TypeVar

from botocore.exceptions import ClientError

from holdfast.adapters.dynamo import BookingStore
from holdfast.adapters.organizers_store import OrganizerStore
from holdfast.adapters.surge import SurgeStore
from holdfast.products.appointments.schemas import SlotBookingIn
from holdfast.clock import iso, parse_iso
from holdfast.products.appointments.timeslots import parse_granule_key
from holdfast.domain.errors import BookingError, IdempotencyKeyReused, NotFound, SeatsUnavailable, SoldOut
from holdfast.domain import fiscal, transfers
from holdfast.domain.booking import Booking, settled_lines
from holdfast.domain.codes import is_code_pool
from holdfast.domain.exchange import EXCHANGED, REFUND_CHECK
from holdfast.domain.fiscal import FiscalSettings
from holdfast.domain.organizers import Caller
from holdfast.domain.statuses import BookingStatus
from holdfast.ports import Change, TransientStoreError
from holdfast.schemas import BookingIn
from holdfast.services.admission import WaitingRoomService
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.holder_address import holder_key
from holdfast.products.orders.services import OrderLine, OrderService, PlaceOrder
from holdfast.services.bookings import BookingService
from holdfast.services.cancellation_job import CancellationJob
from holdfast.services.blocks import BlockService
from holdfast.services.exchange import ExchangeService
from holdfast.services.money_at_provider import MoneyAtProvider
from holdfast.services.codes import CodeService
from holdfast.services.catalog import CatalogService
from holdfast.services.event_cancellation import EventCancellationService
from holdfast.services.fiscal_settings import FiscalSettingsService
from holdfast.services.listing import ListingService
from holdfast.services import transitions
from holdfast.services.personal_data import PersonalDataService
from holdfast.services.payments import PaymentOutcomeUnknown, PaymentService
from holdfast.services.reconciliation import ReconciliationService
from holdfast.services.resolutions import ResolutionService
from holdfast.services.reviews import ReviewService
from holdfast.services.settlements import Settlements, follow_start
from holdfast.products.events.tickets import EventKeys
from holdfast.services.sweeper import sweep
from holdfast.services.transfers import TransferService
from holdfast.domain.entry_rights import admits
from holdfast.products.events import tickets as event_tickets
from holdfast import kinds
from holdfast.services.waitlist import WaitlistService
from tests.support import toy_windows
from tests.support.fake_organizers import FakeOrganizerDirectory
from tests.support.fake_provider import FakeProvider
from tests.support.fake_table import FakeTableStore
from tests.support.fakes import FakeSurgeQueue, MemoryTable, Write
from tests.support.template import template

from .helpers import (
    ManualClock, Snapshot, check_invariants, check_money, in_review, own_payment_ids, snapshot_in_process,
    snapshot_of,
)
from .kind_cases import CASES, PARKING_WINDOW, KindCase, ParkingCase, SlotsCase, slot_hall

T = TypeVar("T")
#: Two organizers (issue 30): the first owns the model's events; the second owns nothing and only
#: ever tries the first one's objects (``other_organizer_intrudes``).
ORGANIZER = Caller("org-1", "key-1")
OTHER_ORGANIZER = Caller("org-2", "key-2")
#: A key of the first organizer limited to an offering the model never makes (issue 46): every
#: object of the model is outside it, so it must meet exactly what the second organizer meets.
#: (Making, listing and deleting keys, and the scope each route needs, change no booking, place or
#: money and happen before any service is called, in ``holdfast.entry.http.require_organizer``: they are
#: held by tests/handlers/test_scoped_keys.py and tests/contract/test_route_scopes.py, not here.)
LIMITED_KEY = Caller("org-1", "key-limited", key_name="promoter", offerings=frozenset({"not-a-model-offering"}))
S = BookingStatus
CUSTOMERS = ("ann", "bob", "cat")
KEYS = ("k1", "k2", "k3")
SEATS = ("A-1", "A-2", "A-3", "A-4")
#: "ga" is the offering of the kind under test (the name is the model's history: general
#: admission was its first kind); "seats" always names its seats on a seat map; "slot" is an
#: appointment service (the real slots kind, one-stage) whatever the kind under test; "hot" a
#: high-demand sale of the kind under test (booking it needs the waiting room's admission).
EVENTS = ("ga", "seats", "two_stage", "windows", "slot", "hot")
#: The times a customer asks of the "slot" service: two half-hour sessions of one morning, and one
#: a day later (the clock starts at 2030-01-01T12:00Z; ``clock_to_slot_start`` walks up to them).
SLOT_TIMES = ("2030-01-02T10:00:00Z", "2030-01-02T10:30:00Z", "2030-01-03T10:00:00Z")
SLOT_SEATS = 2
#: The waiting room of "hot": one admission a second, a token good for ten minutes.
ADMIT_PER_SECOND = 1.0
TOKEN_TTL = 600
TOKEN_KEY = b"model-admission-token-key"
DAY = 24 * 3600
PSEUDONYM_KEY = b"model-pseudonym-key"
#: The provider calls a day-long outage fails.
MODEL_CODE = "MODEL10"
#: What the model's doors check an order's tickets with (the event's scoped keys; the seed is the model's own).
ORDER_TICKET_KEYS = EventKeys(b"model-order-ticket-master-seed-0123")
CODE_USES = 2
#: A code of "ga" that takes everything off (issue 45): its holds are comps, confirmed without a payment.
COMP_CODE = "FREE100"
COMP_USES = 3
#: Exchanges allowed until a day before the start (issue 45): "ga", "seats" and "later" offer them.
EXCHANGES = {"exchange_until_hours": 24}
#: The price of "cheaper" (the others sell at 1500.00): what an exchange into it gives back.
CHEAPER = {"value": "1000.00", "currency": "RUB"}
#: The addresses the organizer gives orders to (``organizer_gives_order``).
GUESTS = ("guest1@example.org", "guest2@example.org")
#: The network addresses holds come from in ``network_hoards``, the key the bookings service stores
#: them under (the holder key secret's HMAC, wiring.holder_address), and the cap on one network's
#: live holds of "big" (issue 42, finding 13).
NETWORKS = ("203.0.113.7", "2001:db8::1")
HOLDER_KEY = "model-holder-key-0123456789"
NETWORK_CAP = 3
OUTAGE = ("get_payment", "create_payment", "create_refund", "get_refund", "cancel_payment")


FEES = {"cancellation": [{"until_hours": 750, "refund_percent": 100}, {"until_hours": 700, "refund_percent": 50},
                         {"until_hours": 0, "refund_percent": 0}]}


def event_bodies(kind: KindCase) -> dict[str, tuple[str, dict[str, Any], dict[str, Any]]]:
    """The organizer's event bodies and keys, and another body under the same key (a conflicting
    retry). Every offering but "seats" is of the kind under test."""
    return {
        # "ga" and "seats" let their bookings be exchanged until a day before the start (issue 45)
        "ga": ("ga", kind.body(4, max_per_booking=3, **EXCHANGES), kind.body(5, max_per_booking=3)),
        "seats": ("seats", {"capacity": None, "seat_map": {"seat_ids": list(SEATS)}, "max_per_booking": 3, **EXCHANGES},
                  {"capacity": None, "seat_map": {"seat_ids": [*SEATS, "A-5"]}, "max_per_booking": 3}),
        # the same seats a week later, the date an exchange moves a "seats" booking to (issue 45)
        "later": ("later", {"capacity": None, "seat_map": {"seat_ids": list(SEATS)}, "max_per_booking": 3,
                            "starts_at": "2030-02-08T20:00:00Z", **EXCHANGES},
                  {"capacity": None, "seat_map": {"seat_ids": list(SEATS)}, "max_per_booking": 2}),
        # with a cancellation policy with fees (issue 45): the whole price until 750 hours before
        # its start, half until 700, then nothing (the model's clock reaches each within a history)
        "two_stage": ("two", {**kind.body(3, max_per_booking=3, payment_mode="two_stage"), **FEES},
                      {**kind.body(2, max_per_booking=2, payment_mode="two_stage"), **FEES}),
        # The toy entry-windows kind (tests/support/toy_windows.py) whatever the kind under test:
        # two-stage by the kind's default, and a late payment whose window was resold opens a
        # conflict case with the other windows.
        "windows": ("win", {"capacity": 2, "max_per_booking": 2, "category": "windowed"},
                    {"capacity": 3, "max_per_booking": 2, "category": "windowed"}),
        # A high-demand sale: a booking needs the waiting room's token; one active hold a customer.
        "hot": ("hot", kind.body(3, max_per_booking=2, high_demand=True, max_holds_per_customer=1),
                kind.body(4, max_per_booking=2, high_demand=True, max_holds_per_customer=1)),
        # Roomy enough for one customer to try to sit on many holds (finding 13); only customer_hoards
        # books here, so the small events above keep their contention.
        # ... and for several accounts from one network address to try it (issue 42, finding 13: at
        # most NETWORK_CAP live holds from one address, network_hoards; AH1)
        "big": ("big", kind.body(12, max_per_booking=1, max_holds_per_address=NETWORK_CAP),
                kind.body(13, max_per_booking=1, max_holds_per_address=NETWORK_CAP)),
        # the same seats two weeks later and cheaper: an exchange into it gives the difference back
        # from the booking's payment (issue 45, ``exchange_for_less``)
        "cheaper": ("cheaper", {"capacity": None, "seat_map": {"seat_ids": list(SEATS)}, "max_per_booking": 3,
                                "starts_at": "2030-02-15T20:00:00Z", "price": CHEAPER, **EXCHANGES},
                    {"capacity": None, "seat_map": {"seat_ids": list(SEATS)}, "max_per_booking": 2}),
    }


class Draw(Protocol):
    def choice(self, options: Sequence[T]) -> T: ...
    def integer(self, low: int, high: int) -> int: ...
    def subset(self, options: Sequence[T], low: int, high: int) -> list[T]: ...


class RandomDraw:
    """Draws from a seeded ``random.Random``: the walker's source of choices."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def subset(self, options: Sequence[T], low: int, high: int) -> list[T]:
        return self.rng.sample(list(options), self.rng.randint(low, high))


class ProviderBroken(Exception):
    """The provider answered something the adapter cannot read (a rotated secret, an HTML page):
    not an outcome-unknown the code expects, so whatever called it fails."""


class ModelProvider(FakeProvider):
    """The in-memory provider with the model's clock and three more abilities:

    - ``on_capture = (before, after)`` runs those once, just before and just after the next capture
      takes effect: another actor (a reconciliation check) steps in while the consumer captures;
    - ``broken`` makes every call raise ProviderBroken (a poisoned reconciliation);
    - it logs a refund asked for money already returned (``second_refunds``, the money rule M5),
      and every void whose answer reached the caller (``voids_answered``, V1).
    """

    def __init__(self, clock: ManualClock) -> None:
        super().__init__()
        self.clock = clock
        self.on_capture: tuple[Callable[[], Any] | None, Callable[[], Any] | None] | None = None
        self.broken = False
        self.second_refunds: list[tuple[str, str]] = []
        #: Voids whose answer ("canceled") reached the shop: the booking must then record it (V1).
        self.voids_answered: list[tuple[str, str]] = []

    def _now(self) -> str:
        return iso(self.clock())

    def _guard(self, operation: str) -> None:
        if self.broken:
            raise ProviderBroken(f"injected: unreadable answer to {operation}")

    def create_payment(self, **kwargs: Any) -> dict[str, Any]:
        self._guard("create_payment")
        return super().create_payment(**kwargs)

    def get_payment(self, payment_id: str) -> dict[str, Any]:
        self._guard("get_payment")
        return super().get_payment(payment_id)

    def capture_payment(self, payment_id, amount, idempotence_key):  # noqa: ANN001 - FakeProvider's signature
        self._guard("capture_payment")
        before, after = self.on_capture or (None, None)
        self.on_capture = None
        if before is not None:
            before()
        try:
            return super().capture_payment(payment_id, amount, idempotence_key)
        finally:
            if after is not None:
                after()

    def cancel_payment(self, payment_id, idempotence_key):  # noqa: ANN001
        self._guard("cancel_payment")
        answer = super().cancel_payment(payment_id, idempotence_key)
        if answer.get("status") == "canceled":
            self.voids_answered.append((payment_id, idempotence_key))
        return answer

    def create_refund(self, payment_id, amount, description, idempotence_key, receipt=None):  # noqa: ANN001
        self._guard("create_refund")
        payment = self.payments.get(payment_id)
        reaches = (self.faults.get("create_refund") or [None])[0] != "before"   # "before": it never arrived
        # an exchange's refunds of a difference (keys "rf-<payment>-xc...") give back a part, and
        # leave the rest to one refund: neither they nor the refund after them is a second refund
        differences = {answer["id"] for key, (_, answer) in self.keys.items()
                       if key.startswith("rf-") and "-xc" in key and isinstance(answer, dict) and answer.get("id")}
        if reaches and payment is not None and idempotence_key not in self.keys and "-xc" not in idempotence_key \
                and [r for r in self.refunds_for(payment_id) if r["id"] not in differences]:
            self.second_refunds.append((payment_id, idempotence_key))
        return super().create_refund(payment_id, amount, description, idempotence_key, receipt)

    def get_refund(self, refund_id):  # noqa: ANN001
        self._guard("get_refund")
        return super().get_refund(refund_id)

    def find_payments(self, *, created_gte: str, created_lte: str,
                      metadata: dict[str, str]) -> list[dict[str, Any]]:
        self._guard("find_payments")
        return super().find_payments(created_gte=created_gte, created_lte=created_lte, metadata=metadata)

    def lapse(self, payment_id: str) -> None:
        """The authorisation runs out at the provider before the shop captured it."""
        self.payments[payment_id].update(
            status="canceled", cancellation_details={"party": "yoo_money", "reason": "expired_on_capture"})


class AnotherWriteFirst:
    """The one seam the model puts in the store: ``before_save`` runs once just before the next
    commit of a change to a booking, ``before_hold`` just before the next commit of a new hold,
    each standing for another request whose write lands first (a double click; a rival for the
    same places). The same on the adapter and on the fake: the model never knows which it has."""

    before_save: Callable[[], Any] | None = None
    before_hold: Callable[[], Any] | None = None

    def commit(self, change: Change) -> None:
        hook = None
        if change.before is not None:
            hook, self.before_save = self.before_save, None
        elif change.after is not None:
            hook, self.before_hold = self.before_hold, None
        if hook is not None:
            hook()
        super().commit(change)  # type: ignore[misc]


class ModelStore(AnotherWriteFirst, BookingStore):
    """The adapter (adapters/dynamo.py), with the model's seam."""


class FakeModelStore(AnotherWriteFirst, FakeTableStore):
    """The table's fake store (tests/support/fake_table.py), with the model's seam."""


class CountedTable(MemoryTable):
    """The fake's table, counting its writing calls (as ``DirectDynamoDB`` counts its own): a
    snapshot is still current while the count has not moved."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def transact(self, writes: list[Write]) -> list[str]:
        with self.lock:
            self.writes += 1
            return super().transact(writes)


@dataclass
class ModelStorage:
    """Where a history's services keep their items: the table's store (with the model's seam),
    the waiting room's queue on the same table, a read of the whole table for the checks, and how
    many writing calls the table has had (None: not counted, every check reads it again)."""

    store: AnotherWriteFirst
    surge: Any
    snapshot: Callable[[], Snapshot]
    writes: Callable[[], int | None]
    #: the organizers' fiscal settings on the same table (receipts on or off)
    fiscal: Any = None


def fake_storage() -> ModelStorage:
    """The table's fakes, in memory: what test_stateful.py runs on."""
    table = CountedTable()
    store = FakeModelStore(table)

    def snapshot() -> Snapshot:
        with table.lock:   # the fake replaces an item whole on every write: the list is a still picture
            items = list(table.items.values())
        return snapshot_of(items)

    return ModelStorage(store, FakeSurgeQueue(table), snapshot, lambda: table.writes, FakeOrganizerDirectory(table))


def moto_storage(client: Any, table: str) -> ModelStorage:
    """The adapters over a client of moto in process (``DirectDynamoDB`` or boto3 over
    ``mock_aws``), on a new table made from the template's keys and indexes, without its stream:
    the stream feeds the outbox relay, which the model does not run, and moto would copy every
    write into it (a fifth of a history's time)."""
    props = template()["Resources"]["BookingsTable"]["Properties"]
    client.create_table(TableName=table, BillingMode=props["BillingMode"], KeySchema=props["KeySchema"],
                        AttributeDefinitions=props["AttributeDefinitions"],
                        GlobalSecondaryIndexes=props["GlobalSecondaryIndexes"])
    return ModelStorage(ModelStore(table, client), SurgeStore(table, client),
                        lambda: snapshot_in_process(table), lambda: getattr(client, "writes", None),
                        OrganizerStore(table, client))


class Executions:
    """Step Functions, as far as reconciliation needs it: named executions (a name is never
    reused, closed or not: AWS's rule), each running the reconcile task until it settles or fails."""

    def __init__(self) -> None:
        self.state: dict[str, str] = {}
        self.booking: dict[str, str] = {}
        self.fail_start: str | None = None   # a booking whose next start is throttled

    def start(self, booking_id: str, tag: str, wait_seconds: int = 0) -> bool:
        if self.fail_start == booking_id:
            self.fail_start = None
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "injected"}},
                              "StartExecution")
        name = f"pay-{booking_id}-{tag}"[:80]
        if name in self.state:
            return False
        self.state[name] = "RUNNING"
        self.booking[name] = booking_id
        return True

    def running(self) -> list[str]:
        return [name for name, state in self.state.items() if state == "RUNNING"]

    def running_for(self, booking_id: str) -> bool:
        return any(self.booking[name] == booking_id for name in self.running())


def deterministic_uuids(rng: random.Random) -> Callable[[], None]:
    """Make ``uuid.uuid4`` follow ``rng`` (booking ids, payment ids), so a history replays exactly
    from its seed. Returns the undo."""
    original = uuid.uuid4

    def uuid4() -> uuid.UUID:
        # Only the system's and the model's own ids: botocore and moto draw request ids too, and
        # how many they draw depends on the client in use.
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith(("holdfast", "tests.")):
            return uuid.UUID(int=rng.getrandbits(128), version=4)
        return original()

    uuid.uuid4 = uuid4  # type: ignore[assignment]

    def undo() -> None:
        uuid.uuid4 = original  # type: ignore[assignment]

    return undo


class ErasureStore:
    """The store as erasure sees it. On moto the adapter answers everything; the table's fakes
    have no part for the items beside a booking that carry personal data (adapters/
    personal_data_store.py, proven on moto and DynamoDB Local by tests/unit/test_personal_data.py),
    so here those are the customer's markers and the index of ended bookings read from the fake's
    table, and the side items' erasure is the marker's removal. What the model checks (which
    booking is erased, when) is decided by the service and written through ``commit`` alike."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.table = getattr(store, "table", None) if not hasattr(store, "erase_booking_records") else None

    def __getattr__(self, name: str) -> Any:
        if self.table is not None and name in ("erase_booking_records", "erase_customer_notes", "erase_customer_lines",
                                               "ended_bookings", "customer_bookings"):
            return getattr(self, f"_fake_{name}")
        return getattr(self.store, name)

    def _fake_customer_bookings(self, customer_id: str) -> list[str]:
        return list(dict.fromkeys(item["booking_id"]
                                  for item in self.table.query(f"CUSTOMER#{customer_id}", prefix="EVENT#")))

    def _fake_ended_bookings(self, before: str, limit: int = 100) -> list[str]:
        with self.table.lock:
            found = sorted((item["gsi1sk"], item["booking_id"]) for item in self.table.items.values()
                           if str(item.get("gsi1pk", "")).startswith("ENDED#") and item["gsi1sk"] < before)
        return [booking_id for _, booking_id in found[:limit]]

    def _fake_erase_booking_records(self, booking_id: str, customer_id: str, event_id: str,
                                    last_change: str | None = None) -> None:
        """What the adapter removes that a later request can tell: the hold's idempotency records,
        the customer's marker, their finished turn in the event's line and their waiting-room
        number (a repeat of the hold's key then makes a new hold, as on moto)."""
        from holdfast.adapters.booking_items import idempotency_pk

        with self.table.lock:
            for (pk, sk), item in list(self.table.items.items()):
                if pk == f"BOOKING#{booking_id}" and sk.startswith("JOURNAL#") and item.get("action") == "hold_created":
                    key = (item.get("ids") or {}).get("idempotency_key")
                    for system in (False, True):
                        if key:
                            self.table.items.pop((idempotency_pk(customer_id, key, system), "booking"), None)
            for marker in self.table.query(f"CUSTOMER#{customer_id}", prefix="EVENT#"):
                if marker["sk"].endswith(f"#BOOKING#{booking_id}"):
                    self.table.items.pop((marker["pk"], marker["sk"]), None)
            number = self.table.items.get((f"QUEUE#{event_id}#CUST#{customer_id}", "ENTRY"))
            if number is not None and (last_change is None or int(number.get("joined_at", 0))
                                       <= int(parse_iso(last_change).timestamp() * 1000)):
                self.table.items.pop((f"QUEUE#{event_id}#CUST#{customer_id}", "ENTRY"), None)
            self._fake_turns(customer_id, event_id, leave_waiting=False)

    def _fake_turns(self, customer_id: str, event_id: str, *, leave_waiting: bool) -> bool:
        from holdfast.adapters.personal_data_store import FINISHED_TURNS, LIVE_OFFERS

        pk = f"WAITLIST#{event_id}"
        entry = self.table.items.get((pk, f"CUST#{customer_id}"))
        state = (entry or {}).get("state")
        if entry is not None and (state in FINISHED_TURNS or leave_waiting and state == "WAITING"):
            self.table.items.pop((pk, f"CUST#{customer_id}"), None)
            if state == "WAITING":
                self.table.items.pop((pk, entry["queue_sk"]), None)
            entry = None
        for (p, sk), offer in list(self.table.items.items()):
            if p == pk and sk.startswith("OFFER#") and offer.get("customer_id") == customer_id \
                    and offer.get("state") not in LIVE_OFFERS:
                self.table.items.pop((p, sk), None)
        return entry is None

    def _fake_erase_customer_notes(self, customer_id: str) -> None:
        return None   # notifications and addresses: the model sends none

    def _fake_erase_customer_lines(self, customer_id: str) -> list[str]:
        kept = []
        with self.table.lock:
            for (pk, sk), joined in list(self.table.items.items()):
                if pk == f"CUSTOMER#{customer_id}" and sk.startswith("WAITLIST#"):
                    if self._fake_turns(customer_id, joined["event_id"], leave_waiting=True):
                        self.table.items.pop((pk, sk), None)
                    else:
                        kept.append(str(joined["event_id"]))
        return kept


#: The customers' verified addresses (the handlers' mail policy gives them to their holds): with
#: receipts on, a payment needs one (``contact_required`` is tests/unit/test_receipts.py's and the
#: HTTP suite's; here it would only keep stories from reaching their payments).
ADDRESSED = {"ann": "ann@example.com", "bob": "bob@example.com", "cat": "cat@example.com"}


class AddressedBookings(BookingService):
    def create_booking(self, event_id: str, customer_id: str, idempotency_key: str, request: Any) -> Any:
        hold = HoldPlaces.of(request)
        if customer_id in ADDRESSED and hold.contact_email is None:
            hold = replace(hold, contact_email=ADDRESSED[customer_id], contact_own=True)
        return super().create_booking(event_id, customer_id, idempotency_key, hold)


class RacingBlocks:
    """The table's store as the block service sees it, with the model's seam: ``block_race`` runs
    once just before the next block is written (a rival hold for the same places lands first)."""

    def __init__(self, model: "BookingModel") -> None:
        self.model = model

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model.store, name)

    def put_block(self, offering_id: str, block: dict[str, Any], places: Any) -> None:
        hook, self.model.block_race = self.model.block_race, None
        if hook is not None:
            hook()
        self.model.store.put_block(offering_id, block, places)


class BookingModel:
    """One history: a fresh table, four events (all but one of the inventory kind under test, see
    kind_cases.py), three customers, and the operations below."""

    def __init__(self, storage: ModelStorage, seed: int = 0, kind: KindCase = CASES[0]) -> None:
        self.storage = storage
        self.kind = kind
        self.bodies = event_bodies(kind)
        self._snap: tuple[int | None, Snapshot] | None = None
        self.store = storage.store
        self.clock = ManualClock()
        self.provider = ModelProvider(self.clock)
        self.executions = Executions()
        self.catalog = CatalogService(self.store, self.clock, 600, id_salt="tests-deployment-salt")
        # No availability snapshot: a seeded history must tell the same story however fast the
        # client is (a snapshot's age is wall-clock time); tests/correctness/test_stale_snapshot.py
        # covers what a snapshot may do.
        self.bookings = AddressedBookings(self.store, self.clock, rng=random.Random(seed), snapshot_seconds=0,
                                          address_key=lambda address: holder_key(HOLDER_KEY, address))
        self.payments = PaymentService(self.store, self.provider, self.clock, self.bookings,
                                       "http://127.0.0.1:3000/done",
                                       start_reconciliation=self.executions.start, fiscal=storage.fiscal)
        self.fiscal = FiscalSettingsService(storage.fiscal, self.store, self.clock)
        self.settlements = Settlements(self.store, self.provider, self.clock, retry_seconds=(30, 60, 120))
        if seed % 2 == 0:   # half the histories start with the organizer's receipts on (issue 44)
            self.fiscal.put(ORGANIZER, FiscalSettings(1, 1))
        self.reconciliation = ReconciliationService(self.store, self.provider, self.payments, self.clock)
        self.reviews = ReviewService(self.store, self.payments, self.clock)
        self.resolutions = ResolutionService(self.store, self.payments, self.clock)
        toy_windows.register()
        self.waitlist = WaitlistService(self.store, self.bookings, self.clock)
        # Event cancellation (issue 18): the job's steps are run by the model, not an execution.
        self.event_cancellation = EventCancellationService(self.store, self.clock, None)
        self.cancellation_job = CancellationJob(self.store, self.payments, self.clock, page_size=2)
        self.listing = ListingService(self.store, self.clock)
        self.orders = OrderService(self.bookings)
        self.scans = 0   # the model's door numbers its passes
        # Codes (issue 45): one discount code of "ga" that two holds may use, one each customer.
        self.codes = CodeService(self.store, self.clock)
        self.bookings.codes = self.codes
        # Blocks (issue 45): the organizer keeps places of "ga" and "seats" out of sale; its store is
        # the table's, with a seam for a rival hold landing between a block's plan and its write.
        self.block_race: Callable[[], Any] | None = None
        self.blocks = BlockService(RacingBlocks(self), self.clock, rng=random.Random(seed + 1))
        # Exchanges (issue 45): a confirmed booking moved to other places in one write.
        self.exchanges = ExchangeService(self.store, self.clock, rng=random.Random(seed + 2),
                                         money=MoneyAtProvider(self.provider))
        # ... and into dearer places, the difference paid by a second payment (exchange_for_more)
        self.dearer_exchanges = ExchangeService(self.store, self.clock, rng=random.Random(seed + 3),
                                                money=self.payments.money, differences=self.payments.differences)
        self.block_ids: list[tuple[str, str]] = []      # (event name, block id), live or ended
        # Transfers (issue 45): the links offered, each (booking id, token), waiting or not
        self.transfers = TransferService(self.store, self.clock)
        self.transfer_links: list[tuple[str, str]] = []
        self.cancelled_events: dict[str, set[str]] = {}  # event id -> bookings CONFIRMED when it was cancelled
        #: event id -> (the bookings there were, the new starts_at) of each move of its start
        self.starts: dict[str, list[tuple[frozenset[str], str]]] = {}
        self.events: dict[str, str] = {}
        for name, (key, body, _) in self.bodies.items():
            self.events[name] = self.catalog.create_event(self._event_in(body), key, ORGANIZER)["event_id"]
        self.events["slot"] = SlotsCase("slots").create(self.catalog, SLOT_SEATS, caller=ORGANIZER)
        # A lot of one space, reserved for one window (kind_cases.PARKING_WINDOW): only
        # time_paid_late books it (the gates are another model's).
        self.events["lot"] = ParkingCase("parking").create(self.catalog, 1)
        #: the organizer's lots an order's parking line takes (keeping or refunding a no-show's
        #: money), made by the first order_line_given_up that needs each
        self.order_lots: dict[bool, str] = {}
        self.codes.create(self.events["ga"], {"code": MODEL_CODE, "kind": "percent", "value": 10,
                                              "max_uses": CODE_USES, "per_customer": 1}, ORGANIZER)
        self.codes.create(self.events["ga"], {"code": COMP_CODE, "kind": "percent", "value": 100,
                                              "max_uses": COMP_USES}, ORGANIZER)
        self.surge = storage.surge
        self.tokens: dict[str, str] = {}                 # customer -> their latest admission token for "hot"
        self.admitted: dict[str, list[float]] = {}       # customer -> expiry (epoch s) of every token they got
        self.known: list[tuple[str, str]] = []          # (booking_id, customer), in creation order
        self.requests: dict[tuple[str, str], tuple[Any, str]] = {}
        self.seen: list[dict[str, Any]] = []             # provider answers fetched earlier (stale copies)
        self.entries: dict[str, str] = {}                # customer -> waitlist entry id (event "ga")
        self.poisoned: set[str] = set()                  # bookings whose reconciliation fails
        self.counter = 0
        self.notes: list[str] = []                       # operators' notes, never for customers' eyes
        self.intent = ""                                 # what the running operation is about to do
        self.log: Counter[str] = Counter()
        self.trace: list[str] = []
        self.reached = True   # set False by `unreached`: the operation found nothing to act on

    @staticmethod
    def _event_in(body: dict[str, Any]) -> Any:
        from .helpers import event_request

        return event_request(**body)

    # ------------------------------------------------------------------------------- plumbing

    def note(self, text: str) -> None:
        self.trace.append(text)

    def unreached(self, text: str) -> None:
        """A note that the operation found nothing to act on and returned: the proof does not count
        it as run (`make proof` fails when an operation was never run)."""
        self.trace.append(text)
        self.reached = False

    def _call(self, who: str, what: str, call: Callable[[], T]) -> tuple[T | None, BookingError | None]:
        """A request over HTTP: it may answer any 4xx (or 503/429 with Retry-After: BookingError),
        never a 5xx (any other exception)."""
        try:
            return call(), None
        except BookingError as exc:
            return None, exc
        except AssertionError:
            raise
        except Exception as exc:  # noqa: BLE001 - that is the point: anything else is a 5xx
            raise AssertionError(f"X1 {who}: {what} answered 5xx ({type(exc).__name__}: {exc})") from exc

    def _consume(self, what: str, call: Callable[[], T],
                 expected: tuple[type[BaseException], ...] = ()) -> T | str:
        """A queue consumer, reconciliation task or relay: an outcome-unknown or a transient store
        error means "retry later"; anything else is a crash of a background worker."""
        try:
            return call()
        except (PaymentOutcomeUnknown, TransientStoreError) as exc:
            return f"retry_later:{type(exc).__name__}"
        except expected as exc:
            return f"failed:{type(exc).__name__}"
        except AssertionError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise AssertionError(f"X2 {what} crashed ({type(exc).__name__}: {exc})") from exc

    def _bookings_in(self, statuses: set[BookingStatus] | None = None,
                     where: Callable[[Any], bool] | None = None) -> list[tuple[str, str]]:
        found = []
        for entry in self.known:
            booking = self.store.get_booking(entry[0])
            if booking is None:
                continue
            if (statuses is None or booking.status in statuses) and (where is None or where(booking)):
                found.append(entry)
        return found

    def _prefer(self, statuses: set[BookingStatus]) -> list[tuple[str, str]]:
        return self._bookings_in(statuses) or self.known

    def _own_payment(self, booking_id: str) -> dict[str, Any] | None:
        answer = self.provider.keys.get(f"hf-pay-{booking_id}")
        return self.provider.payments.get(answer[1]["id"]) if answer else None

    def customer_cancel(self, booking_id: str, customer: str) -> Any:
        """POST /bookings/{id}/cancel as functions/bookings_api wires it: a confirmed booking is
        refunded, an open authorisation voided."""
        return self.bookings.cancel(booking_id, customer, refund=self.payments.cancel_confirmed,
                                    void=self.payments.void_after_cancel)

    def run_sweep(self) -> dict[str, int]:
        """The scheduled sweeper as functions/sweep_due wires it."""
        def give_up(booking: Any, reason: str) -> None:
            payment_id = (booking.payment.payment_id if booking.payment else None) or ""
            self.payments.open_review(booking, reason, "sweeper", {"payment_id": payment_id})

        return sweep(self.store, self.clock, self.bookings.expire, self.executions.start, give_up=give_up,
                     lapse_resolution=self.resolutions.lapse, refund_timer=self.payments.refund_after_timer,
                     settle=self.settlements.settle, differences=self.payments.differences,
                     part_refunds=self.payments.part_refunds.retry, line_timers=self.payments.line_timers)

    def _remember(self, booking_id: str, customer: str) -> None:
        if all(known != booking_id for known, _ in self.known):
            self.known.append((booking_id, customer))

    # ---------------------------------------------------------------------------- customers

    def _request_body(self, event: str, what: Any) -> Any:
        """The body of a booking request the model records as ``(event, what)``."""
        if event in ("seats", "cheaper"):
            return BookingIn(seats=list(what))
        if event == "slot":
            starts_at, quantity = what
            return SlotBookingIn(starts_at=starts_at, resource_id=slot_hall(ORGANIZER), quantity=quantity)
        if event == "lot":
            return ParkingCase("parking").ask(1)
        return self.kind.ask(what)

    def _book(self, event: str, customer: str, key: str, body: Any, token: str | None = None) -> Any:
        """POST /events/{id}/bookings (or /services/{id}/bookings) as functions/bookings_api wires
        it: the waiting room's admission check, then the hold."""
        event_id = self.events[event]
        self.waiting_room().check_admission(event_id, customer, token)
        return self.bookings.create_booking(event_id, customer, key, body)

    def create(self, d: Draw) -> None:
        event, customer, key = d.choice(EVENTS), d.choice(CUSTOMERS), d.choice(KEYS)
        quantity, seats = d.integer(1, 3), d.subset(SEATS, 1, 3)
        what: Any = tuple(seats) if event == "seats" else (d.choice(SLOT_TIMES), d.integer(1, SLOT_SEATS)) \
            if event == "slot" else quantity
        token = None
        if event == "hot":
            # Its own keys (a repeat of a high-demand request depends on the token it carries: not
            # one for repeat_request), with the customer's latest token or none at all.
            key = f"hot-{key}"
            token = d.choice([self.tokens.get(customer), self.tokens.get(customer), None])
        body = self._request_body(event, what)
        fingerprint = (event, what)
        earlier = self.requests.get((customer, key))
        result, error = self._call(customer, "POST bookings", lambda: self._book(event, customer, key, body, token))
        outcome = type(error).__name__ if error else result.booking.booking_id[:8]
        self.note(f"create {customer} {key} {fingerprint} -> {outcome}")
        if isinstance(error, IdempotencyKeyReused):
            assert earlier is not None and earlier[0] != fingerprint, \
                "I7 key reuse reported for a new or same body"
            self.log["key_reused"] += 1
            return
        if isinstance(error, (SoldOut, SeatsUnavailable)):
            assert earlier is None or earlier[0] == fingerprint and earlier[1] == "", "I7 refused a replay"
            self.log["refused"] += 1
            return
        if error is not None:
            self.log[f"create:{error.code}"] += 1
            return
        booking = result.booking
        if earlier is not None and earlier[1]:
            assert earlier[0] == fingerprint, "I7 a different body under a used key made a booking"
            assert result.replayed and booking.booking_id == earlier[1], "I7 a repeat made a second booking"
            self.log["replayed"] += 1
            return
        assert not result.replayed, "I7 a first request was answered as a replay"
        self.requests[(customer, key)] = (fingerprint, booking.booking_id)
        self._remember(booking.booking_id, customer)
        self.log["created"] += 1

    def race_for_places(self, d: Draw) -> None:
        """Two customers ask for places of one offering at once: the second one's hold lands
        between the first one's read of what is free and its write. Only the store's conditional
        claims can then refuse the first (and the service re-read and choose again, or answer sold
        out); the checks after the step find a place held or sold twice (I1-I3, G1-G3)."""
        event = d.choice(["ga", "seats", "two_stage", "windows", "slot"])
        first, second = d.subset(CUSTOMERS, 2, 2)
        asks = []
        for customer in (first, second):
            what: Any = tuple(d.subset(SEATS, 1, 3)) if event == "seats" else \
                (d.choice(SLOT_TIMES), d.integer(1, SLOT_SEATS)) if event == "slot" else d.integer(1, 3)
            self.counter += 1
            asks.append((customer, f"race-{self.counter}", what))
        answers: dict[str, str] = {}

        def book(customer: str, key: str, what: Any) -> None:
            result, error = self._call(customer, "POST bookings", lambda: self._book(
                event, customer, key, self._request_body(event, what)))
            answers[customer] = getattr(error, "code", None) or "held"
            if result is not None:
                self.requests[(customer, key)] = ((event, what), result.booking.booking_id)
                self._remember(result.booking.booking_id, customer)

        self.intent = f"{event}: {asks[0]} read, {asks[1]} lands first"
        self.store.before_hold = lambda: book(*asks[1])
        try:
            book(*asks[0])
        finally:
            self.store.before_hold = None
        self.note(f"race_for_places {event} {first} {asks[0][2]} / {second} {asks[1][2]} first -> "
                  f"{answers.get(first)}, {answers.get(second, 'never asked')}")
        self.log["race_for_places"] += 1
        self.log[f"race:{answers.get(first)}"] += 1

    def place_order(self, d: Draw) -> None:
        """POST /orders (issue 43): two or three lines across products (the kind under test, the
        seat map, the appointment slot) held in one transaction or not at all. The order is then
        one more booking every other operation finds (``known``): paid, delivered, expired,
        cancelled, paid late, reviewed, its event cancelled, under every fault they inject."""
        customer, key = d.choice(CUSTOMERS), d.choice(KEYS)
        names = d.subset(["ga", "seats", "slot"], 2, 3)
        asked = []
        for name in names:
            what: Any = tuple(d.subset(SEATS, 1, 2)) if name == "seats" else \
                (d.choice(SLOT_TIMES), d.integer(1, SLOT_SEATS)) if name == "slot" else d.integer(1, 2)
            asked.append((name, what))
        # now and then the "ga" line names the model's code (issue 45): its use rides on the order
        coded = "ga" in names and d.choice([False, False, True])
        lines = tuple(OrderLine(self.events[name], HoldPlaces.of(
            self._request_body(name, what).model_copy(update={"code": MODEL_CODE}) if coded and name == "ga"
            else self._request_body(name, what))) for name, what in asked)
        # the handlers' mail policy gives a signed-in customer's verified address to the order (AddressedBookings)
        order = PlaceOrder(lines, contact_email=ADDRESSED.get(customer), contact_own=customer in ADDRESSED)
        result, error = self._call(customer, "POST /orders", lambda: self.orders.place(
            customer, f"order-{key}", order))
        if result is not None:
            self._remember(result.booking.booking_id, customer)
            stored = self.store.get_booking(result.booking.booking_id)
            held = {line["offering_id"] for line in (stored.kind_details or {}).get("lines") or ()}
            assert held == {self.events[name] for name, _ in asked}, \
                f"O3 order {result.booking.booking_id[:8]} holds {held}, asked {[name for name, _ in asked]}"
        self.note(f"place_order {customer} {asked} -> {getattr(error, 'code', None) or 'held'}")
        self.log["order_held" if error is None else f"order:{error.code}"] += 1

    def order_line_given_up(self, d: Draw) -> None:
        """An order of a seat and a parking line (issue 43) is paid, and its car never comes: at
        the line's no-show the sweeper gives the line up on its own, by its lot's policy: kept
        (NO_SHOW), or refunded (REFUNDED, its amount back of the order's one payment, the answer
        sometimes lost, or refused for good). O5: the line's space is free again in that write, so
        a rival's reservation of the window takes it at once; O6: a refused line refund is an
        operator's case on the order, which stands for its seat."""
        start = parse_iso(PARKING_WINDOW["from"])
        if self.clock() >= start - timedelta(minutes=5):
            self.unreached("order_line_given_up: the parking window has begun")
            return
        refunds = d.choice([False, True])
        lot_id = self._order_lot(refunds)
        customer, seat = d.choice(CUSTOMERS), d.choice(SEATS)
        self.counter += 1
        lines = (OrderLine(self.events["seats"], HoldPlaces.of(self._request_body("seats", (seat,)))),
                 OrderLine(lot_id, ParkingCase("parking").ask(1)))
        order = PlaceOrder(lines, contact_email=ADDRESSED.get(customer), contact_own=customer in ADDRESSED)
        placed, error = self._call(customer, "POST /orders", lambda: self.orders.place(
            customer, f"given-up-{self.counter}", order))
        if placed is None:
            self.note(f"order_line_given_up: {customer} could not order ({getattr(error, 'code', None)})")
            self.log[f"order_line_given_up:{getattr(error, 'code', None)}"] += 1
            return
        order_id = placed.booking.booking_id
        self._remember(order_id, customer)
        self._call(customer, "POST /orders/{id}/payment", lambda: self.payments.start_payment(
            order_id, customer, f"given-up-pay-{self.counter}"))
        payment = self._own_payment(order_id)
        if payment is None or payment["status"] != "pending":
            self.unreached("order_line_given_up: no payment to make")
            return
        self.provider.pay(payment["id"], at=iso(self.clock()))
        self._consume("payment consumer", lambda: self.payments.apply_provider_payment(
            self.provider.get_payment(payment["id"])))
        if self.store.get_booking(order_id).status is not S.CONFIRMED:
            self.unreached("order_line_given_up: the order was not confirmed")
            return
        grace = int(((self.store.get_event(lot_id) or {}).get("settings") or {}).get("no_show_grace_seconds", 900))
        self.clock.advance((start + timedelta(seconds=grace + 61) - self.clock()).total_seconds())
        fault = d.choice([None, "after", "refused"]) if refunds else None
        if fault:
            self.provider.fail("create_refund", fault)
        self._consume("sweeper", self.run_sweep)
        self.provider.faults.pop("create_refund", None)
        after = self.store.get_booking(order_id)
        line = (after.kind_details or {}).get("lines", [{}, {}])[1]
        rival = d.choice([c for c in CUSTOMERS if c != customer])
        self.counter += 1
        taken, error = self._call(rival, "POST reservations (rival at a no-show)", lambda: self.bookings.create_booking(
            lot_id, rival, f"after-no-show-{self.counter}", ParkingCase("parking").ask(1)))
        if taken is not None:
            self._remember(taken.booking.booking_id, rival)
        if after.status is S.CONFIRMED and line.get("status") in ("NO_SHOW", "REFUNDED"):
            assert taken is not None, \
                f"O5 order {order_id[:8]}'s line is {line.get('status')}, yet its space went to no rival " \
                f"({getattr(error, 'code', None)})"
        self.note(f"order_line_given_up {order_id[:8]} refunds={refunds} fault={fault} -> line "
                  f"{line.get('status')}, order {after.status}, review {(after.review or {}).get('reason')}, "
                  f"rival {'held' if taken else getattr(error, 'code', None)}")
        self.log[f"order_line_given_up:{line.get('status')}:{fault}"] += 1

    def _order_lot(self, refunds: bool) -> str:
        """The organizer's lot of one space whose policy keeps a no-show's money, or gives it back
        (``refunds``): made on first use (the model's own "lot" has no organizer, so no order of
        the organizer's seats may take it)."""
        if refunds not in self.order_lots:
            from holdfast.products.parking.schemas import LotIn
            from holdfast.products.parking.services.lots import ParkingService
            from holdfast.products.parking.tokens import LotKeys

            parking = ParkingService(self.store, self.clock, self.bookings, 600,
                                     lambda: LotKeys(b"model-order-lot-master-seed"), id_salt="tests-deployment-salt")
            body = {"name": "Refunding lot" if refunds else "Venue lot", "spaces": [{"space_id": "L1", "type": "LARGE"}],
                    "hold_ttl_seconds": 600, "tariff": {"hourly": {"value": "1500.00", "currency": "RUB"}},
                    "policy": {"refund_no_show": refunds}}
            self.order_lots[refunds] = parking.create_lot(LotIn.model_validate(body).command(),
                                                          caller=ORGANIZER)["lot_id"]
        return self.order_lots[refunds]

    def order_ticket_scanned(self, d: Draw) -> None:
        """A door of an event scans a ticket of an order's line for that event (issue 43: after
        confirmation each line lives its own life), the ticket signed as the order's view signs
        it. D1 it admits only while the order is CONFIRMED and only once; D2 once admitted, the
        order counts a holder let in (its customer can no longer give it up) and the line keeps
        the ticket checked in, while the order stays CONFIRMED."""
        from holdfast import kinds
        from holdfast.products.events import tickets
        from holdfast.products.events.services.doors import Doors

        doors = Doors(self.store, self.clock, lambda: ORDER_TICKET_KEYS)

        def has_doors(event_id: str) -> bool:
            """Only an event whose kind issues tickets has doors (a scan is checked against the door's
            event): the toy kinds under test in "ga" have none, and their lines are never scanned."""
            try:
                return bool(doors.event(event_id))
            except NotFound:
                return False

        event_ids = {self.events[name] for name in ("ga", "seats") if name in self.events and has_doors(self.events[name])}
        orders = self._bookings_in(where=lambda b: str(b.places.kind) == "basket" and b.payment is not None
                                   and any(line["offering_id"] in event_ids
                                           for line in (b.kind_details or {}).get("lines") or ()))
        if not orders:
            self.unreached("order_ticket_scanned: no paid order with an event line")
            return
        confirmed = [(b, c) for b, c in orders if self.store.get_booking(b).status is S.CONFIRMED]
        booking_id, _ = d.choice(confirmed if confirmed and d.choice([True, True, False]) else orders)
        booking = self.store.get_booking(booking_id)
        kind = kinds.of_booking(booking)
        offering = d.choice(sorted(line["offering_id"] for line in booking.kind_details["lines"]
                                   if line["offering_id"] in event_ids))
        part = kind.part(booking, offering)
        ticket_id, seat = d.choice(tickets.places(part))
        before = self.store.get_checkin(offering, ticket_id)
        # the token its view shows now (GET /bookings/{id}, the messages); one it shows no more (the
        # order is not confirmed) is one the holder kept from before, signed as it was then
        token = self.shown_tickets(booking).get(ticket_id) or ORDER_TICKET_KEYS.ticket_token(
            offering, booking_id, ticket_id, seat, starts_at=str((self.store.get_event(offering) or {})["starts_at"]))
        self.scans += 1
        answer, error = self._call("door", "POST .../scan (order)", lambda: doors.scan(
            offering, "model-door", {"event_id": f"scan-{self.scans}", "token": token}, at=self.clock(), offline=False))
        after = self.store.get_booking(booking_id)
        if answer is not None and answer.get("admitted"):
            assert booking.status is S.CONFIRMED and before is None, \
                f"D1 ticket {ticket_id} of order {booking_id[:8]} ({booking.status}) admitted " \
                f"{'again' if before else 'while not confirmed'}"
            assert after.status is S.CONFIRMED and kinds.of_booking(after).admitted(after) >= 1, \
                f"D2 order {booking_id[:8]} let a holder in and does not count it"
            assert ticket_id in ((kind.part(after, offering).kind_details or {}).get("checked_in") or ()), \
                f"D2 order {booking_id[:8]}'s line of {offering[:8]} does not keep ticket {ticket_id} checked in"
        elif answer is not None:
            # a ticket is good until VALID_AFTER_START after its event's start AS IT IS NOW (read from
            # the event, not from the line): past that it is refused ticket_expired, and before that
            # a confirmed order's ticket never is (make proof seed 20261213916 scanned a day after)
            current = (self.store.get_event(offering) or {}).get("starts_at")
            over = current is not None and self.clock() > parse_iso(str(current)) + tickets.VALID_AFTER_START
            assert before is not None or booking.status is not S.CONFIRMED \
                or (over and answer.get("reason") == "ticket_expired"), \
                f"D1 ticket {ticket_id} of confirmed order {booking_id[:8]} refused ({answer.get('reason')})"
        reason = answer.get("reason") if answer else getattr(error, "code", None)
        self.note(f"order_ticket_scanned {booking_id[:8]} {ticket_id[:8]} ({booking.status}) -> {reason}")
        self.log[f"order_scan:{reason}"] += 1

    def shown_tickets(self, booking: Booking) -> dict[str, str]:
        """Each ticket's token by its id, as the booking's view signs it (its kind's ``view_extras``
        with events' view credentials; an order's, each event line's with its line's kind's):
        what ``GET /bookings/{id}``, its QR codes and its messages show."""
        from types import SimpleNamespace

        from holdfast.kinds import products

        signer = event_tickets.TicketSigner(lambda: ORDER_TICKET_KEYS, self.store)
        lines = SimpleNamespace(of=lambda kind: signer if getattr(products.of_kind(kind), "name", None) == "events"
                                else None)
        kind = kinds.of_booking(booking)
        shown = kind.view_extras(booking, lines if (booking.kind_details or {}).get("lines") else signer)
        return {ticket["ticket_id"]: ticket["token"] for ticket in shown.get("tickets") or ()}

    def postponed_ticket_scanned(self, d: Draw) -> None:
        """The organizer moves an event with confirmed tickets (a booking of it, or an order's line)
        a week later (``PATCH /events/{id}``); time passes beyond its old start + VALID_AFTER_START;
        the holder opens the booking (its view signs the tickets) and a door scans one. D1: a
        confirmed booking's ticket not checked in yet is admitted until its event's start as it
        is now + VALID_AFTER_START. (Signed with the start the booking or its line copied at hold
        time, it was refused ``ticket_expired``: issue 42.)"""
        from holdfast.domain.claims import offerings_of
        from holdfast.products.events.services.doors import Doors

        doors = Doors(self.store, self.clock, lambda: ORDER_TICKET_KEYS)

        def ticketed(event_id: str) -> bool:
            try:
                return bool(doors.event(event_id))
            except NotFound:
                return False

        found = [(booking_id, offering) for booking_id, _ in self._bookings_in({S.CONFIRMED})
                 for offering in offerings_of(self.store.get_booking(booking_id).event_id,
                                              self.store.get_booking(booking_id).places)
                 if ticketed(offering)]
        if not found:
            self.unreached("postponed_ticket_scanned: no confirmed booking with tickets")
            return
        booking_id, offering = d.choice(sorted(found))
        old = parse_iso(str((self.store.get_event(offering) or {})["starts_at"]))
        new = max(old, self.clock()) + timedelta(days=7)
        result, error = self._call("organizer", "PATCH /events/{id} (later)", lambda: self.listing.update(
            offering, {"starts_at": new}, ORGANIZER))
        if error is not None:
            self.note(f"postponed_ticket_scanned {offering[:8]}: PATCH -> {error.code}")
            return
        self.starts.setdefault(offering, []).append((frozenset(self.snapshot().bookings), iso(new)))
        self._consume("event.changed announcement", lambda: follow_start(self.store, self.clock, offering))
        past = old + event_tickets.VALID_AFTER_START + timedelta(hours=1)
        if self.clock() < past:
            self.clock.advance((past - self.clock()).total_seconds())
        booking = self.store.get_booking(booking_id)
        part = kinds.of_booking(booking).part(booking, offering)
        shown = {ticket: token for ticket, token in self.shown_tickets(booking).items()
                 if part is not None and ticket in {tid for tid, _ in event_tickets.places(part)}}
        if booking.status is not S.CONFIRMED or not shown:
            self.note(f"postponed_ticket_scanned {booking_id[:8]} ({booking.status}): no ticket shown")
            return
        ticket_id = d.choice(sorted(shown))
        before = self.store.get_checkin(offering, ticket_id)
        self.scans += 1
        answer, error = self._call("door", "POST .../scan (postponed)", lambda: doors.scan(
            offering, "model-door", {"event_id": f"scan-{self.scans}", "token": shown[ticket_id]},
            at=self.clock(), offline=False))
        reason = answer.get("reason") if answer else getattr(error, "code", None)
        assert (answer is not None and answer.get("admitted")) or before is not None, \
            f"D1 ticket {ticket_id} of confirmed {booking_id[:8]} refused ({reason}) at {iso(self.clock())}: its " \
            f"event {offering[:8]} was moved from {iso(old)} to {iso(new)}"
        self.note(f"postponed_ticket_scanned {booking_id[:8]} {ticket_id[:8]} of {offering[:8]} moved "
                  f"{iso(old)} -> {iso(new)}, scanned at {iso(self.clock())} -> {reason}")
        self.log[f"postponed_scan:{reason}"] += 1

    def order_paid(self, d: Draw) -> None:
        """POST /orders/{id}/payment and the customer paying (issue 43): one payment for the whole
        order, paid on time (the notification confirms every line at once) or late: the order's
        hold lapses first (every line released at once), a rival may take one line's places, then
        the payment arrives. O4: the late payment retakes every line or none: the order ends
        CONFIRMED (I2, I3, G3 then find each line's places sold to it) or holding nothing, its money
        going back or to a case (M1-M5, S1), never half confirmed. Without a held order to pay,
        one is placed first (place_order)."""
        def payable() -> list[tuple[str, str]]:
            return self._bookings_in({S.HELD, S.PAYMENT_PENDING}, where=lambda b: str(b.places.kind) == "basket"
                                     and b.amount.value > 0 and len((b.kind_details or {}).get("lines") or ()) > 1)

        orders = payable()
        if not orders or d.integer(0, 2) == 0:
            self.place_order(d)
            orders = payable()
        if not orders:
            self.unreached("order_paid: no held order to pay")
            return
        booking_id, customer = d.choice(orders)
        self.counter += 1
        started, error = self._call(customer, "POST /orders/{id}/payment", lambda: self.payments.start_payment(
            booking_id, customer, f"order-pay-{self.counter}"))
        payment = self._own_payment(booking_id)
        if payment is None or payment["status"] != "pending":
            self.note(f"order_paid {booking_id[:8]}: could not start paying ({getattr(error, 'code', None)})")
            self.log[f"order_pay:{getattr(error, 'code', None) or 'not_pending'}"] += 1
            return
        late = d.choice([False, True, True])
        taken, expired = "nobody", None
        if late:
            booking, expired = self._let_hold_lapse(booking_id)
            rival = d.choice([None, *[c for c in CUSTOMERS if c != customer]])
            if rival is not None:
                taken = self._rival_takes_a_line(d, booking, rival)
        self.provider.pay(payment["id"], at=iso(self.clock()))
        self.intent = f"order {booking_id[:8]} paid {'late: expiry ' + str(expired) + ', rival ' + taken if late else 'in time'}"
        outcome = self._consume("payment consumer", lambda: self.payments.apply_provider_payment(
            self.provider.get_payment(payment["id"]), actor="webhook"))
        after = self.store.get_booking(booking_id)
        if not isinstance(outcome, str) or not outcome.startswith(("retry_later", "failed")):
            assert after.status not in (S.HELD, S.PAYMENT_PENDING), \
                f"O4 order {booking_id[:8]} was paid and its notification applied, but it is still {after.status}"
        self.note(f"order_paid {booking_id[:8]} late={late} expiry={expired} rival {taken} -> {after.status}")
        self.log[f"order_paid:{'late' if late else 'in_time'}:{after.status.value}"] += 1

    def _rival_takes_a_line(self, d: Draw, order: Any, rival: str) -> str:
        """A rival holds the places of one line of a lapsed order (its seats, a quantity of its
        pool, its slot's time): a late payment can then retake the other lines but not this one."""
        names = {event_id: name for name, event_id in self.events.items()}
        line = d.choice([line for line in (order.kind_details or {}).get("lines") or () if line["offering_id"] in names])
        name = names[line["offering_id"]]
        part = kinds.of_booking(order).part(order, line["offering_id"])
        if name == "seats":
            what: Any = tuple(sorted(unit.rpartition("/")[2] for unit in part.places.units))
        elif name == "slot":
            what = (iso(parse_granule_key(part.places.granules[0].at)), d.integer(1, SLOT_SEATS))
        else:
            what = d.integer(1, 3)
        self.counter += 1
        result, error = self._call(rival, "POST bookings (rival of a lapsed order)", lambda: self._book(
            name, rival, f"rival-{self.counter}", self._request_body(name, what)))
        if result is not None:
            self.requests[(rival, f"rival-{self.counter}")] = ((name, what), result.booking.booking_id)
            self._remember(result.booking.booking_id, rival)
        return f"{rival} {name} {what}: {getattr(error, 'code', None) or 'held'}"

    def hold_with_code(self, d: Draw) -> None:
        """A hold of "ga" that names a code (issue 45): the model's own code in any case, or one
        that does not exist. The use is a claim of the hold's transaction, so every operation
        that moves the booking on (paid, expired, cancelled, paid late, its event cancelled)
        moves the use with it; C1 (helpers.check_codes) finds a use counted twice or lost, and
        the code used by more than its ``max_uses`` holds and confirmed bookings together."""
        customer, key = d.choice(CUSTOMERS), d.choice(KEYS)
        written = d.choice([MODEL_CODE.lower(), MODEL_CODE, "NOSUCH1"])
        body = self._request_body("ga", d.integer(1, 2)).model_copy(update={"code": written})
        result, error = self._call(customer, "POST bookings (code)", lambda: self._book(
            "ga", customer, f"code-{key}", body))
        if result is not None:
            assert written != "NOSUCH1", "C2 a hold took an unknown code"
            self._remember(result.booking.booking_id, customer)
        elif written == "NOSUCH1":
            assert error is not None and error.code in ("invalid_code", "too_many_code_tries"), \
                f"C2 an unknown code answered {getattr(error, 'code', None)}"
        self.note(f"hold_with_code {customer} {written} -> {getattr(error, 'code', None) or 'held'}")
        self.log["code_held" if error is None else f"code:{error.code}"] += 1
        if error is not None and error.code == "invalid_code" and written != "NOSUCH1":
            self.log["code_used_up"] += 1   # its max_uses (or this customer's one use) taken: the same 400

    def _lose_comp_confirmations(self, lost: bool) -> None:
        """Fault: every write that would confirm the next comp fails (the store stays busy), so the
        comp is answered still HELD and must be confirmed by its request's repeat or lapse."""
        def busy() -> None:
            self.store.before_save = busy
            raise TransientStoreError("the table is busy (the model's fault)")

        self.store.before_save = busy if lost else None

    def hold_with_comp_code(self, d: Draw) -> None:
        """A hold of "ga" with the code that takes everything off (issue 45): a comp, confirmed at
        once without a payment, its places counted among the comps (Z1) and the code's uses (C1).
        Fault: the confirmation's writes all fail, the answer is the hold, and the request's repeat
        (now, or never: the hold lapses) confirms it."""
        customer, key = d.choice(CUSTOMERS), d.choice(KEYS)
        lost = d.choice([False, False, True])
        body = self._request_body("ga", d.integer(1, 2)).model_copy(update={"code": COMP_CODE})
        self._lose_comp_confirmations(lost)
        try:
            result, error = self._call(customer, "POST bookings (comp)", lambda: self._book(
                "ga", customer, f"comp-{key}", body))
        finally:
            self.store.before_save = None
        status = result.booking.status if result is not None else None
        if result is not None:
            self._remember(result.booking.booking_id, customer)
            assert result.booking.amount.value == 0, f"Z1 a comp code's hold costs {result.booking.amount.text}"
            if not lost and not result.replayed:
                assert status is S.CONFIRMED, f"Z1 a comp was answered {status}, not confirmed"
            if lost and d.choice([True, False]):
                again, error = self._call(customer, "POST bookings (comp, repeated)", lambda: self._book(
                    "ga", customer, f"comp-{key}", body))
                if again is not None:
                    status = again.booking.status
                    assert again.booking.booking_id == result.booking.booking_id
                    assert status is not S.HELD, "Z1 a comp's repeat left it HELD"
        self.note(f"hold_with_comp_code {customer} lost={lost} -> {getattr(error, 'code', None) or status}")
        self.log["comp_held" if error is None else f"comp:{error.code}"] += 1

    def organizer_gives_order(self, d: Draw) -> None:
        """POST /admin/orders (issue 45): the organizer gives an order of its own offerings to an
        address, a comp confirmed at once without a payment, its places counted among each line's
        comps (Z1, C1); the other organizer giving the same offerings is refused and writes
        nothing. The order is then one more booking every operation finds (cancelled by its
        guest or the organizer, its event cancelled). Fault: the confirmation is lost, as above."""
        from holdfast.products.orders.services import guest_customer

        giver = d.choice([ORGANIZER, ORGANIZER, OTHER_ORGANIZER])
        email, key = d.choice(GUESTS), d.choice(KEYS)
        names = d.subset(["ga", "seats", "slot"], 1, 2)
        asked = []
        for name in names:
            asked.append((name, tuple(d.subset(SEATS, 1, 2)) if name == "seats" else
                          (d.choice(SLOT_TIMES), d.integer(1, SLOT_SEATS)) if name == "slot" else d.integer(1, 2)))
        lines = tuple(OrderLine(self.events[name], HoldPlaces.of(self._request_body(name, what)))
                      for name, what in asked)
        lost = d.choice([False, False, False, True])
        self._lose_comp_confirmations(lost)
        before = len(self.storage.snapshot().bookings) if giver is OTHER_ORGANIZER else None
        try:
            result, error = self._call(giver.organizer_id, "POST /admin/orders", lambda: self.orders.give(
                giver, f"give-{key}", list(lines), "model", email))
        finally:
            self.store.before_save = None
        if giver is OTHER_ORGANIZER:
            assert result is None and error is not None and error.code == "event_not_found", \
                f"O1 another organizer gave the first one's offerings: {getattr(error, 'code', None)}"
            assert len(self.storage.snapshot().bookings) == before, "O1 a refused gift wrote a booking"
        status = result.booking.status if result is not None else None
        if result is not None:
            self._remember(result.booking.booking_id, guest_customer(email))
            assert result.booking.amount.value == 0, f"Z1 a given order costs {result.booking.amount.text}"
            if not lost and not result.replayed:
                assert status is S.CONFIRMED, f"Z1 a given order was answered {status}, not confirmed"
        self.note(f"organizer_gives_order {giver.organizer_id} {email} {asked} lost={lost} -> "
                  f"{getattr(error, 'code', None) or status}")
        self.log["order_given" if error is None else f"give:{error.code}"] += 1

    def organizer_blocks(self, d: Draw) -> None:
        """POST /events/{id}/blocks (issue 45): the organizer keeps places of "ga" (a quantity) or
        "seats" (named seats) out of sale, sometimes with a rival's hold for the same places
        landing between the block's plan and its write. The block takes only available places, in
        one write with its claims (B1: sold + held + blocked never exceed capacity, a blocked seat
        is in no booking), and no hold takes a blocked place (I1-I3)."""
        event = d.choice(["ga", "seats"])
        what: Any = tuple(d.subset(SEATS, 1, 2)) if event == "seats" else d.integer(1, 3)
        body = {"seats": list(what)} if event == "seats" else {"quantity": what}
        raced = d.choice([False, True])
        if raced:
            rival, key = d.choice(CUSTOMERS), d.choice(KEYS)
            rival_what = tuple(d.subset(SEATS, 1, 2)) if event == "seats" else d.integer(1, 2)

            def rival_hold() -> None:
                result, _ = self._call(rival, "POST bookings (rival of a block)", lambda: self._book(
                    event, rival, f"rival-{key}", self._request_body(event, rival_what)))
                if result is not None:
                    self._remember(result.booking.booking_id, rival)

            self.block_race = rival_hold
        try:
            result, error = self._call("organizer", "POST /events/{id}/blocks", lambda: self.blocks.create(
                self.events[event], HoldPlaces.of(body), "sponsor", ORGANIZER))
        finally:
            self.block_race = None
        if result is not None:
            self.block_ids.append((event, result["block_id"]))
            if event == "seats":
                assert sorted(result["seats"]) == sorted(what), f"B1 block of {what} kept {result['seats']}"
        self.note(f"organizer_blocks {event} {what} raced={raced} -> {getattr(error, 'code', None) or 'blocked'}")
        self.log["blocked" if error is None else f"block:{error.code}"] += 1

    def exchange(self, d: Draw) -> None:
        """POST /bookings/{id}/exchange (issue 45): a customer moves a booking (a confirmed one
        mostly; any other is refused) to other seats of "seats", to seats of "later" (the next
        week's date) or to another quantity of "ga", with a fault: a rival's hold for the asked
        places, or the customer's own cancel, landing between the exchange's plan and its write;
        or the same request sent twice. XC1: the exchange moves the booking whole (it stays
        CONFIRMED, on the asked offering with the asked places, its amount unchanged or, for
        fewer places, lowered by the difference it refunded) or changes
        nothing; a repeat moves nothing again. The checks after the step hold the places (I1-I3:
        never oversold, the old places given back) and the money (M, S: one payment, unrefunded)."""
        offering = {self.events[name] for name in ("ga", "seats", "later")}
        candidates = self._bookings_in({S.CONFIRMED}, where=lambda b: b.event_id in offering)
        if not candidates:
            self._paid_seats(d)   # a booking bought now, so exchanges meet confirmed ones often enough
            candidates = self._bookings_in({S.CONFIRMED}, where=lambda b: b.event_id in offering)
        candidates = candidates or self.known
        if not candidates:
            self.unreached("exchange: no booking yet")
            return
        booking_id, customer = d.choice(candidates)
        target = d.choice(["seats", "later", "later", "ga"])
        # mostly as many places as the booking has (the same price: every offering here sells at one)
        mine = self.store.get_booking(booking_id)
        count = max(1, min(mine.places.quantity, 3)) if mine is not None and d.choice([True, True, False]) else d.integer(1, 3)
        what: Any = tuple(d.subset(SEATS, count, count)) if target != "ga" else count
        body = HoldPlaces(seats=what) if target != "ga" else HoldPlaces.of(self.kind.ask(what))
        fault = d.choice([None, None, "rival", "cancel", "repeat"])
        self.counter += 1
        key = f"exchange-{self.counter}"
        before = self.store.get_booking(booking_id)
        if fault == "rival":
            rival = d.choice([c for c in CUSTOMERS if c != customer])

            def rival_hold() -> None:
                result, _ = self._call(rival, "POST bookings (rival of an exchange)", lambda: self._book(
                    target, rival, f"rival-{key}", body))
                if result is not None:
                    self._remember(result.booking.booking_id, rival)

            self.store.before_save = rival_hold
        elif fault == "cancel":
            self.store.before_save = lambda: self._call(customer, "POST cancel (during an exchange)",
                                                        lambda: self.customer_cancel(booking_id, customer))

        def exchange() -> Any:
            return self.exchanges.exchange(booking_id, customer, key, self.events[target], body)

        self.intent = f"exchange {booking_id[:8]} to {target} {what} fault={fault}"
        try:
            moved, error = self._call(customer, "POST exchange", exchange)
        finally:
            self.store.before_save = None
        after = self.store.get_booking(booking_id)
        assert before is not None and after is not None
        if error is None:
            # the same price, or (fewer places) a cheaper one whose difference the exchange refunded
            differences = lambda b: (b.payment.exchange_refunds if b.payment else None) or []  # noqa: E731
            back = sum((Decimal(e["amount"]["value"]) for e in differences(after)[len(differences(before)):]),
                       Decimal("0"))
            assert after.status is S.CONFIRMED and after.event_id == self.events[target] \
                and after.amount.value + back == before.amount.value, \
                f"XC1 exchange of {booking_id} answered ok but the booking is {after.status} on {after.event_id}" \
                f" at {after.amount} (was {before.amount}, {back} given back)"
            got = sorted(after.places.units) if target != "ga" else after.places.quantity
            assert got == (sorted(what) if target != "ga" else what), \
                f"XC1 exchange of {booking_id} to {what} holds {got}"
            if fault == "repeat":
                again, _ = self._call(customer, "POST exchange (again)", exchange)
                assert again is not None and again.version == after.version \
                    and self.store.get_booking(booking_id).version == after.version, \
                    f"XC1 the repeat of exchange {key} of {booking_id} moved it again"
        elif fault in (None, "repeat"):
            assert after.version == before.version and after.places == before.places \
                and after.event_id == before.event_id, \
                f"XC1 exchange of {booking_id} refused ({error.code}) but the booking changed"
        self.note(f"exchange {booking_id[:8]} to {target} {what} fault={fault} -> "
                  f"{getattr(error, 'code', None) or 'moved'}")
        self.log["exchanged" if error is None else f"exchange:{error.code}"] += 1

    def exchange_for_less(self, d: Draw) -> None:
        """POST /bookings/{id}/exchange into cheaper places (issue 45): a confirmed booking of
        "seats" or "later" moved to seats of "cheaper", the difference refunded from its payment,
        with a fault: the refund's answer lost (503; the customer repeats), the refund never
        reaching the provider (503; repeated), a rival's hold for the seats landing first, or the
        same request twice. XC2: moved, the booking's amount is the new price and its payments'
        refunds give back exactly the difference, once, whatever is repeated (a booking moved by a
        dearer exchange before: its difference payment gives back first, each payment at most
        once, services/exchange.py); refused, nothing
        changed and nothing went back. The money rules (M1, M2, M5, S1) count a difference's
        refund apart from a cancellation's. An order is not one of these bookings, though its
        first line's offering may be "seats": its places are every line's (up to 4 seats and
        more of the other lines), no ask of seats of "cheaper" matches them, and the ``exchange``
        operation is the one that sends it (make proof seed 542659796)."""
        source = {self.events["seats"], self.events["later"]}

        def exchangeable(booking: Booking) -> bool:
            return booking.event_id in source and not booking.comp and str(booking.places.kind) != "basket"

        picked = self._a_paid_booking(d, exchangeable, "seats", "exchange_for_less: no paid booking")
        if picked is None:
            return
        booking_id, customer, before, seats = picked
        body = HoldPlaces(seats=seats)
        fault = d.choice([None, "lost_answer", "never_arrived", "rival", "repeat", "lost_not_repeated"])
        self.counter += 1
        key = f"for-less-{self.counter}"
        target = self.events["cheaper"]
        # the booking's payments: its own, and the difference payments of dearer exchanges that
        # moved it, which give back first (what each holds; services/exchange.py)
        payment_ids = [p for p in [before.payment.payment_id if before.payment else None,
                                   *[(e.get("payment") or {}).get("payment_id") for e, _ in before.difference_shares]]
                       if p]

        def refunds_now() -> dict[str, list[dict[str, Any]]]:
            return {p: self.provider.refunds_for(p) for p in payment_ids}

        refunds_before = {p: len(made) for p, made in refunds_now().items()}
        if fault in ("lost_answer", "lost_not_repeated"):
            self.provider.fail("create_refund", "after")
        elif fault == "never_arrived":
            self.provider.fail("create_refund", "before")
        elif fault == "rival":
            rival = d.choice([c for c in CUSTOMERS if c != customer])

            def rival_hold() -> None:
                result, _ = self._call(rival, "POST bookings (rival of an exchange)", lambda: self._book(
                    "cheaper", rival, f"rival-{key}", body))
                if result is not None:
                    self._remember(result.booking.booking_id, rival)

            self.store.before_save = rival_hold

        def exchange() -> Any:
            return self.exchanges.exchange(booking_id, customer, key, target, body)

        self.intent = f"exchange_for_less {booking_id[:8]} to {seats} fault={fault}"
        try:
            moved, error = self._call(customer, "POST exchange (cheaper)", exchange)
        finally:
            self.store.before_save = None
            self.provider.faults.pop("create_refund", None)
        if error is not None and error.code == "payment_provider_unavailable" and fault == "lost_not_repeated":
            # the customer never repeats: the sweeper asks again, under the same key, once it is due
            self.clock.advance(REFUND_CHECK + 61)
            self.run_sweep()
            error = None
        elif error is not None and error.code == "payment_provider_unavailable":
            moved, error = self._call(customer, "POST exchange (cheaper, repeated)", exchange)
            assert error is None, f"XC2 the repeat of exchange {key} after a lost refund answer: {error.code}"
        after = self.store.get_booking(booking_id)
        assert after is not None
        made = [r for p, refunds in refunds_now().items() for r in refunds[refunds_before[p]:]]
        if error is None:
            price = Decimal(CHEAPER["value"]) * after.places.quantity
            assert after.status is S.CONFIRMED and after.event_id == target and after.amount.value == price, \
                f"XC2 exchange {key} of {booking_id} answered ok: {after.status} on {after.event_id} at {after.amount}"
            assert sorted(after.places.units) == sorted(seats), f"XC2 exchange {key} holds {after.places.units}"
            difference = before.amount.value - price
            # at most one refund of each payment, together exactly the difference
            assert len({r["payment_id"] for r in made}) == len(made) \
                and sum((Decimal(r["amount"]["value"]) for r in made), Decimal("0")) == difference, \
                f"XC2 exchange {key} of {booking_id} gave back {[r['amount'] for r in made]}, not {difference}"
            if fault == "lost_not_repeated":   # the sweeper learnt the refunds' answers on its own
                recorded = [e for e in after.payment.exchange_refunds or () if e["exchange_key"] == key]
                assert sorted(e["status"] for e in recorded) == sorted(r["status"] for r in made), \
                    f"XC2 exchange {key} of {booking_id}: the lost refund recorded as {recorded}, made {made}"
            assert after.charged == before.charged, f"XC2 exchange {key}: paid {before.charged}, now {after.charged}"
            if fault == "repeat":
                again, _ = self._call(customer, "POST exchange (cheaper, again)", exchange)
                assert again is not None and self.store.get_booking(booking_id).version == after.version \
                    and sum(map(len, refunds_now().values())) == sum(refunds_before.values()) + len(made), \
                    f"XC2 the repeat of exchange {key} of {booking_id} moved or refunded again"
        else:
            assert after.version == before.version and after.places == before.places and not made, \
                f"XC2 exchange {key} of {booking_id} refused ({error.code}) but the booking or its money changed"
        self.note(f"exchange_for_less {booking_id[:8]} to {seats} fault={fault} -> "
                  f"{getattr(error, 'code', None) or 'moved'}")
        self.log["exchanged_for_less" if error is None else f"exchange_for_less:{error.code}"] += 1
        if error is None and len(payment_ids) > 1:   # a booking paid by several payments (issue 45)
            self.log["exchanged_for_less:after_dearer"] += 1

    def exchange_for_more(self, d: Draw) -> None:
        """POST /bookings/{id}/exchange into dearer places (issue 45): a confirmed booking of
        "cheaper" moved to seats of "seats", the difference paid by a second payment. The new seats
        are held for it while the old stay the booking's; then, by the fault drawn: paid in time,
        declined, left to lapse (the sweeper), paid after it lapsed with the seats still free or
        taken by a rival meanwhile, the creation's answer lost (503; repeated), or the booking
        cancelled while the difference is held and then paid. XC3: the booking is either moved
        whole (on "seats", the asked seats, at their price, the difference ``paid``) or as it was
        (its offering, places and amount), never both; no seat is held once the difference is
        settled; the difference payment is captured only to back the move or is refunded (M, S1)."""
        source = self.events["cheaper"]
        picked = self._a_paid_booking(d, lambda b: b.event_id == source and not b.comp and b.held_difference is None,
                                      "cheaper", "exchange_for_more: no paid booking of cheaper")
        if picked is None:
            return
        booking_id, customer, before, seats = picked
        body = HoldPlaces(seats=seats)
        fault = d.choice([None, "declined", "lapsed", "late", "late_taken", "lost_answer", "cancel"])
        self.counter += 1
        key = f"for-more-{self.counter}"
        target = self.events["seats"]
        if fault == "lost_answer":
            self.provider.fail("create_payment", "after")

        def exchange() -> Any:
            return self.dearer_exchanges.exchange(booking_id, customer, key, target, body)

        self.intent = f"exchange_for_more {booking_id[:8]} to {seats} fault={fault}"
        try:
            held, error = self._call(customer, "POST exchange (dearer)", exchange)
        finally:
            self.provider.faults.pop("create_payment", None)
        if error is not None and error.code == "payment_provider_unavailable":
            held, error = self._call(customer, "POST exchange (dearer, repeated)", exchange)
        after = self.store.get_booking(booking_id)
        assert after is not None
        if error is not None:
            assert after.places == before.places and after.event_id == before.event_id \
                and after.held_difference is None, \
                f"XC3 dearer exchange {key} of {booking_id} refused ({error.code}) but the booking changed"
            self.log[f"exchange_for_more:{error.code}"] += 1
            return
        entry = after.held_difference
        assert entry is not None and entry["exchange_key"] == key and after.event_id == source \
            and after.places == before.places, f"XC3 dearer exchange {key} of {booking_id}: not held as asked"
        payment_id = entry["payment"].get("payment_id")
        assert payment_id, f"XC3 dearer exchange {key} of {booking_id} has no difference payment"

        def deliver() -> None:
            self._consume("payment consumer", lambda: self.payments.apply_provider_payment(
                self.provider.get_payment(payment_id), actor="webhook"))

        if fault == "cancel":
            self._call(customer, "POST cancel (difference held)", lambda: self.customer_cancel(booking_id, customer))
        if fault in ("lapsed", "late", "late_taken"):
            self.clock.advance(entry_ttl(entry) + 61)
            self.run_sweep()
            lapsed = self.store.get_booking(booking_id)
            assert lapsed is not None
            paid_before = {str(e["exchange_key"]) for e in before.differences or () if e.get("state") == "paid"}
            if lapsed.event_id == target and any(e.get("state") == "paid" and e["exchange_key"] != key
                                                 and str(e["exchange_key"]) not in paid_before
                                                 for e in lapsed.differences or ()):
                # an earlier exchange of the booking, left to lapse, had its difference paid at the
                # provider after its deadline (customer_acts_at_provider): the sweeper's check of that
                # payment moved the booking (its places free), and this one lapsed beside it (seed
                # 20261240363)
                record = next(e for e in lapsed.differences or () if e["exchange_key"] == key)
                assert lapsed.held_difference is None and record["state"] == "lapsed", \
                    f"XC3 dearer exchange {key} of {booking_id}: {record['state']} beside an earlier one paid late"
                self.note(f"exchange_for_more {booking_id[:8]} to {seats} fault={fault} -> lapsed, "
                          "an earlier difference paid late moved it")
                self.log["exchanged_for_more:earlier_paid_late"] += 1
                return
            assert lapsed.held_difference is None and lapsed.event_id == source, \
                f"XC3 dearer exchange {key} of {booking_id}: still held after its deadline"
        if fault == "late_taken":
            rival = d.choice([c for c in CUSTOMERS if c != customer])
            result, _ = self._call(rival, "POST bookings (rival after a lapse)",
                                   lambda: self._book("seats", rival, f"rival-{key}", body))
            if result is not None:
                self._remember(result.booking.booking_id, rival)
        if fault == "declined":
            self.provider.decline(payment_id)
            deliver()
        elif fault != "lapsed":
            self.provider.pay(payment_id, at=iso(self.clock()))
            deliver()
        final = self.store.get_booking(booking_id)
        assert final is not None
        record = next(e for e in final.differences or () if e["exchange_key"] == key)
        moved = final.event_id == target
        if moved:
            price = Decimal("1500.00") * final.places.quantity
            assert record["state"] == "paid" and sorted(final.places.units) == sorted(seats) \
                and final.amount.value == price and final.status is S.CONFIRMED, \
                f"XC3 dearer exchange {key} of {booking_id} moved but {record['state']}, {final.places.units}, {final.amount}"
        else:
            assert final.places == before.places and record["state"] in ("failed", "lapsed", "refunded", "refunding",
                                                                          "refund_rejected"), \
                f"XC3 dearer exchange {key} of {booking_id} not moved, yet the difference is {record['state']}"
        assert final.held_difference is None, f"XC3 dearer exchange {key} of {booking_id} still holds seats"
        self.note(f"exchange_for_more {booking_id[:8]} to {seats} fault={fault} -> "
                  f"{'moved' if moved else record['state']}")
        self.log[f"exchanged_for_more:{'moved' if moved else record['state']}"] += 1

    def _a_paid_booking(self, d: Draw, where: Callable[[Booking], bool], event: str, none: str
                        ) -> tuple[str, str, Booking, tuple[str, ...]] | None:
        """A confirmed booking ``where`` says an exchange may start from (one of ``event`` bought
        first when there is none), and as many seats of the map as it has, for the exchange to
        ask: (booking id, its customer, the booking, the seats), or None (``none`` noted)."""
        candidates = self._bookings_in({S.CONFIRMED}, where=where)
        if not candidates:
            self._paid_seats(d, event=event)
            candidates = self._bookings_in({S.CONFIRMED}, where=where)
        if not candidates:
            self.unreached(none)
            return None
        booking_id, customer = d.choice(candidates)
        before = self.store.get_booking(booking_id)
        assert before is not None
        return booking_id, customer, before, tuple(d.subset(SEATS, before.places.quantity, before.places.quantity))

    def _paid_seats(self, d: Draw, event: str = "seats") -> None:
        """A customer holds seats of "seats" and pays for them at once (the payment's notification
        applied as the consumer would): what an exchange most often starts from."""
        customer, seats = d.choice(CUSTOMERS), tuple(d.subset(SEATS, 1, 2))
        self.counter += 1
        key = f"paid-{self.counter}"
        result, _ = self._call(customer, "POST bookings", lambda: self._book(
            event, customer, key, self._request_body(event, seats)))
        if result is None:
            return
        booking_id = result.booking.booking_id
        self.requests[(customer, key)] = ((event, seats), booking_id)
        self._remember(booking_id, customer)
        booking, _ = self._call(customer, "POST payment", lambda: self.payments.start_payment(booking_id, customer,
                                                                                             f"pay-{key}"))
        payment_id = booking.payment.payment_id if booking is not None and booking.payment else None
        if payment_id:
            self.provider.pay(payment_id, at=iso(self.clock()))
            self._consume("payment consumer", lambda: self.payments.apply_provider_payment(
                self.provider.get_payment(payment_id), actor="webhook"))
        self.note(f"exchange: {customer} bought {seats} of seats first ({booking_id[:8]})")

    def organizer_unblocks(self, d: Draw) -> None:
        """DELETE /events/{id}/blocks/{block_id}: a block ended (its places on sale again), or one
        ended already (404 ``block_not_found``, nothing written); the other organizer ending the
        first one's block is answered as if it did not exist. Then a customer may hold the places."""
        if not self.block_ids:
            self.unreached("organizer_unblocks: no block yet")
            return
        event, block_id = d.choice(self.block_ids)
        caller = d.choice([ORGANIZER, ORGANIZER, OTHER_ORGANIZER])
        _, error = self._call("organizer", "DELETE /events/{id}/blocks/{block_id}", lambda: self.blocks.end(
            self.events[event], block_id, caller))
        if caller is OTHER_ORGANIZER:
            assert error is not None and error.code in ("event_not_found", "block_not_found"), \
                f"O1 another organizer ended the first one's block: {getattr(error, 'code', None)}"
        self.note(f"organizer_unblocks {event} {block_id[:8]} by {caller.organizer_id} -> "
                  f"{getattr(error, 'code', None) or 'ended'}")
        self.log["unblocked" if error is None else f"unblock:{error.code}"] += 1

    def organizer_sells_from_block(self, d: Draw) -> None:
        """POST /admin/orders with a line naming a block (issue 45): the organizer gives places kept
        in one of its blocks to an address, the places moving blocked -> held -> sold in the
        order's own writes and the block keeping the rest (gone when none are left): B1 (a block's
        places are what the items count blocked, none in a booking) and I1-I3 hold. Asked: some of
        the block's seats, a quantity of its places, or more than it keeps (409 ``not_in_block``,
        nothing written); an ended block is 404 ``block_not_found``. Fault: the confirmation is
        lost, as for any comp (the order lapses and its places go back on sale)."""
        if not self.block_ids:
            self.unreached("organizer_sells_from_block: no block yet")
            return
        event, block_id = d.choice(self.block_ids)
        block = self.store.get_block(self.events[event], block_id)
        kept = sorted(block.get("units") or ()) if block else []
        if event == "seats":
            body: dict[str, Any] = {"seats": d.subset(kept, 1, len(kept)) if kept and d.choice([True, True, False])
                                    else list(d.subset(SEATS, 1, 2))}
        else:
            body = {"quantity": d.integer(1, int(block["quantity"]) + 1 if block else 2)}
        lost = d.choice([False, False, False, True])
        self._lose_comp_confirmations(lost)
        email, key = d.choice(GUESTS), d.choice(KEYS)
        line = OrderLine(self.events[event], HoldPlaces.of(self._request_body(event, body.get("seats") or body["quantity"])),
                         block_id=block_id)
        before = len(self.storage.snapshot().bookings)
        try:
            result, error = self._call(ORGANIZER.organizer_id, "POST /admin/orders (from a block)",
                                       lambda: self.orders.give(ORGANIZER, f"block-{key}", [line], "model", email))
        finally:
            self.store.before_save = None
        if result is not None:
            from holdfast.products.orders.services import guest_customer

            self._remember(result.booking.booking_id, guest_customer(email))
            assert result.booking.amount.value == 0, f"Z1 an order from a block costs {result.booking.amount.text}"
            if not lost and not result.replayed:
                assert result.booking.status is S.CONFIRMED, \
                    f"Z1 an order from a block was answered {result.booking.status}"
        elif error is not None and error.code in ("not_in_block", "block_not_found"):
            assert len(self.storage.snapshot().bookings) == before, "B1 a refused order from a block wrote a booking"
        self.note(f"organizer_sells_from_block {event} {block_id[:8]} {body} lost={lost} -> "
                  f"{getattr(error, 'code', None) or (result.booking.status if result else None)}")
        self.log["sold_from_block" if error is None else f"from_block:{error.code}"] += 1
    # ------------------------------------------------------------------------- transfers (#45)

    def _holder_race(self, booking_id: str, holder: str, what: str) -> Callable[[], Any]:
        """Another request of the holder's whose write lands first: a cancel or a withdrawal."""
        if what == "cancel":
            return lambda: self._call(holder, "POST cancel (racing a transfer)",
                                      lambda: self.customer_cancel(booking_id, holder))
        return lambda: self._call(holder, "DELETE transfer (racing)", lambda: self.transfers.withdraw(booking_id, holder))

    def customer_offers_transfer(self, d: Draw) -> None:
        """POST /bookings/{id}/transfer: the holder (or, refused with 403, someone else) offers a
        booking to an address, sometimes with the holder's own cancel landing first (the offer is
        then decided on the cancelled booking: booking_not_confirmed). An offer is written only on
        a CONFIRMED booking, one at a time (transfer_pending), never on a checked-in one (U1)."""
        giveable = self._bookings_in({S.CONFIRMED}, where=lambda b: kinds.of_booking(b).transferable) \
            or self._comp_to_give(d)
        if not giveable:
            self.unreached("customer_offers_transfer: no confirmed booking to give")
            return
        booking_id, _ = d.choice(giveable)
        before = self.store.get_booking(booking_id)
        holder = before.customer_id
        caller = d.choice([holder, holder, holder, d.choice(CUSTOMERS)])
        raced = d.choice([None, None, None, "cancel"])
        if raced:
            self.store.before_save = self._holder_race(booking_id, holder, raced)
        try:
            result, error = self._call(caller, "POST /bookings/{id}/transfer", lambda: self.transfers.offer(
                booking_id, caller, d.choice(GUESTS)))
        finally:
            self.store.before_save = None
        after = self.store.get_booking(booking_id)
        if caller != holder:
            assert error is not None and error.status == 403, f"U1 {caller} offered {holder}'s booking: {error!r}"
        if result is not None:
            self.transfer_links.append((booking_id, result["accept_url"].split("token=", 1)[1]))
            offer = (after.kind_details or {}).get("transfer") or {}
            assert after.status is S.CONFIRMED and offer.get("transfer_id") == result["transfer_id"], \
                f"U1 an offer answered 202 is not the booking's waiting one ({after.status})"
            assert not kinds.of_booking(after).admitted(after), "U1 a checked-in booking was offered"
        self.note(f"customer_offers_transfer {booking_id[:8]} by {caller} raced={raced} -> "
                  f"{getattr(error, 'code', None) or 'offered'}")
        self.log["transfer_offered" if error is None else f"transfer:{error.code}"] += 1
        self.check_transfers(self.snapshot())

    def _comp_to_give(self, d: Draw) -> list[tuple[str, str]]:
        """A confirmed booking to give when the history has none yet: a comp of "ga" (a 100 %
        code confirms it without a payment), as hold_with_comp_code makes one."""
        customer, key = d.choice(CUSTOMERS), d.choice(KEYS)
        body = self._request_body("ga", 1).model_copy(update={"code": COMP_CODE})
        result, _ = self._call(customer, "POST bookings (comp to give)", lambda: self._book(
            "ga", customer, f"gift-{key}", body))
        if result is None or result.booking.status is not S.CONFIRMED:
            return []
        self._remember(result.booking.booking_id, result.booking.customer_id)
        return [(result.booking.booking_id, result.booking.customer_id)]

    def _a_link(self, d: Draw) -> bool:
        """Whether a link exists, one offered now when none was (the history may not have reached
        an offer by itself)."""
        if not self.transfer_links:
            self.customer_offers_transfer(d)
        return bool(self.transfer_links)

    def customer_accepts_transfer(self, d: Draw) -> None:
        """POST /bookings/{id}/transfer/accept?token=: a customer holding a link takes the booking,
        in one write conditioned on its version. Faults: the answer is lost and the press repeated
        (the same booking, nothing written twice), the holder's cancel or withdrawal lands first
        (the offer lapses: transfer_lapsed / transfer_invalid, nothing moves). Once taken the
        booking has exactly one owner, the taker, and no ticket it showed before admits (U1, U2)."""
        if not self._a_link(d):
            self.unreached("customer_accepts_transfer: no link yet")
            return
        booking_id, token = d.choice(self.transfer_links)
        before = self.store.get_booking(booking_id)
        taker = d.choice(CUSTOMERS)
        fault = d.choice([None, None, "lost", "cancel", "withdraw"])
        shown = kinds.of_booking(before).credential_ids(before)
        if fault in ("cancel", "withdraw"):
            self.store.before_save = self._holder_race(booking_id, before.customer_id, fault)
        try:
            # as functions/bookings_api wires it: the taker's verified address (the model's customers have one)
            result, error = self._call(taker, "POST transfer/accept", lambda: self.transfers.accept(
                booking_id, token, taker, ADDRESSED.get(taker)))
        finally:
            self.store.before_save = None
        after = self.store.get_booking(booking_id)
        if result is not None:
            assert after.customer_id == taker, f"U1 accepted by {taker}, owned by {after.customer_id}"
            if fault == "lost":
                again, error = self._call(taker, "POST transfer/accept (repeat)", lambda: self.transfers.accept(
                    booking_id, token, taker, ADDRESSED.get(taker)))
                assert again is not None and again.version == self.store.get_booking(booking_id).version, \
                    f"U1 a repeated press was not answered the same: {error!r}"
            if before.customer_id != taker:
                assert not any(admits(after, ticket) for ticket in shown), \
                    f"U2 a ticket of {before.customer_id} still admits after {taker} took booking {booking_id[:8]}"
            self.known = [(known, taker if known == booking_id else who) for known, who in self.known]
        else:
            assert after.customer_id == before.customer_id, f"U1 a refused acceptance moved the booking: {error!r}"
        self.note(f"customer_accepts_transfer {booking_id[:8]} by {taker} fault={fault} -> "
                  f"{getattr(error, 'code', None) or 'accepted'}")
        self.log["transfer_accepted" if error is None else f"accept:{error.code}"] += 1
        self.check_transfers(self.snapshot())

    def customer_withdraws_transfer(self, d: Draw) -> None:
        """DELETE /bookings/{id}/transfer: the holder takes a waiting offer back (its link then
        refused), a repeat finds none; anyone else, the giver after it was taken included, is 403."""
        if not self._a_link(d):
            self.unreached("customer_withdraws_transfer: no link yet")
            return
        booking_id, _ = d.choice(self.transfer_links)
        holder = self.store.get_booking(booking_id).customer_id
        caller = d.choice([holder, holder, d.choice(CUSTOMERS)])
        result, error = self._call(caller, "DELETE /bookings/{id}/transfer", lambda: self.transfers.withdraw(
            booking_id, caller))
        after = self.store.get_booking(booking_id)
        if caller != holder:
            assert error is not None and error.status == 403, f"U1 {caller} withdrew {holder}'s transfer: {error!r}"
        if error is None:
            assert not (after.kind_details or {}).get("transfer"), "U1 a withdrawn offer still waits"
        self.note(f"customer_withdraws_transfer {booking_id[:8]} by {caller} -> "
                  f"{getattr(error, 'code', None) or result}")
        self.log["transfer_withdrawn" if error is None else f"withdraw:{error.code}"] += 1

    def check_transfers(self, snap: Any) -> None:
        """U1: a booking given to another customer has exactly one owner: its customer, whose
        marker names it, and no other customer's does. U2: no credential it showed before it was
        given admits, online (the entry rule) or offline (the doors' void list)."""
        for booking in snap.bookings.values():
            details = booking.kind_details or {}
            if not details.get("accepted_transfer"):
                continue
            owners = {c for c in (*CUSTOMERS, booking.customer_id)
                      if booking.booking_id in self.store.customer_booking_ids(c, booking.event_id)}
            assert owners == ({booking.customer_id} if not booking.erased_at else set()), \
                f"U1 booking {booking.booking_id[:8]} of {booking.customer_id} is marked as {sorted(owners)}'s"
            for ticket in details.get("voided_credentials") or ():
                assert not admits(booking, ticket), f"U2 voided ticket {ticket} of {booking.booking_id[:8]} admits"
                if kinds.of_booking(booking).transferable and kinds.of_booking(booking).credential_ids(booking):
                    assert ticket in event_tickets.revoked(booking), \
                        f"U2 voided ticket {ticket} of {booking.booking_id[:8]} is not on the doors' void list"

    def repeat_request(self, d: Draw) -> None:
        """A client that lost the answer sends the very same request again, at any later time."""
        if not self.requests:
            return
        repeatable = [request for request in self.requests if not request[1].startswith("hot-")]
        if not repeatable:
            return
        customer, key = d.choice(repeatable)
        (event, what), booking_id = self.requests[(customer, key)]
        body = self._request_body(event, what)
        result, error = self._call(customer, "POST bookings (repeat)",
                                   lambda: self._book(event, customer, key, body))
        self.note(f"repeat {customer} {key} -> {type(error).__name__ if error else 'replayed'}")
        assert error is None and result.replayed and result.booking.booking_id == booking_id, \
            f"I7 a repeat of {customer}/{key} was not a replay of {booking_id[:8]}: {error!r}"
        self.log["replayed"] += 1

    def start_payment(self, d: Draw) -> None:
        if not self.known:
            return
        booking_id, customer = d.choice(self._prefer({S.HELD, S.PAYMENT_PENDING}))
        fault = d.choice([None, None, "before", "after"])
        then = d.choice(["leaves", "pays", "pays", "declines"])
        if fault:
            self.provider.fail("create_payment", fault)
        try:
            booking, error = self._call(customer, "POST payment",
                                        lambda: self.payments.start_payment(booking_id, customer, "pay"))
        finally:
            self.provider.faults.pop("create_payment", None)
        self.note(f"start_payment {booking_id[:8]} fault={fault} -> "
                  f"{type(error).__name__ if error else 'ok'}")
        if error is not None:
            self.log["payment_not_started"] += 1
            return
        self.log["payment_started"] += 1
        payment_id = booking.payment.payment_id if booking.payment else None
        if payment_id and self.provider.payments[payment_id]["status"] == "pending" and then != "leaves":
            if then == "pays":
                self.provider.pay(payment_id, at=iso(self.clock()))
            else:
                self.provider.decline(payment_id)
            self.note(f"  customer {then} on the page")
            self.log[then] += 1

    def customer_acts_at_provider(self, d: Draw) -> None:
        if not self.provider.payments:
            return
        pending = [p for p, v in self.provider.payments.items() if v["status"] == "pending"]
        payment_id = d.choice(pending or list(self.provider.payments))
        pays = d.choice([True, True, True, False])
        if self.provider.payments[payment_id]["status"] != "pending":
            return
        if pays:
            self.provider.pay(payment_id, at=iso(self.clock()))
        else:
            self.provider.decline(payment_id)
        self.note(f"customer {'pays' if pays else 'declines'} {payment_id[:8]} at the provider")
        self.log["paid" if pays else "declined"] += 1

    def customer_hoards(self, d: Draw) -> None:
        """One customer takes one place after another on a roomy event, each under a new key
        (finding 13: the per-customer cap of active holds, checked by H1)."""
        customer, attempts = d.choice(CUSTOMERS), d.integer(3, 7)
        self.counter += 1
        self.intent = f"{customer} tries {attempts} holds"
        answers = []
        for index in range(attempts):
            result, error = self._call(customer, "POST bookings", lambda: self.bookings.create_booking(
                self.events["big"], customer, f"hoard-{self.counter}-{index}", self.kind.ask(1)))
            if result is not None:
                self._remember(result.booking.booking_id, customer)
            answers.append(getattr(error, "code", None) or "held")
        self.note(f"customer_hoards {customer} x{attempts} -> {answers}")
        self.log["hoarded"] += 1

    def network_hoards(self, d: Draw) -> None:
        """Several accounts behind one network address hold place after place of the roomy event,
        each under a new key, now and then as an order of it and "ga" (issue 42, finding 13: a new
        account does not reset the cap on one address's live holds; AH1: the counter equals the
        address's live holds of each offering, an order once toward each)."""
        network, attempts = d.choice(NETWORKS), d.integer(2, 6)
        self.counter += 1
        answers = []
        for index in range(attempts):
            customer, key = d.choice(CUSTOMERS), f"net-{self.counter}-{index}"
            if d.choice([False, False, False, True]):
                lines = (OrderLine(self.events["big"], HoldPlaces.of(self.kind.ask(1))),
                         OrderLine(self.events["ga"], HoldPlaces.of(self._request_body("ga", 1))))
                result, error = self._call(customer, "POST /orders", lambda: self.orders.place(
                    customer, key, PlaceOrder(lines, holder_address=network)))
            else:
                asked = replace(HoldPlaces.of(self.kind.ask(1)), holder_address=network)
                result, error = self._call(customer, "POST bookings", lambda: self.bookings.create_booking(
                    self.events["big"], customer, key, asked))
            if result is not None:
                self._remember(result.booking.booking_id, customer)
            answers.append(getattr(error, "code", None) or "held")
        self.note(f"network_hoards {network[:6]} x{attempts} -> {answers}")
        self.log["network_hoarded"] += 1
        if "too_many_holds" in answers:
            self.log["network:too_many_holds"] += 1

    def cancel(self, d: Draw) -> None:
        if not self.known:
            return
        booking_id, customer = d.choice(self.known)
        fault = d.choice([None, None, "before", "after"])
        if fault:
            self.provider.fail("create_refund", fault)
        try:
            _, error = self._call(customer, "POST cancel", lambda: self.customer_cancel(booking_id, customer))
        finally:
            self.provider.faults.pop("create_refund", None)
        self.note(f"cancel {booking_id[:8]} refund_fault={fault} -> "
                  f"{type(error).__name__ if error else 'ok'}")
        self.log["not_cancellable" if error else "cancelled"] += 1

    def double_click_cancel(self, d: Draw) -> None:
        """Two cancel requests for one booking, the second's write landing while the first is
        between its read and its write (finding 5)."""
        if not self.known:
            return
        booking_id, customer = d.choice(self._prefer({S.CONFIRMED, S.HELD, S.PAYMENT_PENDING}))

        def cancel() -> Any:
            return self.customer_cancel(booking_id, customer)

        self.store.before_save = lambda: self._call(customer, "POST cancel (second click)", cancel)
        self.intent = f"{booking_id[:8]}"
        try:
            _, error = self._call(customer, "POST cancel (first click)", cancel)
        finally:
            self.store.before_save = None
        self.note(f"double_click_cancel {booking_id[:8]} -> {type(error).__name__ if error else 'ok'}")
        self.log["double_click_cancel"] += 1

    def cancel_while_paying(self, d: Draw) -> None:
        """The customer cancels while the payment page is open, then pays on it anyway (finding 10)."""
        open_ = self._bookings_in(
            {S.PAYMENT_PENDING}, lambda b: (self._own_payment(b.booking_id) or {}).get("status") == "pending")
        if not open_:
            return
        booking_id, customer = d.choice(open_)
        self.intent = f"{booking_id[:8]}"
        _, error = self._call(customer, "POST cancel", lambda: self.customer_cancel(booking_id, customer))
        payment = self._own_payment(booking_id)
        paid = payment is not None and payment["status"] == "pending"
        if paid:
            self.provider.pay(payment["id"], at=iso(self.clock()))
        self.note(f"cancel_while_paying {booking_id[:8]} -> {type(error).__name__ if error else 'cancelled'}"
                  f"{', then pays on the open page' if paid else ''}")
        self.log["cancel_while_paying"] += 1

    def refund_long_after(self, d: Draw) -> None:
        """A day after confirmation the customer cancels; the refund's answer may be lost, and a
        reconciliation check follows at once (finding 3)."""
        confirmed = self._bookings_in({S.CONFIRMED})
        if not confirmed:
            return
        booking_id, customer = d.choice(confirmed)
        cancel_fault, check_fault = d.choice([None, "before", "after"]), d.choice([None, "before", "after"])
        self.intent = f"{booking_id[:8]} +25 h, cancel_fault={cancel_fault}, check_fault={check_fault}"
        self.clock.advance(DAY + 3600)
        if cancel_fault:
            self.provider.fail("create_refund", cancel_fault)
        try:
            _, error = self._call(customer, "POST cancel", lambda: self.customer_cancel(booking_id, customer))
        finally:
            self.provider.faults.pop("create_refund", None)
        if check_fault:
            self.provider.fail("create_refund", check_fault)
        try:
            outcome = self._consume("reconciliation check", lambda: self.reconciliation.check(booking_id))
        finally:
            self.provider.faults.pop("create_refund", None)
        booking = self.store.get_booking(booking_id)
        checked = outcome if isinstance(outcome, str) else outcome["outcome"]
        self.note(f"refund_long_after {booking_id[:8]} (+25 h) cancel_fault={cancel_fault} "
                  f"check_fault={check_fault}"
                  f" -> {type(error).__name__ if error else 'ok'}, check {checked}"
                  f", now {booking.status if booking else None}")
        assert booking is None or booking.status is not S.MANUAL_REVIEW \
            or (booking.review or {}).get("reason") != "refund_not_confirmed", \
            f"R3 booking {booking_id}: refund requested just now was given up to review " \
            f"(the 24 h limit must run from the refund request, not from the payment)"
        self.log["refund_long_after"] += 1

    # -------------------------------------------------------------------------- the organizer

    def organizer_retries_event(self, d: Draw) -> None:
        """POST /events again under the same Idempotency-Key, same body or another (finding 1)."""
        name = d.choice([name for name in EVENTS if name in self.bodies])
        same = d.choice([True, False])
        key, body, other = self.bodies[name]
        # The second organizer sending the first one's key (the same body) makes its own event.
        who = d.choice([ORGANIZER, ORGANIZER, OTHER_ORGANIZER]) if same else ORGANIZER
        self.intent = f"event {name}, {'same' if same else 'other'} body, {who.organizer_id}"
        result, error = self._call("organizer", "POST /events (retry)",
                                   lambda: self.catalog.create_event(
                                       self._event_in(body if same else other), key, who))
        self.note(f"{who.organizer_id} retries event {name} with the {'same' if same else 'other'} body"
                  f" -> {type(error).__name__ if error else 'replayed'}")
        if who is OTHER_ORGANIZER:
            assert error is None and result["event_id"] != self.events[name], \
                f"O1 organizer 2's Idempotency-Key named organizer 1's event ({error or result})"
        elif same:
            assert error is None and result["event_id"] == self.events[name], \
                f"E1 a replay of POST /events answered {error!r}"
        else:
            assert isinstance(error, IdempotencyKeyReused), \
                f"E2 another body under the event's key answered {error or result}"
        self.log["event_retried"] += 1

    # ------------------------------------------------------------------------- provider -> us

    def deliver(self, d: Draw) -> None:
        """A notification handler: GET the payment, then act on it. A stale delivery is a handler
        that fetched earlier and was slow to act (reordering, duplicates, late delivery)."""
        if not self.provider.payments:
            return
        stale = d.choice([False, True])
        if stale and self.seen:
            answer = d.choice(self.seen)
        else:
            final = [p for p, v in self.provider.payments.items() if v["status"] != "pending"]
            choices = final if final and d.integer(0, 3) else list(self.provider.payments)
            answer = self.provider.get_payment(d.choice(choices))
            self.seen.append(answer)
        capture_fault = d.choice([None, None, "after"])
        refund_fault = d.choice([None, None, "before", "after"])
        self.intent = f"{answer['id'][:8]} ({answer['status']}) " \
            f"capture_fault={capture_fault} refund_fault={refund_fault}"
        for operation, fault in (("capture_payment", capture_fault), ("create_refund", refund_fault)):
            if fault:
                self.provider.fail(operation, fault)
        try:
            outcome = self._consume("payment consumer", lambda: self.payments.apply_provider_payment(answer))
        finally:
            self.provider.faults.pop("capture_payment", None)
            self.provider.faults.pop("create_refund", None)
        self.note(f"deliver {answer['id'][:8]} ({answer['status']}{', stale' if stale else ''}) -> {outcome}")
        self.log[f"deliver:{outcome}"] += 1

    def capture_meets_reconciliation(self, d: Draw) -> None:
        """Two-stage: the consumer pins the places and captures; a reconciliation check of the same
        booking runs just before or just after the capture takes effect, and the authorisation may
        lapse at the provider meanwhile (finding 2)."""
        authorised = [p for p, v in self.provider.payments.items() if v["status"] == "waiting_for_capture"]
        if not authorised:
            # Make the situation: a customer authorises an open two-stage payment now.
            authorised = [p for p, v in self.provider.payments.items()
                          if v["status"] == "pending" and not v["capture"]]
            if not authorised:
                return
            payment_id = d.choice(authorised)
            self.provider.pay(payment_id, at=iso(self.clock()))
            self.note(f"customer authorises {payment_id[:8]} at the provider")
        else:
            payment_id = d.choice(authorised)
        when, lapse = d.choice(["before", "after"]), d.integer(0, 2) == 0
        booking_id = self.provider.payments[payment_id]["metadata"]["booking_id"]
        meanwhile: list[Any] = []
        self.intent = f"{payment_id[:8]} of {booking_id[:8]}: check {when} capture, lapse={lapse}"

        def check() -> None:
            meanwhile.append(self._consume("reconciliation check",
                                           lambda: self.reconciliation.check(booking_id)))

        def before() -> None:
            if lapse and self.provider.payments[payment_id]["status"] == "waiting_for_capture":
                self.provider.lapse(payment_id)   # an authorisation can only run out before its capture
            if when == "before":
                check()

        self.provider.on_capture = (before, check if when == "after" else None)
        try:
            outcome = self._consume("payment consumer", lambda: self.payments.apply_provider_payment(
                self.provider.get_payment(payment_id)))
        finally:
            self.provider.on_capture = None
        checked = [m if isinstance(m, str) else m["outcome"] for m in meanwhile]
        lapses = " (authorisation lapses)" if lapse else ""
        self.note(f"capture_meets_reconciliation {payment_id[:8]} check {when} capture{lapses}"
                  f" -> consumer {outcome}, check {checked or 'did not run'}")
        self.log["capture_meets_reconciliation"] += 1

    def deliver_refund(self, d: Draw) -> None:
        """A refund.succeeded notification (again, or late)."""
        if not self.provider.refunds:
            return
        refund = d.choice(list(self.provider.refunds.values()))
        outcome = self._consume("refund consumer", lambda: self.payments.apply_provider_refund(dict(refund)))
        self.note(f"deliver refund {refund['id'][:8]} of {refund['payment_id'][:8]} -> {outcome}")
        self.log["deliver_refund"] += 1

    def stray_payment_refunded(self, d: Draw) -> None:
        """A second payment for one booking (the provider forgot the key after 24 h and a retry
        created another), refunded by the operator at the provider; its refund notification
        arrives (finding 8)."""
        # (a comp never calls the provider, so no retry of it can create a payment: not one of these)
        candidates = self._bookings_in({S.REFUND_PENDING}) or self._bookings_in(
            {S.CONFIRMED, S.REFUNDED, S.MANUAL_REVIEW}, where=lambda b: b.amount.value != 0)
        if not candidates:
            return
        booking_id, _ = d.choice(candidates)
        booking = self.store.get_booking(booking_id)
        self.counter += 1
        stray = self.provider.create_payment(
            amount=booking.amount.as_dict(), description=f"Holdfast booking {booking_id}",
            metadata={"booking_id": booking_id, "event_id": booking.event_id}, capture=True,
            return_url="http://127.0.0.1:3000/done", idempotence_key=f"stray-{self.counter}")
        self.provider.pay(stray["id"], at=iso(self.clock()))
        refund = self.provider.create_refund(stray["id"], booking.amount.as_dict(), "operator: stray payment",
                                             f"stray-refund-{self.counter}")
        self.intent = f"stray {stray['id'][:8]} for {booking_id[:8]} ({booking.status}), " \
            f"refund {refund['id'][:8]}"
        outcome = self._consume("refund consumer", lambda: self.payments.apply_provider_refund(dict(refund)))
        self.note(f"stray payment {stray['id'][:8]} for {booking_id[:8]} ({booking.status}) refunded "
                  f"at the provider"
                  f" -> notification {outcome}")
        self.log["stray_refund"] += 1

    def retry_refund(self, d: Draw) -> None:
        """Reconciliation asks a pending refund again. With none pending, one is made first: a
        customer cancels a confirmed booking and the refund request never reaches the provider."""
        pending = self._bookings_in({S.REFUND_PENDING})
        if not pending:
            confirmed = self._bookings_in({S.CONFIRMED})
            if not confirmed:
                return
            booking_id, customer = d.choice(confirmed)
            self.provider.fail("create_refund", "before")
            try:
                _, error = self._call(customer, "POST cancel", lambda: self.customer_cancel(booking_id, customer))
            finally:
                self.provider.faults.pop("create_refund", None)
            self.note(f"cancel {booking_id[:8]} refund_fault=before -> {type(error).__name__ if error else 'ok'}")
            pending = self._bookings_in({S.REFUND_PENDING})
            if not pending:
                return
        booking_id, _ = d.choice(pending)
        fault = d.choice([None, "before", "after"])
        booking = self.store.get_booking(booking_id)
        if fault:
            self.provider.fail("create_refund", fault)
        try:
            outcome = self._consume("refund retry", lambda: self.payments.refund(booking, "reconciler"))
        finally:
            self.provider.faults.pop("create_refund", None)
        self.note(f"retry_refund {booking_id[:8]} fault={fault} -> {outcome}")
        self.log[f"refund:{outcome}"] += 1

    # ---------------------------------------------------------- reconciliation and the sweeper

    def reconcile(self, d: Draw) -> None:
        """One reconciliation check, at any moment, possibly with the provider failing."""
        unsettled = self._bookings_in(where=lambda b: b.payment is not None and not b.settled)
        if not unsettled:
            return
        booking_id, _ = d.choice(unsettled)
        fault = d.choice([None, None, "get_payment", "create_refund", "create_payment"])
        if fault:
            self.provider.fail(fault, d.choice(["before", "after"]) if fault != "get_payment" else "before")
        try:
            outcome = self._consume("reconciliation check", lambda: self.reconciliation.check(booking_id))
        finally:
            self.provider.faults.pop(fault, None) if fault else None
        self.note(f"reconcile {booking_id[:8]} fault={fault} -> "
                  f"{outcome if isinstance(outcome, str) else outcome['outcome']}")
        self.log["reconciled"] += 1

    def provider_outage(self, d: Draw) -> None:
        """The provider cannot be reached for a day; reconciliation checks a booking at the end of
        it and gives up to review (the operators' queue then has work: findings 3 and 9)."""
        unsettled = self._bookings_in(where=lambda b: b.payment is not None and not b.settled)
        if not unsettled:
            return
        booking_id, _ = d.choice(unsettled)
        self.intent = f"{booking_id[:8]} after a day without the provider"
        self.clock.advance(DAY + 3600)
        for operation in OUTAGE:
            self.provider.fail(operation, "before")
        try:
            outcome = self._consume("reconciliation check", lambda: self.reconciliation.check(booking_id))
        finally:
            for operation in OUTAGE:
                self.provider.faults.pop(operation, None)
        booking = self.store.get_booking(booking_id)
        self.note(f"provider_outage a day, then check {booking_id[:8]} -> "
                  f"{outcome if isinstance(outcome, str) else outcome['outcome']}, "
                  f"now {booking.status if booking else None}")
        self.log["provider_outage"] += 1

    def run_executions(self, d: Draw) -> None:
        """Every running reconciliation execution takes one step (its task: one check). A poisoned
        booking's check fails, and the execution with it (after its retries)."""
        ran = []
        for name in self.executions.running():
            booking_id = self.executions.booking[name]
            self.provider.broken = booking_id in self.poisoned
            try:
                outcome = self._consume("reconciliation execution",
                                        lambda: self.reconciliation.check(booking_id),
                                        expected=(ProviderBroken,))
            finally:
                self.provider.broken = False
            if isinstance(outcome, str):
                self.executions.state[name] = "FAILED"
            elif outcome["outcome"] == "settled":
                self.executions.state[name] = "SUCCEEDED"
            ran.append(f"{name[4:12]}:{self.executions.state[name]}")
        self.note(f"run_executions -> {ran}")
        self.log["executions_run"] += 1

    def sweeper(self, d: Draw) -> None:
        """The scheduled sweeper, possibly with one booking whose reconciliation keeps failing
        (poisoned) and one whose execution start is throttled (finding 7)."""
        unsettled = self._bookings_in(where=lambda b: b.payment is not None and not b.settled)
        if unsettled and d.integer(0, 2) == 0:
            self.poisoned.add(d.choice(unsettled)[0])
        throttled = d.choice(unsettled)[0] if unsettled and d.integer(0, 3) == 0 else None
        self.executions.fail_start = throttled
        self.intent = f"poisoned={[b[:8] for b in self.poisoned]} throttled={throttled and throttled[:8]}"
        now = self.clock()
        overdue = iso(now - timedelta(seconds=60))
        owed = []
        for booking_id, _ in self.known:
            booking = self.store.get_booking(booking_id)
            if booking is None or booking.payment is None or booking.settled or booking_id == throttled:
                continue
            if booking.holds_places and booking.hold_expires_at < overdue and not booking.places_secured:
                continue   # the sweep expires it first; the next sweep reconciles it
            if booking.payment.next_check_at and booking.payment.next_check_at < overdue:
                owed.append(booking_id)   # in the due index, its check overdue (None: nothing left to ask)
        try:
            counts = self.run_sweep()
        except Exception as exc:  # noqa: BLE001
            raise AssertionError(f"SW1 the sweep stopped at one booking's failure ({type(exc).__name__}: "
                                 f"{exc}); every other due booking was left unswept") from exc
        finally:
            self.executions.fail_start = None
        self.note(f"sweeper poisoned={[b[:8] for b in self.poisoned]} throttled={throttled and throttled[:8]}"
                  f" -> {counts}")
        for booking_id in owed:
            booking = self.store.get_booking(booking_id)
            if booking is None or booking.settled or in_review(booking):
                continue
            assert self.executions.running_for(booking_id), \
                f"SW2 booking {booking_id} is overdue and unsettled ({booking.status}, " \
                f"{booking.payment.checks} checks) but no reconciliation execution runs for it after the " \
                f"sweep " \
                f"(a closed execution's name was reused?)"
        self.log["swept"] += 1

    # --------------------------------------------------------------------------------- time

    def expiry_fires(self, d: Draw) -> None:
        """The hold's timer: early (a no-op) or late (the clock first runs past the deadline)."""
        if not self.known:
            return
        booking_id, _ = d.choice(self._prefer({S.HELD, S.PAYMENT_PENDING}))
        late = d.choice([False, True])
        booking = self.store.get_booking(booking_id)
        if late and booking is not None:
            overdue = (parse_iso(booking.hold_expires_at) - self.clock()).total_seconds() + 1
            if overdue > 0:
                self.clock.advance(overdue)
        outcome = self._consume("expiry task", lambda: self.bookings.expire(booking_id)["outcome"])
        self.note(f"expiry {booking_id[:8]} late={late} -> {outcome}")
        self.log[f"expire:{outcome}"] += 1

    def time_passes(self, d: Draw) -> None:
        seconds = d.choice([30, 299, 601, 30, 299, 601, DAY + 3600])   # now and then a day: limits run out
        self.clock.advance(seconds)
        self.note(f"time +{seconds}s")

    # ------------------------------------------------------------------------------ operators

    def operator_resolves(self, d: Draw) -> None:
        """An operator decides a booking in review: refund, confirm or close (findings 3, 9, 12)."""
        reviewed = self._bookings_in(where=in_review)
        if not reviewed:
            return
        booking_id, customer = d.choice(reviewed)
        action = d.choice(["refund", "confirm", "close"])
        fault = d.choice([None, None, "before", "after"])
        self.counter += 1
        note = f"operator-note-{self.counter}"
        self.intent = f"{action} {booking_id[:8]} fault={fault}"
        if fault:
            self.provider.fail("create_refund", fault)
            self.provider.fail("capture_payment", fault)
        try:
            result, error = self._call("operator", f"resolve {action}",
                                       lambda: self.reviews.resolve(booking_id, action, "op", note))
        finally:
            self.provider.faults.pop("create_refund", None)
            self.provider.faults.pop("capture_payment", None)
        booking = self.store.get_booking(booking_id)
        payment = self._own_payment(booking_id)
        self.note(f"operator {action} {booking_id[:8]} fault={fault} -> "
                  f"{getattr(error, 'code', None) or booking.status}")
        if error is None and action == "close" and booking.status is S.PAYMENT_FAILED and payment is not None:
            refunded = self.provider.refunds_for(payment["id"])
            assert not (payment["status"] == "succeeded" and not refunded), \
                f"R2 operator closed booking {booking_id} as PAYMENT_FAILED while its payment is succeeded " \
                f"and unrefunded"
            assert payment["status"] != "waiting_for_capture", \
                f"R2 operator closed booking {booking_id} leaving its authorisation hanging"
        self.notes.append(note)
        self.log[f"resolve:{action}:{'ok' if error is None else error.code}"] += 1

    def _let_hold_lapse(self, booking_id: str) -> tuple[Any, Any]:
        """The customer is still on the payment page when the hold runs out: the clock passes its
        deadline and the expiry task runs. Returns the booking as it was, and the task's outcome."""
        booking = self.store.get_booking(booking_id)
        overdue = (parse_iso(booking.hold_expires_at) - self.clock()).total_seconds() + 1
        if overdue > 0:
            self.clock.advance(overdue)
        return booking, self._consume("expiry task", lambda: self.bookings.expire(booking_id)["outcome"])

    def window_resold(self, d: Draw) -> None:
        """Seed 003's story on the entry windows: a hold being paid lapses (12:10), a rival books
        (12:11; the earliest window with room, often the one just released), and the customer's
        payment goes through at the provider (12:12); a later delivery or check finds it late."""
        paying = self._bookings_in({S.HELD, S.PAYMENT_PENDING}, where=lambda b: b.event_id == self.events["windows"]
                                   and b.payment is not None and bool(b.payment.payment_id))
        if not paying or d.integer(0, 2) == 0:
            customer = d.choice(CUSTOMERS)
            self.counter += 1
            made, error = self._call(customer, "POST bookings", lambda: self.bookings.create_booking(
                self.events["windows"], customer, f"story-{self.counter}", BookingIn(quantity=d.integer(1, 2))))
            if made is None:
                self.note(f"window_resold: {customer} could not book ({type(error).__name__})")
                return
            self._remember(made.booking.booking_id, customer)
            started, error = self._call(customer, "POST payment", lambda: self.payments.start_payment(
                made.booking.booking_id, customer, f"story-pay-{self.counter}"))
            if started is None:
                self.note(f"window_resold: {customer} could not start paying ({type(error).__name__})")
                return
            paying = [(made.booking.booking_id, customer)]
        booking_id, customer = d.choice(paying)
        booking, expired = self._let_hold_lapse(booking_id)
        rival = d.choice([c for c in CUSTOMERS if c != customer])
        self.counter += 1
        result, error = self._call(rival, "POST bookings", lambda: self.bookings.create_booking(
            self.events["windows"], rival, f"rival-{self.counter}", BookingIn(quantity=booking.places.quantity)))
        if result is not None:
            self._remember(result.booking.booking_id, rival)
        payment_id = booking.payment.payment_id
        if self.provider.payments[payment_id]["status"] == "pending":
            self.provider.pay(payment_id, at=iso(self.clock()))
        self.note(f"window_resold {booking_id[:8]} expiry={expired} rival {rival} -> "
                  f"{type(error).__name__ if error else result.booking.places.pools}; paid")
        self.log["window_resold"] += 1

    def customer_resolves(self, d: Draw) -> None:
        """The customer decides a conflict case (POST /bookings/{id}/resolution): an offered window,
        one not offered, or the money back, under one of their keys, with the capture, cancel or
        refund answer possibly lost. A case is decided once (R5); the money rule does the rest."""
        cases = self._bookings_in(where=lambda b: bool(b.resolution))
        if not cases:
            return
        booking_id, customer = d.choice(cases)
        case = self.store.get_booking(booking_id).resolution
        choice = d.choice(["alternative", "alternative", "refund"])
        fields = self._alternative(d, case) if choice == "alternative" else {}
        key, fault = d.choice(KEYS), d.choice([None, None, "before", "after"])
        self.intent = f"{booking_id[:8]} {choice} {fields} key={key} fault={fault}"
        for operation in ("capture_payment", "cancel_payment", "create_refund"):
            if fault:
                self.provider.fail(operation, fault)
        try:
            view, error = self._call(customer, "POST resolution", lambda: self.resolutions.choose(
                booking_id, customer, key, choice, fields))
        finally:
            for operation in ("capture_payment", "cancel_payment", "create_refund"):
                self.provider.faults.pop(operation, None)
        after = self.store.get_booking(booking_id)
        decided = (after.resolution or {}).get("decision")
        if decided and (case.get("decision") or {}) not in ({}, decided):
            raise AssertionError(f"R5 conflict case {booking_id} decided twice: {case['decision']} then {decided}")
        self.note(f"customer resolves {booking_id[:8]} {choice} {fields} {key} fault={fault} -> "
                  f"{getattr(error, 'code', None) or view['status']}")
        self.log[f"resolution:{choice}:{'ok' if error is None else error.code}"] += 1

    @staticmethod
    def _alternative(d: Draw, case: dict[str, Any]) -> dict[str, Any]:
        """The fields that choose one of a case's alternatives (the entry windows': ``window``;
        a slot's: ``starts_at`` and ``resource_id``), or now and then one never offered."""
        offered = [{name: value for name, value in option.items() if name in ("window", "starts_at", "resource_id")}
                   for option in case.get("alternatives") or []]
        never = {"window": "12:00"} if any("window" in option for option in offered) \
            else {"starts_at": "2030-01-04T10:00:00Z", "resource_id": slot_hall(ORGANIZER)}
        return d.choice(offered + [never])

    def time_paid_late(self, d: Draw) -> None:
        """A late payment for a time (findings 1, 2): a hold of a slot of the appointment service,
        or of the lot's parking window, being paid lapses; a rival may take that time; the clock
        may pass the slot's start or the window's end; then the customer's payment goes through at
        the provider and the consumer applies it. A resold slot opens a conflict case with the
        free times of that day (T1: no confirmation once the slot has begun or the window ended,
        whether a retake or a chosen alternative)."""
        name = d.choice(["slot", "slot", "lot"])
        event_id = self.events[name]
        paying = self._bookings_in({S.HELD, S.PAYMENT_PENDING}, where=lambda b: b.event_id == event_id
                                   and (self._own_payment(b.booking_id) or {}).get("status") == "pending")
        if not paying or d.integer(0, 2) == 0:
            customer = d.choice(CUSTOMERS)
            self.counter += 1
            what = (d.choice(SLOT_TIMES), d.integer(1, SLOT_SEATS))
            made, error = self._call(customer, "POST bookings", lambda: self._book(
                name, customer, f"slot-{self.counter}", self._request_body(name, what)))
            if made is None:
                self.note(f"time_paid_late: {customer} could not book the {name} {what} "
                          f"({getattr(error, 'code', None)})")
                return
            self._remember(made.booking.booking_id, customer)
            started, error = self._call(customer, "POST payment", lambda: self.payments.start_payment(
                made.booking.booking_id, customer, f"slot-pay-{self.counter}"))
            if started is None or (self._own_payment(made.booking.booking_id) or {}).get("status") != "pending":
                self.note(f"time_paid_late: {customer} could not start paying ({getattr(error, 'code', None)})")
                return
            paying = [(made.booking.booking_id, customer)]
        booking_id, customer = d.choice(paying)
        booking, expired = self._let_hold_lapse(booking_id)
        # The moment the time is lost: a slot's start, a parking window's end.
        starts_at = iso(parse_granule_key(booking.places.granules[0].at)) if name == "slot" \
            else PARKING_WINDOW["to"]
        rival = d.choice([None, *[c for c in CUSTOMERS if c != customer]])
        taken = "nobody"
        if rival is not None:
            self.counter += 1
            what = (starts_at, d.integer(1, SLOT_SEATS))
            result, error = self._call(rival, "POST bookings", lambda: self._book(
                name, rival, f"rival-{self.counter}", self._request_body(name, what)))
            if result is not None:
                self._remember(result.booking.booking_id, rival)
            taken = f"{rival} x{what[1]}: {getattr(error, 'code', None) or 'held'}"
        begun = d.choice([False, True])
        if begun:
            ahead = (parse_iso(starts_at) - self.clock()).total_seconds() + 60
            if ahead > 0:
                self.clock.advance(ahead)
        payment_id = self._own_payment(booking_id)["id"]
        if self.provider.payments[payment_id]["status"] == "pending":
            self.provider.pay(payment_id, at=iso(self.clock()))
        self.intent = f"{name} {booking_id[:8]} lost at {starts_at} expiry={expired} rival {taken} past={begun}"
        outcome = self._consume("payment consumer", lambda: self.payments.apply_provider_payment(
            self.provider.get_payment(payment_id)))
        self.note(f"time_paid_late {name} {booking_id[:8]}, lost at {starts_at}: expiry={expired}, rival {taken}, "
                  f"{'after' if begun else 'before'} that; paid -> {outcome}")
        self.log[f"time_paid_late:{name}"] += 1

    def clock_to_slot_start(self, d: Draw) -> None:
        """Time runs up to one of the service's morning times: well before it, just before (a hold
        made now is paid after the start), just after, or half an hour into it."""
        starts = parse_iso(d.choice(SLOT_TIMES[:2]))
        offset = d.choice([-900, -120, 60, 1800])
        ahead = (starts + timedelta(seconds=offset) - self.clock()).total_seconds()
        if ahead > 0:
            self.clock.advance(ahead)
        self.note(f"clock_to_slot_start {iso(starts)} {offset:+d}s -> now {iso(self.clock())}")
        self.log["clock_to_slot_start"] += 1

    def late_choice_after_cancel(self, d: Draw) -> None:
        """Finding 1's story: a booking with an open conflict case (a late payment whose time or
        window was resold; staged on the service when none is open); its offering is cancelled
        and the job runs to its end; then the customer chooses an alternative, or an operator
        moves it or confirms it (C1: nothing of a cancelled offering is confirmed after the
        cancellation; the money goes back once)."""
        def open_cases() -> list[tuple[str, str]]:
            return self._bookings_in({S.MANUAL_REVIEW}, where=lambda b: b.resolution_open)

        cases = open_cases()
        if not cases:
            self.time_paid_late(d)
            cases = open_cases()
        if not cases:
            self.unreached("late_choice_after_cancel: no conflict case open")
            return
        booking_id, customer = d.choice(cases)
        event_id = self.store.get_booking(booking_id).event_id
        name = next(name for name, known in self.events.items() if known == event_id)
        confirmed = {b for b, _ in self._bookings_in({S.CONFIRMED}, lambda b: b.event_id == event_id)}
        _, error = self._call("organizer", "POST cancel event",
                              lambda: self.event_cancellation.cancel(event_id, f"cancel-{name}", "storm"))
        if error is None:
            self.cancelled_events.setdefault(event_id, confirmed)
        self._run_cancellation_job(event_id, steps=10_000)
        who = d.choice(["customer", "operator alternative", "operator confirm"])
        case = self.store.get_booking(booking_id).resolution or {}
        fields = self._alternative(d, case)
        self.counter += 1
        note = f"operator-note-{self.counter}"
        self.intent = f"{booking_id[:8]} of cancelled {name}: {who} {fields}"
        if who == "customer":
            view, error = self._call(customer, "POST resolution", lambda: self.resolutions.choose(
                booking_id, customer, d.choice(KEYS), "alternative", fields))
        else:
            self.notes.append(note)
            action = who.split()[1]
            view, error = self._call("operator", f"resolve {action}", lambda: self.reviews.resolve(
                booking_id, action, "op", note, choice=fields if action == "alternative" else None))
        self.note(f"late_choice_after_cancel {booking_id[:8]} of {name} cancelled -> {who} {fields} -> "
                  f"{getattr(error, 'code', None) or view['status']}")
        self.log[f"late_choice:{getattr(error, 'code', None) or view['status']}"] += 1

    # ------------------------------------------- issue 42: facts another feature moves

    def _personal(self, retention_days: int = 90) -> PersonalDataService:
        """Erasure as functions/customers_api and the retention sweep wire it."""
        return PersonalDataService(ErasureStore(self.store), self.clock, PSEUDONYM_KEY, retention_days)

    def _live_by_model(self, booking: Any) -> str | None:
        """Why the booking still needs its customer's data, by the model's own reckoning (read from
        the offering as it is now, never from the booking's copy; an order's from each line's
        own), or None: places held, money or a review open, a car inside, or sold for a time still
        to come."""
        status = str(booking.status)
        if status in ("HELD", "PAYMENT_PENDING", "MANUAL_REVIEW", "REFUND_PENDING", "CHECKED_IN"):
            return status
        if booking.payment is not None and not booking.settled or booking.review:
            return "money or review open"
        if status == "CONFIRMED":
            # each part's end: its last granule, else its event's start; an order's is its last line's
            lines = (booking.kind_details or {}).get("lines")
            parts = [(str(line["offering_id"]), [str(g["at"]) for g in line.get("granules") or ()]) for line in lines] \
                if lines else [(booking.event_id, [g.at for g in booking.places.granules])]
            ends = [max(ats, key=parse_iso) if ats else str((self.store.get_event(offering) or {}).get("starts_at") or "")
                    for offering, ats in parts]
            ends = [end for end in ends if end]
            end = max(ends, key=parse_iso) if ends else ""
            if end and parse_iso(end) > self.clock():
                return f"sold until {end}"
        return None

    def _erasing(self, what: str, erase: Callable[[], Any]) -> Any:
        """E1: nothing is erased from a booking the model still counts live at that moment."""
        live = {}
        for booking_id, _ in self.known:
            booking = self.store.get_booking(booking_id)
            if booking is not None and not booking.erased_at:
                reason = self._live_by_model(booking)
                if reason:
                    live[booking_id] = reason
        result, error = self._call("customer", what, erase)
        for request, (_, booking_id) in list(self.requests.items()):
            if getattr(self.store.get_booking(booking_id), "erased_at", None):
                del self.requests[request]   # its idempotency record went with it: a repeat is a new request
        for booking_id, reason in live.items():
            after = self.store.get_booking(booking_id)
            assert after is None or not after.erased_at, \
                f"E1 {what} erased booking {booking_id} while it was live ({reason})"
        return result, error

    def customer_erases(self, d: Draw) -> None:
        """DELETE /customers/me at any point of a history: 409 bookings_active while any booking of
        theirs is live, else everything of theirs that has ended is erased."""
        customer = d.choice(CUSTOMERS)
        result, error = self._erasing(f"DELETE /customers/me ({customer})", lambda: self._personal().forget(customer))
        self.note(f"customer_erases {customer}: {result or getattr(error, 'code', None)}")
        self.log[f"customer_erases:{'erased' if result else getattr(error, 'code', None)}"] += 1

    def erased_during_offer(self, d: Draw) -> None:
        """The relay claims the head of a waitlist (a PENDING offer) and dies before the hold; the
        customer whose turn it is asks DELETE /customers/me; the relay's next pass. E3: once an
        erasure has answered, no offer makes a booking under that customer's id (it refuses with
        ``offer_pending`` while the offer is in flight, and a waiting turn leaves the line)."""
        event_id = self.events[d.choice(["ga", "ga", "hot"])]
        head = self.store.waitlist_head(event_id)
        if head is None:
            self.reached = False
            return
        claimed = self.kind.largest_holdable(self.storage.snapshot(), event_id) >= int(head["quantity"]) \
            and self.store.waitlist_claim(event_id, head, iso(self.clock()))
        customer = head["customer_id"] if d.choice([True, True, False]) else d.choice(CUSTOMERS)
        before = set(self.store.customer_booking_ids(customer, event_id))
        result, error = self._erasing(f"DELETE /customers/me ({customer}) with an offer claimed",
                                      lambda: self._personal().forget(customer))
        try:
            made = self.waitlist.advance(event_id)
        except Exception as exc:  # noqa: BLE001
            raise AssertionError(f"W1 the waitlist stopped after an erasure: advance raised {type(exc).__name__}") from exc
        for booking_id in made:
            booking = self.store.get_booking(booking_id)
            if booking is not None:
                self._remember(booking_id, booking.customer_id)
        after = set(self.store.customer_booking_ids(customer, event_id)) - before
        assert error is not None or not after, \
            f"E3 DELETE /customers/me ({customer}) answered {result} and the waitlist then made {sorted(after)} for them"
        self.note(f"erased_during_offer {customer} (head {head['customer_id']}, claimed {bool(claimed)}): "
                  f"{result or getattr(error, 'code', None)}, {len(made)} offer(s)")
        self.log[f"erased_during_offer:{'erased' if result else getattr(error, 'code', None)}"] += 1

    def retention_sweep(self, d: Draw) -> None:
        """The retention sweep at any point, with a period of none or one day: every booking whose
        end (and last change) is that far past is erased, and no other."""
        days = d.choice([0, 1])
        counts, _ = self._erasing(f"retention sweep ({days} d)", lambda: self._personal(days).erase_ended())
        self.note(f"retention_sweep {days}d: {counts}")
        self.log["retention_sweep"] += 1

    def organizer_moves_start(self, d: Draw) -> None:
        """PATCH /events/{id} with another starts_at, earlier (to a moment just past or just ahead)
        or later (a week on), with the hold path's container warm (it keeps its copy of the
        offering) or cold (it reads it afresh). S1 (check_starts): no hold is made from the start
        in force at that moment on."""
        sold = sorted({self.store.get_booking(booking_id).event_id for booking_id, _ in self._bookings_in(
            {S.CONFIRMED}, where=lambda b: b.event_id in {self.events[n] for n in ("ga", "two_stage", "seats")})})
        name = d.choice(["ga", "ga", "two_stage", "seats", *(["sold"] * 2 if sold else [])])
        event_id = d.choice(sold) if name == "sold" else self.events[name]   # one with bookings paid for
        event = self.store.get_event(event_id) or {}
        now = self.clock()
        moved = d.choice(["earlier_past", "earlier_ahead", "later"])
        new = now - timedelta(seconds=60) if moved == "earlier_past" else now + timedelta(seconds=900) \
            if moved == "earlier_ahead" else parse_iso(str(event.get("starts_at"))) + timedelta(days=7)
        warm = d.choice([True, False])
        if not warm:
            self.bookings._events.clear()   # a new container: nothing kept
        result, error = self._call("organizer", "PATCH /events/{id}", lambda: self.listing.update(
            event_id, {"starts_at": new}, ORGANIZER))
        if result is not None:
            self.starts.setdefault(event_id, []).append((frozenset(self.snapshot().bookings), iso(new)))
            # the change's announcement (the notifier): an owed settlement receipt's look follows
            # the start, earlier too (F6); delivered twice now and then, as a queue may
            for _ in range(d.choice([1, 1, 2])):
                self._consume("event.changed announcement", lambda: follow_start(self.store, self.clock, event_id))
            old = parse_iso(str(event.get("starts_at")))
            if moved == "later" and self.clock() < old and d.choice([False, True]):
                # past the start it had, when the retention sweep runs (finding 2's story)
                self.clock.advance((old - self.clock()).total_seconds() + 60)
                swept, _ = self._erasing("retention sweep past the old start", lambda: self._personal(0).erase_ended())
                self.note(f"  time passes {iso(old)}; retention sweep -> {swept}")
        self.note(f"organizer_moves_start {name} {moved} to {iso(new)} ({'warm' if warm else 'cold'}): "
                  f"{'ok' if result else getattr(error, 'code', None)}")
        self.log[f"organizer_moves_start:{moved}"] += 1

    def refund_refused(self, d: Draw) -> None:
        """A confirmed booking is cancelled and the provider refuses its refund for good: the
        booking goes to an operator, and (check_entry) its tickets admit no one, online or offline."""
        confirmed = self._bookings_in({S.CONFIRMED}, where=lambda b: not b.places.granules)
        if not confirmed:
            self.unreached("refund_refused: no confirmed booking")
            return
        booking_id, customer = d.choice(confirmed)
        self.provider.fail("create_refund", "refused")
        result, error = self._call(customer, "POST cancel", lambda: self.customer_cancel(booking_id, customer))
        self.provider.faults.pop("create_refund", None)
        after = self.store.get_booking(booking_id)
        self.note(f"refund_refused {booking_id[:8]}: {getattr(error, 'code', None) or after.status}")
        self.log[f"refund_refused:{after.status}"] += 1

    def parking_window_begun(self, d: Draw) -> None:
        """The lot's window has begun (its start plus 1, 16 or 25 minutes) when the driver holds and
        pays; a sweep then runs (N1: nobody is NO_SHOW before the grace after they could first use it)."""
        start = parse_iso(PARKING_WINDOW["from"]) + timedelta(minutes=d.choice([16, 25, 1]))   # the grace is 15 min
        if self.clock() < start:
            self.clock.advance((start - self.clock()).total_seconds())
        customer = d.choice(CUSTOMERS)
        self.counter += 1
        made, error = self._call(customer, "POST reservations", lambda: self._book(
            "lot", customer, f"begun-{self.counter}", self._request_body("lot", None)))
        if made is None:
            self.note(f"parking_window_begun: {customer} could not reserve ({getattr(error, 'code', None)})")
            return
        booking_id = made.booking.booking_id
        self._remember(booking_id, customer)
        started, error = self._call(customer, "POST payment", lambda: self.payments.start_payment(
            booking_id, customer, f"begun-pay-{self.counter}"))
        payment = self._own_payment(booking_id)
        if started is not None and payment is not None and payment["status"] == "pending":
            self.provider.pay(payment["id"], at=iso(self.clock()))
            self._consume("payment consumer", lambda: self.payments.apply_provider_payment(
                self.provider.get_payment(payment["id"])))
        confirmed = self.store.get_booking(booking_id)
        if confirmed.status is S.CONFIRMED and d.choice([False, True]):
            # the car enters (the gate's move, as gate_passes.py makes it), and stays past its
            # window's last half hour, even its end, when the customer may ask to be forgotten
            self._consume("gate", lambda: transitions.advance(self.store, confirmed, self.clock(), "CHECKED_IN",
                                                              actor="gate", action="vehicle_entered", decision="entered"))
            self.clock.advance(d.choice([1800, 3600 + 600]))
        self._consume("sweeper", self.run_sweep)
        after = self.store.get_booking(booking_id)
        self.note(f"parking_window_begun at {iso(self.clock())}: {booking_id[:8]} {after.status}")
        self.log[f"parking_window_begun:{after.status}"] += 1

    def check_erased(self, snap: Any) -> None:
        """S1: no booking's hold was made at or after the start its offering had at that moment.
        N1: no booking became NO_SHOW before its grace had run from when it could first be used
        (the later of its window's start and its confirmation). V2: a booking that is not
        CONFIRMED admits no one: its view shows no ticket, and once it had been CONFIRMED (its
        tickets shown) an offline door's list names each of them."""
        from holdfast import kinds
        from holdfast.domain.claims import offerings_of
        from holdfast.products.events import tickets
        from holdfast.products.events.services.doors import Doors

        from holdfast.products.events import start as event_start

        voided: dict[str, set[str]] = {}
        for event_id, moves in self.starts.items():
            if getattr(type(kinds.of_event(snap.events[event_id])), "check_time", None) is not event_start.check_time:
                continue   # a kind that sells past an offering's start (a test kind) is not S1's
            for booking in snap.of_event(event_id):
                made = min(snap.journals[booking.booking_id], key=lambda pair: pair[0])[1].at
                in_force = [moved for before, moved in moves if booking.booking_id not in before]
                if in_force:
                    assert made < in_force[-1], \
                        f"S1 booking {booking.booking_id} held at {made}, after its event's start {in_force[-1]}"
        for booking in snap.bookings.values():
            journal = [entry for _, entry in sorted(snap.journals.get(booking.booking_id, []), key=lambda pair: pair[0])]
            gone = [entry for entry in journal if entry.to_status == "NO_SHOW"]
            paid = [entry for entry in journal if entry.to_status == "CONFIRMED"]
            if gone and paid:
                details = booking.kind_details or {}
                usable = max(parse_iso(str(details.get("from") or paid[0].at)), parse_iso(paid[0].at))
                settings = (snap.events.get(booking.event_id) or {}).get("settings") or {}
                grace = timedelta(seconds=int(settings.get("no_show_grace_seconds", 900)))   # the lot's
                assert parse_iso(gone[0].at) >= usable + grace, \
                    f"N1 booking {booking.booking_id} NO_SHOW at {gone[0].at}, paid at {paid[0].at}: before its grace"
            if str(booking.status) == "CONFIRMED":
                continue
            # each event's part of it (the booking itself, or an order's line of that event)
            for offering in offerings_of(booking.event_id, booking.places):
                part = kinds.of_booking(booking).part(booking, offering)
                if part is None or part.places.granules:
                    continue
                assert not tickets.view(part, lambda: None), \
                    f"V2 booking {booking.booking_id} is {booking.status} and still shows tickets"
                if paid:   # its tickets were shown once (a hold never confirmed showed none)
                    if offering not in voided:   # what GET .../doors/{id}/config lists, as the door service reads it
                        voided[offering] = set(Doors(self.store, self.clock, lambda: None).voided_tickets(offering))
                    kept = {tid for tid, _ in tickets.places(part)} - voided[offering]
                    assert not kept, f"V2 booking {booking.booking_id} is {booking.status}: an offline door would " \
                        f"admit its tickets {sorted(kept)} of {offering}"

    def customer_reads_booking(self, d: Draw) -> None:
        """GET /bookings/{id} as its customer: never shows an operator's note (finding 12)."""
        if not self.known:
            return
        booking_id, customer = d.choice(self._bookings_in(where=lambda b: b.version > 1) or self.known)
        view, error = self._call(customer, "GET booking", lambda: self.bookings.view(booking_id, customer))
        if error is not None and getattr(self.store.get_booking(booking_id), "erased_at", None):
            self.note(f"customer reads {booking_id[:8]} -> erased at their request: {error.code}")
            return   # erased: it names them no more
        assert error is None, f"R4 the customer cannot read their booking {booking_id}: {error!r}"
        text = json.dumps(view, default=str)
        leaked = [note for note in self.notes if note in text]
        assert not leaked, \
            f"R4 operator note(s) {leaked} on {booking_id} shown to the customer in GET /bookings/{{id}}"
        self.note(f"customer reads {booking_id[:8]} -> {view['status']}")
        self.log["customer_reads"] += 1

    # ------------------------------------------------------------------------------- waitlist

    def waiting_room(self) -> WaitingRoomService:
        """The waiting room as functions/waiting_room and bookings_api wire it. A new one per call:
        its caches run on wall-clock time, and a seeded history must not depend on how fast it ran."""
        return WaitingRoomService(self.store, self.surge, self.clock, lambda: TOKEN_KEY,
                                  admit_per_second=ADMIT_PER_SECOND, token_ttl_seconds=TOKEN_TTL)

    def customer_queues(self, d: Draw) -> None:
        """A customer joins the waiting room of the high-demand sale ("hot"), maybe waits, and
        polls: an admitted customer keeps the admission token it hands out (A1)."""
        customer, wait = d.choice(CUSTOMERS), d.choice([0, 0, 2, 30])
        event_id = self.events["hot"]
        view, error = self._call(customer, "POST queue", lambda: self.waiting_room().join(event_id, customer))
        if wait and error is None:
            self.clock.advance(wait)
            view, error = self._call(customer, "GET queue", lambda: self.waiting_room().status(event_id, customer))
        if view is not None and view.get("admission_token"):
            self.tokens[customer] = view["admission_token"]
            self.admitted.setdefault(customer, []).append(parse_iso(view["token_expires_at"]).timestamp())
        self.note(f"customer_queues {customer} wait {wait}s -> {getattr(error, 'code', None) or view['status']}")
        self.log[f"queued:{getattr(error, 'code', None) or view['status']}"] += 1

    def waitlist_join(self, d: Draw) -> None:
        """POST /events/{id}/waitlist as functions/waitlist_api wires it: the waiting room's check
        of the customer's admission token (a high-demand sale's waitlist needs one while its queue
        is open), the join, then (for a new entry) an advance at once, whose failure the route only
        logs. On the ordinary sale "ga" or the high-demand "hot", by any customer, with their
        latest token or none (A1, H1, W3)."""
        event = d.choice(["ga", "ga", "hot"])
        customer, quantity = d.choice(CUSTOMERS), d.integer(1, 3 if event == "ga" else 2)
        token = d.choice([self.tokens.get(customer), self.tokens.get(customer), None])
        event_id = self.events[event]
        if event == "ga" and d.integer(0, 1) == 0:
            self._crowd(event_id, customer, quantity)

        def join() -> Any:
            self.waiting_room().check_waitlist_admission(event_id, customer, token)
            return self.waitlist.join(event_id, customer, quantity)

        result, error = self._call(customer, "POST waitlist", join)
        offered: list[str] = []
        if result is not None:
            if event == "ga":
                self.entries[customer] = result[0]["entry_id"]
            if result[1]:
                try:
                    offered = self.waitlist.advance(event_id)
                except Exception as exc:  # noqa: BLE001 - the route logs it; the relay offers later
                    self.note(f"  advance after join failed: {type(exc).__name__}")
            for booking_id in offered:
                booking = self.store.get_booking(booking_id)
                if booking is not None:
                    self._remember(booking_id, booking.customer_id)
        self.note(f"waitlist_join {event} {customer} x{quantity} -> "
                  f"{type(error).__name__ if error else result[0]['state']}, {len(offered)} offer(s)")
        self.log["waitlist_join"] += 1

    def _crowd(self, event_id: str, customer: str, quantity: int) -> None:
        """Make the situation a waitlist is for: another customer holds places until fewer than
        ``quantity`` are free (a join while enough are free is refused, finding 5), so joins that
        are taken, and the offers and keys that follow them, are reached in a short history."""
        rival = next(other for other in CUSTOMERS if other != customer)
        for _ in range(3):
            free = self.kind.largest_holdable(self.storage.snapshot(), event_id)
            if free < quantity:
                return
            self.counter += 1
            key, want = f"crowd-{self.counter}", min(3, free - quantity + 1)
            result, error = self._call(rival, "POST bookings", lambda: self.bookings.create_booking(
                event_id, rival, key, self.kind.ask(want)))
            self.note(f"  {rival} holds {want} of {free} free -> {type(error).__name__ if error else 'held'}")
            if result is None:
                return
            self._remember(result.booking.booking_id, rival)

    def colliding_key_booking(self, d: Draw) -> None:
        """A customer books with ``waitlist-offer-<their entry id>`` as their own key (finding 4)."""
        if not self.entries:
            return
        customer = d.choice(list(self.entries))
        event, quantity = d.choice(["ga", "two_stage"]), d.integer(1, 3)
        key = f"waitlist-offer-{self.entries[customer]}"
        result, error = self._call(customer, "POST bookings", lambda: self.bookings.create_booking(
            self.events[event], customer, key, self.kind.ask(quantity)))
        if result is not None:
            self._remember(result.booking.booking_id, customer)
        self.note(f"colliding_key {customer} {key[:24]} {event} x{quantity} -> "
                  f"{type(error).__name__ if error else 'booked'}")
        self.log["colliding_key"] += 1

    def waitlist_advance(self, d: Draw) -> None:
        """The outbox relay offers released places to the waitlist (findings 4: never stuck)."""
        event_id = self.events[d.choice(["ga", "ga", "hot"])]
        try:
            made = self.waitlist.advance(event_id)
        except Exception as exc:  # noqa: BLE001
            raise AssertionError(f"W1 the waitlist stopped: advance raised {type(exc).__name__} ({exc}); "
                                 f"nobody behind this entry is ever offered places") from exc
        for booking_id in made:
            booking = self.store.get_booking(booking_id)
            if booking is not None:
                self._remember(booking_id, booking.customer_id)
        pending = [o for o in self.store.waitlist_offers(event_id) if o["state"] == "PENDING"]
        assert not pending, f"W2 offers left PENDING after advance: {[o['entry_id'] for o in pending]}"
        head = self.store.waitlist_head(event_id)
        # Not every free place can go to one booking (the toy kind never splits a hold across
        # zones): the kind case says how many one hold can take.
        available = self.kind.largest_holdable(self.storage.snapshot(), event_id)
        assert head is None or int(head["quantity"]) > available, \
            f"W2 the waitlist head wants {head['quantity']} and one hold could take {available}, but advance stopped"
        self.note(f"waitlist_advance -> {len(made)} offer(s)")
        self.log["waitlist_advance"] += 1

    # ------------------------------------------------------------------ event cancellation (18)

    def organizer_cancels_event(self, d: Draw) -> None:
        """The organizer cancels an event (the waitlist's "ga" keeps selling); the job then runs
        part way, as if its execution died after a random number of steps."""
        name = d.choice(["seats", "two_stage", "slot", "windows"])
        event_id = self.events[name]
        confirmed = {b for b, _ in self._bookings_in({S.CONFIRMED}, lambda b: b.event_id == event_id)}
        _, error = self._call("organizer", "POST cancel event",
                              lambda: self.event_cancellation.cancel(event_id, f"cancel-{name}", "storm"))
        if error is None:
            self.cancelled_events.setdefault(event_id, confirmed)
        self._run_cancellation_job(event_id, steps=d.integer(0, 6))
        self.note(f"organizer_cancels_event {name} -> {type(error).__name__ if error else 'ok'}")
        self.log["event_cancelled"] += 1

    def cancellation_job_runs(self, d: Draw) -> None:
        """A cancelled event's job runs (again: a resumed execution) to its end or part way."""
        if not self.cancelled_events:
            return
        event_id = d.choice(sorted(self.cancelled_events))
        steps = d.choice([3, 100])
        self._run_cancellation_job(event_id, steps=steps)
        self.note(f"cancellation_job_runs {event_id[:8]} up to {steps} settles")
        self.log["cancellation_job_run"] += 1

    def _run_cancellation_job(self, event_id: str, steps: int) -> None:
        """The state machine's loop: pages, one settle per booking (retried on a lost answer, as
        the Map's Retry does), finish; stopped after ``steps`` settles (a dead execution)."""
        passes, after = 1, ""
        while steps > 0:
            page = self._consume("cancellation job list", lambda: self.cancellation_job.list_page(event_id, after))
            if isinstance(page, str):
                return
            for booking_id in page["bookings"]:
                if steps <= 0:
                    return
                steps -= 1
                outcome = self._consume("cancellation job settle", lambda: self.cancellation_job.settle(
                    event_id, booking_id, "storm"))
                self.note(f"  cancel job settle {booking_id[:8]} -> {outcome}")
            after = page["after"]
            if page["more"]:
                continue
            result = self._consume("cancellation job finish", lambda: self.cancellation_job.finish(event_id, passes))
            if isinstance(result, str) or result["done"]:
                return
            passes, after = result["pass"], ""

    # ------------------------------------------------------------------ two organizers (30)

    def other_organizer_intrudes(self, d: Draw) -> None:
        """The second organizer tries the first one's objects with its own key: cancel, rename or
        publish an event, read a cancellation, read or decide a booking. O1: each answers exactly
        as for an id that does not exist and writes nothing; O2: its list of reviews is empty.
        O3: the first organizer's own key limited to another offering meets exactly the same."""
        event_id = self.events[d.choice([name for name in EVENTS if name in self.bodies])]

        def attempts_by(caller: Caller) -> dict[str, Callable[[], Any]]:
            attempts: dict[str, Callable[[], Any]] = {
                "cancel event": lambda: self.event_cancellation.cancel(event_id, "cancel-ga", "mine", caller),
                "read cancellation": lambda: self.event_cancellation.progress(event_id, caller),
                "rename event": lambda: self.listing.update(event_id, {"name": "Mine now"}, caller),
                "publish event": lambda: self.listing.publish(event_id, caller),
            }
            if booking:
                attempts["read journal"] = lambda: self.reviews.booking_with_journal(booking[0], caller)
                attempts[f"resolve {action}"] = lambda: self.reviews.resolve(booking[0], action, "intruder", "mine",
                                                                            caller=caller)
            return attempts

        missing = {"event_not_found"}
        booking: list[str] = []
        action = ""
        if self.known:
            booking_id, _ = d.choice(self.known)
            booking.append(booking_id)
            action = d.choice(["refund", "confirm", "close"])
            missing.add("booking_not_found")
        what = d.choice(sorted(attempts_by(OTHER_ORGANIZER)))
        before = self.snapshot()
        # O3 without a draw of its own, so that the histories' seeds keep their walks
        for who, caller, rule in (("organizer 2", OTHER_ORGANIZER, "O1"), ("limited key", LIMITED_KEY, "O3")):
            _, error = self._call(who, what, attempts_by(caller)[what])
            assert isinstance(error, NotFound) and error.code in missing, \
                f"{rule} {who}: {what} on organizer 1's object answered {getattr(error, 'code', 'success')}"
            assert self.snapshot() == before, f"{rule} {who}: {what} on organizer 1's object wrote to the table"
            assert self.reviews.open_reviews(caller) == [], f"O2 {who} sees reviews that are not its own"
        self.note(f"other_organizer_intrudes {what} -> {error.code}")
        self.log[f"intruder:{what.split()[0]}"] += 1

    def organizer_sets_fiscal(self, d: Draw) -> None:
        """PUT or DELETE /organizers/me/fiscal: receipts on with random codes (and now and then a VAT
        override of one of its offerings), or off. F0: the second organizer naming the first one's
        offering in an override is answered as an unknown offering and writes nothing."""
        what = d.choice(["on", "on", "override", "off", "intrude"])
        event_id = self.events[d.choice(sorted(self.bodies))]
        if what == "intrude":
            before = self.snapshot()
            _, error = self._call("organizer 2", "PUT fiscal", lambda: self.fiscal.put(
                OTHER_ORGANIZER, FiscalSettings(1, 1, "service", ((event_id, 4),))))
            assert isinstance(error, NotFound) and error.code == "offering_not_found", \
                f"F0 organizer 2's VAT override of organizer 1's offering answered {getattr(error, 'code', 'success')}"
            assert self.snapshot() == before, "F0 organizer 2's override of organizer 1's offering wrote"
        elif what == "off":
            self.fiscal.delete(ORGANIZER)
        else:
            overrides = ((event_id, d.integer(1, 12)),) if what == "override" else ()
            settings = FiscalSettings(d.integer(1, 6), d.integer(1, 12), "service", overrides)
            assert self.fiscal.put(ORGANIZER, settings)["vat_code"] == settings.vat_code
        self.note(f"organizer_sets_fiscal {what}")
        self.log[f"fiscal:{what}"] += 1

    def service_rendered(self, d: Draw) -> None:
        """The organizer's events start (issue 44): now and then one is postponed by a day first
        (its settlement must wait for the new start, read from the event); time runs past the
        start and the sweeper runs, sending the settlement receipts of the receipted bookings. The
        start ends the events' sales: only once a story has booked and paid a few times."""
        if not self.log["created"] or not self.log["payment_started"]:
            return
        if d.choice([False, False, True]):
            name = d.choice(sorted(self.bodies))
            event = self.store.get_event(self.events[name])
            later = parse_iso(event["starts_at"]) + timedelta(days=1)
            result, _ = self._call("organizer", "PATCH /events (postpone)",
                                   lambda: self.listing.update(self.events[name], {"starts_at": later}, ORGANIZER))
            if result is not None:
                # the start in force from now on (S1 reads it: a hold made later is checked against
                # this one, not one an earlier move set), and the change's announcement
                self.starts.setdefault(self.events[name], []).append(
                    (frozenset(self.snapshot().bookings), iso(later)))
                self._consume("event.changed announcement",
                              lambda: follow_start(self.store, self.clock, self.events[name]))
            self.note(f"service_rendered: {name} postponed to {iso(later)}")
        starts = min(parse_iso(self.store.get_event(self.events[name])["starts_at"]) for name in self.bodies)
        ahead = (starts - self.clock()).total_seconds() + d.choice([61, 3600])
        if ahead > 0:
            self.clock.advance(ahead)
        # the receipt call's answer lost after the provider registered it, or refused before; or
        # the register cancels it (read back: sent again as a new receipt, or a case)
        fault = d.choice([None, None, "after", "before", "canceled"])
        if fault == "canceled":
            self.provider.fail("register_receipt", *["canceled"] * d.integer(1, 3))
        elif fault:
            self.provider.fail("create_receipt", fault)
        try:
            counts = self.run_sweep()
            if fault == "canceled":   # the read-back look, one retry wait later
                self.clock.advance(self.settlements.retry_seconds[0] + 61)
                counts = self.run_sweep()
        finally:
            self.provider.faults.pop("create_receipt", None)
        self.note(f"service_rendered: now {iso(self.clock())}, receipt fault={fault}, sweep -> {counts}")
        self.log["service_rendered"] += 1

    def _renders_at(self, booking: Any) -> str:
        """When the booking's service is rendered, read from its offering as it is now; for a kind
        that renders it by a state of its own (parking: COMPLETED, a kept NO_SHOW), once the
        booking is in such a state (its due moment), never before."""
        from holdfast.domain import lifecycle
        from holdfast.domain.fiscal import rendered_at

        lines = settled_lines(booking)
        if lines:   # an order settled line by line: its first line still owed a receipt
            moments = []
            for line in lines:
                if line.settlement(booking.payment).get("state") in ("sent", "failed"):
                    continue
                if lifecycle.renders_by_state(line.kind):
                    # (a line left unused is rendered at its no-show: SettledLine.unused_until)
                    moments.append((booking.line_settlement_due(line) or "9999")
                                   if lifecycle.renders(line.status) or line.unused_until else "9999")
                else:
                    offering = self.store.get_event(line.offering_id) or {}
                    moments.append(rendered_at(line.granule_starts, offering.get("starts_at")) or "9999")
            return min(moments, default="9999")
        if lifecycle.renders_by_state(str(booking.places.kind)):
            return (booking.settlement_due or "9999") if lifecycle.renders(str(booking.status)) else "9999"
        offering = self.store.get_event(booking.event_id) or {}
        return rendered_at([g.at for g in booking.places.granules], offering.get("starts_at")) or "9999"

    def check_receipts(self, snap: Any) -> None:
        """The receipts rule (issue 44), against the provider's records:
          F1 the payment of a booking whose record keeps a receipt carries it, for the booking's
             address, its items summing exactly to the payment's amount; a payment whose record
             keeps none carries none (an organizer with receipts off sells as before).
          F2 every refund of a payment that carried a receipt carries one whose items sum exactly
             to what the refund gives back.
          F6 a settlement receipt still owed is looked at no later than the service is rendered, as
             its offering says it now (an event moved earlier moves the look, issue 44)."""
        def total(receipt: dict[str, Any]) -> Decimal:
            return sum((Decimal(i["amount"]["value"]) * Decimal(i["quantity"]) for i in receipt["items"]),
                       Decimal("0"))

        for booking in snap.bookings.values():
            payment = booking.payment
            if payment is None or not payment.payment_id or payment.payment_id not in self.provider.payments:
                continue
            sent = self.provider.payments[payment.payment_id]
            if sent["metadata"].get("booking_id") != booking.booking_id:
                continue
            if payment.receipt:
                assert sent.get("receipt"), f"F1 payment {payment.payment_id} of {booking.booking_id} carries no receipt"
                assert total(sent["receipt"]) == Decimal(sent["amount"]["value"]), \
                    f"F1 receipt of {payment.payment_id} sums to {total(sent['receipt'])}, not {sent['amount']}"
                # an erased booking no longer holds the address its receipt was sent to (the
                # provider's copy is the provider's record, not ours to erase); a booking given to
                # someone else since (issue 45) keeps its payer's receipt: the taker's address is
                # the booking's now, the payment and its receipt stay the giver's
                given = bool((booking.kind_details or {}).get(transfers.ACCEPTED))
                assert booking.erased_at or given or sent["receipt"]["customer"] == {"email": booking.contact_email}, \
                    f"F1 receipt of {payment.payment_id} is not for the booking's address"
            else:
                assert "receipt" not in sent, f"F1 payment {payment.payment_id} carries a receipt it never decided"
        settled_by_payment: dict[str, list[dict[str, Any]]] = {}
        for made in self.provider.receipts.values():
            settled_by_payment.setdefault(made["payment_id"], []).append(made)
            assert total(made) == sum((Decimal(s["amount"]["value"]) for s in made["settlements"]), Decimal("0")), \
                f"F3 settlement receipt {made['id']} items do not sum to what it settles"
        # an order settled line by line has one settlement receipt per line (issue 44)
        paid_by = {booking.payment.payment_id: booking for booking in snap.bookings.values()
                   if booking.payment and booking.payment.payment_id}
        for payment_id, made in settled_by_payment.items():
            # (a receipt the register canceled counts for nothing: it is sent again as a new one)
            standing = [m for m in made if m.get("status") != "canceled"]
            owner = paid_by.get(payment_id)
            lines = settled_lines(owner) if owner is not None else []
            assert len(standing) <= max(1, len(lines)), \
                f"F3 payment {payment_id} has {len(standing)} settlement receipts for {max(1, len(lines))} lines"
            for line in lines:   # a line's receipt settles that line's items alone
                receipt_id = line.settlement(owner.payment).get("receipt_id")
                owed = fiscal.line_amount(owner.payment.receipt, line.offering_id, owner.amount.currency).value
                for m in standing:
                    if m["id"] == receipt_id:
                        assert Decimal(m["settlements"][0]["amount"]["value"]) == owed, \
                            f"F3 settlement receipt {m['id']} of line {line.line_id} does not settle that line"
        for booking in snap.bookings.values():
            lines = settled_lines(booking)
            records = [line.settlement(booking.payment) for line in lines] if lines and booking.payment else \
                [(booking.payment.settlement if booking.payment else None) or {}]
            sent_ids = [record.get("receipt_id") for record in records if record.get("state") == "sent"]
            if sent_ids:
                made = [m for m in settled_by_payment.get(booking.payment.payment_id or "", [])
                        if m.get("status") != "canceled" or m["id"] in sent_ids]
                if lines:   # every line's recorded receipt is one the provider made, none for two lines
                    assert len(set(sent_ids)) == len(sent_ids) and set(sent_ids) <= {m["id"] for m in made}, \
                        f"F3 order {booking.booking_id} recorded settlements {sent_ids}, provider has {made}"
                else:
                    assert [m["id"] for m in made] == sent_ids, \
                        f"F3 booking {booking.booking_id} recorded settlement {sent_ids}, provider has {made}"
            if any(record.get("state") == "failed" for record in records):
                assert in_review(booking) or booking.review, \
                    f"F4 booking {booking.booking_id}'s settlement receipt failed for good but is in no case"
            for entry in booking.differences or ():
                # a dearer exchange's difference payment closes its own prepayment, once (issue 45)
                record, paid_by = entry.get("settlement") or {}, (entry.get("payment") or {}).get("payment_id")
                state, named = record.get("state"), record.get("receipt_id")
                # a receipt the register canceled counts for nothing, except the one a record still
                # "sent" names (its read-back, which sends it again, is still to come); a record
                # failed for good may name the last receipt it sent, canceled or never registered
                # (seed 20261260006: the third canceled one), and no other may stand
                made = [m["id"] for m in settled_by_payment.get(paid_by or "", [])
                        if m.get("status") != "canceled" or state == "sent" and m["id"] == named]
                assert made == [named] if state == "sent" else len(made) <= 1 if state == "requested" \
                    else made in ([], [named]) if state == "failed" else made == [], \
                    f"F3 difference payment {paid_by} of {booking.booking_id} recorded settlement {record}, " \
                    f"provider has {made}"
                assert record.get("state") != "failed" or in_review(booking) or booking.review, \
                    f"F4 difference payment {paid_by}'s settlement receipt failed for good but is in no case"
        now = iso(self.clock())
        for booking in snap.bookings.values():
            due = booking.settlement_due
            renders = self._renders_at(booking) if due is not None else "9999"
            if due is not None and now < renders < "9999":
                # F6: the sweeper reads the due index: a look later than the start (an event moved
                # earlier, its start read from the event) would send the receipt late
                assert parse_iso(due) <= parse_iso(renders), \
                    f"F6 booking {booking.booking_id}'s settlement receipt is looked at {due}, after its " \
                    f"service is rendered at {renders}"
        for sent in self.provider.payments.values():
            if not sent.get("receipt"):
                continue
            for refund in self.provider.refunds_for(sent["id"]):
                assert refund.get("receipt"), f"F2 refund {refund['id']} of {sent['id']} carries no receipt"
                assert total(refund["receipt"]) == Decimal(refund["amount"]["value"]), \
                    f"F2 refund receipt of {refund['id']} sums to {total(refund['receipt'])}, not {refund['amount']}"

    def check_cancelled_events(self, settled: bool) -> None:
        """C1 no booking of a cancelled event becomes CONFIRMED after the cancellation; C2 once the
        job has run and everything settled, none stays CONFIRMED and none is left holding places."""
        for event_id, confirmed_before in self.cancelled_events.items():
            for booking_id, _ in self.known:
                booking = self.store.get_booking(booking_id)
                if booking is None or booking.event_id != event_id:
                    continue
                if booking.status is S.CONFIRMED:
                    assert booking_id in confirmed_before, \
                        f"C1 booking {booking_id} of a cancelled event was confirmed after the cancellation"
                    assert not settled, f"C2 booking {booking_id} of a cancelled event kept its money"
                assert not (settled and booking.holds_places), \
                    f"C2 booking {booking_id} of a cancelled event still holds places ({booking.status})"

    def applicable(self, name: str) -> bool:
        """Whether an operation can do anything now (cheap: no table reads). The hypothesis machine
        uses it as a precondition, so its steps go to operations that act."""
        needs = {
            "repeat_request": self.requests, "start_payment": self.known, "cancel": self.known,
            "double_click_cancel": self.known, "expiry_fires": self.known,
            "customer_reads_booking": self.known,
            "cancel_while_paying": self.provider.payments, "refund_long_after": self.provider.payments,
            "customer_acts_at_provider": self.provider.payments, "deliver": self.provider.payments,
            "capture_meets_reconciliation": self.provider.payments,
            "stray_payment_refunded": self.provider.payments,
            "retry_refund": self.provider.payments, "reconcile": self.provider.payments,
            "provider_outage": self.provider.payments, "operator_resolves": self.provider.payments,
            "deliver_refund": self.provider.refunds, "colliding_key_booking": self.entries,
            "customer_resolves": self.provider.payments, "window_resold": self.provider.payments,
            "cancellation_job_runs": self.cancelled_events, "exchange": self.known,
        }
        return bool(needs.get(name, True))

    # ---------------------------------------------------------------------------- the checks

    def snapshot(self) -> Any:
        """The table as it is now; re-read only if something was written since (the fake's table
        and the direct client count their writing calls; boto3 is read every time)."""
        writes = self.storage.writes()
        if writes is None or self._snap is None or self._snap[0] != writes:
            self._snap = (writes, self.storage.snapshot())
        return self._snap[1]

    def check_admission(self, snap: Any) -> None:
        """A1: nobody holds (or is offered) places of the high-demand sale without having been
        admitted: every booking of "hot" was made while its customer held an admission token."""
        for booking in snap.of_event(self.events["hot"]):
            made = parse_iso(booking.created_at).timestamp()
            admitted = any(expires - TOKEN_TTL <= made <= expires for expires in self.admitted.get(booking.customer_id, ()))
            first = snap.journals[booking.booking_id][0][1]
            assert admitted, f"A1 {booking.customer_id} got booking {booking.booking_id} of the high-demand sale " \
                f"({first.actor}: {first.action}) without having been admitted by its waiting room"

    def check_voids(self, snap: Any, settled: bool = False) -> None:
        """V1: a void of the booking's own payment whose answer reached the shop is recorded on the
        booking: its payment no longer shows as an authorisation held (``waiting_for_capture``).
        S4: once settled, no booking shows its own payment as held when the provider has it voided
        (whoever voided it: the shop, an operator, the authorisation's own lapse)."""
        own = own_payment_ids(snap, self.provider)
        for booking_id, payment_id in own.items() if settled else ():
            booking, payment = snap.bookings.get(booking_id), self.provider.payments.get(payment_id)
            if booking is None or payment is None or booking.payment is None \
                    or booking.payment.payment_id != payment_id:
                continue
            assert not (payment["status"] == "canceled" and booking.payment.provider_status == "waiting_for_capture"), \
                f"S4 booking {booking_id} ({booking.status}) still shows its payment {payment_id} as " \
                f"waiting_for_capture after settling; the provider has it canceled"
        for payment_id, key in self.provider.voids_answered:
            booking_id = key.removeprefix("hf-void-")
            booking = snap.bookings.get(booking_id)
            if not key.startswith("hf-void-") or booking is None or own.get(booking_id) != payment_id \
                    or booking.payment is None or booking.payment.payment_id != payment_id:
                continue
            assert booking.payment.provider_status != "waiting_for_capture", \
                f"V1 booking {booking_id} ({booking.status}) voided its payment {payment_id} and was told so, " \
                f"but still records it as waiting_for_capture"

    def check_ticks(self, snap: Any) -> None:
        """T1: the tick of a bucket, started since the bucket markers (adapters/expiry_buckets.py),
        finds every hold still running whose deadline falls in it (its expiry, its reminder) and
        every booking whose next look is a payment check in it (the tick's first checks), whatever
        failed or raced on the way: the markers a tick reads the shards by were written. One read
        per bucket."""
        from collections import defaultdict

        from holdfast.adapters.expiry_buckets import bucket_of

        holds: dict[str, set[str]] = defaultdict(set)
        checks: dict[str, set[str]] = defaultdict(set)
        for booking in snap.bookings.values():
            if booking.holds_places:
                holds[bucket_of(booking.hold_expires_at)].add(booking.booking_id)
            payment = booking.payment
            # (a booking in a case is in the review index, not the due index: its case decides,
            # adapters/booking_items.py; the sweeper reads the cases besides)
            in_case = booking.status is S.MANUAL_REVIEW or bool(booking.review)
            if payment is not None and payment.next_check_at and not booking.settled and booking.due_at \
                    and not in_case and bucket_of(booking.due_at) == bucket_of(payment.next_check_at):
                checks[bucket_of(payment.next_check_at)].add(booking.booking_id)
        for bucket, held in sorted(holds.items()):
            missing = held - set(self.store.bucket_booking_ids(bucket, indexed=True))
            assert not missing, f"T1 holds {sorted(missing)} are not found by the tick of {bucket}"
        for bucket, due in sorted(checks.items()):
            missing = due - set(self.store.due_in_bucket(bucket, indexed=True))
            assert not missing, f"T1 payment checks of {sorted(missing)} are not found by the tick of {bucket}"

    def check(self) -> None:
        snap = self.snapshot()
        self.check_ticks(snap)
        self.check_admission(snap)
        check_invariants(snap)
        check_money(snap, self.provider, settled=False)
        self.check_cancelled_events(settled=False)
        self.check_voids(snap)
        self.check_erased(snap)
        self.check_receipts(snap)
        self.check_transfers(snap)

    def table_digest(self) -> str:
        """The table as the rules see it, in one line: the bookings by status, and a digest of
        every booking's status and version and of every place's state (pool counters, seats,
        granules, tickets). Two stores that kept the same items give the same line."""
        snap = self.storage.snapshot()
        parts = [
            sorted((b.booking_id, b.status.value, b.version) for b in snap.bookings.values()),
            sorted((event, pool, sorted(counters.items())) for event, pools in snap.pools.items()
                   for pool, counters in pools.items()),
            sorted((event, unit, item.get("state"), item.get("booking_id"))
                   for event, units in snap.units.items() for unit, item in units.items()),
            sorted((key, [str(item.get(name)) for name in ("held", "sold", "taken", "session")])
                   for key, item in snap.granules.items()),
            sorted((ticket, item.get("status")) for ticket, item in snap.tickets.items()),
        ]
        statuses = Counter(b.status.value for b in snap.bookings.values())
        counts = ", ".join(f"{status} {count}" for status, count in sorted(statuses.items()))
        digest = hashlib.sha256(repr(parts).encode()).hexdigest()[:12]
        return f"{len(snap.bookings)} bookings ({counts}), digest {digest}"

    def settle(self) -> None:
        """Everything outstanding finally happens, without faults: every payment's and refund's
        notification (a GET now), every unsettled booking reconciled, every pending refund
        retried, until nothing changes; then the settled money rule must hold."""
        self.provider.faults.clear()
        self.provider.broken = False
        self.provider.on_capture = None
        self.store.before_save = self.store.before_hold = None
        self.poisoned.clear()
        for _ in range(4):
            for event_id in sorted(self.cancelled_events):   # a durable job runs to its end
                self._run_cancellation_job(event_id, steps=10_000)
            for payment_id in list(self.provider.payments):
                self._consume("payment consumer (drain)", lambda: self.payments.apply_provider_payment(
                    self.provider.get_payment(payment_id), actor="reconciler"))
            for refund in list(self.provider.refunds.values()):
                self._consume("refund consumer (drain)",
                              lambda: self.payments.apply_provider_refund(dict(refund)))
            for booking_id, _ in self.known:
                booking = self.store.get_booking(booking_id)
                if booking is not None and booking.payment is not None and not booking.settled:
                    self._consume("reconciliation (drain)", lambda: self.reconciliation.check(booking_id))
                booking = self.store.get_booking(booking_id)
                if booking is not None and booking.status is S.REFUND_PENDING:
                    self._consume("refund retry (drain)", lambda: self.payments.refund(booking, "reconciler"))
        now = iso(self.clock())
        for booking_id, _ in self.known:   # every settlement receipt due by now is sent (or a case)
            for _ in range(len(self.settlements.retry_seconds) + 2):
                booking = self.store.get_booking(booking_id)
                if booking is None or booking.settlement_due is None or self._renders_at(booking) > now:
                    break
                # an order's line waits for its retry's moment (the sweeper takes it then): time gets
                # there, a retry's wait at most (a look put off any further is F5's to find)
                ahead = (parse_iso(booking.settlement_due) - self.clock()).total_seconds()
                if 0 < ahead <= max(self.settlements.retry_seconds):
                    self.clock.advance(ahead)
                self._consume("settlement (drain)", lambda: self.settlements.settle(booking))
            booking = self.store.get_booking(booking_id)
            if booking is not None and booking.settlement_due is not None:
                assert self._renders_at(booking) > now, \
                    f"F5 booking {booking_id}'s service was rendered by {now} and no settlement receipt was sent"
        snap = self.storage.snapshot()
        check_invariants(snap)
        check_money(snap, self.provider, settled=True)
        self.check_cancelled_events(settled=True)
        self.check_admission(snap)
        self.check_voids(snap, settled=True)
        self.check_erased(snap)
        self.check_receipts(snap)
        self.check_transfers(snap)
        self.tally_paths(snap)

    def tally_paths(self, snap: Any) -> None:
        """What the history did to the bookings of issues 43 and 45, read from the journals once it
        settled: for each order of several lines that costs money (``order``), comp (``comp``),
        booking that used a discount code (``coded``), booking exchanged (``exchanged``) or given
        to another customer (``given``), every journal action it went through once
        (``path:order:hold_expired``) and its last status (``path:order=REFUNDED``). ``make proof`` requires
        the paths in ``proof.FEATURE_PATHS`` reached, so a run that never paid, expired, paid late or
        cancelled an order (or gave back a code's use) fails instead of proving nothing about it."""
        for booking in snap.bookings.values():
            details = booking.kind_details or {}
            actions = {entry.action for _, entry in snap.journals.get(booking.booking_id, [])}
            free = booking.amount.value == 0
            tags = [tag for tag, applies in (
                ("order", len(details.get("lines") or ()) > 1 and not free),
                ("comp", free),
                ("coded", not free and any(is_code_pool(pool) for pool, _ in booking.places.pools)),
                ("exchanged", EXCHANGED in actions),
                ("given", bool(details.get("accepted_transfer"))),
            ) if applies]
            for tag in tags:
                self.log.update(f"path:{tag}:{action}" for action in actions)
                self.log[f"path:{tag}={booking.status.value}"] += 1


#: Every operation, with its weight for the random walker (the hypothesis machine runs them all).
OPERATIONS: dict[str, int] = {
    "create": 8, "repeat_request": 1, "start_payment": 6, "customer_acts_at_provider": 3, "cancel": 2,
    "double_click_cancel": 1, "cancel_while_paying": 1, "refund_long_after": 1, "organizer_retries_event": 1,
    "deliver": 6, "capture_meets_reconciliation": 2, "deliver_refund": 1, "stray_payment_refunded": 1,
    "retry_refund": 1, "reconcile": 2, "provider_outage": 1, "run_executions": 1, "sweeper": 1,
    "expiry_fires": 2, "time_passes": 2, "operator_resolves": 2, "customer_reads_booking": 1, "waitlist_join": 1,
    "customer_resolves": 2, "window_resold": 2,
    "customer_hoards": 1,
    "colliding_key_booking": 2, "waitlist_advance": 1,
    "organizer_cancels_event": 1, "cancellation_job_runs": 1, "other_organizer_intrudes": 1,
    "customer_queues": 1, "time_paid_late": 1, "clock_to_slot_start": 1, "late_choice_after_cancel": 1,
    "race_for_places": 1, "organizer_sets_fiscal": 1, "service_rendered": 2, "place_order": 2, "hold_with_code": 3,
    # issue 45: comps (a 100 % code, an order the organizer gives) confirmed without a payment
    "hold_with_comp_code": 2, "organizer_gives_order": 2,
    # issue 45: the organizer's blocks, raced by holds, ended and ended again
    "organizer_blocks": 2, "organizer_unblocks": 1,
    # issue 42: erasure and the retention sweep at any point, a start moved either way (warm and cold
    # containers), a refund refused after a cancel, a parking window begun before the hold
    "customer_erases": 1, "retention_sweep": 1, "organizer_moves_start": 1, "refund_refused": 1,
    "parking_window_begun": 1,
    # issue 42, finding 7: an erasure while the relay has claimed the customer's waitlist turn
    "erased_during_offer": 3,
    # issue 43: an order's line lives its own life after confirmation (its tickets at the doors)
    "order_ticket_scanned": 1,
    # issue 42: a postponed event's tickets at its doors past the old start + 12 h
    "postponed_ticket_scanned": 1,
    # issue 45: a confirmed booking exchanged for other seats, another date or another quantity, with
    # a rival's hold or the customer's own cancel landing between its plan and its write, or twice
    "exchange": 3,
    # issue 45: the organizer's order that sells places out of a block
    "organizer_sells_from_block": 2,
    # issue 45: a confirmed booking given to another customer: offered, accepted, withdrawn
    "customer_offers_transfer": 1, "customer_accepts_transfer": 1, "customer_withdraws_transfer": 1,
    # issue 42, finding 13: several accounts behind one network address, against its cap on live holds
    "network_hoards": 1,
    # issue 45: an exchange into cheaper places, its difference refunded once whatever is lost or repeated
    "exchange_for_less": 2,
    # issue 43: an order's one payment, in time or after its hold lapsed (a rival on one of its lines)
    "order_paid": 2,
    # issue 43: an order's parking line given up at its no-show (kept or refunded, the refund's
    # answer lost or refused), its space free at once
    "order_line_given_up": 1,
    # issue 45: an exchange into dearer places, its difference paid by a second payment, declined,
    # lapsed, paid late (its seats free or taken), its creation's answer lost, or cancelled meanwhile
    "exchange_for_more": 2,
}


def entry_ttl(entry: dict[str, Any]) -> float:
    """The seconds a dearer exchange's difference is held for (its record's creation to expiry)."""
    from holdfast.clock import parse_iso

    return (parse_iso(str(entry["expires_at"])) - parse_iso(str(entry["created_at"]))).total_seconds()


__all__ = ["BookingModel", "Draw", "Executions", "ModelProvider", "ModelStorage", "ModelStore", "OPERATIONS",
           "RandomDraw", "deterministic_uuids", "fake_storage", "moto_storage", "own_payment_ids"]
