"""The parking gates' part of the correctness model: one lot, two gates, cars that come and go.

The gates are the real gate controller (``gate_controller.controller.Gate`` with its SQLite
journal on a temporary file and its offline rules); their backend is the real parking services
(``GatePasses``, ``GateSync``) on the model's table, called in-process the way
functions/parking_api/app.py wires them (the gate key checked, the body validated by the route's
request model). The backend can be down (the gate decides offline, nothing reached the backend)
or lose its answer (the service ran, the gate never heard: it decides offline and queues the same
pass id). The provider can time out during an exit's payment request.

The model keeps the physical truth the backend cannot see: where each car is. A car goes in when
a gate opened for it and out when an exit opened. The gate rules compare that with the table:

  G1 a ticket is closed at most once (one closing exit pass, one ``vehicle_exited`` journal entry);
  G2 once settled, each car that went in is inside with an open ticket, out with no open ticket,
     or named by an open gate case;
  G3 a closed ticket never opens the exit again for a new pass (issue 28, finding 3);
  G4 once settled, every gate's queue is recorded by the backend (nothing stuck behind a gap);
  G5 a repeat of a pass (same gate, same id, same body) gets the first answer and changes nothing;
  G6 one gate's pass id never returns another gate's answer, and a different body under a used
     id never lets a car through on the stored answer (finding 6);
  G7 money of exit payments: a succeeded exit payment is counted by its ticket's closing exit, or
     named by a ``payment`` gate case; a ticket closed owing money has an ``exit`` gate case; once
     settled every succeeded exit payment is recorded ``paid`` on its ticket;
  G8 an offline gate with a fresh configuration admits a confirmed reservation's car by plate
     as that reservation, not as an unknown car (finding 11); so does an online gate, for a
     reservation whose window (early entry included) covers now (not a drive-up paying by the
     hour while the reservation goes NO_SHOW keeping its money).

Reservations' own money is the booking money rule (helpers.check_money) over the reservations'
payments. Failures are AssertionErrors starting with the rule's code.
"""
from __future__ import annotations

import os
import random
import shutil
import tempfile
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import Any, Callable

from pydantic import ValidationError

from gate_controller import controller as gate_controller_module
from gate_controller import offline as gate_offline_module
from gate_controller.backend import Refused, Unreachable
from gate_controller.controller import RESEND_SECONDS, Gate
from gate_controller.journal import Journal
from gate_controller.offline import OfflineRules
from holdfast import kinds
from holdfast.clock import iso, parse_iso
from holdfast.domain import lifecycle
from holdfast.products.parking import rules
from holdfast.domain.errors import BookingError
from holdfast.domain.statuses import BookingStatus, can_move
from holdfast.products.parking.gate_sync_schemas import GateSyncIn
from holdfast.products.parking.schemas import GatePassIn, LotIn, ReservationIn, SubscriptionIn
from holdfast.products.parking.tokens import LotKeys
from holdfast.ports import TransientStoreError
from holdfast.services.bookings import BookingService
from holdfast.products.parking.services.gate_passes import GatePasses
from holdfast.products.parking.services.gate_sync import GateSync
from holdfast.products.parking.services.lots import ParkingService
from holdfast.services.payments import PaymentOutcomeUnknown, PaymentService
from holdfast.services.sweeper import sweep

from .helpers import (Snapshot, check_booking, check_granules, check_hold_cap, check_money, check_parking,
                      snapshot_in_process, snapshot_of)

KEYS = LotKeys(b"gate-model-master-seed-0001")
GATE_CACHE_KEY = bytes(range(32))
RETURN_URL = "http://127.0.0.1:3000/done"
LOT_BODY = {
    "name": "Model lot",
    "spaces": [{"space_id": f"R{n}", "type": "REGULAR", "priority": n} for n in (1, 2, 3)]
    + [{"space_id": f"C{n}", "type": "COMPACT", "priority": n} for n in (1, 2)],
    # No grace: a reservation holder who came in early and stays to the end of the window owes a
    # started hour, with the entry token still valid (the offline exit opens for it).
    "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}, "grace_minutes": 0},
    "default_stay_minutes": 120, "early_entry_minutes": 15, "no_show_grace_seconds": 900,
    "allow_offline_temporary_tickets": True,
}
#: Cars by plate: three reservation holders (two vehicle types), three drive-ups, a subscriber.
CARS = {"RES1": ("reservation", "REGULAR"), "RES2": ("reservation", "COMPACT"), "RES3": ("reservation", "REGULAR"),
        "DRV1": ("drive_up", "REGULAR"), "DRV2": ("drive_up", "REGULAR"), "DRV3": ("drive_up", "REGULAR"),
        "SUB1": ("subscriber", "REGULAR")}
GATES = ("g1", "g2")


@dataclass
class Car:
    plate: str
    kind: str
    vehicle: str
    inside: bool = False
    entered: bool = False
    ticket: str | None = None           # what the driver holds: the backend's ticket id or a local one
    booking_id: str | None = None
    customer: str = ""
    token: str | None = None
    owed_url: str | None = None
    passes: set[str] = field(default_factory=set)   # ids of the passes made for this car
    entered_at: str = ""                # when it last went in (the model's clock)
    waiting: tuple[str, str | None] | None = None   # the exit (gate, ticket shown) that last stayed shut


@dataclass
class Storage:
    """What the world's services keep their items in: the table's store, the gates' sync ledger
    over the same table, and a read of the whole table for the rules."""

    store: Any
    ledger: Any
    snapshot: Callable[[], Snapshot]


def fake_storage() -> Storage:
    """The fakes (tests/support/fake_table.py), held to the adapters on moto and DynamoDB Local
    by tests/contract/storage/: what test_gate_model.py runs the histories on."""
    from tests.support.fake_table import FakeTableStore
    from tests.support.fakes import FakeGateSyncLedger

    store = FakeTableStore()

    def snapshot() -> Snapshot:
        with store.table.lock:   # a write stores a new item: those listed here stay as they were read
            items = list(store.table.items.values())
        return snapshot_of(items)

    return Storage(store, FakeGateSyncLedger(store.table), snapshot)


def moto_storage(client: Any, table: str) -> Storage:
    """The adapters over a client of moto in process (the proof's, tests/correctness/proof.py)."""
    from holdfast.adapters.dynamo import BookingStore
    from holdfast.products.parking.adapters.gate_sync_store import GateSyncStore

    return Storage(BookingStore(table, client), GateSyncStore(table, client),
                   lambda: snapshot_in_process(table))


@dataclass
class SentPass:
    """A pass the backend was asked about online, as the gate sent it, and the answer it gave."""

    gate: str
    kind: str
    body: dict[str, Any]
    answer: dict[str, Any] | None
    car: str


