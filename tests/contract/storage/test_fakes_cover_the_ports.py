"""Each fake implements every member of its port, with the port's parameters, so a service handed
a fake calls exactly what it calls on the adapter (the cases beside this file check the answers)."""
from __future__ import annotations

import inspect

import pytest

from holdfast import ports
from holdfast.kinds import products
from holdfast.products.appointments import ports as appointment_ports
from holdfast.products.events import ports as events_ports
from holdfast.products.parking import ports as parking_ports
from tests.support import fakes
from tests.support.fake_mail import FakeMailPolicy
from tests.support.fake_store import FakeBookingStore, FakeWaitlistStore
from tests.support.fake_table import FAKE_PARTS, FakeTableStore

#: What the fake store leaves out of Catalog: all but creating and reading an offering (the
#: listing's filters are DynamoDB syntax, tests/support/fake_store.py).
LISTING = set(ports.Catalog.__protocol_attrs__) - {"put_event", "get_event"}

FAKES = {
    ports.SequenceLedger: fakes.FakeGateSyncLedger, ports.RateLimits: fakes.FakeRateLimits,
    ports.SurgeQueue: fakes.FakeSurgeQueue, ports.NotificationLog: fakes.FakeNotificationLog,
    appointment_ports.Resources: fakes.FakeResources, ports.Waitlist: fakes.FakeWaitlist,
    # The booking store's ports whole (HoldStore composes most of them; PaymentStore no longer
    # names a product's items); of Catalog it lacks the listing.
    ports.HoldStore: FakeBookingStore, ports.ReviewQueue: FakeBookingStore, ports.PaymentStore: FakeBookingStore,
    ports.EventCancellationStore: FakeBookingStore, ports.WaitlistStore: FakeWaitlistStore,
    # The products' ports, on the table's store with their fake parts (an instance: the parts'
    # members are reached through it, as on the adapter's BookingStore)
    **{port: FakeTableStore() for port in (
        parking_ports.ParkingStore, parking_ports.RetiredGateCases, parking_ports.GateCaseStore,
        parking_ports.ExitPaymentStore, parking_ports.GatePassStore, appointment_ports.AppointmentStore,
        events_ports.DoorStore, events_ports.CheckinCaseStore)},
    ports.MailPolicy: FakeMailPolicy,
}


@pytest.mark.parametrize("port", FAKES, ids=lambda port: port.__name__)
def test_the_fake_has_every_member_of_its_port_with_the_same_parameters(port):
    fake = FAKES[port]
    name = getattr(fake, "__name__", type(fake).__name__)
    for member in sorted(set(port.__protocol_attrs__) - LISTING):
        assert hasattr(fake, member), f"{name} lacks {port.__name__}.{member}"
        wanted = [p for p in inspect.signature(getattr(port, member)).parameters if p != "self"]
        found = [p for p in inspect.signature(getattr(fake, member)).parameters if p != "self"]
        assert found == wanted, f"{name}.{member}{found} is not {port.__name__}.{member}{wanted}"


def test_every_store_part_of_the_engines_products_has_a_fake():
    # importing holdfast.kinds discovered every package under holdfast/products
    parts = {reference for product in products.registered() for reference in product.store_parts
             if reference.startswith("holdfast.products.")}
    assert parts == set(FAKE_PARTS)


@pytest.mark.parametrize("part", sorted(FAKE_PARTS), ids=lambda reference: reference.rsplit(":", 1)[-1])
def test_every_member_of_a_fake_part_is_called_by_a_contract_case(part):
    """A member no case of this package calls is held to its adapter by nothing (FakeDoorItems had
    ten such members until test_door_items.py)."""
    import re
    from pathlib import Path

    fake = FAKE_PARTS[part]
    members = {name for name, value in vars(fake).items() if callable(value) and not name.startswith("_")}
    here = Path(__file__).parent
    cases = "\n".join(path.read_text(encoding="utf-8") for path in here.glob("*.py") if path.name != Path(__file__).name)
    # called as a member, or named for a shared case to call (cases.py)
    unheld = sorted(name for name in members if not re.search(rf'\.{name}\(|"{name}"', cases))
    assert not unheld, f"{fake.__name__}: no contract case calls {unheld}"


def test_the_table_fake_declares_each_call_a_products_part_declares_and_only_calls_the_store_answers():
    """``FakeTableStore`` answers a product part's ``STORE_CALLS`` (through its own fake of the part
    when the core's fake has no such member), each by a declaration on the class, and declares no
    call the adapter's ``BookingStore`` would not answer (it would fail on DynamoDB)."""
    from holdfast.adapters.dynamo import BookingStore, bind_product_calls
    from tests.support.fake_table import PARTS, declared_calls

    bind_product_calls()
    declared = declared_calls()
    core = FakeWaitlistStore
    for reference, fake in FAKE_PARTS.items():
        for function in products.resolve(reference).STORE_CALLS:
            name = function.__name__
            assert hasattr(core, name) or declared.get(name) is fake, \
                f"{reference}.{name}: FakeTableStore declares no call to {fake.__name__}.{name}"
    assert sorted(name for name in declared if not hasattr(BookingStore, name)) == []
    assert sorted(name for name in declared if hasattr(core, name)) == []   # the core's fake answers those
    assert set(declared.values()) == set(PARTS)
    store = FakeTableStore()
    assert getattr(FakeTableStore, "get_gate").__qualname__ == "FakeParkingItems.get_gate"
    assert store.get_gate.__self__ is store.parts[FAKE_PARTS[
        "holdfast.products.parking.adapters.store:DynamoParkingStore"]]
    assert not hasattr(store, "delete_booking_everywhere")   # nothing undeclared is answered
