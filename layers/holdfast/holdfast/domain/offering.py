"""The offering (an event, a schedule of a resource, a car park): what is sold, typed.

Stored as the ``EVENT#<id>/META`` item; ``kinds.offering(item)`` reads it into an ``Offering``
with the kind's own settings parsed by the kind's ``settings_model`` (a kind without settings has
``settings`` None). The kinds and the hold path take an ``Offering``; other readers still take the
stored dict, and ``offering["field"]`` / ``offering.get`` keep dict-style reads working while
they move over (the stored fields, typed).

A plain frozen class, not a pydantic model: every function that reads an offering builds one,
and the item it reads was checked when it was written, so what is left to do is typing DynamoDB's
``Decimal`` numbers. Building a pydantic model for it cost every such function pydantic's import
at its cold start (issue 15).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping

#: The stored fields an ``Offering`` names, with how each is typed and its default (required: none).
_REQUIRED = object()
_FIELDS: dict[str, tuple[Any, Any]] = {
    "event_id": (str, _REQUIRED), "name": (str, ""), "venue": (str, ""), "city": (str, ""),
    "category": (str, ""), "starts_at": (str, ""), "price": (str, _REQUIRED), "currency": (str, _REQUIRED),
    "inventory_kind": (str, _REQUIRED), "capacity": (int, 0), "hold_ttl_seconds": (int, _REQUIRED),
    "payment_mode": (str, "one_stage"), "max_per_booking": (int, _REQUIRED),
    "max_holds_per_customer": (int, None), "high_demand": (bool, False),
}


#: What of an offering a hold decides on that an organizer may change after it is created (PATCH
#: /events/{id}): changing one moves the offering's terms version, which every hold's transaction
#: checks (adapters/sale_gate.py), so a container's copy of the offering never sells on old terms.
HOLD_TERMS = frozenset({"starts_at"})


def _typed(name: str, cast: Any, value: Any) -> Any:
    if value is None or isinstance(value, cast) and not (cast is int and isinstance(value, bool)):
        return value
    if cast is int and not isinstance(value, bool) and int(value) == value:   # DynamoDB's Decimal
        return int(value)
    raise ValueError(f"the offering's {name} is not a {cast.__name__}: {value!r}")


@dataclass(frozen=True)
class Offering:
    event_id: str
    price: str
    currency: str
    inventory_kind: str
    hold_ttl_seconds: int
    max_per_booking: int
    name: str = ""
    venue: str = ""
    city: str = ""
    category: str = ""
    starts_at: str = ""
    capacity: int = 0
    payment_mode: str = "one_stage"
    max_holds_per_customer: int | None = None
    high_demand: bool = False
    #: The kind's settings, parsed by its ``settings_model`` (None for a kind without settings).
    settings: Any = None
    #: Stored fields this class does not name (created_at, catalog_version, ...), kept as stored.
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def version(self) -> int:
        """The catalog version this copy was read at (every change of the offering moves it)."""
        return int(self.extra.get("catalog_version") or 0)

    @classmethod
    def of(cls, item: Mapping[str, Any], settings: Any = None) -> "Offering":
        """The offering of a stored item (ValueError for a missing or mistyped field)."""
        missing = [name for name, (_, default) in _FIELDS.items() if default is _REQUIRED and item.get(name) is None]
        if missing:
            raise ValueError(f"the offering lacks {', '.join(missing)}")
        named = {name: _typed(name, cast, item[name]) for name, (cast, _) in _FIELDS.items() if name in item}
        extra = {key: value for key, value in item.items() if key not in _FIELDS and key != "settings"}
        return cls(**named, settings=settings, extra=extra)

    def __getitem__(self, key: str) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        if key in _NAMED:
            return getattr(self, key)
        return self.extra.get(key, default)

    def __getattr__(self, key: str) -> Any:
        # only reached for names that are not fields: the stored extras, read as attributes too
        if key != "extra" and key in self.extra:
            return self.extra[key]
        raise AttributeError(key)


_NAMED = frozenset(f.name for f in fields(Offering)) - {"extra"}
_MISSING = object()
