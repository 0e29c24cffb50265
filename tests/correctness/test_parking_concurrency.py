"""Parking under real concurrency, on both atomic backends (serialised moto server and DynamoDB
Local), through the real services: 50 reservations of mixed vehicle types and permits race for 10
spaces of mixed types in one window, and drive-up cars race reservations for the same spaces.

No space is given twice (every granule item read back against the bookings and tickets:
helpers.check_granules and check_parking), every space is given once the demand covers it, and the
fallback order is kept: a vehicle got a later type of its order only if every space of the earlier
types was taken (nothing is released during the race, so at the end they still are).
"""
from __future__ import annotations

import random
import threading
from datetime import datetime, timezone
from typing import Any

import pytest

from holdfast.domain.errors import RequestInProgress, TooBusy
from holdfast.products.parking.rules import fallback
from holdfast.products.parking.kind import NoSpaceAvailable
from holdfast.products.parking.schemas import LotIn, ReservationIn
from holdfast.products.parking.tokens import LotKeys
from holdfast.services.bookings import BookingService
from holdfast.products.parking.services.gate_passes import GatePasses
from holdfast.products.parking.services.lots import ParkingService

from .helpers import ManualClock, check_invariants, snapshot
from .test_concurrency import run_pool

pytestmark = pytest.mark.timeout(240)

KEYS = LotKeys(b"correctness-parking-master-seed")
SPACES = ([{"space_id": f"C{n}", "type": "COMPACT", "priority": n} for n in range(3)]
          + [{"space_id": f"R{n}", "type": "REGULAR", "priority": n} for n in range(3)]
          + [{"space_id": f"L{n}", "type": "LARGE", "priority": n} for n in range(2)]
          + [{"space_id": f"H{n}", "type": "HANDICAP", "priority": n} for n in range(2)])
WINDOW = {"from": "2030-01-02T10:00:00Z", "to": "2030-01-02T12:00:00Z"}


class Lot:
    """Per-thread services (like separate Lambda containers) over one store."""

    def __init__(self, backend: Any) -> None:
        self.store = backend.store()
        self.clock = ManualClock(datetime(2030, 1, 2, 10, 0, tzinfo=timezone.utc))
        self._local = threading.local()
        self._seeds = iter(range(10_000))
        self._lock = threading.Lock()
        body = {"name": "Race", "spaces": SPACES, "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}}
        self.lot_id = self.parking().create_lot(LotIn.model_validate(body).command())["lot_id"]

    def parking(self) -> ParkingService:
        local = getattr(self._local, "parking", None)
        if local is None:
            with self._lock:
                seed = next(self._seeds)
            bookings = BookingService(self.store, self.clock, rng=random.Random(seed))
            local = self._local.parking = ParkingService(self.store, self.clock, bookings, 600, lambda: KEYS, id_salt="tests-deployment-salt")
        return local

    def reserve(self, job: tuple[int, str, bool], window: dict[str, str] = WINDOW) -> tuple:
        number, vehicle, permit = job
        body = {"vehicle_type": vehicle, "plate": f"P{number:03d}", "handicap_permit": permit, **window}
        try:
            booking = self.parking().reserve(self.lot_id, f"c{number}", "k", ReservationIn.model_validate(body).command()).booking
        except NoSpaceAvailable:
            return ("full", vehicle, permit)
        except (TooBusy, RequestInProgress):
            return ("busy", vehicle, permit)
        return ("held", vehicle, permit, booking.kind_details["space_id"], booking.kind_details["space_type"])

    def drive_up(self, number: int) -> tuple:
        gates = GatePasses(self.store, self.clock, self.parking(), lambda: None, "")
        answer = gates.apply(self.lot_id, "g", {"kind": "entry", "event_id": f"d{number}", "plate": f"D{number:03d}"},
                             at=self.clock(), offline=False)
        return ("entered", "REGULAR", False, answer["space_id"], None) if answer["gate_open"] else ("full",)


def jobs(count: int, seed: int) -> list[tuple[int, str, bool]]:
    rng = random.Random(seed)
    return [(n, rng.choice(["COMPACT", "REGULAR", "LARGE"]), rng.random() < 0.2) for n in range(count)]


def types_of() -> dict[str, str]:
    return {space["space_id"]: space["type"] for space in SPACES}


def check_fallback_kept(outcomes: list[tuple]) -> None:
    given = {outcome[3] for outcome in outcomes if outcome[0] in ("held", "entered")}
    types = types_of()
    for outcome in outcomes:
        if outcome[0] not in ("held", "entered"):
            continue
        _, vehicle, permit, space = outcome[:4]
        order = fallback(vehicle, permit)
        earlier = order[:order.index(types[space])]
        free_earlier = [s for s, t in types.items() if t in earlier and s not in given]
        assert not free_earlier, f"{vehicle} (permit {permit}) got {space} while {free_earlier} stayed free"


def test_fifty_reservations_for_ten_spaces_never_share_one_and_keep_the_fallback_order(store_backend):
    lot = Lot(store_backend)
    outcomes = run_pool(lot.reserve, jobs(50, seed=14))
    held = [outcome for outcome in outcomes if outcome[0] == "held"]
    spaces = [outcome[3] for outcome in held]
    assert len(spaces) == len(set(spaces)), f"a space given twice: {sorted(spaces)}"
    assert all(outcome[0] in ("held", "full", "busy") for outcome in outcomes), outcomes
    check_fallback_kept(outcomes)
    # Fewer cars than spaces in a later window: the order decides which spaces stay free.
    later = {"from": "2030-01-02T12:00:00Z", "to": "2030-01-02T13:00:00Z"}
    few = run_pool(lambda job: lot.reserve(job, later), [(100 + n, "COMPACT", False) for n in range(5)]
                   + [(200, "REGULAR", True), (201, "LARGE", False)])
    check_fallback_kept(few)
    # Every request that found its order full saw all of its types taken: the demand covers the lot.
    assert len(held) + sum(o[0] == "busy" for o in outcomes) >= 8, outcomes
    check_invariants(snapshot(store_backend.client, store_backend.table))


@pytest.mark.parametrize("store_backend", ["dynamodb_local"], indirect=True)
def test_drive_ups_and_reservations_racing_for_the_same_spaces_never_share_one(store_backend):
    lot = Lot(store_backend)

    def either(job: tuple[int, str, bool]) -> tuple:
        return lot.drive_up(job[0]) if job[0] % 2 else lot.reserve(job)

    outcomes = run_pool(either, jobs(30, seed=7))
    given = [outcome[3] for outcome in outcomes if outcome[0] in ("held", "entered")]
    assert len(given) == len(set(given)) and len(given) >= 8, outcomes
    check_invariants(snapshot(store_backend.client, store_backend.table))
