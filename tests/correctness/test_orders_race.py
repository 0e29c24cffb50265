"""Orders under real concurrency, on both atomic backends (serialised moto server and DynamoDB
Local), through the real services: orders of a general-admission ticket and a parking space race
single holds of the same event and lot. The event's capacity and the lot's spaces run out at
different moments, so an order whose one line is gone must hold nothing.

Checked from the table as stored: the pools and granules equal what the unreleased bookings
(each order as each of its lines) claim (helpers.check_invariants: I1-I3, G1-G3), no space is
given twice, every order holds both its lines or is refused, and the orders and single holds
that succeeded never pass either capacity.
"""
from __future__ import annotations

import random
import threading
from datetime import datetime, timezone
from typing import Any

import pytest

from holdfast.domain.errors import BookingError
from holdfast.products.orders.lines import is_order, lines_of
from holdfast.products.orders.services import OrderLine, OrderService, PlaceOrder
from holdfast.products.parking.schemas import LotIn, ReservationIn
from holdfast.products.parking.services.lots import ParkingService
from holdfast.products.parking.tokens import LotKeys
from holdfast.domain.commands import HoldPlaces
from holdfast.services.bookings import BookingService
from holdfast.services.catalog import CatalogService

from .helpers import ManualClock, check_invariants, event_request, snapshot
from .test_concurrency import run_pool

pytestmark = pytest.mark.timeout(240)

KEYS = LotKeys(b"correctness-orders-master-seed")
PLACES, SPACES = 12, 6
WINDOW = {"from": "2030-01-02T18:00:00Z", "to": "2030-01-02T22:00:00Z"}


class Venue:
    """Per-thread services (like separate Lambda containers) over one store."""

    def __init__(self, backend: Any) -> None:
        self.store = backend.store()
        self.clock = ManualClock(datetime(2030, 1, 2, 10, 0, tzinfo=timezone.utc))
        self._local = threading.local()
        self._seeds = iter(range(10_000))
        self._lock = threading.Lock()
        catalog = CatalogService(self.store, self.clock, 600, id_salt="tests-deployment-salt")
        self.event_id = catalog.create_event(event_request(capacity=PLACES, starts_at="2030-01-02T19:00:00Z"))["event_id"]
        body = {"name": "Venue", "spaces": [{"space_id": f"R{n}", "type": "REGULAR"} for n in range(SPACES)],
                "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}}
        self.lot_id = self._parking().create_lot(LotIn.model_validate(body).command())["lot_id"]

    def _services(self) -> tuple[BookingService, OrderService, ParkingService]:
        local = getattr(self._local, "services", None)
        if local is None:
            with self._lock:
                seed = next(self._seeds)
            bookings = BookingService(self.store, self.clock, rng=random.Random(seed))
            local = self._local.services = (bookings, OrderService(bookings),
                                            ParkingService(self.store, self.clock, bookings, 600, lambda: KEYS,
                                                           id_salt="tests-deployment-salt"))
        return local

    def _parking(self) -> ParkingService:
        return self._services()[2]

    def car(self, number: int) -> HoldPlaces:
        return ReservationIn.model_validate({"vehicle_type": "REGULAR", "plate": f"P{number:03d}", **WINDOW}).command()

    def attempt(self, job: tuple[int, str]) -> tuple[str, str]:
        number, what = job
        bookings, orders, _ = self._services()
        try:
            if what == "order":
                lines = (OrderLine(self.event_id, HoldPlaces(quantity=2)), OrderLine(self.lot_id, self.car(number)))
                orders.place(f"c{number}", "k", PlaceOrder(lines))
            elif what == "ticket":
                bookings.create_booking(self.event_id, f"c{number}", "k", HoldPlaces(quantity=2))
            else:
                bookings.create_booking(self.lot_id, f"c{number}", "k", self.car(number))
        except BookingError as refused:
            return (what, refused.code)
        return (what, "held")


@pytest.mark.parametrize("seed", [3, 11])
def test_orders_and_single_holds_racing_hold_every_line_or_none_and_never_oversell(store_backend, seed):
    venue = Venue(store_backend)
    rng = random.Random(seed)
    jobs = [(n, rng.choice(["order", "order", "ticket", "car"])) for n in range(30)]
    outcomes = run_pool(venue.attempt, jobs)
    assert all(code in ("held", "sold_out", "no_space_available", "too_busy", "request_in_progress")
               for _, code in outcomes), outcomes
    snap = snapshot(store_backend.client, store_backend.table)
    check_invariants(snap)
    orders = [b for b in snap.bookings.values() if is_order(b)]
    assert len(orders) == sum(1 for what, code in outcomes if what == "order" and code == "held")
    for order in orders:
        assert [line.places.quantity for line in lines_of(order)] == [2, 1], order
    tickets = sum(b.places.quantity for b in snap.of_event(venue.event_id))
    cars = [g.resource_id for b in snap.bookings.values() for g in b.places.granules if g.at == "2030-01-02T18:00"]
    assert tickets <= PLACES and len(cars) == len(set(cars)) <= SPACES
    # the demand covers both: each ran out, and an order refused for one line took nothing of the other
    assert tickets == PLACES or len(cars) == SPACES, (tickets, cars, outcomes)
