"""The booking aggregate, its journal, and the pure decision of what a provider payment means for it."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any

from ..clock import iso, parse_iso
from .claims import other_offerings
from .inventory import InventoryKind, Move, Places
from .money import Money
from . import lifecycle
from .statuses import HOLDING, SOLD, BookingStatus, can_move


#: Active holds (bookings in HELD or PAYMENT_PENDING) one customer may have for one event, unless
#: the event sets ``max_holds_per_customer``: enough for a customer who books for others in
#: several goes, too few for one account to sit on a high-demand sale.
DEFAULT_HOLDS_PER_CUSTOMER = 4


class PaymentMode(StrEnum):
    ONE_STAGE = "one_stage"   # capture: true, the provider takes the money at once
    TWO_STAGE = "two_stage"   # capture: false, money authorised; captured once the places are secured


@dataclass(frozen=True)
class Payment:
    """Our record of the one provider payment a booking may have.

    ``state`` is ours: CREATING (stored before the provider call), UNKNOWN (the call's outcome was
    lost), CREATED (the provider answered), REJECTED (the provider refused it), NOT_CREATED
    (reconciliation found that no payment exists at the provider).
    ``provider_status`` is the provider's: pending, waiting_for_capture, succeeded, canceled.
    ``next_check_at`` is when reconciliation looks at it next; None once nothing is left to learn.
    ``restarts`` counts the sweeper's restarts of a reconciliation whose execution died; a check that
    completes sets it back to 0, and too many in a row send the booking to manual review.
    """

    idempotence_key: str
    state: str = "CREATING"
    payment_id: str | None = None
    provider_status: str | None = None
    confirmation_url: str | None = None
    lease_until: str | None = None
    capture_key: str | None = None
    paid_at: str | None = None
    refund: dict[str, Any] | None = None
    requested_at: str | None = None
    next_check_at: str | None = None
    checks: int = 0
    restarts: int = 0   # sweeper restarts of reconciliation since a check last completed
    #: The fiscal receipt the payment carries (domain/fiscal.py ``sale_record``: lines and tax
    #: system, no address), stored with the attempt; None when its organizer had receipts off.
    receipt: dict[str, Any] | None = None
    #: The settlement receipt of a receipt's prepayment, once the service is rendered
    #: (services/settlements.py): ``state`` (requested, sent, failed), its idempotence ``key``
    #: (stored before the call), ``attempts``, ``next_at`` (when the sweeper looks next),
    #: ``receipt_id`` once the provider answered.
    settlement: dict[str, Any] | None = None
    #: The refunds of a part of the booking's payments while it stands, in order: the price
    #: differences that exchanges into cheaper places gave back (domain/exchange.py
    #: ``difference_refund``), and an order line refunded on its own (its lot refunds no-shows:
    #: ``line_id``). Each with its ``key`` (stored before the call), ``exchange_key`` (the
    #: exchange's request key, or ``line-<line id>``), ``amount``, ``status`` (requested,
    #: pending, succeeded, canceled, rejected), ``refund_id`` once the provider answered, and,
    #: while ``requested``, ``next_check_at``: when the sweeper asks again for an answer that never
    #: came (``tries``: the answers lost so far; services/part_refunds.py, the one retry).
    #: ``payment_id`` names the payment it gives back from: a dearer exchange's difference payment,
    #: else (absent, or this one's) this payment. ``refund`` stays the one refund of what is left
    #: (a cancellation).
    exchange_refunds: list[dict[str, Any]] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if value is not None}

    @property
    def final_at_provider(self) -> bool:
        return self.provider_status in ("succeeded", "canceled") or self.state in ("REJECTED", "NOT_CREATED")


@dataclass(frozen=True)
class Booking:
    booking_id: str
    event_id: str
    customer_id: str
    status: BookingStatus
    places: Places
    amount: Money
    payment_mode: PaymentMode
    hold_expires_at: str
    created_at: str
    updated_at: str
    version: int
    payment: Payment | None = None
    places_secured: bool = False   # two-stage: places pinned for a capture in flight; expiry must wait
    review: dict[str, str] | None = None
    contact_email: str | None = None   # where notifications are emailed; never logged
    #: ``contact_email`` is the customer's identity's own (verified) address: the mail policy
    #: treats it as confirmed without a record of its own (services/mail_policy.py)
    contact_own: bool = False
    language: str = "en"   # what its messages are written in: the creating request's Accept-Language
    counted_hold: bool = False   # occupies a slot of the customer's hold limit (adapters/hold_limits.py)
    #: The keyed network address the hold came from (domain/holder_address.py), set while the hold
    #: occupies a slot of that address's cap on live holds; None when no cap applied.
    counted_address: str | None = None
    #: The customer gave the booking up. Final whatever happens next (a review, a late payment):
    #: money that still arrives goes back, and no path confirms the booking again.
    cancelled_by_customer: bool = False
    #: A conflict case (late payment, places gone, the kind offered alternatives): ``reason``,
    #: ``alternatives``, ``respond_by``, ``operator``, and ``decision`` once someone chose
    #: (services/resolutions.py). Kept after the case is decided, as the record of what was offered.
    resolution: dict[str, Any] | None = None

    @property
    def resolution_open(self) -> bool:
        return bool(self.resolution) and "decision" not in self.resolution \
            and self.status is BookingStatus.MANUAL_REVIEW

    #: The organizer cancelled the booking's event: as final as the customer's own cancellation.
    event_cancelled: bool = False
    #: What the inventory kind keeps about the request beyond its places (a parking plate, vehicle
    #: type), from ``Kind.booking_details``. ``timer_at`` with ``timer_state`` asks the sweeper to
    #: move a CONFIRMED booking into that declared state at that moment (parking: NO_SHOW).
    kind_details: dict[str, Any] | None = None
    #: When the booking's event, slot or window ends (the event's start for an event, which names
    #: no end): with the last change, what the retention of personal data counts from.
    ends_at: str | None = None
    #: When its personal fields were erased (domain/personal_data.py); set once, never cleared.
    erased_at: str | None = None
    #: The second payments of exchanges into dearer places (domain/exchange.py ``difference_hold``),
    #: in order: each with the exchange's key, the places it holds, the difference's ``amount``,
    #: its ``state`` (held, paid, lapsed, failed, refunded), ``expires_at`` and its ``payment``
    #: record. At most one is ``held`` at a time.
    differences: list[dict[str, Any]] | None = None

    def part_refunded(self, payment_id: str | None) -> Decimal:
        """What the part refunds (``Payment.exchange_refunds``) gave back, or are giving back, of
        the payment ``payment_id`` (the booking's own: those naming no other payment)."""
        own = self.payment.payment_id if self.payment else None
        return sum((Money.parse(**entry["amount"]).value for entry in (self.payment.exchange_refunds if self.payment
                                                                       else None) or ()
                    if (entry.get("payment_id") or own) == payment_id), Decimal("0"))

    @property
    def difference_shares(self) -> list[tuple[dict[str, Any], Money]]:
        """The difference payments of the dearer exchanges that moved the booking (``moved``), in
        order, each with what it holds of the price now: its amount less the part refunds given
        back from it (a cheaper exchange since), whatever became of it since (a cancel refunds it)."""
        return [(entry, Money(Money.parse(**entry["amount"]).value
                              - self.part_refunded((entry.get("payment") or {}).get("payment_id")), self.amount.currency))
                for entry in self.differences or () if entry.get("moved")]

    @property
    def paid_by_differences(self) -> Money:
        """What the booking's price took beyond its first payment: what the difference payments of
        the dearer exchanges that moved it hold of it (``difference_shares``)."""
        return Money(sum((held.value for _, held in self.difference_shares), Decimal("0")), self.amount.currency)

    @property
    def first_payment_share(self) -> Money:
        """What the booking's first payment holds of its price: ``amount`` less what the difference
        payments hold. Its refund and its settlement receipt are of this; each difference payment's
        share is its own prepayment."""
        return Money(self.amount.value - self.paid_by_differences.value, self.amount.currency)

    @property
    def held_difference(self) -> dict[str, Any] | None:
        """The dearer exchange waiting for its difference payment (its places held), or None."""
        return next((entry for entry in self.differences or () if entry.get("state") == "held"), None)

    def confirmed(self, at: datetime) -> "Booking":
        """The booking as it enters CONFIRMED at ``at``: a kind's timer that counts from when the
        booking could first be used (``timer_from``, e.g. a parking window's start, plus
        ``timer_grace_seconds``) is set from the later of that and ``at``, in the write that
        confirms it; a window already begun when it was paid is not over the moment it is paid."""
        details = self.kind_details or {}
        lines = details.get("lines")
        if lines and any(_timed(line.get("details") or {}, at) for line in lines):
            # an order: each line with such a timer (a parking line) counts from the same moment
            # (the settlement of a line nobody used reads it, SettledLine.unused_until)
            return replace(self, kind_details={**details, "lines": [
                {**line, "details": _timed(line.get("details") or {}, at) or line.get("details")} for line in lines]})
        timed = _timed(details, at)
        return replace(self, kind_details=timed) if timed else self

    @property
    def charged(self) -> Money:
        """What the booking's payment took: its amount, plus what was given back of it while the
        booking stood (``Payment.exchange_refunds``: the differences exchanges into cheaper places
        gave back, an order line's refunded no-show); the amount is what it keeps now."""
        refunds = (self.payment.exchange_refunds if self.payment else None) or []
        # a dearer exchange's difference was paid by a second payment (``differences``), and what
        # was given back of it is not this one's either
        beyond = self.paid_by_differences.value
        given = self.amount.value + self.part_refunded(self.payment.payment_id if self.payment else None) - beyond
        return Money(given, self.amount.currency) if refunds or beyond else self.amount

    @property
    def timer(self) -> tuple[str, str] | None:
        """(when, declared state) of a kind's timer that is still pending, or None."""
        details = self.kind_details or {}
        if self.status is BookingStatus.CONFIRMED and details.get("timer_at") and details.get("timer_state"):
            return str(details["timer_at"]), str(details["timer_state"])
        return None

    @property
    def line_timers(self) -> list[tuple[str, str, str]]:
        """(when, line id, declared state) of each line of a confirmed order whose kind timer has
        not fired yet (parking: its no-show at the window's start plus the lot's grace, counted
        from the order's confirmation as ``confirmed`` sets it): a line that still moves with its
        order, with no state of its own. A single booking's timer is ``timer``; an order's lines'
        are run by ``Refunds.line_timers`` (the lot's no-show policy decides, line by line)."""
        if self.status is not BookingStatus.CONFIRMED:
            return []
        found = []
        for line in (self.kind_details or {}).get("lines") or ():
            details = line.get("details") or {}
            moment = _timer_moment(details)
            if moment is not None and not line.get("status"):
                found.append((moment, str(line["line_id"]), str(details["timer_state"])))
        return sorted(found)

    @property
    def part_refunds_due(self) -> str | None:
        """When the sweeper next asks again for a part refund (``Payment.exchange_refunds``: a
        cheaper exchange's difference, an order line's refunded no-show) whose answer never came:
        the earliest ``part_refund_due`` of them; None when none waits."""
        moments = [due for entry in (self.payment.exchange_refunds if self.payment else None) or ()
                   if (due := part_refund_due(entry)) is not None]
        return min(moments) if moments else None

    @property
    def customer_gave_up(self) -> bool:
        """The booking was given up: by the customer (CANCELLED is reached only by the customer's
        cancel or the event's), or with its event. The flags keep that fact once a review or a
        late payment moves the booking on: money that arrives goes back, nothing confirms it."""
        return self.cancelled_by_customer or self.event_cancelled or self.status is BookingStatus.CANCELLED

    @property
    def counted_offerings(self) -> tuple[str, ...]:
        """The offerings whose hold limit this booking occupies a slot of while it holds places:
        its own, and each further offering an order counted a line toward (``COUNTED_HOLDS`` in
        its kind details: orders from before carry none and counted their first line only)."""
        if not self.counted_hold:
            return ()
        return (self.event_id, *[str(o) for o in (self.kind_details or {}).get(COUNTED_HOLDS) or ()
                                 if o != self.event_id])

    @property
    def refused_line_refunds(self) -> list[dict[str, Any]]:
        """The order's lines whose own refund the provider refused for good and no operator has
        settled yet (``payment.exchange_refunds`` entries of a line, ``rejected``): the order stays
        an operator's case while there are any (O6)."""
        entries = (self.payment.exchange_refunds if self.payment else None) or []
        return [dict(entry) for entry in entries if entry.get("line_id") and entry.get("status") == "rejected"]

    @property
    def offerings(self) -> tuple[str, ...]:
        """Every offering the booking has places of: its own, each further line's of an order
        (``COUNTED_HOLDS`` names them all, a parking line's too), and any its places name."""
        named = [str(o) for o in (self.kind_details or {}).get(COUNTED_HOLDS) or ()]
        return tuple(dict.fromkeys((self.event_id, *named, *other_offerings(self.event_id, self.places))))

    @property
    def comp(self) -> bool:
        """Given away: nothing to pay and no payment (a 100 % code, an organizer's order)."""
        return self.amount.value == 0 and self.payment is None

    @property
    def holds_places(self) -> bool:
        return self.status in HOLDING

    @property
    def settled(self) -> bool:
        """Nothing about this booking's money is still unknown or owed."""
        if self.status in (BookingStatus.MANUAL_REVIEW, BookingStatus.REFUNDED):
            return True
        if self.status is BookingStatus.REFUND_PENDING or self.places_secured:
            return False
        return self.payment is None or self.payment.final_at_provider

    @property
    def due_at(self) -> str | None:
        """When a timer or reconciliation must next look at this booking (the due index key)."""
        moments = []
        if self.status in HOLDING:
            moments.append(self.hold_expires_at)
        if self.payment is not None and self.payment.next_check_at and not self.settled:
            moments.append(self.payment.next_check_at)
        if self.timer is not None:
            moments.append(self.timer[0])
        if self.line_timers:
            moments.append(self.line_timers[0][0])
        if self.part_refunds_due is not None:
            # a part refund whose answer never came is asked again (services/part_refunds.py)
            moments.append(self.part_refunds_due)
        if self.settlement_due is not None:
            moments.append(self.settlement_due)
        for entry in self.differences or ():
            # a held difference lapses at its expiry; a difference payment still unknown is checked
            if entry.get("state") == "held":
                moments.append(str(entry["expires_at"]))
            if (entry.get("payment") or {}).get("next_check_at"):
                moments.append(str(entry["payment"]["next_check_at"]))
        return min(moments) if moments else None

    @property
    def settlement_due(self) -> str | None:
        """When the sweeper next looks at this booking's settlement receipts (None: none is owed, or
        they were sent, or one failed for good and is an operator's case). Only a hint of when: the
        settlement reads when the service is rendered from the offering itself."""
        payment = self.payment
        if payment is None or not payment.receipt:
            return None
        lines = settled_lines(self)
        if lines:   # an order: each line settles on its own, when its own service is rendered
            dues = [due for line in lines if (due := self.line_settlement_due(line)) is not None]
        else:       # the first payment's prepayment, and each difference payment's (issue 45)
            dues = [due for due in [self.first_settlement_due,
                                    *(self.difference_settlement_due(part) for part in self.settled_differences)]
                    if due is not None]
        return min(dues, key=parse_iso) if dues else None

    @property
    def first_settlement_due(self) -> str | None:
        """``settlement_due`` of the first payment's prepayment alone (a booking that is not an
        order settled line by line)."""
        payment = self.payment
        if payment is None or not payment.receipt:
            return None
        return self._settlement_due(payment.settlement or {}, str(self.places.kind), str(self.status),
                                    [granule.at for granule in self.places.granules], self.ends_at)

    @property
    def settled_differences(self) -> list["SettledDifference"]:
        """The difference payments of dearer exchanges whose prepayment a settlement receipt of its
        own closes once the service is rendered (issue 44 with 45): those that moved the booking and
        still hold a part of its price, where the first payment carried a receipt (a difference
        payment then carries one: services/exchange_differences.py)."""
        payment = self.payment
        if payment is None or not payment.receipt or settled_lines(self):
            return []
        return [SettledDifference(str(entry["exchange_key"]), str(paid_by), held)
                for entry, held in self.difference_shares
                if entry.get("state") == "paid" and held.value > 0
                and (paid_by := (entry.get("payment") or {}).get("payment_id"))]

    def difference_settlement_due(self, part: "SettledDifference") -> str | None:
        """``settlement_due`` of one difference payment's prepayment (``settled_differences``):
        rendered when the booking's service is, with a record of its own."""
        return self._settlement_due(part.settlement(self), str(self.places.kind), str(self.status),
                                    [granule.at for granule in self.places.granules], self.ends_at)

    def line_settlement_due(self, line: "SettledLine") -> str | None:
        """``settlement_due`` of one line of an order (``settled_lines``)."""
        assert self.payment is not None
        return self._settlement_due(line.settlement(self.payment), line.kind, line.status, line.granule_starts,
                                    line.ends_at, unused_until=line.unused_until)

    def _settlement_due(self, settlement: dict[str, Any], kind: str, status: str, starts: list[str],
                        ends_at: str | None, unused_until: str | None = None) -> str | None:
        if settlement.get("state") == "sent" and settlement.get("status") == "pending":
            return settlement.get("next_at")   # its register's answer is read back (services/settlements.py)
        if settlement.get("state") in ("sent", "failed"):
            return None
        if lifecycle.renders_by_state(kind):
            # rendered when the booking enters such a state (parking: COMPLETED, NO_SHOW), not before
            if not lifecycle.renders(status):
                # an order's line left unused to its window's end is rendered then (SettledLine.unused_until)
                return str(settlement.get("next_at") or unused_until) if unused_until else None
            return str(settlement.get("next_at") or self.updated_at)
        if _places_state(self.status) != "sold":
            return None
        if settlement.get("next_at"):
            return str(settlement["next_at"])
        return iso(min(parse_iso(start) for start in starts)) if starts else ends_at


@dataclass(frozen=True)
class SettledDifference:
    """A dearer exchange's difference payment as its settlement receipt sees it (issue 44 with 45):
    the exchange's key, the payment, and what it holds of the booking's price (what it prepaid of
    the service as it now stands, which its settlement receipt closes)."""

    exchange_key: str
    payment_id: str
    share: Money

    def settlement(self, booking: Booking) -> dict[str, Any]:
        """Its settlement record (``differences[].settlement``), as the settlement service keeps it."""
        entry = next((e for e in booking.differences or () if e.get("exchange_key") == self.exchange_key), None)
        return dict((entry or {}).get("settlement") or {})


def part_refund_due(entry: dict[str, Any]) -> str | None:
    """When the sweeper asks again for the part refund ``entry`` (``Payment.exchange_refunds``):
    its ``next_check_at`` while it is ``requested``; None once it has its answer. (A line's record
    stored before the two retries were one kept the time as ``next_at``: read the same way.)"""
    if entry.get("status") != "requested":
        return None
    due = entry.get("next_check_at") or entry.get("next_at")
    return str(due) if due else None


@dataclass(frozen=True)
class SettledLine:
    """One line of an order as its settlement receipt sees it (issue 44: one settlement receipt per
    order line, when that line's service is rendered): the line, its offering, its kind and own
    status (a parking line COMPLETED once the car left), its granules' starts and its end."""

    line_id: str
    offering_id: str
    kind: str
    status: str
    granule_starts: list[str]
    ends_at: str | None
    #: the moment of the line's kind timer into a state that renders its service (its details'
    #: ``timer_from`` plus ``timer_grace_seconds``, as ``Booking.confirmed`` sets a booking's), or None
    timer_at: str | None = None

    @property
    def unused_until(self) -> str | None:
        """For a line still in the order's CONFIRMED whose kind set it a timer into a state that
        renders its service (parking: NO_SHOW at the window's start plus the lot's grace,
        ``Kind.booking_details``): that moment, when its service counts as rendered though it was
        never used. An order runs no timer of its lines' (a single reservation's sweeper timer
        moves it to NO_SHOW, which renders); without this a parking line whose car never came was
        never settled. 54-FZ: the prepaid service is rendered at the no-show whose money is kept,
        and the prepayment is closed by a settlement receipt then (docs/parking.md). None for any
        other line, and for one in use or done (a car inside settles when it leaves)."""
        if self.status != BookingStatus.CONFIRMED.value or not self.timer_at:
            return None
        return self.timer_at

    def settlement(self, payment: Payment) -> dict[str, Any]:
        """The line's settlement record (``Payment.settlement["lines"][line_id]``)."""
        return dict(((payment.settlement or {}).get("lines") or {}).get(self.line_id) or {})


def _timed(details: dict[str, Any], at: datetime) -> dict[str, Any] | None:
    """``details`` with ``timer_at`` set for a booking (or an order's line) confirmed at ``at``: the
    later of when it could first be used (``timer_from``) and ``at``, plus ``timer_grace_seconds``;
    None when the details name no such timer."""
    if not details.get("timer_from") or not details.get("timer_state"):
        return None
    start = max(parse_iso(str(details["timer_from"])), at)
    return {**details, "timer_at": iso(start + timedelta(seconds=int(details.get("timer_grace_seconds") or 0)))}


def _rendering_timer(details: dict[str, Any]) -> str | None:
    """When a line's kind timer (into ``timer_state``) falls due, if that state renders the
    service; None otherwise. Its moment is the ``timer_at`` the order's confirmation set
    (``Booking.confirmed``), or for a line confirmed before that was kept, ``timer_from`` plus
    ``timer_grace_seconds``."""
    if not details.get("timer_state") or not lifecycle.renders(str(details["timer_state"])):
        return None
    return _timer_moment(details)


def _timer_moment(details: dict[str, Any]) -> str | None:
    """When a line's kind timer falls due: the ``timer_at`` the order's confirmation set, or for
    a line confirmed before that was kept, ``timer_from`` plus ``timer_grace_seconds``; None when
    its details name no timer."""
    if not details.get("timer_from") or not details.get("timer_state"):
        return None
    if details.get("timer_at"):
        return str(details["timer_at"])
    return iso(parse_iso(str(details["timer_from"])) + timedelta(seconds=int(details.get("timer_grace_seconds") or 0)))


def settled_lines(booking: Booking) -> list[SettledLine]:
    """The lines of an order settled one by one: those of an order whose payment's receipt names
    each item's offering (``fiscal.sale_record``). Empty for any other booking, and for an order
    whose receipt predates it (settled whole, as before)."""
    stored = (booking.kind_details or {}).get("lines") or ()
    record = booking.payment.receipt if booking.payment else None
    if not stored or not record or not all(line.get("offering_id") for line in record.get("lines") or ()):
        return []
    out = []
    for line in stored:
        starts = [str(granule["at"]) for granule in line.get("granules") or ()]
        status = str(line.get("status") or booking.status) if booking.status is BookingStatus.CONFIRMED \
            else str(booking.status)
        out.append(SettledLine(str(line["line_id"]), str(line["offering_id"]), str(line["kind"]), status, starts,
                               line.get("ends_at"), _rendering_timer(line.get("details") or {})))
    return out


#: In an order's kind details: the further offerings it counted a line toward in their hold limits.
COUNTED_HOLDS = "counted_holds"


@dataclass(frozen=True)
class JournalEntry:
    at: str
    action: str
    actor: str                      # customer | provider | timer | reconciler | operator | system
    from_status: str | None
    to_status: str
    decision: str
    ids: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": self.at, "action": self.action, "actor": self.actor, "from_status": self.from_status,
            "to_status": self.to_status, "decision": self.decision, "ids": dict(self.ids),
        }


