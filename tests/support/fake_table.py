"""The table's fake store as wiring hands it to the services: the core's fake stores
(``FakeWaitlistStore``: bookings, inventory, offerings, the expiry index, reviews, cancellations,
the waitlist) and one fake of each product's store part, all over one ``MemoryTable``.

The adapter's ``BookingStore`` is assembled the same way (adapters/dynamo.py): it answers what the
core's stores answer and the calls the products' store parts declare (``Product.store_parts``,
each part's ``STORE_CALLS``), and nothing else; so does this fake. ``FAKE_PARTS`` names the fake
standing for each of those parts, and ``FakeTableStore`` declares each call it answers through a
fake part by name (``get_gate = _On(FakeParkingItems.get_gate)``), as ``BookingStore`` declares its
own, so "go to definition" on a call lands on the fake's method; there is no fallback.
tests/contract/storage/test_fakes_cover_the_ports.py fails when a product under holdfast/products
registers a part with no fake here, a fake lacks a member of its product's ports, a part's declared
call is not answered here, or a call declared here is one ``BookingStore`` does not answer.

Test code only: the deployed package (layers/) never imports this module.
"""
from __future__ import annotations

import sys
from typing import Any, Callable

from holdfast.adapters.dynamo import bind_product_calls
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

#: every fake part the table's fake holds: the products' and the core's codes and blocks
PARTS: tuple[type, ...] = (*FAKE_PARTS.values(), FakeCodes, FakeBlocks)


class _On:
    """A call the table's fake answers through one fake part: read on the class it is that part's
    own function (``FakeTableStore.get_gate is FakeParkingItems.get_gate``); on a store, the part's
    method on the store's table."""

    def __init__(self, function: Callable[..., Any]) -> None:
        owner, _, name = function.__qualname__.rpartition(".")
        part = getattr(sys.modules[function.__module__], owner, None)
        if part not in PARTS or vars(part).get(name) is not function:
            raise TypeError(f"{function.__qualname__} is not a method of one of the fake parts {PARTS}")
        self.part, self.function = part, function

    def __get__(self, store: Any, owner: type | None = None) -> Any:
        if store is None:
            return self.function
        return getattr(store.parts[self.part], self.function.__name__)


class FakeTableStore(FakeWaitlistStore):
    """The core's fake store, and the calls it answers through the fake parts, each declared."""

    def __init__(self, table: MemoryTable | None = None) -> None:
        super().__init__(table)
        bind_product_calls()
        self.parts: dict[type, Any] = {fake: fake(self.table) for fake in PARTS}

    # FakeParkingItems (for DynamoParkingStore.STORE_CALLS)
    read_lot_granules = _On(FakeParkingItems.read_lot_granules)
    sold_holders = _On(FakeParkingItems.sold_holders)
    reservation_summaries = _On(FakeParkingItems.reservation_summaries)
    put_gate = _On(FakeParkingItems.put_gate)
    get_gate = _On(FakeParkingItems.get_gate)
    list_gates = _On(FakeParkingItems.list_gates)
    change_gate = _On(FakeParkingItems.change_gate)
    put_subscription = _On(FakeParkingItems.put_subscription)
    subscriptions = _On(FakeParkingItems.subscriptions)
    get_ticket = _On(FakeParkingItems.get_ticket)
    open_ticket_of = _On(FakeParkingItems.open_ticket_of)
    open_tickets = _On(FakeParkingItems.open_tickets)
    get_pass = _On(FakeParkingItems.get_pass)
    pass_put = _On(FakeParkingItems.pass_put)
    gate_case_put = _On(FakeParkingItems.gate_case_put)
    gate_case_items = _On(FakeParkingItems.gate_case_items)
    get_gate_case = _On(FakeParkingItems.get_gate_case)
    gate_case_resolve = _On(FakeParkingItems.gate_case_resolve)
    list_gate_cases = _On(FakeParkingItems.list_gate_cases)
    ticket_open = _On(FakeParkingItems.ticket_open)
    ticket_close = _On(FakeParkingItems.ticket_close)
    ticket_outbox = _On(FakeParkingItems.ticket_outbox)
    exit_payments = _On(FakeParkingItems.exit_payments)
    exit_payment_put = _On(FakeParkingItems.exit_payment_put)
    exit_payment_change = _On(FakeParkingItems.exit_payment_change)
    exit_payment_not_paid = _On(FakeParkingItems.exit_payment_not_paid)
    ticket_status_is = _On(FakeParkingItems.ticket_status_is)
    granule_claim = _On(FakeParkingItems.granule_claim)

    # FakeResources (for ResourceStore.STORE_CALLS)
    put_resource = _On(FakeResources.put_resource)
    get_resource = _On(FakeResources.get_resource)
    owned_resources = _On(FakeResources.owned_resources)

    # FakeDoorItems (for DynamoDoorStore.STORE_CALLS)
    put_door = _On(FakeDoorItems.put_door)
    get_door = _On(FakeDoorItems.get_door)
    get_door_pass_and_ticket = _On(FakeDoorItems.get_door_pass_and_ticket)
    list_doors = _On(FakeDoorItems.list_doors)
    retire_door = _On(FakeDoorItems.retire_door)
    checkin_put = _On(FakeDoorItems.checkin_put)
    get_checkin = _On(FakeDoorItems.get_checkin)
    get_booking_and_checkin = _On(FakeDoorItems.get_booking_and_checkin)
    event_checkins = _On(FakeDoorItems.event_checkins)
    get_door_pass = _On(FakeDoorItems.get_door_pass)
    door_pass_put = _On(FakeDoorItems.door_pass_put)
    checkin_case_put = _On(FakeDoorItems.checkin_case_put)
    checkin_case_items = _On(FakeDoorItems.checkin_case_items)
    get_checkin_case = _On(FakeDoorItems.get_checkin_case)
    checkin_case_resolve = _On(FakeDoorItems.checkin_case_resolve)
    list_checkin_cases = _On(FakeDoorItems.list_checkin_cases)

    # FakeCodes (the core's codes part, adapters/codes_store.py)
    put_code = _On(FakeCodes.put_code)
    get_code = _On(FakeCodes.get_code)
    list_codes = _On(FakeCodes.list_codes)
    end_code = _On(FakeCodes.end_code)
    ensure_allowance = _On(FakeCodes.ensure_allowance)
    ensure_comps = _On(FakeCodes.ensure_comps)
    comps_given = _On(FakeCodes.comps_given)
    count_code_try = _On(FakeCodes.count_code_try)

    # FakeBlocks (the core's blocks part)
    put_block = _On(FakeBlocks.put_block)
    get_block = _On(FakeBlocks.get_block)
    list_blocks = _On(FakeBlocks.list_blocks)
    delete_block = _On(FakeBlocks.delete_block)
    take_from_block = _On(FakeBlocks.take_from_block)


def declared_calls() -> dict[str, type]:
    """The calls ``FakeTableStore`` answers through a fake part: name -> the part's fake."""
    return {name: value.part for name, value in vars(FakeTableStore).items() if isinstance(value, _On)}
