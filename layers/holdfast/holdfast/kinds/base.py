"""The interface every inventory kind implements (the inventory reads it may use are a port:
holdfast/ports.py ``InventoryReads``).

A kind decides everything that differs between products; the engine around it (holds, payments,
expiry, reconciliation, waitlist, journal, outbox) is the same for all of them. What a booking
occupies is ``Places``: counts taken from counters (``pools``) and/or named units (``units``); the
store turns them into claims, one conditional change per item, whatever the kind.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..domain.booking import Booking
from ..domain.commands import HoldPlaces
from ..domain.lifecycle import ExtraState
from ..domain.inventory import Places
from ..domain.money import Money
from ..domain.offering import Offering
from ..ports import InventoryReads

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclass(frozen=True)
class Inventory:
    """What creating an offering writes: its capacity, counter sizes and unit ids."""

    capacity: int
    pool_sizes: list[int] | None = None
    unit_ids: list[str] | None = None
    #: (unit id, price category) of every unit, when the offering's units have price categories
    #: (a seat map's seats): what the catalog stores as ``seat_categories``.
    unit_categories: tuple[tuple[str, str], ...] | None = None


class Kind:
    """One inventory kind. Subclasses set ``name`` (stored) and ``label`` (the public
    ``inventory`` field) and implement the methods below."""

    name: str = ""
    label: str = ""
    #: States after CONFIRMED this kind adds to the booking lifecycle (domain/lifecycle.py).
    extra_states: tuple[ExtraState, ...] = ()
    #: The kind's own offering settings (a pydantic model), or None. Its fields are taken from the
    #: creation request, stored with the offering, and parsed back into ``Offering.settings``.
    #: A kind may make it a property that imports its model, so that the functions that never
    #: read such an offering do not import pydantic for it (the built-in kinds do).
    settings_model: type[BaseModel] | None = None

    #: How an offering of this kind is paid when its creation request does not say: ``one_stage``
    #: (the provider takes the money at once) or ``two_stage`` (authorised, captured once the places
    #: are secured). Appointments default to two-stage: a slot is more often lost to a race.
    payment_mode: str = "one_stage"
    #: The names in ``booking_details`` (and in journal entries' ids) that name a person (a plate):
    #: erased with the booking's other personal fields once it has ended (domain/personal_data.py).
    personal_details: tuple[str, ...] = ()
    #: Whether a confirmed booking of this kind may be exchanged for other places in one write
    #: (services/exchange.py); a kind whose places are changed by cancelling and booking again
    #: leaves it False.
    exchangeable: bool = False
    #: Whether ``alternatives`` can offer anything: what a held booking is told about a late payment.
    offers_alternatives: bool = False

    # ------------------------------------------------------------------------ creation
    def accepts(self, request: Any) -> bool:
        """Whether an offering's creation request is for this kind."""
        raise NotImplementedError

    def inventory(self, request: Any) -> Inventory:
        raise NotImplementedError

    def settings_of(self, request: Any) -> dict[str, Any] | None:
        """The stored form of the kind's settings for a creation request (None without a model)."""
        if self.settings_model is None:
            return None
        names = self.settings_model.model_fields
        picked = {name: getattr(request, name) for name in names if getattr(request, name, None) is not None}
        return self.settings_model.model_validate(picked).model_dump(mode="json")

    # --------------------------------------------------------------------------- holds
    def validate(self, event: Offering, request: HoldPlaces) -> dict[str, Any]:
        """What the customer wants, checked (InvalidRequest otherwise): the request's fingerprint
        and the input of ``plan``."""
        raise NotImplementedError

    def check_time(self, event: Offering, wanted: dict[str, Any], now: datetime) -> None:
        """Refuse what the moment makes impossible (an appointment that has already begun). Asked
        after a repeated request was answered from its first result, so a replay never fails here."""

    def plan(self, store: InventoryReads, event: Offering, wanted: dict[str, Any], rng: random.Random,
             attempt: int, *, now: datetime) -> Places:
        """The places to claim, best first, from a fresh read (SoldOut/SeatsUnavailable otherwise).
        ``attempt`` grows each time a plan's claims lost a race, so a kind may widen its choice.
        ``now`` is the service's clock (a kind has none of its own): what has begun, what is near."""
        raise NotImplementedError

    def replan(self, store: InventoryReads, booking: Booking, rng: random.Random | None = None, *,
               now: datetime) -> Places | None:
        """Places for a late payment whose hold was released, or None when they are gone or
        ``ended`` says their time is over: a retake never sells what has already begun."""
        raise NotImplementedError

    def ended(self, booking: Booking, now: datetime) -> bool:
        """Whether, at ``now``, the booking's places are past selling to a late payment (a slot
        that has begun, a parking window that is over). Such a payment is never retaken or sent
        to an operator for its places: it gets an alternative in the future or its money back."""
        return False

    def alternatives(self, store: InventoryReads, event: Offering, booking: Booking, *,
                     now: datetime) -> list[dict[str, Any]]:
        """Free options, nearest first and in the kind's own terms (e.g. ``starts_at`` and
        ``resource_id``), for a late payment whose places are gone. Each must cost what the booking
        costs: the customer moves to one with the same payment. ``[]`` (the default) means the kind
        offers none, and the late payment is given back as before."""
        return []

    def plan_choice(self, store: InventoryReads, event: Offering, booking: Booking,
                    choice: dict[str, Any], *, now: datetime) -> Places:
        """The places of an alternative the customer (or an operator) chose, from a fresh read:
        ``InvalidRequest`` for fields the kind does not understand, ``SeatsUnavailable``/``SoldOut``
        when it is no longer free. Only called for a kind that offered alternatives."""
        from ..domain.errors import InvalidRequest

        raise InvalidRequest("This booking's inventory offers no alternatives.", code="no_alternatives")

    def normalise_choice(self, choice: dict[str, Any]) -> dict[str, Any]:
        """A chosen alternative in the form the kind writes its offers in, so that a choice is
        compared with the offered ones by meaning, not spelling (slots: one instant written in
        another UTC offset is the same time). Default: as given. Never raises: what cannot be
        read is left as it is, and fails the comparison or ``plan_choice``."""
        return dict(choice)

    def booking_details(self, event: Offering, wanted: dict[str, Any], places: Places) -> dict[str, Any] | None:
        """What the booking keeps of the request beyond its places (``Booking.kind_details``)."""
        return None

    def cancel_without_refund(self, event: Offering, booking: Booking, now: datetime) -> str | None:
        """The declared state a confirmed booking given up by its customer enters when the
        offering's policy gives nothing back (None: the money goes back, REFUND_PENDING)."""
        return None

    def kept_on_cancel(self, offering_of: Any, booking: Booking, now: datetime) -> list[tuple[str, Money]]:
        """The parts of a confirmed booking whose own offering's policy keeps the money when its
        customer cancels now, as (part, amount): an order's lines (products/orders). The refund is
        then the rest. ``offering_of(id)`` reads an offering (None when gone). None by default."""
        return []

    def starts_at(self, event: Any, booking: Booking) -> str | None:
        """When what the booking bought begins, for a cancellation policy's tiers: the offering's
        start by default (an event's); a kind sold by the slot reads the booking's own slot."""
        return (event or {}).get("starts_at")

    def refund_until(self, event: Offering, booking: Booking) -> str | None:
        """The moment after which a cancellation of the booking gives nothing back (None: no such
        moment; ``cancel_without_refund`` decides)."""
        return None

    def refund_on_timer(self, event: Offering, booking: Booking) -> bool:
        """Whether the kind's timer gives the money back instead of entering its state."""
        return False

    def view_extras(self, booking: Booking, credentials: Any) -> dict[str, Any]:
        """More of the booking's view made with ``credentials`` (wiring's per-kind keys); none by default."""
        return {}

    def pass_token(self, booking: Booking, credentials: Any) -> str | None:
        """The signed pass a gate scans for this booking, made with ``credentials``, while the
        booking admits its holder (None: the kind issues no pass, or not in this state)."""
        return None

    def hold_price(self, event: Offering, places: Places, wanted: dict[str, Any]) -> Money:
        """What a new hold costs, given the validated request too: by default its places' price. A
        kind that bills what was asked for rather than what it claimed (a parking window to the
        minute, claiming whole granules) says so here."""
        return self.price(event, places)

    def reissue(self, before: Booking, details: dict[str, Any] | None) -> dict[str, Any] | None:
        """The kind details of a booking exchanged from ``before`` (``details``: what the new places
        keep): a kind whose credentials are derived from the booking voids the old ones and issues
        new ones here. None issued by default."""
        return details

    def admitted(self, booking: Booking) -> int:
        """How many of the booking's holders were let in already (an event's tickets checked in at
        its doors): its customer can no longer give the booking up. None by default."""
        return 0

    #: Whether a confirmed booking of this kind may be given to another customer (issue 45,
    #: domain/transfers.py): the kind issues its credentials anew under the next
    #: ``credential_issue`` and names those shown so far (``credential_ids``). False by default.
    transferable: bool = False

    def credential_ids(self, booking: Booking) -> list[str]:
        """The ids of the credentials the booking shows now (an event's tickets), voided when it
        is transferred. None by default."""
        return []

    def passes(self, booking: Booking, credentials: Any) -> dict[str, str]:
        """The signed passes of a booking that admits several holders, one each, by their ids
        (none by default, nor while the booking admits nobody)."""
        return {}

    def part(self, booking: Booking, offering_id: str) -> Booking | None:
        """The booking as the offering ``offering_id`` sees it: the part a door or a gate of that
        offering checks (an order's line of it, products/orders), or None when the booking has
        no places there. By default the booking itself, for its own offering."""
        return booking if booking.event_id == offering_id else None

    def with_part(self, booking: Booking, part: Booking) -> Booking:
        """The booking with ``part`` (from ``part``, its kind details or its own state changed by
        a door or a gate) put back: by default the part is the booking. A part that leaves a state
        that keeps its places sold for one that does not (an order's line refunded, its car gone)
        leaves the booking's ``places`` too, and ``transitions.apply_part`` gives them back in the
        same write."""
        return part

    def price(self, event: Offering, places: Places) -> Money:
        """What the places actually allocated cost."""
        return Money.parse(event.price, event.currency).times(places.quantity)

    # ---------------------------------------------------------------------- availability
    def counts(self, store: InventoryReads, event_id: str, consistent: bool = True) -> dict[str, int]:
        """available / held / sold over the whole offering."""
        raise NotImplementedError

    def zone_counts(self, store: InventoryReads, event: Any) -> dict[str, dict[str, int]]:
        """Each general-admission zone's available / held / sold, by zone id. Default: none (a
        kind whose offerings have no zones)."""
        return {}

    def largest_hold(self, store: InventoryReads, event_id: str) -> int:
        """The most places one hold can take now (a waitlist offers its head no more). Default:
        every available place, for kinds whose plan may combine counters or scattered units."""
        return self.counts(store, event_id)["available"]

    def unit_states(self, store: InventoryReads, event_id: str) -> dict[str, str] | None:
        """Every named unit and its state (a seat map), or None for a kind without one."""
        return None

    def describe_places(self, places: Places) -> dict[str, Any]:
        return {"kind": str(places.kind), "quantity": places.quantity}

    def waitlist_request(self, quantity: int) -> dict[str, Any]:
        """The hold request a waitlist offer of ``quantity`` places makes for a customer."""
        return {"quantity": quantity}


def checked_quantity(event: Offering | dict[str, Any], quantity: int | None) -> int:
    """A requested count of places within the offering's per-booking limit (InvalidRequest otherwise)."""
    from ..domain.errors import InvalidRequest

    limit = int(event["max_per_booking"])
    if quantity is None or quantity < 1 or quantity > limit:
        raise InvalidRequest(f"quantity must be between 1 and {limit}.", code="invalid_quantity", max=limit)
    return quantity
