"""Ids of events, services, resources and lots (issue 34, finding 4): derived from the
Idempotency-Key with the deployment's salt, so a repeat finds the first object, another deployment
given the same key makes another id, and nobody can compute an id from a key alone."""
from __future__ import annotations

import uuid

import pytest

from holdfast.products.appointments.schemas import ResourceIn, ServiceIn
from holdfast.domain.ids import created_id
from holdfast.products.parking.schemas import LotIn
from holdfast.products.appointments.services import AppointmentService
from holdfast.services.bookings import BookingService
from holdfast.services.catalog import CatalogService
from holdfast.products.parking.services.lots import ParkingService
from tests.support.fake_table import FakeTableStore
from tests.unit.conftest import event_request
from tests.unit.test_parking import KEYS


@pytest.fixture
def store():
    # the table's whole store in memory: the core's fake and each product's fake part
    return FakeTableStore()


RESOURCE = {"name": "Hall A", "timezone": "Europe/Moscow", "opening_hours": {"open": "09:00", "close": "21:00"}}
LOT = {"name": "Central", "spaces": [{"space_id": "A1", "type": "REGULAR"}],
       "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}}


def _creators(store, clock, salt):
    """(what, create(key) -> id) for each kind of object an organizer creates, in one deployment."""
    bookings = BookingService(store, clock)
    catalog = CatalogService(store, clock, 600, id_salt=salt)
    appointments = AppointmentService(store, clock, bookings, 600, id_salt=salt)
    parking = ParkingService(store, clock, bookings, 600, lambda: KEYS, id_salt=salt)
    room = appointments.create_resource(ResourceIn.model_validate(RESOURCE).command())["resource_id"]
    service = ServiceIn.model_validate({"name": "Yoga", "mode": "group", "capacity": 3, "duration_minutes": 60,
                                        "resource_ids": [room], "price": {"value": "700.00", "currency": "RUB"}})
    return {
        "event": lambda key: catalog.create_event(event_request(), key),
        "resource": lambda key: appointments.create_resource(ResourceIn.model_validate(RESOURCE).command(), key),
        "service": lambda key: appointments.create_service(service.command(), key),
        "lot": lambda key: parking.create_lot(LotIn.model_validate(LOT).command(), key),
    }


ID_FIELD = {"event": "event_id", "resource": "resource_id", "service": "service_id", "lot": "lot_id"}


@pytest.mark.parametrize("what", sorted(ID_FIELD))
def test_two_deployments_given_the_same_key_make_different_ids_and_each_repeat_finds_its_own(store, clock, what):
    first = _creators(store, clock, "arn:aws:cloudformation:eu-central-1:1:stack/a/1111")[what]
    second = _creators(store, clock, "arn:aws:cloudformation:eu-central-1:1:stack/b/2222")[what]
    made = first("organizer-key-7")
    assert first("organizer-key-7") == made                       # a repeat returns the same object
    other = second("organizer-key-7")
    assert other[ID_FIELD[what]] != made[ID_FIELD[what]]
    assert second("organizer-key-7") == other


def test_an_id_is_not_the_public_derivation_of_its_key():
    # before: uuid5 of a namespace written in the repository, so the key alone gave the id away
    old_event_namespace = uuid.UUID("5a8f0b8e-4a8c-4d5e-9a55-2f1b7d1c9e01")
    assert created_id("some-stack-id-0123", "event", "k") != str(uuid.uuid5(old_event_namespace, "k"))
    assert created_id("some-stack-id-0123", "event", "k") != created_id("some-stack-id-0123", "lot", "k")
    assert uuid.UUID(created_id("some-stack-id-0123", "event", "k")).version == 4
    with pytest.raises(ValueError):
        created_id("", "event", "k")
    assert created_id("", "event", None) != created_id("", "event", None)   # no key: random
