"""The offering is a typed model with the kind's own settings, and the hold path takes commands
(issue 12): kinds see an ``Offering`` (not the stored dict) and a ``HoldPlaces`` (not BookingIn)."""
from decimal import Decimal

import pytest
from pydantic import ValidationError

from holdfast import kinds
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.offering import Offering
from holdfast.schemas import BookingIn
from tests.support import toy_kind

from .conftest import event_request


@pytest.fixture
def store(fake_store):
    return fake_store


def test_a_stored_offering_reads_back_typed_with_its_kinds_settings(catalog, store):
    toy_kind.register()
    event_id = catalog.create_event(event_request(capacity=6, category="zoned"))["event_id"]
    item = store.get_event(event_id)
    assert item["settings"] == {"front_price_factor": 2}          # stored with the offering, by the kind
    offering = kinds.offering(item)
    assert isinstance(offering, Offering) and isinstance(offering.settings, toy_kind.ZoneSettings)
    assert offering.max_per_booking == 10 and isinstance(offering.max_per_booking, int)   # not a Decimal
    assert offering.settings.front_price_factor == 2
    # A kind without settings stores none: the fingerprint of its offerings is what it was.
    plain = store.get_event(catalog.create_event(event_request())["event_id"])
    assert "settings" not in plain and kinds.offering(plain).settings is None


def test_the_kind_parses_its_settings_and_refuses_bad_ones():
    stored = {"event_id": "e", "price": "10.00", "currency": "RUB", "inventory_kind": toy_kind.register().name,
              "hold_ttl_seconds": Decimal(600), "max_per_booking": Decimal(2), "settings": {"front_price_factor": 3}}
    assert kinds.offering(stored).settings.front_price_factor == 3
    assert kinds.offering(stored)["hold_ttl_seconds"] == 600   # dict-style reads while callers move over
    with pytest.raises(ValidationError):
        kinds.offering({**stored, "settings": {"front_price_factor": 0}})


def test_the_hold_path_hands_kinds_an_offering_and_a_command(catalog, bookings, monkeypatch):
    event = catalog.create_event(event_request(capacity=5))
    kind = kinds.named("counted")
    seen = []
    original = kind.validate

    def spy(offering, request):
        seen.append((type(offering), type(request)))
        return original(offering, request)

    monkeypatch.setattr(kind, "validate", spy)
    bookings.create_booking(event["event_id"], "ann", "k1", BookingIn(quantity=2))
    bookings.create_booking(event["event_id"], "bob", "k1", HoldPlaces(quantity=1))
    assert seen == [(Offering, HoldPlaces), (Offering, HoldPlaces)]


def test_a_command_carries_what_a_kind_adds_to_the_request():
    command = HoldPlaces.of({"quantity": 2, "resource": "room-1"})
    assert command.quantity == 2 and command.resource == "room-1" and command.seats is None
    with pytest.raises(AttributeError):
        command.vehicle
    assert HoldPlaces.of(BookingIn(seats=["A-1", "A-2"])).seats == ("A-1", "A-2")
