"""Discount and access codes (issue 45): what a code is, whether it may be used now on what a hold
asks for, what it takes off, and the claims a use makes.

A use of a code is a claim like a place: one count taken from the code's own counter (its
``max_uses``) and, when the code limits each customer, one from that customer's allowance of it,
both pool-shaped counter items (capacity/available/held/sold) changed in the hold's own
transaction. So a use is held with the hold, sold with its payment, and given back by the very
move that releases the places when the hold lapses or is cancelled: the engine's one release
path, with no counter of its own to keep in step.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Iterable, Mapping

from ..clock import parse_iso
from .claims import OFFERING_SEPARATOR
from .errors import InvalidRequest
from .inventory import Places
from .money import Money

KINDS = ("percent", "fixed", "access")
#: What a code may be spelt with; kept upper-case, so codes are case-insensitive.
CODE_PATTERN = re.compile(r"^[A-Z0-9][A-Z0-9_-]{2,31}$")
#: The counter of a code with no ``max_uses``: a count no sale reaches, so a use is still counted.
UNLIMITED = 1_000_000_000
#: Tries of codes a customer may make a minute (a right or a wrong one alike): codes are not to be guessed.
TRIES_PER_MINUTE = 10
#: What every pool id of a code's counters starts with (never a pool id of places: POOL#nnn).
POOL_PREFIX = "CODE#"
CENT = Decimal("0.01")


class InvalidCode(InvalidRequest):
    """One answer for every code that cannot be used: unknown, ended, not yet or no longer valid,
    used up, or not for what is asked. Codes are not to be told apart from outside."""

    def __init__(self) -> None:
        super().__init__("This code cannot be used.", code="invalid_code")


def normalise(code: Any) -> str:
    """The code as stored: trimmed, upper-case. Empty when it could never be a code."""
    text = str(code or "").strip().upper()
    return text if CODE_PATTERN.match(text) else ""


@dataclass(frozen=True)
class Code:
    code: str
    #: percent, fixed or access (the request's "kind")
    form: str
    percent: Decimal | None = None
    amount: Money | None = None
    max_uses: int | None = None
    per_customer: int | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    price_categories: tuple[str, ...] = ()
    ticket_types: tuple[str, ...] = ()
    #: What an access code unlocks besides ticket types: hidden zones.
    zones: tuple[str, ...] = ()
    ended: bool = False

    def usable(self, now: datetime) -> bool:
        if self.ended:
            return False
        if self.valid_from is not None and now < self.valid_from:
            return False
        return self.valid_to is None or now < self.valid_to

    def applies(self, priced: Iterable[Mapping[str, Any]]) -> bool:
        """Whether the code is for every place asked: each priced line's category and ticket type
        among the code's (a list the code does not set takes any; a code that names some is for
        no place that is not priced by them)."""
        if self.form == "access":
            return True   # its lists name what it unlocks, not what it is for
        priced = list(priced)
        if (self.price_categories or self.ticket_types) and not priced:
            return False
        for line in priced:
            if self.price_categories and line.get("price_category") not in self.price_categories:
                return False
            if self.ticket_types and line.get("ticket_type") not in self.ticket_types:
                return False
        return True

    def unlocks(self, hidden: tuple[str, str]) -> bool:
        """Whether an access code names a hidden ticket type or zone (``("zone" | "ticket_type", id)``)."""
        what, name = hidden
        return self.form == "access" and name in (self.zones if what == "zone" else self.ticket_types)

    def discounted(self, amount: Money, quantity: int) -> Money:
        """What the places cost with the code: a percent off the whole, or a fixed amount off
        each place, never below zero; an access code takes nothing off."""
        if self.form == "percent" and self.percent is not None:
            off = (amount.value * self.percent / Decimal(100)).quantize(CENT, rounding=ROUND_HALF_UP)
        elif self.form == "fixed" and self.amount is not None:
            off = self.amount.value * quantity
        else:
            return amount
        # never below nothing: what costs nothing is a comp, confirmed without a payment
        return Money(max(amount.value - off, Decimal("0.00")), amount.currency)


#: The counter of the places an offering gave away (comps): every place of a booking whose amount
#: is zero takes one count of it in the hold's own transaction, a claim like a code's use, so the
#: count is sold with the booking, given back when it is released, and read as ``comps`` in the
#: sales view. ``~`` is never in a code (``CODE_PATTERN``), so it names no code's counter.
COMPS_POOL = f"{POOL_PREFIX}~COMPS"


def comp_claims(places: Places) -> tuple[tuple[str, int], ...]:
    """The count a comp of these places takes from its offering's counter of comps."""
    return ((COMPS_POOL, places.quantity),) if places.quantity else ()