class InProcessBackend:
    """gate_controller.backend.Backend's interface over the real services, with faults:
    ``down`` (nothing reached the backend), ``lost`` (the backend acted, the answer never came)."""

    def __init__(self, world: "GateWorld", name: str) -> None:
        self.world, self.name = world, name
        self.faults: dict[str, str] = {}   # call ("entry", "exit", "sync") -> "down" | "lost"
        self.last: dict[str, Any] | None = None   # the last answer the backend gave (heard or not)
        self.last_body: dict[str, Any] | None = None   # the last pass body the gate sent

    def config(self) -> dict[str, Any]:
        world = self.world
        return world.parking.gate_config(world.lot_id, world.gate_ids[self.name], world.gate_keys[self.name])

    def entry(self, body: dict[str, Any]) -> dict[str, Any]:
        self.last_body = dict(body)
        return self._call("entry", lambda: self.world.apply_online(self.name, "entry", body))

    def exit(self, body: dict[str, Any]) -> dict[str, Any]:
        self.last_body = dict(body)
        return self._call("exit", lambda: self.world.apply_online(self.name, "exit", body))

    def sync(self, events: list[dict[str, Any]]) -> dict[str, Any]:
        return self._call("sync", lambda: self.world.sync_online(self.name, events))

    def _call(self, what: str, call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        fault = self.faults.pop(what, None)
        self.last = None
        if fault == "down":
            raise Unreachable("injected: connection refused", maybe_heard=False)
        try:
            answer = call()
        except BookingError as exc:
            if exc.status >= 500 or exc.status == 429:
                raise Unreachable(f"{exc.status} {exc.code}", maybe_heard=exc.status != 429) from None
            raise Refused(exc.status, exc.code, exc.message) from None
        self.last = answer
        if fault == "lost":
            raise Unreachable("injected: the answer was lost")
        return answer


class GateWorld:
    """One lot with five spaces of two types, a tariff, a subscription and two gates (each a real
    gate controller), on the given storage; the operations below, the checks and ``settle``."""

    def __init__(self, storage: Storage, clock: Any, provider: Any, rng: random.Random) -> None:
        self.clock, self.provider, self.rng = clock, provider, rng
        self.store, self.snapshot = storage.store, storage.snapshot
        self.bookings = BookingService(self.store, clock, rng=random.Random(rng.getrandbits(32)), snapshot_seconds=0)
        self.payments = PaymentService(self.store, provider, clock, self.bookings, RETURN_URL,
                                       start_reconciliation=lambda booking_id, tag, wait_seconds=0: True)
        self.parking = ParkingService(self.store, clock, self.bookings, 600, lambda: KEYS, id_salt="tests-deployment-salt")
        self.passes = GatePasses(self.store, clock, self.parking, lambda: provider, RETURN_URL)
        self.gate_sync = GateSync(storage.ledger, self._applier)
        self.trace: list[str] = []
        self.intent = ""
        self.reached = True   # cleared by an operation that acted on the way but not on its point
        self.log: Counter[str] = Counter()   # what the history exercised (outcomes, not only operations)
        self._last_fault: str | None = None
        self._undo_ids = self._deterministic_gate_ids()
        self.lot_id = self.parking.create_lot(LotIn.model_validate(LOT_BODY).command(), "gate-model-lot")["lot_id"]
        start = clock()
        self.parking.create_subscription(self.lot_id, SubscriptionIn.model_validate({
            "plate": "SUB1", "valid_from": iso(start - timedelta(hours=1)), "valid_to": iso(start + timedelta(days=3))}).command())
        self.gate_ids: dict[str, str] = {}
        self.gate_keys: dict[str, str] = {}
        self.backends: dict[str, InProcessBackend] = {}
        self.gates: dict[str, Gate] = {}
        self.journals: dict[str, Journal] = {}
        # In memory where the machine has it: the journals' fsyncs took longer than the rest of a
        # history, and no history crashes a gate (what a crash keeps is gate_controller's tests').
        memory = "/dev/shm" if os.path.isdir("/dev/shm") else None
        self._dir = tempfile.mkdtemp(prefix="gate-model-", dir=memory)
        for name in GATES:
            created = self.parking.create_gate(self.lot_id, name)
            self.gate_ids[name], self.gate_keys[name] = created["gate_id"], created["gate_key"]
            self.backends[name] = InProcessBackend(self, name)
            self.journals[name] = Journal(f"{self._dir}/{name}.sqlite", key=GATE_CACHE_KEY)
            self.gates[name] = Gate(self.journals[name], self.backends[name], self.lot_id, created["gate_id"], clock)
            self.gates[name].refresh()
        self.refreshed_at = {name: clock() for name in GATES}   # when each gate last read its configuration
        self.cars = {plate: Car(plate, kind, vehicle, customer=f"cust-{plate.lower()}")
                     for plate, (kind, vehicle) in CARS.items()}
        self.sent: dict[tuple[str, str], SentPass] = {}      # (gate, event_id) -> the pass sent online
        # (gate, event_id) a gate took from the other gate: used once (a second time it is that
        # gate's own id again, which the backend rightly takes for a retry: repeat_pass's ground)
        self.borrowed: set[tuple[str, str]] = set()
        self.closings: dict[str, set[str]] = {}              # ticket -> exit pass ids that closed it
        self.counter = 0

    # ------------------------------------------------------------------------- plumbing
    def close(self) -> None:
        for journal in self.journals.values():
            journal.close()
        shutil.rmtree(self._dir, ignore_errors=True)
        self._undo_ids()

    def _deterministic_gate_ids(self) -> Callable[[], None]:
        """The gate controller draws its pass ids and local ticket ids from ``uuid.uuid4``; here
        they follow the world's rng, so a history replays from its seed."""
        rng = random.Random(self.rng.getrandbits(64))
        def uuid4() -> uuid.UUID:
            return uuid.UUID(int=rng.getrandbits(128), version=4)

        shim = type("DeterministicUuid", (), {"uuid4": staticmethod(uuid4), "UUID": uuid.UUID})
        saved = (gate_controller_module.uuid, gate_offline_module.uuid)
        gate_controller_module.uuid = shim   # type: ignore[attr-defined]
        gate_offline_module.uuid = shim      # type: ignore[attr-defined]

        def undo() -> None:
            gate_controller_module.uuid, gate_offline_module.uuid = saved

        return undo

    def note(self, text: str) -> None:
        self.trace.append(text)

    def _applier(self, lot_id: str, gate_id: str, event: dict[str, Any], *, at: Any, offline: bool) -> dict[str, Any]:
        return self.passes.apply(lot_id, gate_id, event, at=at, offline=offline)

    def apply_online(self, gate: str, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST .../gates/{gate}/entry|exit as app.py runs it: the key, the body, apply_gate_pass."""
        self.parking.gate(self.lot_id, self.gate_ids[gate], self.gate_keys[gate])
        try:
            request = GatePassIn.model_validate(body)
        except ValidationError as exc:
            raise AssertionError(f"X0 the model sent an invalid pass {body}: {exc}") from exc
        event = {"kind": kind, **request.model_dump(exclude_none=True)}
        return self._server(f"{kind} {body}", lambda: self.passes.apply(
            self.lot_id, self.gate_ids[gate], event, at=self.clock(), offline=False))

    def sync_online(self, gate: str, events: list[dict[str, Any]]) -> dict[str, Any]:
        self.parking.gate(self.lot_id, self.gate_ids[gate], self.gate_keys[gate])
        body = GateSyncIn.model_validate({"events": events})
        return self._server(f"sync of {gate}",
                            lambda: self.gate_sync.sync(self.lot_id, self.gate_ids[gate],
                                                        [item.as_event() for item in body.events]))

    @staticmethod
    def _server(what: str, call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """A route: BookingError is its 4xx/5xx with a code; anything else is an unhandled 5xx."""
        try:
            return call()
        except (BookingError, AssertionError):
            raise
        except Exception as exc:  # noqa: BLE001 - the point: anything else is a 500
            raise AssertionError(f"X1 gate route {what} answered 500 ({type(exc).__name__}: {exc})") from exc

    def _ticket_of(self, car: Car) -> dict[str, Any] | None:
        return self.store.open_ticket_of(self.lot_id, car.plate)

    def _fault(self, d: Any, gate: str, what: str) -> str | None:
        fault = d.choice([None, None, None, "down", "lost"])
        if fault:
            self.backends[gate].faults[what] = fault
        if fault == "down":
            # the backend cannot be reached at all: the queue the gate sends before the pass fails
            # too (an outage, not one lost request), so offline passes pile up in its journal until
            # a sync gets through, and a later part of the queue can arrive first (sync_out_of_order)
            self.backends[gate].faults["sync"] = "down"
        self._last_fault = fault
        return fault

    def _faulted(self) -> str:
        """The fault the last pass met, for its line of the story (then forgotten)."""
        fault, self._last_fault = self._last_fault, None
        return f" [{fault}]" if fault else ""

    def _record_sent(self, gate: str, kind: str, car: Car, result: dict[str, Any]) -> None:
        """Remember the pass the gate sent online (its body as the backend got it) and the answer
        the backend gave, heard or not; a pass that never reached the backend is not kept."""
        backend = self.backends[gate]
        body = backend.last_body
        if body is not None and body.get("event_id") == result["event_id"] and backend.last is not None:
            self.sent[(gate, result["event_id"])] = SentPass(gate, kind, body, backend.last, car.plate)

    # ----------------------------------------------------------------------- customers
    def reserve(self, d: Any) -> None:
        """A reservation through the real booking path: held, maybe paid, maybe confirmed."""
        free = [c for c in self.cars.values() if c.kind == "reservation" and not c.inside and not self._active(c)]
        if not free:
            return
        car = d.choice(free)
        start = rules.floor_granule(self.clock()) + timedelta(minutes=30 * d.integer(0, 3))
        window = {"vehicle_type": car.vehicle, "plate": car.plate, "from": iso(start),
                  "to": iso(start + timedelta(minutes=60 * d.integer(1, 2)))}
        self.counter += 1
        key = f"res-{self.counter}"
        then = d.choice(["holds", "pays", "confirmed", "confirmed", "confirmed"])
        self.intent = f"reserve {car.plate} {window['from']}..{window['to']} then {then}"
        try:
            result = self.parking.reserve(self.lot_id, car.customer, key, ReservationIn.model_validate(window).command())
        except BookingError as exc:
            self.note(f"reserve {car.plate} -> {exc.code}")
            return
        car.booking_id, car.token = result.booking.booking_id, None
        if then != "holds":
            booking = self._pay(car)
            payment_id = booking.payment.payment_id
            self.provider.pay(payment_id, at=iso(self.clock()))
            if then == "confirmed":
                self._deliver_payment(payment_id)
        self.note(f"reserve {car.plate} {window['from'][11:16]}-{window['to'][11:16]} -> "
                  f"{self.store.get_booking(car.booking_id).status}")

    def _pay(self, car: Car) -> Any:
        """POST /bookings/{id}/payment: the reservation's provider payment."""
        return self._server("start payment", lambda: self.payments.start_payment(car.booking_id, car.customer, "pay"))

    def _active(self, car: Car) -> bool:
        booking = self.store.get_booking(car.booking_id) if car.booking_id else None
        return booking is not None and str(booking.status) in ("HELD", "PAYMENT_PENDING", "CONFIRMED", "CHECKED_IN")

    def _deliver_payment(self, payment_id: str) -> str:
        """The payment-events consumer (PaymentService.apply_provider_payment, which records an
        exit payment on its ticket): "retry later" is its outcome-unknown."""
        try:
            return self.payments.apply_provider_payment(self.provider.get_payment(payment_id))
        except (PaymentOutcomeUnknown, TransientStoreError) as exc:
            return f"retry_later:{type(exc).__name__}"
        except AssertionError:
            raise
        except Exception as exc:  # noqa: BLE001 - a background worker that crashes
            raise AssertionError(f"X2 payment consumer crashed on {payment_id} "
                                 f"({type(exc).__name__}: {exc})") from exc

    def deliver_payments(self, d: Any) -> None:
        """The payment-events consumer: every reservation and exit payment the provider settled."""
        for payment_id, payment in list(self.provider.payments.items()):
            if payment["status"] == "pending" or not self._mine(payment):
                continue
            outcome = self._deliver_payment(payment_id)
            self.note(f"deliver {payment_id[:8]} -> {outcome}")

    def _mine(self, payment: dict[str, Any]) -> bool:
        meta = payment.get("metadata") or {}
        if meta.get("lot_id") == self.lot_id:
            return True
        booking = self.store.get_booking(meta["booking_id"]) if meta.get("booking_id") else None
        return booking is not None and booking.event_id == self.lot_id

    # -------------------------------------------------------------------------- passes
    def _token(self, car: Car) -> str | None:
        booking = self.store.get_booking(car.booking_id) if car.booking_id else None
        if booking is not None and str(booking.status) == "CONFIRMED":
            car.token = kinds.of_booking(booking).view_extras(booking, lambda: KEYS)["entry_token"]
        return car.token

    def car_enters(self, d: Any) -> None:
        """A car outside drives up to a gate (a token, or its plate); the backend may be down or
        lose its answer, and then the gate decides by its own offline rules."""
        outside = [c for c in self.cars.values() if not c.inside]
        if not outside:
            return
        car, gate = d.choice(outside), d.choice(GATES)
        # a reservation holder shows the QR code, or lets the plate camera read the plate
        token = self._token(car) if car.kind == "reservation" and d.choice([True, True, False]) else None
        fault = self._fault(d, gate, "entry")
        self.intent = f"{car.plate} enters at {gate} ({'token' if token else 'plate'}) fault={fault}"
        self._enter(car, gate, token)

    def _enter(self, car: Car, gate: str, token: str | None, again: bool = True) -> dict[str, Any]:
        self.backends[gate].last, self.backends[gate].last_body = None, None
        holding = self._reservation_now(car) if token is None else None
        try:
            result = self.gates[gate].entry(token=token) if token else self.gates[gate].entry(plate=car.plate)
        except Unreachable as exc:
            raise AssertionError(f"X0 gate controller let Unreachable out: {exc}") from exc
        finally:
            self.backends[gate].faults.clear()   # a fault the pass never met (its queued sync failed first) ends
        car.passes.add(result["event_id"])
        self._record_sent(gate, "entry", car, result)
        if result["mode"] == "offline" and token is None and car.kind == "reservation":
            self._check_offline_plate_entry(car, gate, result)
        if result["mode"] == "online" and holding is not None and result.get("reason") != "lot_full":
            ticket = self.store.get_ticket(result["ticket_id"]) if result.get("ticket_id") else None
            assert ticket is not None and ticket.get("booking_id") == holding, \
                f"G8 online gate {gate} did not admit {car.plate} by plate on its confirmed reservation {holding} " \
                f"(window covering now): open={result['open']} reason={result.get('reason')} " \
                f"ticket's booking={ticket and ticket.get('booking_id')}"
        if result["open"]:
            car.inside = car.entered = True
            car.entered_at = iso(self.clock())
            car.ticket = result.get("ticket_id") or result.get("local_ticket_id") or car.ticket
            car.owed_url = None
        self.log[f"entry:{result['mode']}:{'open' if result['open'] else result.get('reason')}"] += 1
        self.note(f"{car.plate} enters at {gate} ({'token' if token else 'plate'}){self._faulted()} -> "
                  f"open={result['open']} {result['mode']} {result.get('reason') or result.get('basis') or ''} "
                  f"ticket={str(car.ticket)[:8]}")
        if again and not result["open"] and result["mode"] == "offline" and self.rng.random() < 2 / 3:
            # the barrier stayed shut without the backend's word: the driver presses again (the
            # fault is gone), or drives away
            return self._enter(car, gate, token, again=False)
        self.gates[gate].lane_cleared()   # through the barrier or driven away: the loop sees the lane empty
        return result

    def _reservation_now(self, car: Car) -> str | None:
        """The car's confirmed reservation whose window (early entry included) covers now, if any."""
        booking = self.store.get_booking(car.booking_id) if car.booking_id else None
        if booking is None or str(booking.status) != "CONFIRMED" or car.inside:
            return None
        details, now = booking.kind_details or {}, iso(self.clock())
        early = timedelta(minutes=LOT_BODY["early_entry_minutes"])
        return booking.booking_id if iso(parse_iso(details["from"]) - early) <= now < details["to"] else None

    def _check_offline_plate_entry(self, car: Car, gate: str, result: dict[str, Any]) -> None:
        """G8: an offline gate whose configuration is fresh and was read after a reservation was
        confirmed, for a window starting within the hour after that read, admits the holder by plate
        as that reservation, not as an unknown car on a local ticket (issue 28, finding 11)."""
        booking = self.store.get_booking(car.booking_id) if car.booking_id else None
        if booking is None or str(booking.status) != "CONFIRMED":
            return
        details, now, read = booking.kind_details or {}, self.clock(), self.refreshed_at[gate]
        early = timedelta(minutes=LOT_BODY["early_entry_minutes"])
        fresh = OfflineRules(self.journals[gate], self.lot_id, self.gate_ids[gate], now).cache_fresh()
        # confirmed strictly before the read: at the same instant (the model's clock stands still
        # between steps) the read may have come first, as the world's first read does
        if not (fresh and booking.updated_at < iso(read) and details["from"] <= iso(read + timedelta(hours=1))
                and details["from"] <= iso(now + early) and iso(now) < details["to"]):
            return
        assert result["open"] and result.get("basis") != "local_ticket", \
            f"G8 offline gate {gate} (configuration read {iso(read)}) did not admit {car.plate} by its reservation " \
            f"{booking.booking_id} ({details['from']}..{details['to']}): open={result['open']} " \
            f"basis={result.get('basis')} reason={result.get('reason')}"

    def reservation_by_plate_offline(self, d: Any) -> None:
        """A reservation holder arrives in its window and the plate camera reads the plate; the
        gate read its configuration a moment ago (it does every few minutes) and has now lost the
        backend: its own rules decide."""
        waiting = [c for c in self.cars.values() if c.kind == "reservation" and not c.inside and c.booking_id
                   and str(self.store.get_booking(c.booking_id).status) == "CONFIRMED"]
        if not waiting:
            return
        car, gate = d.choice(waiting), d.choice(GATES)
        details = self.store.get_booking(car.booking_id).kind_details or {}
        arrive = parse_iso(details["from"]) - timedelta(minutes=5)
        if arrive > self.clock():
            self.clock.advance((arrive - self.clock()).total_seconds())
        if iso(self.clock()) >= details["to"]:
            return
        # a moment passes: the read comes after whatever this gate did at the car's arrival time
        self.clock.advance(1)
        self.gates[gate].refresh()
        self.refreshed_at[gate] = self.clock()
        self.backends[gate].faults["entry"] = self._last_fault = "down"
        self.intent = f"{car.plate} arrives by plate at {gate} offline, window {details['from']}..{details['to']}"
        self._enter(car, gate, None)

    def car_exits(self, d: Any) -> None:
        """A car inside drives to an exit with its ticket (or by plate); down, lost answers."""
        inside = [c for c in self.cars.values() if c.inside]
        if not inside:
            return
        car, gate = d.choice(inside), d.choice(GATES)
        by_plate = car.ticket is None or d.choice([False, False, True])
        fault = self._fault(d, gate, "exit")
        self.intent = f"{car.plate} exits at {gate} by {'plate' if by_plate else 'ticket'} fault={fault}"
        self._exit(car, gate, None if by_plate else car.ticket)

    def exit_provider_times_out(self, d: Any) -> None:
        """The exit asks the provider for the money owed and the provider times out (before or
        after it made the payment); or it answers, but the gate timed out waiting (lost)."""
        inside = [c for c in self.cars.values() if c.inside]
        if not inside:
            return
        car, gate = d.choice(inside), d.choice(GATES)
        mode = d.choice(["before", "after", "lost"])
        if mode == "lost":
            self.backends[gate].faults["exit"] = "lost"
        else:
            self.provider.fail("create_payment", mode)
        self._last_fault = f"provider {mode}" if mode != "lost" else "lost"
        self.intent = f"{car.plate} exits at {gate}, provider timeout {mode}"
        try:
            self._exit(car, gate, car.ticket)
        finally:
            self.provider.faults.pop("create_payment", None)

    def early_and_late_reservation(self, d: Any) -> None:
        """Staged in one step (the walker rarely lines it up): a reservation holder comes in early
        by token, stays to just before the window's end (a started hour more than was prepaid),
        and leaves at the same gate, its token still valid offline; the exit meets a lost answer,
        a provider timeout or nothing."""
        free = [c for c in self.cars.values() if c.kind == "reservation" and not c.inside and not self._active(c)]
        if not free:
            return
        car, gate = d.choice(free), d.choice(GATES)
        start = rules.floor_granule(self.clock()) + timedelta(minutes=60)
        window = {"vehicle_type": car.vehicle, "plate": car.plate, "from": iso(start),
                  "to": iso(start + timedelta(hours=1))}
        self.counter += 1
        try:
            result = self.parking.reserve(self.lot_id, car.customer, f"res-{self.counter}",
                                          ReservationIn.model_validate(window).command())
        except BookingError as exc:
            self.note(f"reserve {car.plate} early/late -> {exc.code}")
            return
        car.booking_id, car.token = result.booking.booking_id, None
        booking = self._pay(car)
        self.provider.pay(booking.payment.payment_id, at=iso(self.clock()))
        self._deliver_payment(booking.payment.payment_id)
        self.note(f"reserve {car.plate} {window['from'][11:16]}-{window['to'][11:16]}, paid -> "
                  f"{self.store.get_booking(car.booking_id).status}")
        self.clock.advance((start - timedelta(minutes=10) - self.clock()).total_seconds())
        token = self._token(car)
        if token is None:
            return
        self._enter(car, gate, token)
        if not car.inside:
            return
        self.clock.advance((start + timedelta(minutes=55) - self.clock()).total_seconds())
        fault = d.choice([None, "lost", "before", "after"])
        if fault == "lost":
            self.backends[gate].faults["exit"] = "lost"
        elif fault:
            self.provider.fail("create_payment", fault)
        self._last_fault = fault and (fault if fault == "lost" else f"provider {fault}")
        self.intent = f"{car.plate} leaves at {gate} 65 minutes after coming in early, fault={fault}"
        try:
            self._exit(car, gate, car.ticket)
        finally:
            self.provider.faults.pop("create_payment", None)

    def exit_on_old_ticket(self, d: Any) -> None:
        """A car inside shows another car's ticket, one the lot already closed (finding 3)."""
        closed = [t for t in self._tickets() if t["status"] != "OPEN" and t["lot_id"] == self.lot_id]
        inside = [c for c in self.cars.values() if c.inside]
        if not closed or not inside:
            return
        ticket, car, gate = d.choice(closed), d.choice(inside), d.choice(GATES)
        self.intent = f"{car.plate} exits at {gate} on closed ticket {ticket['ticket_id'][:8]} of {ticket['plate']}"
        self._exit(car, gate, ticket["ticket_id"])

    def _exit(self, car: Car, gate: str, ticket: str | None, again: bool = True) -> dict[str, Any]:
        target = self.store.get_ticket(ticket) if ticket and not ticket.startswith("L-") else None
        target = target or self._ticket_of(car)
        self.backends[gate].last, self.backends[gate].last_body = None, None
        try:
            result = self.gates[gate].exit(ticket=ticket) if ticket else self.gates[gate].exit(plate=car.plate)
        except Unreachable as exc:
            raise AssertionError(f"X0 gate controller let Unreachable out: {exc}") from exc
        finally:
            self.backends[gate].faults.clear()
        answer = self.backends[gate].last
        first = self.sent.get((gate, result["event_id"]))
        if result["event_id"] in car.passes:   # the gate asked again under the id it never heard back
            self.log[f"exit:resent:{'open' if result['open'] else result.get('reason')}"] += 1
        car.passes.add(result["event_id"])
        self._record_sent(gate, "exit", car, result)
        if answer is not None and target is not None:
            # a pass asked again is not a new pass: the ticket it closed the first time opens for it
            closed_by_it = first is not None and first.answer is not None and _opens(first.answer)
            self._check_exit_answer(gate, result["event_id"], answer, target, closed_by_it)
        car.waiting = None if result["open"] else (gate, ticket)
        if result["open"]:
            car.inside = False
            car.ticket, car.owed_url = None, None
        elif result.get("confirmation_url"):
            car.owed_url = result["confirmation_url"]
        self.log[f"exit:{result['mode']}:{'open' if result['open'] else result.get('reason')}"] += 1
        self.note(f"{car.plate} exits at {gate} on {str(ticket)[:10] if ticket else 'plate'}{self._faulted()} -> "
                  f"open={result['open']} {result['mode']} {result.get('reason') or result.get('basis') or ''}"
                  f"{' owes ' + str(result['amount_due']) if result.get('amount_due') else ''}")
        if again and not result["open"] and result["mode"] == "offline" and self.rng.random() < 2 / 3:
            # the barrier stayed shut without the backend's word: the driver presses again (the
            # fault is gone), or backs away and tries later
            return self._exit(car, gate, ticket, again=False)
        self.gates[gate].lane_cleared()   # out, or backed away: the next car at this barrier is a new pass
        return result

    def _check_exit_answer(self, gate: str, event_id: str, answer: dict[str, Any], ticket: dict[str, Any],
                           closed_by_it: bool = False) -> None:
        if not answer.get("exit_granted"):
            return
        if ticket["status"] != "OPEN" and not closed_by_it:
            raise AssertionError(f"G3 a new exit pass {event_id} at {gate} on ticket {ticket['ticket_id']} "
                                 f"(closed at {ticket.get('exited_at')}) opened the exit again "
                                 f"(reason {answer.get('reason')})")
        closings = self.closings.setdefault(ticket["ticket_id"], set())
        closings.add(event_id)
        assert len(closings) == 1, \
            f"G1 ticket {ticket['ticket_id']} closed by {len(closings)} exit passes {sorted(closings)}"

    def pays_exit(self, d: Any) -> None:
        """The driver pays what the exit asked for at the provider (or lets it be); the
        notification comes now, later or never (the next exit asks the provider)."""
        waiting = [p for p, v in self.provider.payments.items()
                   if v["status"] == "pending" and (v.get("metadata") or {}).get("lot_id") == self.lot_id]
        if not waiting:
            return
        payment_id = d.choice(waiting)
        pays, notify = d.choice([True, True, False]), d.choice([True, False])
        if pays:
            self.provider.pay(payment_id, at=iso(self.clock()))
        else:
            self.provider.decline(payment_id)
        outcome = "not delivered"
        if notify:
            outcome = self._deliver_payment(payment_id)
        self.log[f"exit_payment:{'paid' if pays else 'declined'}:{outcome}"] += 1
        self.note(f"exit payment {payment_id[:8]} {'paid' if pays else 'declined'} -> {outcome}")

    # ------------------------------------------------------------------- pass repeats
    def repeat_pass(self, d: Any) -> None:
        """A gate sends a pass it sent before again under the same id: the same body (a retry),
        or another body (a gate bug, a replayed id)."""
        if not self.sent:
            return
        (gate, event_id), sent = d.choice(sorted(self.sent.items()))
        record = self.store.get_pass(self.lot_id, self.gate_ids[gate], event_id, sent.kind)
        stored = record and record["answer"]
        same = d.choice([True, True, False])
        body = dict(sent.body) if same else self._other_body(sent, d)
        self.intent = f"repeat {event_id[:12]} at {gate} ({'same' if same else 'other'} body {body})"
        plate = sent.car if same else body["plate"]
        open_before = self.store.open_ticket_of(self.lot_id, plate)
        before = self.snapshot()
        try:
            answer = self.apply_online(gate, sent.kind, body)
        except BookingError as exc:
            self.note(f"repeat {event_id[:12]} at {gate} same={same} -> {exc.status} {exc.code}")
            assert not same or stored is None, \
                f"G5 a repeat of pass {event_id} at {gate} with the same body was refused {exc.code}; " \
                f"first answer {stored}"
            return
        self.note(f"repeat {event_id[:12]} at {gate} same={same} -> {answer}")
        if same and stored is not None:
            assert answer == stored, f"G5 a repeat of pass {event_id} at {gate} got {answer}, first {stored}"
            after = self.snapshot()
            assert after.tickets == before.tickets and after.bookings == before.bookings, \
                f"G5 a repeat of pass {event_id} at {gate} changed tickets or bookings"
            return
        if not same and self._not_for(plate, sent.kind, answer, open_before):
            raise AssertionError(f"G6 pass {event_id} at {gate} with another body {body} opened on an answer that "
                                 f"is not its own (first body {sent.body}, stored {stored}): {answer}")
        # a pass never recorded (its first try failed) is applied now: the car passes if it opens
        if plate in self.cars:
            self.cars[plate].passes.add(event_id)
        self._physical_follow(plate, sent.kind, answer)

    def _not_for(self, plate: str, kind: str, answer: dict[str, Any], open_before: dict[str, Any] | None) -> bool:
        """Whether an answer opened the barrier without doing it for this car: an entry's ticket
        is another plate's, or an exit closed nothing of this car's (its open ticket still open)."""
        if not _opens(answer):
            return False
        if kind == "entry":
            ticket = self.store.get_ticket(answer["ticket_id"]) if answer.get("ticket_id") else None
            return ticket is None or ticket["plate"] != plate
        still = self.store.get_ticket(open_before["ticket_id"]) if open_before else None
        return still is None or still["status"] == "OPEN"

    def _other_body(self, sent: SentPass, d: Any) -> dict[str, Any]:
        others = [c for c in self.cars.values() if c.plate != sent.car
                  and (c.inside if sent.kind == "exit" else not c.inside)]
        plate = d.choice(others).plate if others else "ZZZ9"
        return {"event_id": sent.body["event_id"], "plate": plate}

    def _physical_follow(self, plate: str, kind: str, answer: dict[str, Any]) -> None:
        """The car passes if the barrier opened for it."""
        car = self.cars.get(plate)
        if car is None or not _opens(answer):
            return
        if kind == "entry" and not car.inside:
            car.inside = car.entered = True
            car.entered_at = iso(self.clock())
            car.ticket = answer.get("ticket_id")
        elif kind == "exit" and car.inside:
            car.inside, car.ticket = False, None

    def other_gate_reuses_id(self, d: Any) -> None:
        """Gate 2 sends a pass of its own under a pass id gate 1 used (ids are each gate's own:
        a restored journal, a counter-based id); it must be gate 2's pass, never gate 1's answer."""
        if not self.sent:
            return
        (gate, event_id), sent = d.choice(sorted(self.sent.items()))
        other = GATES[1 - GATES.index(gate)]
        if (other, event_id) in self.borrowed or (other, event_id) in self.sent:
            return
        self.borrowed.add((other, event_id))
        record = self.store.get_pass(self.lot_id, self.gate_ids[gate], event_id, sent.kind)
        stored = record and record["answer"]
        candidates = [c for c in self.cars.values() if c.plate != sent.car
                      and (c.inside if sent.kind == "exit" else not c.inside)]
        if not candidates:
            return
        car = d.choice(candidates)
        body = {"event_id": event_id, "plate": car.plate}
        self.intent = f"{other} reuses {gate}'s pass id {event_id[:12]} for {car.plate} ({sent.kind})"
        open_before = self.store.open_ticket_of(self.lot_id, car.plate)
        try:
            answer = self.apply_online(other, sent.kind, body)
        except BookingError as exc:
            self.note(f"{other} reuses {event_id[:12]} -> {exc.status} {exc.code}")
            return
        self.note(f"{other} reuses {gate}'s id {event_id[:12]} for {car.plate} -> {answer}")
        if self._not_for(car.plate, sent.kind, answer, open_before):
            raise AssertionError(f"G6 gate {other}'s pass {event_id} for {car.plate} opened on an answer that is not "
                                 f"its own (gate {gate}'s answer for {sent.car}: {stored}): {answer}")
        car.passes.add(event_id)
        self._physical_follow(car.plate, sent.kind, answer)

    # ---------------------------------------------------------------------------- syncs
    def sync_gate(self, d: Any) -> None:
        """A gate sends its queue (the controller's own sync); the answer may be lost."""
        gate = d.choice(GATES)
        fault = d.choice([None, None, "lost", "down"])
        if fault:
            self.backends[gate].faults["sync"] = fault
        self.intent = f"sync {gate} fault={fault}"
        try:
            outcome: Any = self.gates[gate].sync()
        except Unreachable as exc:
            outcome = f"unreachable ({exc})"
        finally:
            self.backends[gate].faults.pop("sync", None)   # nothing to send: the fault met nothing
        self.log[f"sync:{fault}:{'conflicts' if isinstance(outcome, dict) and outcome['conflicts'] else 'ok'}"] += 1
        self.note(f"sync {gate} fault={fault} -> {outcome}")

    def sync_out_of_order(self, d: Any) -> None:
        """The gate's connection is down for a while: the cars that drive up meanwhile pass
        offline and queue in its journal (each pass's own queued sync fails too); when it comes
        back, a later part of the queue arrives before the earlier part (a lost or slow request):
        a sequence gap the backend must hold until it is filled.

        Two unsent passes at one gate arise from the other operations only when two offline passes
        follow each other there with no sync or online pass between (one history in 200): the
        outage is played here, through the real controller, until the queue holds two."""
        gate = d.choice(GATES)
        journal = self.journals[gate]

        def unsent() -> list[dict[str, Any]]:
            return journal.unsent(int(journal.get("expected_seq", 1)), 50)

        for _ in range(4):
            if len(unsent()) >= 2:
                break
            outside = [c for c in self.cars.values() if not c.inside]
            if not outside:
                break
            car = d.choice(outside)
            token = self._token(car) if car.kind == "reservation" and d.choice([True, False]) else None
            self.backends[gate].faults.update({"entry": "down", "sync": "down"})
            self._last_fault = "down"
            self.intent = f"{car.plate} enters at {gate} ({'token' if token else 'plate'}) in an outage"
            self._enter(car, gate, token, again=False)
        rows = unsent()
        if len(rows) < 2:
            self.note(f"{gate} has {len(rows)} unsent pass(es) after the outage: nothing to send out of order")
            self.reached = False   # the outage's passes acted; the operation itself did not
            return
        later = d.subset(rows[1:], 1, len(rows) - 1)
        events = [gate_controller_module._event(row) for row in sorted(later, key=lambda r: r["seq"])]
        self.intent = f"sync {gate} seqs {[e['seq'] for e in events]} ahead of {rows[0]['seq']}"
        answer = self.sync_online(gate, events)
        journal.record_sync(answer["results"], int(answer["expected_seq"]))
        self.log["sync:out_of_order"] += 1
        self.note(f"sync {gate} out of order {[e['seq'] for e in events]} -> expected {answer['expected_seq']} "
                  f"{[r['status'] for r in answer['results']]}")

    def refresh_config(self, d: Any) -> None:
        gate = d.choice(GATES)
        self.gates[gate].refresh()
        self.refreshed_at[gate] = self.clock()
        self.note(f"{gate} refreshes its configuration")

    # ----------------------------------------------------------------------------- time
    def time_passes(self, d: Any) -> None:
        """Minutes to hours: windows begin and end, caches go stale, no-shows fall due (the
        sweeper runs the timers)."""
        seconds = d.choice([60, 300, 600, 1200, 1800, 3600, 3 * 3600])
        self.clock.advance(seconds)
        counts = self._sweep()
        self.note(f"time +{seconds}s, sweep {counts}")

    def _sweep(self) -> dict[str, int]:
        def give_up(booking: Any, reason: str) -> None:
            payment_id = (booking.payment.payment_id if booking.payment else None) or ""
            self.payments.open_review(booking, reason, "sweeper", {"payment_id": payment_id})

        return sweep(self.store, self.clock, self.bookings.expire, lambda booking_id, tag, wait_seconds=0: True,
                     give_up=give_up)

    # --------------------------------------------------------------------------- checks
    def _tickets(self) -> list[dict[str, Any]]:
        tickets = self.snapshot().tickets
        return [tickets[ticket_id] for ticket_id in sorted(tickets)]   # in an order the table's layout cannot change

    def _cases(self) -> list[dict[str, Any]]:
        return self.store.list_gate_cases(None, 100, None)[0]

    def check(self, settled: bool = False) -> None:
        snap = self.snapshot()
        # helpers.check_invariants reads every journal step as a BookingStatus, which parking's own
        # states (CHECKED_IN, NO_SHOW, COMPLETED) are not; the same rules, with the kind's steps:
        check_granules(snap)
        check_parking(snap)
        check_hold_cap(snap)
        for booking in snap.bookings.values():
            _check_journal(snap, booking)
            check_booking(snap, booking)
        check_money(snap, BookingPayments(self.provider, self.lot_id, snap), settled=settled)
        lot_tickets = {t: v for t, v in snap.tickets.items() if v["lot_id"] == self.lot_id}
        for booking in snap.bookings.values():
            if booking.event_id != self.lot_id:
                continue
            exits = [e for _, e in snap.journals.get(booking.booking_id, []) if e.action == "vehicle_exited"]
            assert len(exits) <= 1, f"G1 booking {booking.booking_id} left {len(exits)} times"
        cases = self._cases()
        self._check_exit_money(lot_tickets, cases, settled)
        if settled:
            self._check_cars(lot_tickets, cases)
            for name, journal in self.journals.items():
                expected = int(journal.get("expected_seq", 1))
                unsent = journal.unsent(expected, 10)
                assert not unsent, f"G4 gate {name}'s queue is stuck: the backend expects {expected}, " \
                    f"{len(unsent)} pass(es) from seq {unsent[0]['seq']} never recorded"

    def _check_cars(self, tickets: dict[str, dict[str, Any]], cases: list[dict[str, Any]]) -> None:
        """G2, against the cars' true places. A case accounts for a car when it names the ticket
        in question, or names the car (plate, reservation, one of its passes) for a pass made since
        it last went in (so a case about an earlier visit covers nothing now)."""
        open_of = {t["plate"]: t for t in tickets.values() if t["status"] == "OPEN"}

        def accounted(car: Car, ticket: dict[str, Any] | None, since: str) -> bool:
            for case in cases:
                if ticket is not None and case.get("ticket_id") == ticket["ticket_id"]:
                    return True
                names = {case.get("plate"), case.get("booking_id"), case.get("event_id")} - {None}
                if (car.plate in names or car.booking_id in names or car.passes & names) \
                        and str(case.get("at") or case.get("opened_at") or "") >= since:
                    return True
            return False

        for car in self.cars.values():
            if not car.entered:
                continue
            ticket = open_of.get(car.plate)
            if car.inside and ticket is None and not accounted(car, None, car.entered_at):
                had = [f"{t['ticket_id'][:8]} {t['status']}" for t in tickets.values() if t["plate"] == car.plate]
                raise AssertionError(f"G2 car {car.plate} is inside, but no open ticket and no gate case names it "
                                     f"(its tickets: {had or 'none'})")
            if not car.inside and ticket is not None and not accounted(car, ticket, ticket["entered_at"]):
                raise AssertionError(f"G2 car {car.plate} has left, but its ticket {ticket['ticket_id']} is "
                                     f"still OPEN (entered {ticket['entered_at']}) and no gate case names it")

    def _check_exit_money(self, tickets: dict[str, dict[str, Any]], cases: list[dict[str, Any]],
                          settled: bool) -> None:
        in_case: set[str] = set()
        exit_cases: set[str] = set()
        for case in cases:
            in_case.update(case.get("payment_ids") or ())
            if case.get("payment_id"):
                in_case.add(case["payment_id"])
            if case.get("case_type") == "exit" and case.get("ticket_id"):
                exit_cases.add(case["ticket_id"])
        for ticket_id, ticket in tickets.items():
            if ticket["status"] == "OPEN":
                continue
            records = {r.get("payment_id"): r for r in self.store.exit_payments(ticket_id)}
            paid = [p for p in self.provider.payments.values()
                    if (p.get("metadata") or {}).get("ticket_id") == ticket_id and p["status"] == "succeeded"]
            counted = sum((Decimal(p["amount"]["value"]) for p in paid if p["id"] not in in_case), Decimal("0"))
            charge, prepaid = (Decimal(str(ticket.get(name) or "0")) for name in ("charge", "prepaid"))
            owed = max(charge - prepaid, Decimal("0"))
            if settled:
                for payment in paid:
                    record = records.get(payment["id"])
                    assert record is not None and record["state"] == "paid", \
                        f"G7 exit payment {payment['id']} succeeded but ticket {ticket_id} records it " \
                        f"{record and record['state']}"
                assert counted <= owed, f"G7 ticket {ticket_id} took {counted} in exit payments for {owed} owed, " \
                    f"and no payment case names the rest"
            if ticket.get("unpaid"):
                assert ticket_id in exit_cases, \
                    f"G7 ticket {ticket_id} closed owing {ticket['unpaid']} without an exit gate case"

    # --------------------------------------------------------------------------- settle
    def settle(self) -> None:
        """Everything outstanding happens, no faults: a driver who backed away from a shut exit comes
        back to it (a new pass: the lane cleared when it backed away), each gate syncs until
        its queue is recorded (both orders), every settled payment is delivered; then the settled
        rules."""
        self.provider.faults.clear()
        for backend in self.backends.values():
            backend.faults.clear()
        # the drivers who went away from a shut barrier are gone for good (the gate's resend window
        # passes too); its next sync tells the backend those barriers stayed shut
        self.clock.advance(RESEND_SECONDS + 1)
        for car in self.cars.values():
            if car.inside and car.waiting is not None:
                gate, ticket = car.waiting
                self.intent = f"{car.plate} tries the shut exit at {gate} again"
                self._exit(car, gate, ticket)
        for _ in range(3):
            for name in (GATES if self.rng.random() < 0.5 else GATES[::-1]):
                try:
                    self.gates[name].sync()
                except Unreachable as exc:
                    raise AssertionError(f"X0 a fault-free sync of {name} was unreachable: {exc}") from exc
            self.deliver_payments(None)
        self.check(settled=True)


def _check_journal(snap: Any, booking: Any) -> None:
    """I4/I5 (helpers.check_journal) for bookings whose kind declares states of its own."""
    entries = snap.journals.get(booking.booking_id, [])
    assert [v for v, _ in entries] == list(range(1, booking.version + 1)), \
        f"I5 booking {booking.booking_id} v{booking.version} has journal versions {[v for v, _ in entries]}"
    previous: str | None = None
    for version, entry in entries:
        assert entry.from_status == previous, f"I5 v{version}: from {entry.from_status}, previous was {previous}"
        if previous is not None and entry.to_status != previous:
            kind_step = lifecycle.declared(entry.to_status) or lifecycle.declared(previous)
            allowed = lifecycle.allows(str(booking.places.kind), previous, entry.to_status) if kind_step else \
                can_move(BookingStatus(previous), BookingStatus(entry.to_status))
            assert allowed, f"I4 {booking.booking_id}: {previous} -> {entry.to_status} is not allowed"
        previous = entry.to_status
    assert previous == str(booking.status), f"I5 last journal status {previous} != {booking.status}"


def _opens(answer: dict[str, Any]) -> bool:
    return bool(answer.get("gate_open") or answer.get("exit_granted"))


class BookingPayments:
    """The provider as the booking money rule sees it: the payments of this lot's reservations
    only (an exit payment names a ticket, not a booking)."""

    def __init__(self, provider: Any, lot_id: str, snap: Any) -> None:
        self.payments = {p: v for p, v in provider.payments.items()
                         if (v.get("metadata") or {}).get("booking_id") in snap.bookings}
        self.refunds_for = provider.refunds_for
        self.keys = {k: v for k, v in getattr(provider, "keys", {}).items() if k.startswith("hf-pay-")}
        self.second_refunds = getattr(provider, "second_refunds", [])


#: Every operation of the gate world, with its weight for the random walker.
OPERATIONS: dict[str, int] = {
    "reserve": 3, "deliver_payments": 1, "car_enters": 6, "car_exits": 5, "exit_provider_times_out": 2,
    "early_and_late_reservation": 1, "reservation_by_plate_offline": 1, "exit_on_old_ticket": 1, "pays_exit": 2, "repeat_pass": 2,
    "other_gate_reuses_id": 1, "sync_gate": 3,
    "sync_out_of_order": 1, "refresh_config": 1, "time_passes": 3,
}


def play_gate_history(client: Any | None, table: str, seed: int, steps: int,
                      operations: dict[str, int] | None = None) -> tuple[str | None, list[str], Counter[str]]:
    """One seeded gate history on a fresh table: ``steps`` weighted operations, each followed by
    the checks, then ``settle``. Returns (the first violation or None, the story, the operations run).
    ``client``: a client of moto in process, the table made on it (the proof's); None: the fakes."""
    from .model import ModelProvider, RandomDraw, deterministic_uuids
    from .helpers import ManualClock
    from tests.support.template import template

    operations = operations or OPERATIONS
    rng = random.Random(seed)
    undo = deterministic_uuids(random.Random(seed * 7919 + 3))
    if client is None:
        storage = fake_storage()
    else:
        props = template()["Resources"]["BookingsTable"]["Properties"]
        client.create_table(TableName=table, BillingMode=props["BillingMode"], KeySchema=props["KeySchema"],
                            AttributeDefinitions=props["AttributeDefinitions"],
                            GlobalSecondaryIndexes=props["GlobalSecondaryIndexes"])
        storage = moto_storage(client, table)
    clock = ManualClock()
    world: GateWorld | None = None
    story: list[str] = []
    ran: Counter[str] = Counter()
    step, before = "setup", 0
    try:
        world = GateWorld(storage, clock, ModelProvider(clock), random.Random(rng.getrandbits(32)))
        draw = RandomDraw(rng)
        names = list(operations)
        weights = [operations[name] for name in names]
        for index in range(steps):
            name = rng.choices(names, weights)[0]
            before, step, world.intent, world.reached = len(world.trace), f"{index:02d} {name}", "", True
            try:
                getattr(world, name)(draw)
            finally:   # counted when it acted (its trace grew), also when it found a violation; a
                # draw with nothing to act on (no car outside, none inside, ...) is not a run, nor
                # one that says it did not reach what it is for (`reached`)
                if len(world.trace) > before and world.reached:
                    ran[f"op:{name}"] += 1
            world.check()
            story.extend(f"{index:02d} {line}" for line in world.trace[before:])
        before, step, world.intent = len(world.trace), "settle", ""
        story.append("-- settle: every gate syncs, every payment delivered, no faults")
        world.settle()
        story.extend(f"   {line}" for line in world.trace[before:])
        return None, story, ran
    except Exception as exc:  # noqa: BLE001 - a violation, or a model bug: reported, never hidden
        if world is not None:
            story.extend(f"   {line}" for line in world.trace[before:])
        story.append(f"!! failed in: {step}{': ' + world.intent if world is not None and world.intent else ''}")
        message = str(exc).splitlines()[0] if isinstance(exc, AssertionError) else \
            f"X0 the gate model itself failed: {type(exc).__name__}: {exc}"
        return message, story, ran
    finally:
        if world is not None:
            ran.update(world.log)
            world.close()
        undo()
        try:
            if client is not None:
                client.delete_table(TableName=table)
        except Exception:  # noqa: BLE001 - gone already, or never made
            pass


def main(argv: list[str] | None = None) -> int:
    """Replay gate histories and print each story: ``python -m tests.correctness.gate_model --seed N``."""
    import argparse
    import logging

    parser = argparse.ArgumentParser(prog="gate_model", description=main.__doc__)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--histories", type=int, default=1)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--skip", default="", help="operations to leave out, comma-separated")
    parser.add_argument("--moto", action="store_true",
                        help="on moto in process, as make proof runs them (default: the fakes, as the tests)")
    args = parser.parse_args(argv)
    skip = {name for name in args.skip.split(",") if name}
    unknown = skip - set(OPERATIONS)
    if unknown:
        parser.error(f"unknown operations {sorted(unknown)}")
    operations = {name: weight for name, weight in OPERATIONS.items() if name not in skip}
    logging.disable(logging.ERROR)
    mock, client = _moto_client() if args.moto else (None, None)
    failures = 0
    for seed in range(args.seed, args.seed + args.histories):
        violation, story, _ = play_gate_history(client, f"gates-{seed}", seed, args.steps, operations)
        if args.histories == 1:
            print("\n".join(story))
        print(f"seed {seed}: {violation or 'ok'}")
        failures += violation is not None
    if mock is not None:
        mock.stop()
    return 1 if failures else 0


def _moto_client() -> tuple[Any, Any]:
    """moto in process with the local stack's transactions and queries, and the direct client."""
    import os

    os.environ.update({"AWS_DEFAULT_REGION": "eu-central-1", "AWS_ACCESS_KEY_ID": "testing",
                       "AWS_SECRET_ACCESS_KEY": "testing"})
    from moto import mock_aws

    from devstack.aws import queries, transactions

    from .helpers import DirectDynamoDB

    mock = mock_aws()
    mock.start()
    transactions.install()
    queries.install()
    return mock, DirectDynamoDB()


if __name__ == "__main__":
    raise SystemExit(main())