class IllegalTransition(Exception):
    def __init__(self, source: BookingStatus, target: BookingStatus, detail: str = "") -> None:
        super().__init__(f"a booking cannot move from {source} to {target}{detail}")


def _places_state(status: BookingStatus) -> str:
    declared = lifecycle.places_state(status)
    if declared is not None:
        return declared
    return "held" if status in HOLDING else "sold" if status in SOLD else "available"


def implied_move(source: BookingStatus, target: BookingStatus) -> Move | None:
    """The one inventory move a status change implies; None when the places stay where they are.

    Deriving it from the statuses means a caller acting on an old read (a second CONFIRMED ->
    CONFIRMED with SELL) cannot move places twice."""
    states = (_places_state(source), _places_state(target))
    if states[0] == states[1]:
        return None
    return next(move for move in Move if move.value == states)


def line_refunds_settled(payment: Payment | None) -> Payment | None:
    """The payment record with its lines' refused refunds marked ``settled``: an operator closing
    the order's review says the money was handled by hand."""
    if payment is None or not payment.exchange_refunds:
        return payment
    return replace(payment, exchange_refunds=[
        {**entry, "status": "settled"} if entry.get("line_id") and entry.get("status") == "rejected" else entry
        for entry in payment.exchange_refunds])


def check_transition(booking: Booking, target: BookingStatus, move: Move | None = None) -> None:
    if booking.status != target and not can_move(booking.status, target) \
            and not lifecycle.allows(str(booking.places.kind), booking.status, target):
        raise IllegalTransition(booking.status, target)
    if move is not implied_move(booking.status, target):
        raise IllegalTransition(booking.status, target, f" with the move {move.name if move else None}")


