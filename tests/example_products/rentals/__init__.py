"""Bike rental, the worked example of a fourth product: a shop lends interchangeable bikes by the
day, and a bike returned damaged is charged through the provider afterwards. None of it lives in
holdfast/: the kind, the shop's service, the damage charges' storage and their payment purpose all
plug into the core through the product registry.
"""
from holdfast.kinds.products import Product, register_product

from .kind import Bikes

PRODUCT = register_product(Product(
    name="rentals", kinds=(Bikes(),),
    # a provider payment with "damage_id" in its metadata is a damage charge, not a booking's payment
    payment_purposes={"damage_id": "tests.example_products.rentals.services:record_damage_payment"},
    store_parts=("tests.example_products.rentals.adapters:DamageStore",),
    messages="tests.example_products.rentals.messages:MESSAGES",
))
