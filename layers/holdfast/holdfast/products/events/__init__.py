"""Event places: general admission counted in pool shards, or a seat map of named seats."""
from holdfast.kinds.products import Product, register_product

from .general_admission import GeneralAdmission
from .seat_map import SeatMap

PRODUCT = register_product(Product(
    name="events", kinds=(SeatMap(), GeneralAdmission()),
    view_credentials="holdfast.products.events.wiring:ticket_signer_if_configured",
    store_parts=("holdfast.products.events.adapters.doors_store:DynamoDoorStore",),
    texts="holdfast.products.events.texts:TEXTS",
    route_scopes={
        ("POST", "/events/{event_id}/doors"): "doors",
        ("DELETE", "/events/{event_id}/doors/{door_id}"): "doors",
        ("GET", "/events/{event_id}/checkins"): "doors",
    },
    exports={"checkins": "holdfast.products.events.services.doors:CHECKIN_EXPORT"},
))
