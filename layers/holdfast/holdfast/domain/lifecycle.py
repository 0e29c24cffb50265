"""Lifecycles that inventory kinds extend: after CONFIRMED, a kind may declare more states
(parking: CHECKED_IN, NO_SHOW, COMPLETED) and who moves bookings into them.

A declared state is a booking status like the built-in ones: the same item, version, journal and
outbox (services/transitions.py), and its places are either still ``sold`` or back ``available``
(then the move into it is the same claims moved, UNSELL). Only bookings of the declaring kind may
enter it, only from the states it names, and only by the actors it names.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .statuses import SOLD, BookingStatus


class KindStatus(str):
    """A status declared by an inventory kind; reads like a BookingStatus member."""

    @property
    def value(self) -> str:
        return str(self)

    @property
    def name(self) -> str:
        return str(self)


@dataclass(frozen=True)
class ExtraState:
    status: str
    after: frozenset[str]                  # the statuses a booking may enter it from
    actors: frozenset[str]                 # who may move a booking into it
    places: str = "sold"                   # "sold": kept; "available": released into the inventory
    notify: str | None = None              # the outbox event customers hear about, if any
    #: Entering it means the sale's service is rendered (parking: the car left; a no-show whose
    #: money is kept): the settlement receipt is owed then, not at the offering's start.
    renders: bool = False
    #: The customer is using the places now (a car parked inside): the booking is live whatever
    #: the clock says of its window, until a move out of this state (the car left).
    in_use: bool = False


#: status -> (declaring kind, state)
_DECLARED: dict[str, tuple[str, ExtraState]] = {}
#: Has the kinds' registry declare its states; set by whoever composes the application (wiring).
_declare_kinds: Callable[[], None] | None = None


def declare_kinds_with(load: Callable[[], None]) -> None:
    """The built-in kinds declare their states when their registry is loaded. A function that
    never loads it (the notifier, the outbox relay, the webhook) still reads bookings in those
    states, and on Lambda nothing else loads it into that interpreter: ``load`` is called on the
    first question about a status that is not built in, not at init (the kinds are light, but no
    cold start pays for them unasked). The domain knows no kind, so it is handed the loader."""
    global _declare_kinds
    _declare_kinds = load


def _complete(status: str | None = None) -> None:
    global _declare_kinds
    load = _declare_kinds
    if load is not None and (status is None or status not in BookingStatus.__members__):
        _declare_kinds = None
        load()


def declare(kind_name: str, states: tuple[ExtraState, ...]) -> None:
    for state in states:
        if state.status in BookingStatus.__members__:
            raise ValueError(f"{state.status} is a built-in status")
        owner = _DECLARED.get(state.status)
        if owner is not None and owner[0] != kind_name:
            raise ValueError(f"{state.status} is already declared by the kind {owner[0]}")
        if state.places not in ("sold", "available"):
            raise ValueError("a declared state's places are 'sold' or 'available'")
        _DECLARED[state.status] = (kind_name, state)


def declarations() -> dict[str, tuple[ExtraState, ...]]:
    """Every declared state by the kind that declared it (the design notebook draws one lifecycle
    per kind from these, so a new kind's states appear there without code of their own)."""
    _complete()
    found: dict[str, list[ExtraState]] = {}
    for owner, state in _DECLARED.values():
        found.setdefault(owner, []).append(state)
    return {owner: tuple(states) for owner, states in found.items()}


def withdraw(kind_name: str) -> None:
    for status in [status for status, (owner, _) in _DECLARED.items() if owner == kind_name]:
        del _DECLARED[status]


def status_of(name: str) -> BookingStatus | KindStatus:
    _complete(name)
    if name in BookingStatus.__members__:
        return BookingStatus(name)
    if name in _DECLARED:
        return KindStatus(name)
    raise ValueError(f"unknown booking status {name!r}")


def declared(status: str) -> ExtraState | None:
    _complete(str(status))
    entry = _DECLARED.get(str(status))
    return entry[1] if entry else None


def allows(kind_name: str, source: str, target: str, actor: str | None = None) -> bool:
    """Whether a booking of ``kind_name`` may move from ``source`` into the declared ``target``."""
    _complete(str(target))
    entry = _DECLARED.get(str(target))
    if entry is None or entry[0] != kind_name:
        return False
    owner, state = entry
    return str(source) in state.after and (actor is None or actor in state.actors)


def places_state(status: str) -> str | None:
    """"sold" or "available" for a declared status; None for a built-in one."""
    state = declared(status)
    return state.places if state else None


def renders_by_state(kind_name: str) -> bool:
    """Whether ``kind_name`` renders its service by entering a declared state (``renders``) rather
    than at a moment of its offering's (an event's start, a slot's)."""
    _complete()
    return any(owner == kind_name and state.renders for owner, state in _DECLARED.values())


def renders(status: str) -> bool:
    """Whether a booking in ``status`` has had its service rendered by its kind's declaration."""
    state = declared(status)
    return bool(state and state.renders)


def occupies(status: str) -> bool:
    """Whether a booking in ``status`` keeps its places sold (built-in or declared)."""
    state = declared(status)
    return state.places == "sold" if state else status in SOLD


def in_use(status: str) -> bool:
    """Whether a booking in ``status`` is being used right now (a declared state's ``in_use``)."""
    state = declared(status)
    return bool(state and state.in_use)


def given_up_into_kind_state(booking) -> bool:  # noqa: ANN001 - a Booking (domain/booking.py imports this module)
    """Cancelled by its customer into a kind's own state (parking's CANCELLED_NO_REFUND): a
    repeated cancel answers it as it is."""
    state = declared(str(booking.status))
    return state is not None and "customer" in state.actors and state.places == "available"
