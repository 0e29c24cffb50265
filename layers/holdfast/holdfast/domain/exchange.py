"""Exchange (issue 45): a confirmed booking moved to other places of the same organizer (another
seat, date or slot) in one write. The pure rules: whether the organizer lets it happen now, what
the price difference means, and which claims the write makes (``swap``). No I/O.

The organizer opts in per offering with ``exchange_until_hours``: exchanges are allowed until that
many hours before the booking's start, read from the offering (an event's ``starts_at``) or, for a
booking of time granules (a slot), from its first granule. Absent, the offering allows none: an
exchange changes what the organizer sold, so it is the organizer's to offer.

Into cheaper places, the difference goes back: a partial refund of the booking's payments (the
latest difference payment first, then the first payment: ``difference_refunds``), asked for after
the swap's write that stores it; the booking's amount becomes the new price, so a later
cancellation gives back at most what is left of each. Into dearer places the
difference is paid by a second provider payment (``difference_hold``): the new places are held
for it while the old stay the booking's, and the swap is made when it is paid.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Mapping

from ..clock import iso, parse_iso
from .errors import Conflict
from .inventory import Move, Places, Swap, places_from, stored_places
from .money import Money
from . import transfers

#: The offering field that opts in: hours before the start until which exchanges are allowed.
EXCHANGE_FIELD = "exchange_until_hours"
#: The journal action of an exchange (its entry carries the request's key: a repeat is answered
#: from it).
EXCHANGED = "exchanged"
#: The journal action of a dearer exchange's first write: the new places held for its difference
#: payment (its entry carries the request's key, as ``EXCHANGED``'s does).
DIFFERENCE_HELD = "exchange_difference_held"
#: What a booking's kind details keep about the tickets an exchange voided and re-issued: the same
#: list and issue counter a transfer keeps (domain/transfers.py), so a ticket's id names one issue.
VOIDED, ISSUE = transfers.VOIDED, transfers.ISSUE


def change_terms(offering: Mapping[str, Any]) -> dict[str, Any]:
    """What an offering's view says of changing a booking: until when exchanges are allowed
    (absent: none) and whether transfers are (``transfers_allowed``, default true)."""
    hours = offering.get(EXCHANGE_FIELD)
    return ({EXCHANGE_FIELD: int(hours)} if hours is not None else {}) \
        | {"transfers_allowed": offering.get("transfers_allowed", True) is not False}


def places_start(places: Places, starts_at: str) -> datetime | None:
    """When what the booking bought begins: its first granule (a slot), else its offering's start."""
    moments = [granule.at for granule in places.granules] or ([starts_at] if starts_at else [])
    return min(parse_iso(moment) for moment in moments) if moments else None


def closes_at(offering: Mapping[str, Any], places: Places) -> datetime | None:
    """Until when the offering lets these places be exchanged; None when it allows no exchange."""
    hours = offering.get(EXCHANGE_FIELD)
    start = places_start(places, str(offering.get("starts_at") or ""))
    if hours is None or start is None:
        return None
    return start - timedelta(hours=float(hours))


def check_open(offering: Mapping[str, Any], places: Places, now: datetime, which: str) -> None:
    """Conflict unless the offering allows exchanging ``places`` now (``which``: "from" the
    booking's places, or "to" the target's)."""
    until = closes_at(offering, places)
    if until is None:
        raise Conflict("The organizer does not offer exchanges for this booking." if which == "from"
                       else "The organizer does not offer exchanges into these places.",
                       code="exchange_not_offered", offering_id=str(offering.get("event_id") or ""))
    if now > until:
        raise Conflict("Exchanges closed for these places.", code="exchange_closed", exchange_until=iso(until),
                       offering_id=str(offering.get("event_id") or ""))


def price_difference(paid: Money, new: Money) -> Decimal:
    """What the new places cost beyond what was paid (negative: what would be given back)."""
    if paid.currency != new.currency:
        raise Conflict("The new places are sold in another currency.", code="exchange_other_currency",
                       paid=paid.as_dict(), price=new.as_dict())
    return new.value - paid.value


def check_price(paid: Money, new: Money) -> None:
    """An exchange at the same price (a comp's, an order's kind of booking, where no money moves):
    Conflict ``exchange_price_differs`` otherwise."""
    difference = price_difference(paid, new)
    if difference:
        raise Conflict("The new places cost a different amount; this booking can only be exchanged at the same "
                       "price: cancel and book again.", code="exchange_price_differs",
                       paid=paid.as_dict(), price=new.as_dict())


