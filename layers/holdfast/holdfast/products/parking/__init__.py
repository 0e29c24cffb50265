"""Parking: spaces of a lot by the half hour, gates with keys and signed entry passes, drive-up
tickets and the payments made at the exit (a provider payment of its own purpose)."""
from holdfast.kinds.products import Product, register_product

from .kind import Parking

PRODUCT = register_product(Product(
    name="parking", kinds=(Parking(),),
    payment_purposes={"ticket_id": "holdfast.products.parking.services.exit_payments:record_provider_payment"},
    store_parts=("holdfast.products.parking.adapters.store:ParkingStore",),
    view_credentials="holdfast.products.parking.wiring:parking_keys_if_configured",
    owned_items="holdfast.products.parking.adapters.store:ORGANIZER_OWNED",
    messages="holdfast.products.parking.messages:MESSAGES",
    texts="holdfast.products.parking.texts:TEXTS",
    listing="holdfast.products.parking.services.lots:listing_items",
))