#: Released with no money taken: a payment that arrives now is late (retaken, or given back when the
#: customer gave the booking up). Any other released status already has its money path.
RELEASED_UNPAID = frozenset({BookingStatus.EXPIRED, BookingStatus.CANCELLED, BookingStatus.PAYMENT_FAILED})


class Verdict(StrEnum):
    IGNORE = "ignore"                    # nothing to do: duplicate, stale, not final, not ours
    CONFIRM = "confirm"                  # paid while the places are held: sell them
    SECURE_AND_CAPTURE = "secure_and_capture"  # two-stage, places held: pin them, then capture
    RELEASE_FAILED = "release_failed"    # provider cancelled the payment: release the places
    RECORD_CANCELED = "record_canceled"  # provider cancelled the payment of a released booking: note it, move nothing
    LATE_RETAKE = "late_retake"          # paid after release: take the places again if free
    GIVE_BACK = "give_back"              # paid after the customer cancelled: void or refund, never resell
    RELEASE_AND_GIVE_BACK = "release_and_give_back"  # paid while held for a cancelled event: release, then give back
    REVIEW = "review"                    # an operator has to look


@dataclass(frozen=True)
class PaymentVerdict:
    verdict: Verdict
    reason: str


def judge_payment(booking: Booking, provider_payment: dict[str, Any], mode: PaymentMode,
                  event_cancelled: bool = False) -> PaymentVerdict:
    """Decide what a payment, as the provider reports it on GET, means for its booking.

    The same function serves the webhook consumer and reconciliation, so both paths decide alike.
    A payment for an event the organizer cancelled never sells places: it is given back.
    """
    verdict = _judge(booking, provider_payment, mode)
    if not (event_cancelled or booking.event_cancelled):
        return verdict
    if verdict.verdict in (Verdict.CONFIRM, Verdict.SECURE_AND_CAPTURE):
        return PaymentVerdict(Verdict.RELEASE_AND_GIVE_BACK, "paid_for_cancelled_event")
    if verdict.verdict is Verdict.LATE_RETAKE:
        return PaymentVerdict(Verdict.GIVE_BACK, "paid_after_event_cancelled")
    return verdict


