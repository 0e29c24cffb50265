"""An order's lines as its booking stores them (``kind_details["lines"]``), and the places of
every line as one ``Places`` of the order: each pool and unit id qualified by its offering
(domain/claims.py ``of_offering``), each granule as it is (a granule names its resource)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping

from holdfast.domain import lifecycle
from holdfast.domain.booking import Booking
from holdfast.domain.claims import PART, of_offering
from holdfast.domain.inventory import Places, places_from, stored_places, without
from holdfast.domain.money import Money
from holdfast.domain.statuses import BookingStatus

#: The stored name of the kind (a booking's ``inventory_kind``): "basket", a word the core never uses.
KIND = "basket"


@dataclass(frozen=True)
class Line:
    """One line of an order: an offering, the kind that sells it, what was asked and what it took."""

    line_id: str
    offering_id: str
    kind: str
    amount: Money
    places: Places
    wanted: Mapping[str, Any]
    details: Mapping[str, Any] | None = None
    ends_at: str | None = None
    name: str = ""
    #: The line's own state once its order is confirmed (issue 43, "each line lives its own life"):
    #: a parking line CHECKED_IN at the gate, then COMPLETED; None while it moves with its order.
    status: str | None = None

    def stored(self) -> dict[str, Any]:
        line: dict[str, Any] = {
            "line_id": self.line_id, "offering_id": self.offering_id, "kind": self.kind,
            "amount": self.amount.text, "quantity": self.places.quantity, "wanted": dict(self.wanted),
            "name": self.name,
        }
        line |= stored_places(self.places)
        if self.details:
            line["details"] = dict(self.details)
        if self.ends_at:
            line["ends_at"] = self.ends_at
        if self.status:
            line["status"] = self.status
        return line

    def as_booking(self, order: Booking) -> Booking:
        """The order as a booking of this line alone: what the line's own kind reads (its replan,
        its ``ended``, its view of the places, its tickets and passes). Its id stays the order's
        (a ticket or a pass names the order, the one booking a door or a gate reads); ``PART``
        in its details names the line, so its tickets' ids are its own. A confirmed order's line
        in a state of its own (a car inside) is in that state."""
        status = order.status
        if self.status and order.status is BookingStatus.CONFIRMED:
            status = lifecycle.status_of(self.status)
        return replace(order, event_id=self.offering_id, places=self.places, amount=self.amount,
                       kind_details={**(self.details or {}), PART: self.line_id}, ends_at=self.ends_at,
                       status=status)


def with_line(order: Booking, part: Booking) -> Booking:
    """The order with its line of ``part``'s offering as ``part`` (one of ``as_booking``'s views,
    changed by a door or a gate: tickets checked in, a car inside) stored back into its details.
    A line of a confirmed order that leaves a state keeping its places sold for one that does not
    (REFUNDED, a car gone: COMPLETED, a kept no-show) is no longer among the order's places: the
    write that records it gives them back (``transitions.apply_part``), and a later cancel of the
    order moves only the places it still has."""
    stored_lines, places = [], order.places
    for stored in (order.kind_details or {}).get("lines") or ():
        if stored["offering_id"] == part.event_id:
            was = str(stored.get("status") or order.status)
            if order.status is BookingStatus.CONFIRMED and lifecycle.occupies(was) \
                    and not lifecycle.occupies(str(part.status)):
                line = line_of(stored, order.amount.currency)
                places = without(places, merged([(line.offering_id, line.places)]))
            stored = dict(stored)
            details = {key: value for key, value in (part.kind_details or {}).items() if key != PART}
            if details:
                stored["details"] = details
            else:
                stored.pop("details", None)
            if part.status != order.status:
                stored["status"] = str(part.status)
        stored_lines.append(stored)
    return replace(order, kind_details={**(order.kind_details or {}), "lines": stored_lines}, places=places)


def line_of(stored: Mapping[str, Any], currency: str) -> Line:
    places = places_from(str(stored["kind"]), int(stored["quantity"]), stored)
    return Line(line_id=str(stored["line_id"]), offering_id=str(stored["offering_id"]), kind=str(stored["kind"]),
                amount=Money.stored(stored["amount"], currency), places=places, wanted=dict(stored.get("wanted") or {}),
                details=stored.get("details"), ends_at=stored.get("ends_at"), name=str(stored.get("name") or ""),
                status=stored.get("status"))


def lines_of(booking: Booking) -> tuple[Line, ...]:
    """The lines of an order's booking (none for any other booking)."""
    return tuple(line_of(stored, booking.amount.currency) for stored in (booking.kind_details or {}).get("lines") or ())


def is_order(booking: Booking) -> bool:
    return str(booking.places.kind) == KIND


def merged(lines: Iterable[tuple[str, Places]]) -> Places:
    """The order's places: every line's, each pool and unit qualified by its offering."""
    pools, units, granules, quantity = [], [], [], 0
    for offering, places in lines:
        pools += [(of_offering(offering, pool), count) for pool, count in places.pools]
        units += [of_offering(offering, unit) for unit in places.units]
        granules += list(places.granules)
        quantity += places.quantity
    return Places(KIND, quantity, pools=tuple(pools), units=tuple(units), granules=tuple(granules))


def total(amounts: Iterable[Money], currency: str) -> Money:
    value = sum((amount.value for amount in amounts), Money.parse("1", currency).value * 0)
    return Money(value, currency)
