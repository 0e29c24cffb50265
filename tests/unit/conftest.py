"""Service tests with a controllable clock and an in-memory provider, on moto's in-process
DynamoDB (single-threaded here, so its writes are exact) or, where a module overrides ``store``
with ``fake_store``, on the in-memory store of tests/support/fake_store.py (held to the adapter by
tests/contract/storage/). In a module on the in-memory store, a case marked ``on_moto`` runs on
moto's (``store_for``): the mark says why (a race, the listing's filter expressions, a product's
storage)."""
from __future__ import annotations

import os
import random
from datetime import datetime, timedelta, timezone

import boto3
import pytest
from moto import mock_aws

from holdfast.adapters.dynamo import BookingStore
from holdfast.products.events.commands import CreateEvent
from holdfast.products.events.schemas import EventIn
from holdfast.services.bookings import BookingService
from holdfast.services.catalog import CatalogService
from holdfast.services.payments import PaymentService
from holdfast.services.reconciliation import ReconciliationService
from holdfast.services.reviews import ReviewService
from tests.support.fake_provider import FakeProvider
from tests.support.fake_store import FakeBookingStore
from tests.support.template import create_bookings_table


class ManualClock:
    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def aws():
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-central-1")
    with mock_aws():
        yield


def pytest_configure(config):
    config.addinivalue_line("markers", "on_moto(reason): this case of a module on the in-memory store runs on "
                                       "moto's DynamoDB, for the reason given")


@pytest.fixture
def moto_store(aws):
    client = boto3.client("dynamodb", region_name="eu-central-1")
    create_bookings_table(client, "unit-bookings")
    return BookingStore("unit-bookings", client)


@pytest.fixture
def store(moto_store):
    return moto_store


@pytest.fixture
def fake_store():
    return FakeBookingStore()


def store_for(request, fake):
    """For a module's ``store`` fixture: ``fake``, or moto's store where the case is marked ``on_moto``."""
    marker = request.node.get_closest_marker("on_moto")
    if marker is not None:
        assert marker.args, f"{request.node.name}: on_moto needs its reason"
        return request.getfixturevalue("moto_store")
    return fake


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def scheduled():
    return []


@pytest.fixture
def provider(clock):
    return FakeProvider(clock)   # its times on the services' clock


@pytest.fixture
def catalog(store, clock):
    return CatalogService(store, clock, 600, id_salt="tests-deployment-salt")


@pytest.fixture
def bookings(store, clock, scheduled):
    return BookingService(store, clock, lambda booking_id, at: scheduled.append((booking_id, at)), rng=random.Random(7))


@pytest.fixture
def payments(store, provider, clock, bookings):
    return PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done")


def event_request(**overrides) -> CreateEvent:
    body = {
        "name": "Club night", "venue": "Hall", "city": "Moscow", "category": "club",
        "starts_at": "2030-02-01T20:00:00Z", "price": {"value": "1500.00", "currency": "RUB"}, "capacity": 10,
    }
    body.update(overrides)
    return EventIn.model_validate(body).command()


@pytest.fixture
def ga_event(catalog):
    return catalog.create_event(event_request())


@pytest.fixture
def seated_event(catalog):
    return catalog.create_event(event_request(capacity=None, seat_map={"rows": [{"name": "A", "seats": 4}]}))


@pytest.fixture
def reconciler(store, provider, payments, clock):
    return ReconciliationService(store, provider, payments, clock, schedule_seconds=(30, 60, 3600),
                                 limit_seconds=24 * 3600, key_retention_seconds=24 * 3600)


@pytest.fixture
def reviews(store, payments, clock):
    return ReviewService(store, payments, clock)
