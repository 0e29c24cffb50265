"""A fourth product added without touching the engine: tests/example_products/rentals (bikes by
the day, and damage charges paid afterwards) is sold through the core's holds, payments and
expiry, keeps its own items through a store part, and takes the provider payments of its own
purpose. It is the walk-through of docs/architecture.md, "Adding a product"."""
from __future__ import annotations

import subprocess
import sys

import pytest

from holdfast import kinds
from holdfast.domain.errors import InvalidRequest
from holdfast.domain.money import Money
from holdfast.domain.statuses import BookingStatus
from holdfast.kinds import products
from holdfast.schemas import BookingIn
from tests.support.handlers import REPO


@pytest.fixture
def rentals():
    from tests.example_products import rentals   # registers itself, as a product's package does

    return rentals


@pytest.fixture
def bike_day(rentals, store, clock):
    from tests.example_products.rentals.kind import ShopSettings
    from tests.example_products.rentals.services import open_day

    return open_day(store, clock, "Bikes on the embankment", Money.parse("700.00", "RUB"),
                    ShopSettings(bikes=3, max_bikes=2))["event_id"]


def test_discovery_of_a_products_folder_registers_its_kind_and_purpose():
    # a fresh interpreter: discovering the folder is what registers the product, nothing else
    probe = ("from holdfast.kinds import products; products.discover('tests.example_products'); "
             "print(products.of_kind('bikes').name, products.purpose_of({'damage_id': 'd1'}))")
    answer = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True,
                            env={"PYTHONPATH": f"{REPO / 'layers' / 'holdfast'}:{REPO}", "PATH": ""})
    assert answer.stdout.split() == ["rentals", "tests.example_products.rentals.services:record_damage_payment"]


def test_the_core_sells_the_new_kind_hold_pay_confirm_and_refuses_what_it_refuses(bike_day, bookings, payments,
                                                                                   provider, catalog):
    assert kinds.of_event(catalog.store.get_event(bike_day)).name == "bikes"
    with pytest.raises(InvalidRequest) as refused:
        bookings.create_booking(bike_day, "ann", "k0", BookingIn(quantity=3))
    assert refused.value.code == "invalid_bike_count"

    held = bookings.create_booking(bike_day, "ann", "k1", BookingIn(quantity=2)).booking
    assert held.amount == Money.parse("1400.00", "RUB")
    payment_id = payments.start_payment(held.booking_id, "ann", "p1").payment.payment_id
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed"
    assert bookings.store.get_booking(held.booking_id).status is BookingStatus.CONFIRMED
    assert catalog.get_event(bike_day)["counts"] == {"available": 1, "held": 0, "sold": 2}


def test_the_products_words_reach_the_cores_messages(bike_day, bookings, catalog):
    """Its confirmation is the core's, its places said in its own words (rentals/messages.py)."""
    from dataclasses import replace

    from holdfast.services.messages import Site, render

    held = bookings.create_booking(bike_day, "ann", "k1", BookingIn(quantity=2)).booking
    detail = {"type": "booking.confirmed", "booking_id": held.booking_id, "at": held.created_at}
    for language, said in (("en", "2 bikes"), ("ru", "2 велосипеда")):
        message = render("booking.confirmed", detail, replace(held, language=language),
                         catalog.store.get_event(bike_day), Site())
        assert f": {said}\n" in message.text and said in message.html


def test_a_payment_of_the_products_purpose_goes_to_its_handler_and_its_store_part_once(bike_day, store, payments,
                                                                                       provider):
    created = provider.create_payment(amount={"value": "2500.00", "currency": "RUB"}, description="bent wheel",
                                      metadata={"damage_id": "d-42"}, capture=True,
                                      return_url="http://127.0.0.1:3000/done", idempotence_key="dmg-42")
    assert payments.apply_provider_payment(provider.get_payment(created["id"])) == "damage_not_paid"
    provider.pay(created["id"])
    paid = provider.get_payment(created["id"])
    assert payments.apply_provider_payment(paid) == "damage_recorded"
    assert payments.apply_provider_payment(paid) == "damage_already_recorded"     # a repeated notification
    # the core table's store answers the product's own read through the product's part
    assert store.damage_payment("d-42")["payment_id"] == created["id"]


def test_the_registry_refuses_a_second_product_claiming_a_taken_purpose(rentals):
    clash = products.Product(name="scooters", kinds=(), payment_purposes={"damage_id": "x:y"})
    with pytest.raises(ValueError, match="damage_id"):
        products.register_product(clash)
    assert products.of_kind("bikes") is rentals.PRODUCT