def dearer_by(paid: Money, new: Money) -> Money | None:
    """What the new places cost beyond what was paid (None: not more)."""
    difference = price_difference(paid, new)
    return Money(difference, paid.currency) if difference > 0 else None


def given_back(paid: Money, new: Money) -> Money | None:
    """What an exchange gives back to the customer: the difference when the new places cost less
    (refunded from the booking's payment), None at the same price. Dearer places are refused with
    Conflict ``exchange_price_differs`` here (a booking that cannot pay a difference: a comp, one
    whose money is going back); the refusal names the difference. A booking paid at the provider
    pays it instead (``dearer_by``, ``difference_hold``)."""
    difference = price_difference(paid, new)
    if difference > 0:
        raise Conflict("The new places cost more than was paid, and this booking cannot pay a difference: cancel "
                       "and book again.", code="exchange_price_differs",
                       paid=paid.as_dict(), price=new.as_dict(),
                       difference=Money(difference, paid.currency).as_dict())
    return Money(-difference, paid.currency) if difference else None


def difference_refund(payment_id: str, exchange_key: str, amount: Money, at: datetime) -> dict[str, Any]:
    """The record of a part refund of the payment ``payment_id`` (a difference given back, an order
    line refunded alone), stored on the booking's payment record in the write that decides it,
    before the provider is called: its key derives from the payment and the exchange's request key
    (``line-<line id>`` for a line), so every repeat of the call is the one refund of that payment."""
    tag = hashlib.sha256(exchange_key.encode()).hexdigest()[:16]
    # ``next_check_at``: if no answer is recorded by then (a lost answer nobody repeats), the sweeper
    # asks again under the same key (services/part_refunds.py ``retry``)
    return {"key": f"rf-{payment_id}-xc{tag}"[:64], "exchange_key": exchange_key, "payment_id": payment_id,
            "amount": amount.as_dict(), "status": "requested", "requested_at": iso(at),
            "next_check_at": iso(at + timedelta(seconds=REFUND_CHECK))}


def difference_refunds(exchange_key: str, back: Money, shares: list[tuple[str, Money]], at: datetime
                       ) -> list[dict[str, Any]]:
    """The part refunds that give ``back`` of a booking paid by several payments: from each of
    ``shares`` (payment id, what it holds of the price) in that order, at most what it holds, one
    record per payment (``difference_refund``). The caller orders them: the latest difference
    payment first, the first payment last, which holds the rest."""
    out, left = [], back.value
    for payment_id, held in shares:
        part = min(left, held.value)
        if part > 0:
            out.append(difference_refund(payment_id, exchange_key, Money(part, back.currency), at))
            left -= part
    if left > 0:
        raise ValueError(f"{back.text} is more than the payments hold")
    return out


#: Seconds after a part refund is stored until the sweeper asks for it again when it has no answer
#: yet (``retry_wait``).
REFUND_CHECK = 30


def retry_wait(tries: int) -> timedelta:
    """How long after its ``tries``-th lost answer a part refund is asked for again: REFUND_CHECK,
    then three times longer each time (30 s, 90, 270, ... at most 729 times the first)."""
    return timedelta(seconds=REFUND_CHECK * 3 ** min(max(tries - 1, 0), 6))


def looks_follow(payment: Any, differences: list[dict[str, Any]] | None, rendered: str | None
                 ) -> tuple[Any, list[dict[str, Any]] | None]:
    """The booking's payment and difference records as an exchange's write stores them, its service
    now rendered at ``rendered`` (None: by a state of its own, nothing moves): each settlement
    receipt still only awaited (the first payment's, each dearer exchange's difference payment's)
    whose look was stored is looked at then, earlier or later. A look left at the old date would
    send the receipt late after an exchange to an earlier date (make proof seed 20261269052). A
    record with a state (being sent, sent, failed) keeps its times; one with no look stored reads
    the booking's new places and end, written in the same write."""
    def moved(record: Mapping[str, Any] | None) -> dict[str, Any] | None:
        look = (record or {}).get("next_at")
        if rendered is None or not look or (record or {}).get("state") or look == rendered:
            return None
        return {**dict(record or {}), "next_at": rendered}

    if payment is not None and (first := moved(payment.settlement)) is not None:
        payment = replace(payment, settlement=first)
    if differences and any(moved(entry.get("settlement")) is not None for entry in differences):
        differences = [{**entry, "settlement": own} if (own := moved(entry.get("settlement"))) is not None
                       else entry for entry in differences]
    return payment, differences