def _judge(booking: Booking, provider_payment: dict[str, Any], mode: PaymentMode) -> PaymentVerdict:
    status = provider_payment.get("status")
    ours = booking.payment
    if ours is not None and ours.payment_id and ours.payment_id != provider_payment.get("id"):
        return PaymentVerdict(Verdict.REVIEW, "second_payment_for_booking")
    if ours is not None and ours.provider_status == "canceled" and status in ("pending", "waiting_for_capture"):
        # A cancelled payment is final at the provider: an earlier copy (a notification or a GET
        # answered before the void) says nothing new, and must not reopen what the void settled.
        return PaymentVerdict(Verdict.IGNORE, "stale_copy_of_cancelled_payment")
    if status in ("succeeded", "waiting_for_capture") and not booking.charged.matches(provider_payment.get("amount") or {}):
        return PaymentVerdict(Verdict.REVIEW, "amount_mismatch")
    if status == "pending":
        return PaymentVerdict(Verdict.IGNORE, "payment_not_final")
    if status == "canceled":
        if booking.holds_places:
            return PaymentVerdict(Verdict.RELEASE_FAILED, "provider_cancelled_payment")
        if ours is not None and ours.provider_status != "canceled":
            # The booking is past the places (released, in review, refunding...) but its record
            # still shows the payment as the provider last told us (often an authorisation held):
            # the final answer is recorded, or the payment is polled and voided again until the limit.
            return PaymentVerdict(Verdict.RECORD_CANCELED, "cancelled_payment_recorded")
        return PaymentVerdict(Verdict.IGNORE, "cancelled_payment_for_closed_booking")
    if status == "waiting_for_capture":
        if mode is not PaymentMode.TWO_STAGE:
            return PaymentVerdict(Verdict.REVIEW, "unexpected_authorisation")
        if booking.holds_places:
            return PaymentVerdict(Verdict.SECURE_AND_CAPTURE, "authorised_while_held")
        if booking.customer_gave_up and booking.status in RELEASED_UNPAID:
            return PaymentVerdict(Verdict.GIVE_BACK, "authorised_after_customer_cancelled")
        if booking.status in (BookingStatus.EXPIRED, BookingStatus.PAYMENT_FAILED):
            return PaymentVerdict(Verdict.LATE_RETAKE, "authorised_after_release")
        return PaymentVerdict(Verdict.IGNORE, "authorisation_for_closed_booking")
    if status == "succeeded":
        if booking.holds_places:
            return PaymentVerdict(Verdict.CONFIRM, "paid_while_held")
        if booking.status is BookingStatus.CONFIRMED:
            return PaymentVerdict(Verdict.IGNORE, "already_confirmed")
        # The customer gave the booking up: their money is not taken for it after all.
        if booking.customer_gave_up and booking.status in RELEASED_UNPAID:
            return PaymentVerdict(Verdict.GIVE_BACK, "paid_after_customer_cancelled")
        if booking.status in (BookingStatus.EXPIRED, BookingStatus.PAYMENT_FAILED):
            return PaymentVerdict(Verdict.LATE_RETAKE, "paid_after_release")
        return PaymentVerdict(Verdict.IGNORE, f"payment_known_to_{booking.status.value.lower()}_booking")
    return PaymentVerdict(Verdict.REVIEW, "unknown_provider_status")


