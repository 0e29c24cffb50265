"""The ``order`` kind: a booking whose places are its lines' places, each line sold by its own
kind. The engine moves the order like any booking (held, paid, confirmed, expired, cancelled,
refunded, retaken by a late payment) in one transaction over every line's claims, so no line is
ever confirmed, released or retaken without the others. What a line's kind knows (whether its
time has passed, where its places are to be found again) it answers for its line here."""
from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime
from typing import Any

from holdfast import kinds
from holdfast.domain.booking import Booking
from holdfast.domain.codes import keep_uses, without_uses
from holdfast.domain.errors import InvalidRequest
from holdfast.domain.inventory import Places
from holdfast.domain.money import Money
from holdfast.domain.offering import Offering
from holdfast.domain.statuses import BookingStatus
from holdfast.kinds.base import Inventory, Kind
from holdfast.ports import InventoryReads

from .lines import KIND, lines_of, merged, with_line


class OrderKind(Kind):
    name = KIND
    label = "order"

    def accepts(self, request: Any) -> bool:
        return False   # no offering is an order: an order is made of offerings (services/orders.py)

    def inventory(self, request: Any) -> Inventory:
        raise InvalidRequest("An order is not an offering.", code="not_an_offering")

    def validate(self, event: Offering, request: Any) -> dict[str, Any]:
        raise InvalidRequest("An order is not an offering.", code="not_an_offering")

    def plan(self, store: InventoryReads, event: Offering, wanted: dict[str, Any], rng: random.Random,
             attempt: int, *, now: datetime) -> Places:
        raise InvalidRequest("An order is not an offering.", code="not_an_offering")

    def replan(self, store: InventoryReads, booking: Booking, rng: random.Random | None = None, *,
               now: datetime) -> Places | None:
        """Every line's places again, each as its own kind finds them, or None when one cannot be
        had: a late payment retakes the whole order or nothing."""
        found = []
        for line in lines_of(booking):
            own = replace(line.as_booking(booking), places=without_uses(line.places))
            places = kinds.named(line.kind).replan(store, own, rng, now=now)
            if places is None:
                return None
            found.append((line.offering_id, keep_uses(places, line.places)))   # a line's code uses too
        return merged(found)

    def ended(self, booking: Booking, now: datetime) -> bool:
        """The order is past selling to a late payment once any of its lines is."""
        return any(kinds.named(line.kind).ended(line.as_booking(booking), now) for line in lines_of(booking))

    def kept_on_cancel(self, offering_of: Any, booking: Booking, now: datetime) -> list[tuple[str, Money]]:
        """The lines whose offering's policy keeps their money if the order is cancelled now (a lot
        that refunds nothing this close to the window), each asked of its own kind. A line given
        back on its own already (a refunded no-show) is no longer in the order's amount: it is
        neither kept nor refunded again."""
        kept = []
        for line in lines_of(booking):
            if line.status == BookingStatus.REFUNDED.value:
                continue
            offering = offering_of(line.offering_id)
            kind = kinds.named(line.kind)
            if offering is not None and kind.cancel_without_refund(offering, line.as_booking(booking), now):
                kept.append((line.line_id, line.amount))
        return kept

    # ------------------------------------------ after confirmation each line lives its own life
    def part(self, booking: Booking, offering_id: str) -> Booking | None:
        """The order's line of ``offering_id`` as a booking of that line alone: what the
        offering's door or gate checks (its tickets, its entry pass, its state)."""
        line = next((line for line in lines_of(booking) if line.offering_id == offering_id), None)
        return line.as_booking(booking) if line is not None else None

    def with_part(self, booking: Booking, part: Booking) -> Booking:
        return with_line(booking, part)

    def view_extras(self, booking: Booking, credentials: Any) -> dict[str, Any]:
        """The order's tickets all together, each naming its line (``line_id``), and its parking
        pass with the line it belongs to (``pass_line``): what a page or a message shows of a
        booking's tickets and pass, and what the order's view puts on each line."""
        tickets: list[dict[str, Any]] = []
        view: dict[str, Any] = {}
        for line in lines_of(booking):
            extras = kinds.named(line.kind).view_extras(line.as_booking(booking), _line_credentials(credentials, line.kind))
            tickets += [{**ticket, "line_id": line.line_id} for ticket in extras.get("tickets") or ()]
            if extras.get("entry_token") and "entry_token" not in view:
                view |= {"entry_token": extras["entry_token"], "pass_line": line.line_id}
        if tickets:
            view["tickets"] = tickets
        return view

    def pass_token(self, booking: Booking, credentials: Any) -> str | None:
        """The pass a gate scans: its parking line's (an order has one line per offering)."""
        for line in lines_of(booking):
            token = kinds.named(line.kind).pass_token(line.as_booking(booking), _line_credentials(credentials, line.kind))
            if token:
                return token
        return None

    def passes(self, booking: Booking, credentials: Any) -> dict[str, str]:
        found: dict[str, str] = {}
        for line in lines_of(booking):
            found |= kinds.named(line.kind).passes(line.as_booking(booking), _line_credentials(credentials, line.kind))
        return found

    def admitted(self, booking: Booking) -> int:
        """Holders already let in through any line's doors: the order can no longer be given up."""
        return sum(kinds.named(line.kind).admitted(line.as_booking(booking)) for line in lines_of(booking))

    def price(self, event: Offering, places: Places) -> Money:
        raise InvalidRequest("An order is priced by its lines.", code="not_an_offering")

    def counts(self, store: InventoryReads, event_id: str, consistent: bool = True) -> dict[str, int]:
        raise InvalidRequest("An order has no counts of its own.", code="not_an_offering")

    def describe_places(self, places: Places) -> dict[str, Any]:
        return {"kind": KIND, "quantity": places.quantity}


def _line_credentials(credentials: Any, kind: str) -> Any:
    """What a line's kind signs with: the orders' view credentials look it up by kind
    (wiring.py ``LineCredentials``), each kind's product's own."""
    of = getattr(credentials, "of", None)
    return of(kind) if of is not None else None
