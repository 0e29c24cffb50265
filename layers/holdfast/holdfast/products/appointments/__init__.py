"""Appointments: slots of a service on its resources' time granules (resources are its own items)."""
from holdfast.kinds.products import Product, register_product

from .kind import Slots

PRODUCT = register_product(Product(name="appointments", kinds=(Slots(),),
                  store_parts=("holdfast.products.appointments.adapters:ResourceStore",),
                  owned_items="holdfast.products.appointments.adapters:ORGANIZER_OWNED",
                  owner_entry="holdfast.products.appointments.adapters:owner_entry",
                  listing="holdfast.products.appointments.services:listing_items",
                  error_texts="holdfast.products.appointments.texts:ERROR_MESSAGES",
                  route_scopes={
                      ("POST", "/resources"): "events:write",
                      ("GET", "/resources"): "events:write",
                      ("POST", "/services"): "events:write",
                      ("POST", "/services/{service_id}/publish"): "events:write",
                      ("GET", "/resources/{resource_id}/day"): "sales:read",
                  },
                  creates_offering=frozenset({("POST", "/services")})))