def swap(given_from: str, given: Places, taken_from: str, taken: Places) -> Swap:
    """The claims of an exchange: the places given back and taken, less what both name (the same
    pool of the same offering counts once, by its difference; a seat or granule named by both
    stays as it is). The booking keeps ``taken`` whole; only the claims are netted, because one
    transaction may touch an item once."""
    if given_from != taken_from:
        return Swap(given_from, given, taken_from, taken)
    old, new = Counter(dict(given.pools)), Counter(dict(taken.pools))
    gives = tuple(sorted((pool, count) for pool, count in (old - new).items() if count > 0))
    takes = tuple(sorted((pool, count) for pool, count in (new - old).items() if count > 0))
    kept_units = set(given.units) & set(taken.units)
    kept_granules = set(given.granules) & set(taken.granules)

    def rest(places: Places, pools: tuple[tuple[str, int], ...]) -> Places:
        units = tuple(unit for unit in places.units if unit not in kept_units)
        granules = tuple(granule for granule in places.granules if granule not in kept_granules)
        quantity = sum(count for _, count in pools) + len(units) + sum(granule.seats for granule in granules)
        return Places(kind=places.kind, quantity=quantity, pools=pools, units=units, granules=granules)

    return Swap(given_from, rest(given, gives), taken_from, rest(taken, takes))


def stored(places: Places) -> dict[str, Any]:
    """``places`` as a difference record keeps them (its kind and quantity with its claims)."""
    return {"kind": str(places.kind), "quantity": places.quantity, **stored_places(places)}


def restored(record: Mapping[str, Any]) -> Places:
    """``stored`` back."""
    return places_from(str(record["kind"]), int(record["quantity"]), record)


def difference_hold(booking_id: str, exchange_key: str, fingerprint: str, before: Places, moved: Swap,
                    places: Places, price: Money, amount: Money, details: Mapping[str, Any] | None,
                    ends_at: str | None, at: datetime, hold_seconds: int) -> dict[str, Any]:
    """The record of a dearer exchange, stored on the booking in the write that holds its new
    places: what it takes and gives back (``moved``, netted as ``swap`` nets them), the places the
    booking will have, their ``price``, the difference's ``amount`` and its payment's idempotence
    key (derived from the booking and the exchange's request key: every repeat of the provider
    call is the one payment). Held until ``expires_at``, the hold's own time to live."""
    tag = hashlib.sha256(exchange_key.encode()).hexdigest()[:16]
    return {
        "exchange_key": exchange_key, "fingerprint": fingerprint, "state": "held",
        "amount": amount.as_dict(), "price": price.as_dict(),
        "from_event_id": moved.given_from, "to_event_id": moved.taken_from,
        "from_places": stored(before), "given": stored(moved.given), "taken": stored(moved.taken),
        "places": stored(places),
        "details": dict(details or {}), "ends_at": ends_at,
        "created_at": iso(at), "expires_at": iso(at + timedelta(seconds=hold_seconds)),
        "payment": {"idempotence_key": f"xd-{booking_id}-{tag}"[:64], "state": "CREATING", "requested_at": iso(at)},
    }


def held_claims(entry: Mapping[str, Any]) -> Swap:
    """The claims that hold a dearer exchange's new places (available -> held), nothing given."""
    taken = restored(entry["taken"])
    return Swap(str(entry["from_event_id"]), no_places(taken), str(entry["to_event_id"]), taken,
                take_move=Move.HOLD)


def paid_claims(entry: Mapping[str, Any], late: bool = False) -> Swap:
    """The claims of a dearer exchange paid: its held places sold and the old ones given back
    (``late``: its hold lapsed first, so the places are taken again from those available)."""
    return Swap(str(entry["from_event_id"]), restored(entry["given"]), str(entry["to_event_id"]),
                restored(entry["taken"]), take_move=Move.RETAKE if late else Move.SELL)


def released_claims(entry: Mapping[str, Any]) -> Swap:
    """The claims that release a dearer exchange's held places (held -> available), nothing taken."""
    taken = restored(entry["taken"])
    return Swap(str(entry["to_event_id"]), taken, str(entry["to_event_id"]), no_places(taken),
                give_move=Move.RELEASE, take_move=Move.SELL)


def no_places(places: Places) -> Places:
    """No places of ``places``' kind (the side of a swap that claims nothing)."""
    return Places(kind=places.kind, quantity=0)
