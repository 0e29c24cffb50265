"""The offering (an event, a schedule of a resource, a car park): what is sold, as a typed model.

Stored as the ``EVENT#<id>/META`` item; ``kinds.offering(item)`` reads it into an ``Offering``
with the kind's own settings parsed by the kind's ``settings_model`` (a kind without settings has
``settings`` None). The kinds and the hold path take an ``Offering``; other readers still take the
stored dict, and ``offering["field"]`` / ``offering.get`` keep dict-style reads working while
they move over (the stored fields, typed).
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Offering(BaseModel):
    # Stored fields this model does not name yet (created_at, catalog_version, ...) are kept.
    model_config = ConfigDict(extra="allow", frozen=True, arbitrary_types_allowed=True)

    event_id: str
    name: str = ""
    venue: str = ""
    city: str = ""
    category: str = ""
    starts_at: str = ""
    price: str
    currency: str
    inventory_kind: str
    capacity: int = 0
    hold_ttl_seconds: int
    payment_mode: str = "one_stage"
    max_per_booking: int
    max_holds_per_customer: int | None = None
    high_demand: bool = False
    #: The kind's settings, parsed by its ``settings_model`` (None for a kind without settings).
    settings: BaseModel | None = None

    def __getitem__(self, key: str) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        if key in type(self).model_fields:
            return getattr(self, key)
        return (self.model_extra or {}).get(key, default)


_MISSING = object()
