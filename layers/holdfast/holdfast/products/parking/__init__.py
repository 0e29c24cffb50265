"""Parking: spaces of a lot by the half hour, gates with keys and signed entry passes, drive-up
tickets and the payments made at the exit (a provider payment of its own purpose)."""
from holdfast.kinds.products import Product, register_product

from .kind import Parking

PRODUCT = register_product(Product(
    name="parking", kinds=(Parking(),),
    payment_purposes={"ticket_id": "holdfast.products.parking.services.exit_payments:record_provider_payment"},
    store_parts=("holdfast.products.parking.adapters.store:DynamoParkingStore",),
    view_credentials="holdfast.products.parking.wiring:parking_keys_if_configured",
    owned_items="holdfast.products.parking.adapters.store:ORGANIZER_OWNED",
    messages="holdfast.products.parking.messages:MESSAGES",
    texts="holdfast.products.parking.texts:TEXTS",
    error_texts="holdfast.products.parking.texts:ERROR_MESSAGES",
    listing="holdfast.products.parking.services.lots:listing_items",
    scopes=("parking",),
    route_scopes={
        ("POST", "/lots"): "events:write",
        ("POST", "/lots/{lot_id}/publish"): "events:write",
        # a lot's parking sold with an event's tickets: part of setting up what is sold
        ("POST", "/events/{event_id}/parking"): "events:write",
        # gates, subscriptions and gate cases: the parking operator's
        ("POST", "/lots/{lot_id}/gates"): "parking",
        ("GET", "/lots/{lot_id}/gates"): "parking",
        ("POST", "/lots/{lot_id}/gates/{gate_id}/key"): "parking",
        ("DELETE", "/lots/{lot_id}/gates/{gate_id}"): "parking",
        ("POST", "/lots/{lot_id}/subscriptions"): "parking",
        ("POST", "/admin/gate-cases/{case_id}/resolve"): "parking",
        # a lot's promo codes: like an event's, a say over prices (issue 45)
        ("POST", "/lots/{lot_id}/codes"): "codes",
        ("GET", "/lots/{lot_id}/codes"): "codes",
        ("DELETE", "/lots/{lot_id}/codes/{code}"): "codes",
    },
    creates_offering=frozenset({("POST", "/lots")}),
))