def code_pool(code: str) -> str:
    """The pool id of a code's own counter."""
    return f"{POOL_PREFIX}{code}"


def allowance_pool(code: str, customer_id: str) -> str:
    """The pool id of one customer's allowance of a code (the customer id hashed: the key names
    no one)."""
    digest = hashlib.sha256(customer_id.encode()).hexdigest()[:20]
    return f"{POOL_PREFIX}{code}#BY#{digest}"


def code_claims(code: Code, customer_id: str) -> tuple[tuple[str, int], ...]:
    """The counts a use of the code takes: its own counter, and the customer's allowance when
    the code limits each customer."""
    claims = [(code_pool(code.code), 1)]
    if code.per_customer:
        claims.append((allowance_pool(code.code, customer_id), 1))
    return tuple(claims)


def is_code_pool(pool: str) -> bool:
    return pool.rpartition(OFFERING_SEPARATOR)[2].startswith(POOL_PREFIX)


def with_uses(places: Places, uses: Iterable[tuple[str, int]]) -> Places:
    """The places with a code's uses among their claims."""
    return Places(places.kind, places.quantity, pools=places.pools + tuple(uses), units=places.units,
                  granules=places.granules)


def without_uses(places: Places) -> Places:
    """The places as their kind planned them: what a kind reads (its replan, its view of the
    places), never the code's counters among them."""
    own = tuple(pool for pool in places.pools if not is_code_pool(pool[0]))
    return places if len(own) == len(places.pools) else \
        Places(places.kind, places.quantity, pools=own, units=places.units, granules=places.granules)


def keep_uses(found: Places, held: Places) -> Places:
    """Places found again (a late payment's) with the code uses the booking held: the uses are
    retaken with the places, or nothing is (each is a guarded count like a place)."""
    uses = tuple(pool for pool in held.pools if is_code_pool(pool[0]))
    if not uses:
        return found
    own = tuple(pool for pool in found.pools if not is_code_pool(pool[0]))
    return Places(found.kind, found.quantity, pools=own + uses, units=found.units, granules=found.granules)


def code_of(item: Mapping[str, Any], currency: str) -> Code:
    """A code as stored (adapters/code_store.py)."""
    value = item.get("value")
    return Code(
        code=str(item["code"]), form=str(item["kind"]),
        percent=Decimal(str(value)) if item["kind"] == "percent" and value is not None else None,
        amount=Money.parse(str(value), currency) if item["kind"] == "fixed" and value is not None else None,
        max_uses=int(item["max_uses"]) if item.get("max_uses") is not None else None,
        per_customer=int(item["per_customer"]) if item.get("per_customer") is not None else None,
        valid_from=_time(item.get("valid_from")), valid_to=_time(item.get("valid_to")),
        price_categories=tuple(item.get("price_categories") or ()), ticket_types=tuple(item.get("ticket_types") or ()),
        zones=tuple(item.get("zones") or ()), ended=bool(item.get("ended_at")),
    )


def _time(value: Any) -> datetime | None:
    return parse_iso(str(value)) if value else None


def comp_mark(booking: Any) -> dict[str, bool]:
    """What a hold's outbox event says of a comp (a booking that costs nothing): it is confirmed in
    the next write without a payment, so its ``booking.held`` asks nobody to pay
    (services/notifications.py sends no message for it; a webhook still sees the change)."""
    return {"comp": True} if booking.amount.is_zero else {}
