"""Each fake implements every member of its port, with the port's parameters, so a service handed
a fake calls exactly what it calls on the adapter (the cases beside this file check the answers)."""
from __future__ import annotations

import inspect

import pytest

from holdfast import ports
from holdfast.products.appointments import ports as appointment_ports
from holdfast.products.parking import ports as parking_ports
from tests.support import fakes
from tests.support.fake_mail import FakeMailPolicy
from tests.support.fake_store import FakeBookingStore, FakeWaitlistStore

FAKES = {
    parking_ports.GateSyncLedger: fakes.FakeGateSyncLedger, ports.RateLimits: fakes.FakeRateLimits,
    ports.SurgeQueue: fakes.FakeSurgeQueue, ports.NotificationLog: fakes.FakeNotificationLog,
    appointment_ports.Resources: fakes.FakeResources, ports.Waitlist: fakes.FakeWaitlist,
    # The booking store's ports whole (HoldStore composes most of them; PaymentStore no longer
    # names a product's items); of Catalog it lacks the listing (tests/support/fake_store.py says why).
    ports.HoldStore: FakeBookingStore, ports.ReviewQueue: FakeBookingStore, ports.PaymentStore: FakeBookingStore,
    ports.EventCancellationStore: FakeBookingStore, ports.WaitlistStore: FakeWaitlistStore,
    ports.MailPolicy: FakeMailPolicy,
}


@pytest.mark.parametrize("port", FAKES, ids=lambda port: port.__name__)
def test_the_fake_has_every_member_of_its_port_with_the_same_parameters(port):
    fake = FAKES[port]
    for member in sorted(port.__protocol_attrs__):
        assert hasattr(fake, member), f"{fake.__name__} lacks {port.__name__}.{member}"
        wanted = [p for p in inspect.signature(getattr(port, member)).parameters if p != "self"]
        found = [p for p in inspect.signature(getattr(fake, member)).parameters if p != "self"]
        assert found == wanted, f"{fake.__name__}.{member}{found} is not {port.__name__}.{member}{wanted}"
