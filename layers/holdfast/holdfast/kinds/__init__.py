"""Inventory kinds: each kind of inventory is one plug-in behind the ``Kind`` interface, chosen
from this registry by the stored ``inventory_kind`` of an offering or a booking's places.

The services, the store and the handlers never branch on the kind: they ask the registry for the
offering's kind and call it. The kinds come from the products (kinds/products.py), discovered when
this package is first imported; docs/architecture.md says how to add one.
"""
from __future__ import annotations

import inspect
from typing import Any

from ..domain import lifecycle, personal_data
from ..domain.booking import Booking
from ..domain.inventory import Places
from ..domain.offering import Offering
from .base import Inventory, Kind

_KINDS: dict[str, Kind] = {}


#: Kind methods the engine calls with the service's clock as ``now=`` (a kind has no clock).
TIMED = ("plan", "replan", "alternatives", "plan_choice")


def register(kind: Kind) -> Kind:
    """Add a kind (a test's toy kind, or a new product); its ``name`` is what offerings store."""
    for method in TIMED:
        # Refused here, at import, rather than as a TypeError on a customer's first hold.
        if "now" not in inspect.signature(getattr(kind, method)).parameters:
            raise TypeError(f"{type(kind).__name__}.{method} must accept now= (the service's clock); see kinds/base.py")
    lifecycle.declare(kind.name, kind.extra_states)
    personal_data.declare(kind.name, kind.personal_details)
    _KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    _KINDS.pop(name, None)
    lifecycle.withdraw(name)
    personal_data.withdraw(name)


def named(name: str) -> Kind:
    try:
        return _KINDS[name]
    except KeyError:
        raise LookupError(f"no inventory kind {name!r} is registered") from None


def of_event(event: Offering | dict[str, Any]) -> Kind:
    return named(str(event["inventory_kind"]))


def offering(item: dict[str, Any]) -> Offering:
    """A stored offering as the typed model, its settings parsed by its kind's ``settings_model``."""
    kind = of_event(item)
    raw = item.get("settings")
    model = kind.settings_model
    return Offering.of(item, model.model_validate(raw or {}) if model is not None else None)


def of_places(places: Places) -> Kind:
    return named(str(places.kind))


def of_booking(booking: Booking) -> Kind:
    return of_places(booking.places)


def for_request(request: Any) -> Kind:
    """The kind an offering's creation request asks for: the first registered kind accepting it."""
    for kind in reversed(list(_KINDS.values())):  # the latest registered is asked first
        if kind.accepts(request):
            return kind
    raise LookupError("no inventory kind accepts this offering")


# The products' packages bring their kinds (kinds/products.py); the core names none of them.
from .products import discover as _discover  # noqa: E402 - the registry above must exist first

_discover()

__all__ = ["Inventory", "Kind", "Offering", "register", "unregister", "named", "of_event",
           "offering", "of_places", "of_booking", "for_request"]