def paid_before(provider_payment: dict[str, Any], deadline: datetime) -> bool:
    """Whether the provider recorded the money (captured_at) before ``deadline``."""
    moment = provider_payment.get("captured_at")
    if not moment:
        return False
    return parse_iso(moment) < deadline


__all__ = [
    "Booking", "BookingStatus", "InventoryKind", "JournalEntry", "Money", "Payment", "PaymentMode",
    "PaymentVerdict", "Places", "Verdict", "check_transition", "implied_move", "judge_payment", "paid_before",
]


class HoldVerdict(StrEnum):
    """What a hold's timer does with a booking (``judge_hold``)."""
    NOOP = "noop"                            # not a hold any more: paid, cancelled, expired
    NOT_YET = "not_yet"                      # its deadline has not come
    CAPTURE_IN_FLIGHT = "capture_in_flight"  # places pinned for an authorised payment's capture: look again shortly
    EXPIRE = "expire"                        # unpaid at its deadline: the places go back


def judge_hold(booking: Booking, now: datetime) -> HoldVerdict:
    """The one rule of a hold's expiry, for the timer (services/releases.py, at the moment it
    fires) and the sweeper (services/sweeper.py, at the moment past its grace): a hold expires at
    its ``hold_expires_at`` unless a capture holds its places."""
    if not booking.holds_places:
        return HoldVerdict.NOOP
    if now < parse_iso(booking.hold_expires_at):
        return HoldVerdict.NOT_YET
    if booking.places_secured:
        return HoldVerdict.CAPTURE_IN_FLIGHT
    return HoldVerdict.EXPIRE
