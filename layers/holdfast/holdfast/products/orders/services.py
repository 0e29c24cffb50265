"""Orders: several lines held in one transaction, or nothing (issue 43).

An order is one booking of the ``order`` kind (kind.py) whose places are every line's claims,
each line planned, priced and checked by its own offering's kind exactly as its own hold route
would. From then on the engine's one booking path moves it: one payment for the sum, confirmed,
expired, cancelled, refunded or retaken by a late payment in one transaction over every line's
items, so no line moves without the others.
"""
from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field, replace
from datetime import timedelta
from decimal import Decimal
from typing import Any

from holdfast import kinds
from holdfast.clock import iso, parse_iso
from holdfast.domain.booking import COUNTED_HOLDS, Booking, JournalEntry, PaymentMode
from holdfast.domain.codes import Code, InvalidCode, comp_mark, is_code_pool, without_uses
from holdfast.domain.inventory import Places
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import (BookingError, Conflict, EventCancelled, IdempotencyKeyReused, InvalidRequest,
                                    NotFound, RequestInProgress, TooBusy, TooManyHolds)
from holdfast.domain.money import Money
from holdfast.domain.offering import Offering
from holdfast.domain.personal_data import places_end
from holdfast.domain.statuses import BookingStatus
from holdfast.domain.texts import DEFAULT_LANGUAGE
from holdfast.ports import (Change, DuplicateRequest, HoldLimitReached, HoldsFromAddressReached, IdempotencyRecord,
                            PlacesTaken, SalesStopped, StaleBooking, TransientStoreError)
from holdfast.services.booking_views import describe
from holdfast.services.bookings import BookingService, HoldResult, hold_limit
from holdfast.services.codes import apply_code
from holdfast.services.releases import HOLD_ATTEMPTS

from .lines import KIND, Line, is_order, lines_of, merged

#: At most this many lines: an order is held in one DynamoDB transaction, of 100 items at most.
MAX_LINES = 5
TRANSACTION_ITEMS = 100
#: What an order's hold writes beside its claims, at most (adapters/bookings_store.py
#: ``_hold_items``): the idempotency record, the booking, its journal entry and outbox event, the
#: customer's marker, index entry, sale gate check and hold slot of its first offering, its entry
#: in its expiry bucket and, on a container's first hold of that bucket, the shard's marker (10);
#: for each further line its offering's marker, index entry, gate check and hold slot (4); and,
#: when any offering caps an address's live holds, one address slot per line (1 each). A block a
#: line of the organizer's order takes from is one item more, and such an order counts no address.
ITEMS_BESIDE_CLAIMS = 10 + 4 * (MAX_LINES - 1) + MAX_LINES
#: The places, seats and granules (code uses and comps among them) one order may claim: what the
#: largest order leaves of the transaction (69). Every later write of the order moves the same
#: claims with fewer items of its own: at most 21, for its confirmation (the booking, journal and
#: outbox, a late retake's gate check, two payment-check markers, the hold and address slots it
#: frees, and its entry among each offering's sales).
MAX_CLAIMS = TRANSACTION_ITEMS - ITEMS_BESIDE_CLAIMS
SCOPE = "order"


@dataclass(frozen=True)
class OrderLine:
    """One line as asked: the offering and the body of its own hold route, as a command."""

    offering_id: str
    request: HoldPlaces
    #: The organizer's block the line's places come out of (POST /admin/orders only).
    block_id: str | None = None


@dataclass(frozen=True)
class PlaceOrder:
    lines: tuple[OrderLine, ...]
    contact_email: str | None = None
    contact_own: bool = False
    language: str = "en"
    #: The network address the order came from (HoldPlaces.holder_address): the order counts once,
    #: under the address's key, toward each of its offerings' caps on live holds per address.
    holder_address: str | None = None
    #: A solved challenge's token, when any of its offerings (or the deployment) asks for one.
    captcha_token: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: Given away by the organizer (POST /admin/orders): every line costs nothing, and the order
    #: is confirmed without a payment; ``note`` is the organizer's record of why.
    given_by: str | None = None
    note: str = ""


def _on_line(error: BookingError, index: int) -> BookingError:
    """The line's own error, saying which line (``details.line``)."""
    error.details = {"line": index, **error.details}
    return error


class OrderService:
    def __init__(self, bookings: BookingService) -> None:
        self.bookings = bookings
        self.store = bookings.store
        self.clock = bookings.clock

    # ---------------------------------------------------------------------------------- place
    def place(self, customer_id: str, idempotency_key: str, order: PlaceOrder) -> HoldResult:
        """Hold every line, in one transaction, or none (the first line that cannot be held is
        the answer, with ``details.line``)."""
        if not 1 <= len(order.lines) <= MAX_LINES:
            raise InvalidRequest(f"An order has 1 to {MAX_LINES} lines.", code="invalid_lines", max=MAX_LINES)
        offerings = [self._offering(line.offering_id, index) for index, line in enumerate(order.lines)]
        if order.given_by is not None:
            for index, offering in enumerate(offerings):   # the organizer gives only its own
                if offering.get("organizer_id") != order.given_by:
                    raise _on_line(NotFound(f"No offering {offering.event_id}.", code="event_not_found"), index)
        self._check_together(offerings)
        for index, line in enumerate(order.lines):
            if line.block_id is not None and order.given_by is None:
                raise _on_line(InvalidRequest("Only the organizer's order takes places out of a block.",
                                              code="validation_error"), index)
        wanted = []
        for index, (line, offering) in enumerate(zip(order.lines, offerings)):
            try:
                wanted.append(kinds.of_event(offering).validate(offering, line.request))
            except BookingError as error:
                raise _on_line(error, index) from None
        contact = {"contact_email": order.contact_email} if order.contact_email else {}
        given = {"given_by": order.given_by, "note": order.note} if order.given_by is not None else {}
        fingerprint = _fingerprint({"lines": [{"offering": o.event_id, **w, **_code_asked(line.request),
                                               **({"block_id": line.block_id} if line.block_id else {})}
                                              for o, w, line in zip(offerings, wanted, order.lines)], **contact,
                                    **given})
        try:
            if order.given_by is None:   # the organizer's own order is not a bot's
                self.bookings.challenge(offerings, order.captcha_token, lambda: None)
            return self._hold(customer_id, idempotency_key, order, offerings, wanted, fingerprint)
        except BookingError:
            # A repeat is answered from its first result even when what it asked is gone now
            # (perhaps to that very request: its places, its code's uses, its block). A new order
            # reads its idempotency record only here: its transaction's condition on the record
            # tells a repeat that got that far (as a single hold, services/hold_reads.py).
            replay = self._replay(customer_id, idempotency_key, fingerprint)
            if replay is not None:
                return replay
            raise

    def _hold(self, customer_id: str, idempotency_key: str, order: PlaceOrder, offerings: list[Offering],
              wanted: list[dict[str, Any]], fingerprint: str) -> HoldResult:
        """Every line planned and held in one transaction (``place``'s work once the request is
        checked)."""
        codes = [self._code(offering, line.request, customer_id, index)
                 for index, (line, offering) in enumerate(zip(order.lines, offerings))]
        rng = self.bookings.rng
        for attempt in range(HOLD_ATTEMPTS):
            now = self.clock()
            lines, planned = [], []
            # the lines plan on this container's availability snapshots, as a single hold does (one
            # BatchGetItem per line only when a snapshot is old; after a collision, fresh reads)
            reads = self.bookings.planning_reads(fresh=attempt > 0)
            #: per line taken out of a block: (offering, the block as read, the places it gives)
            taken: dict[int, tuple[str, dict[str, Any], Places]] = {}
            for index, (offering, asked) in enumerate(zip(offerings, wanted)):
                kind = kinds.of_event(offering)
                try:
                    kind.check_time(offering, asked, now)
                    block_id = order.lines[index].block_id
                    if block_id is not None:
                        block = self.store.get_block(offering.event_id, block_id)
                        if block is None:
                            raise NotFound(f"No block {block_id}.", code="block_not_found")
                        places = out_of_block(block, order.lines[index].request)
                        taken[index] = (offering.event_id, block, places)
                    else:
                        places = kind.plan(reads, offering, asked, rng, attempt, now=now)
                        planned.append((offering.event_id, places))
                    # a line's code, its uses among the line's claims (services/codes.py)
                    places, amount, details = apply_code(
                        offering, asked, places, kind.hold_price(offering, places, asked),
                        kind.booking_details(offering, asked, places), codes[index], customer_id)
                    if order.given_by is not None:   # given away: the line's price is kept as its full amount
                        details = {**(details or {}), "full_amount": amount.text, "given": True}
                        amount = Money(Decimal("0.00"), amount.currency)
                    places = self.bookings.comped(offering.event_id, places, amount)
                except BookingError as error:
                    if reads.planned_on_old:   # refused on an older snapshot: only a fresh read may refuse
                        break
                    raise _on_line(error, index) from None
                lines.append(Line(line_id=f"L{index + 1}", offering_id=offering.event_id, kind=kind.name,
                                  amount=amount, places=places, wanted=asked, details=details or None,
                                  ends_at=places_end(places, offering.starts_at), name=offering.name))
            if len(lines) < len(offerings):
                continue
            booking = self._booking(customer_id, order, offerings, lines, now)
            address_caps = [self.bookings.address_cap(o) for o in offerings]
            address_key = self.bookings.counted_address(offerings, order.holder_address)
            if address_key:
                booking = replace(booking, counted_address=address_key)
            # places out of a block move blocked -> held by the block's own items (its count less
            # them, on the block as read); the order's claims are then only the others'
            block_items = tuple(item for offering_id, block, places in taken.values()
                                for item in self.store.take_from_block(offering_id, block, places,
                                                                      booking.booking_id))
            claimed = merged((line.offering_id, _beside_block(line.places, taken[i][2]) if i in taken else line.places)
                             for i, line in enumerate(lines)) if taken else None
            claims = len(booking.places.pools) + len(booking.places.units) + len(booking.places.granules)
            if claims > MAX_CLAIMS:
                raise InvalidRequest(f"An order takes at most {MAX_CLAIMS} places, seats or time granules.",
                                     code="order_too_large", max=MAX_CLAIMS)
            actor = "customer" if order.given_by is None else "operator"
            journal = JournalEntry(
                at=iso(now), action="order_held" if order.given_by is None else "order_given", actor=actor,
                from_status=None, to_status="HELD",
                decision=f"{len(lines)} line(s), {booking.places.quantity} place(s) held until {booking.hold_expires_at}"
                if order.given_by is None else f"given by the organizer: {order.note}"[:500],
                ids={"booking_id": booking.booking_id, "order_id": booking.booking_id,
                     "idempotency_key": idempotency_key})
            record = IdempotencyRecord(customer_id, idempotency_key, SCOPE, fingerprint, booking.booking_id)
            try:
                self.store.commit(Change(after=booking, journal=journal, outbox={
                    "type": "booking.held", "at": iso(now), "hold_expires_at": booking.hold_expires_at,
                    **comp_mark(booking)}, places=claimed, items=block_items, idempotency=record, hold_limit=hold_limit(offerings[0]),
                    # each further line counts toward its own offering's limit, in the same write
                    other_hold_limits=tuple((o.event_id, hold_limit(o)) for o in offerings[1:]),
                    # every line's offering as this hold decided on it: a gate whose terms (its
                    # start) moved since refuses the order, and it is decided again on fresh reads
                    offering_version=offerings[0].version,
                    other_versions=tuple((o.event_id, o.version) for o in offerings[1:]),
                    # once toward each offering's cap on live holds per network address
                    address_limit=address_caps[0] if booking.counted_address else None,
                    other_address_limits=tuple((o.event_id, cap) for o, cap in zip(offerings[1:], address_caps[1:]))
                    if booking.counted_address else ()))
            except HoldsFromAddressReached as reached:
                index = next((i for i, o in enumerate(offerings) if o.event_id == reached.offering), 0)
                raise _on_line(TooManyHolds(address_caps[index] or 0, min(o.hold_ttl_seconds for o in offerings),
                                            reached.offering), index) from None
            except HoldLimitReached as reached:
                index = next((i for i, o in enumerate(offerings) if o.event_id == reached.offering), 0)
                limit = hold_limit(offerings[index])
                raise Conflict(f"You already hold places in {limit} booking(s) for this event; pay for or cancel "
                               "one first.", code="hold_limit_reached", limit=limit, line=index) from None
            except DuplicateRequest:
                replay = self._replay(customer_id, idempotency_key, fingerprint)
                if replay is None:
                    raise RequestInProgress() from None
                return replay
            except SalesStopped as stopped:
                fresh = [self.bookings.offering(o.event_id, fresh=True) for o in offerings]
                if any(new.version != old.version for new, old in zip(fresh, offerings)):
                    offerings = fresh   # a line's terms moved (its start): decide again on them as they are
                    continue
                index = next((i for i, o in enumerate(offerings) if o.event_id == stopped.args[0]), 0)
                raise _on_line(EventCancelled(offerings[index].event_id), index) from None
            except PlacesTaken as lost:
                used_up = next((label for label in lost.failed if is_code_pool(label)), None)
                if used_up is not None:   # a line's code is used up (or the customer's share of it)
                    offering_id = used_up.partition("/")[0]
                    index = next((i for i, o in enumerate(offerings) if o.event_id == offering_id), 0)
                    raise _on_line(InvalidCode(), index) from None
                for offering in offerings:   # a line's places went between the read and the write
                    self.bookings.forget(offering.event_id)
                continue   # plan every line again, on fresh reads
            except StaleBooking:
                # a block changed since it was read (another order took from it, or it ended):
                # read it again
                if not taken:
                    raise
                continue
            except TransientStoreError:
                if attempt == HOLD_ATTEMPTS - 1:
                    raise RequestInProgress() from None
                time.sleep(rng.uniform(0.005, 0.02 * (attempt + 1)))
                continue
            for offering_id, places in planned:   # what this container's snapshots now know it took
                self.bookings.took(offering_id, places)
            if booking.amount.is_zero:   # a comp: confirmed without a payment
                return HoldResult(self.bookings.confirm_comp(booking, actor), replayed=False)
            self.bookings.schedule(booking)
            return HoldResult(booking, replayed=False)
        raise TooBusy()

    def give(self, caller: Any, idempotency_key: str, lines: list[Any], note: str | None,
             for_email: str) -> HoldResult:
        """POST /admin/orders: the organizer gives an order of its own offerings to the customer
        of ``for_email`` (a comp), confirmed at once without a payment; its messages go to that
        address, which the organizer vouches for. The booking is the customer's by a pseudonym of
        the address (``guest_customer``). A key limited to some offerings gives only those (any
        other answers as a missing offering does)."""
        for index, line in enumerate(lines):
            if not caller.sees_offering(line.offering_id):
                raise NotFound(f"No offering {line.offering_id}.", code="event_not_found", line=index)
        given = replace(PlaceOrder(lines, note=note), given_by=caller.organizer_id, contact_email=for_email,
                        contact_own=True)
        return self.place(guest_customer(for_email), f"{caller.organizer_id}:{idempotency_key}", given)

    def _code(self, offering: Offering, request: HoldPlaces, customer_id: str, index: int) -> Code | None:
        """The code a line names (its offering's), checked before anything is held."""
        named = request.details.get("code")
        if not named:
            return None
        try:
            if self.bookings.codes is None:
                raise InvalidCode()
            return self.bookings.codes.code_for(offering.event_id, offering.currency, named, customer_id)
        except BookingError as error:
            raise _on_line(error, index) from None

    def _offering(self, offering_id: str, index: int) -> Offering:
        try:
            return self.bookings.offering(offering_id)
        except BookingError as error:
            raise _on_line(error, index) from None

    @staticmethod
    def _check_together(offerings: list[Offering]) -> None:
        ids = [offering.event_id for offering in offerings]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise InvalidRequest("One line per offering.", code="duplicate_offering", offerings=repeated,
                                 line=ids.index(repeated[0], ids.index(repeated[0]) + 1))
        organizers = {offering.get("organizer_id") for offering in offerings}
        if len(organizers) > 1:
            raise InvalidRequest("Every line of an order is one organizer's.", code="mixed_organizers")
        currencies = {offering.currency for offering in offerings}
        if len(currencies) > 1:
            raise InvalidRequest("Every line of an order is in one currency.", code="currency_mismatch",
                                 currencies=sorted(currencies))

    def _booking(self, customer_id: str, order: PlaceOrder, offerings: list[Offering], lines: list[Line],
                 now: Any) -> Booking:
        ttl = min(offering.hold_ttl_seconds for offering in offerings)
        currency = offerings[0].currency
        amount = Money(sum((line.amount.value for line in lines), Money.parse("1", currency).value * 0), currency)
        # Authorised first when any line's offering is paid two-stage: its places are secured
        # (every line's) before the money is taken.
        two_stage = any(offering.payment_mode == PaymentMode.TWO_STAGE.value for offering in offerings)
        ends = [line.ends_at for line in lines if line.ends_at]
        return Booking(
            booking_id=str(uuid.uuid4()), event_id=offerings[0].event_id, customer_id=customer_id,
            status=BookingStatus.HELD, places=merged((line.offering_id, line.places) for line in lines),
            amount=amount, payment_mode=PaymentMode.TWO_STAGE if two_stage else PaymentMode.ONE_STAGE,
            hold_expires_at=iso(now + timedelta(seconds=ttl)), created_at=iso(now), updated_at=iso(now), version=1,
            contact_email=order.contact_email, contact_own=order.contact_own and bool(order.contact_email),
            language=order.language, counted_hold=True,
            kind_details={"lines": [line.stored() for line in lines],
                          COUNTED_HOLDS: [offering.event_id for offering in offerings[1:]]},
            ends_at=max(ends, key=parse_iso) if ends else None,
        )

    def _replay(self, customer_id: str, key: str, fingerprint: str) -> HoldResult | None:
        record = self.store.get_idempotency(customer_id, key, SCOPE)
        if record is None:
            return None
        if record["fingerprint"] != fingerprint:
            raise IdempotencyKeyReused()
        booking = self.store.get_booking(record["result_id"])
        if booking is None:
            raise RequestInProgress()
        if booking.status is BookingStatus.HELD and booking.amount.is_zero:   # a comp its first try left held
            booking = self.bookings.confirm_comp(booking)
        return HoldResult(booking, replayed=True)

    # ----------------------------------------------------------------------------------- read
    def owned(self, order_id: str, customer_id: str) -> Booking:
        booking = self.bookings.owned(order_id, customer_id)
        if not is_order(booking):
            raise NotFound(f"No order {order_id}.", code="order_not_found")
        return booking

    def describe(self, booking: Booking, language: str = DEFAULT_LANGUAGE) -> dict[str, Any]:
        """The order as an answer to its placing or cancelling (no journal: GET /orders/{id} has it)."""
        return describe_order(booking, describe(booking, language))

    def view(self, order_id: str, customer_id: str, language: str = DEFAULT_LANGUAGE) -> dict[str, Any]:
        """The order as its customer reads it: the booking's view (status, payment, journal,
        what happens next) with the order's lines."""
        self.owned(order_id, customer_id)
        view = self.bookings.view(order_id, customer_id, language)
        return describe_order(self.store.get_booking(order_id) or self.owned(order_id, customer_id), view)


def describe_order(booking: Booking, view: dict[str, Any]) -> dict[str, Any]:
    """An order's answer: ``order_id`` and its ``lines`` (each with its kind's view of its places)
    beside the booking view's fields."""
    lines = []
    for line in lines_of(booking):
        kind = kinds.named(line.kind)
        shown = {"line_id": line.line_id, "kind": kind.label, "offering_id": line.offering_id, "name": line.name,
                 "amount": line.amount.as_dict(), "places": kind.describe_places(without_uses(line.places))}
        details = line.details or {}
        if details.get("code"):
            shown["code"] = {"code": details["code"], "full_amount": {"value": details["full_amount"],
                                                                      "currency": line.amount.currency}}
        for key in ("zone", "ticket_type", "ticket_types", "from", "to", "space_id", "space_type", "plate",
                    "vehicle_type"):
            if key in details:
                shown[key] = details[key]
        if line.status and booking.status is BookingStatus.CONFIRMED:
            shown["status"] = line.status   # its own life since the order was confirmed (a car inside)
        # its tickets and its entry pass, as the order's view carries them while they admit
        tickets = [ticket for ticket in view.get("tickets") or () if ticket.get("line_id") == line.line_id]
        if tickets:
            shown["tickets"] = tickets
        if view.get("entry_token") and view.get("pass_line") == line.line_id:
            shown["entry_token"] = view["entry_token"]
        lines.append(shown)
    answer = {key: value for key, value in view.items() if key not in ("booking_id", "event_id", "places")}
    return {"order_id": booking.booking_id, **answer, "lines": lines}


def out_of_block(block: dict[str, Any], request: HoldPlaces) -> Places:
    """The places a line asks of a block: its named ``seats`` (each one of the block's), or a
    ``quantity`` of its places (its first seats, or counts from its pools); 409
    ``not_in_block`` when the block does not keep them."""
    units = sorted(block.get("units") or ())
    if request.seats:
        if not set(request.seats) <= set(units):
            raise Conflict("The block does not keep those seats.", code="not_in_block",
                           seats=sorted(set(request.seats) - set(units)))
        return Places(str(block["kind"]), len(request.seats), units=tuple(request.seats))
    quantity = int(request.quantity or 0)
    if not 0 < quantity <= int(block["quantity"]):
        raise Conflict(f"The block keeps {int(block['quantity'])} place(s).", code="not_in_block",
                       kept=int(block["quantity"]))
    if units:
        return Places(str(block["kind"]), quantity, units=tuple(units[:quantity]))
    pools, needed = [], quantity
    for pool, count in sorted((block.get("pools") or {}).items()):
        take = min(int(count), needed)
        if take:
            pools.append((pool, take))
            needed -= take
    return Places(str(block["kind"]), quantity, pools=tuple(pools))


def _beside_block(places: Places, from_block: Places) -> Places:
    """A block line's claims other than its places out of the block (its comps count)."""
    return Places(places.kind, 0, pools=tuple(pool for pool in places.pools if pool not in from_block.pools))


def guest_customer(email: str) -> str:
    """The customer id of an order the organizer gives to an address: a pseudonym of it, the same
    for every order given to it (so its personal data is found and erased together)."""
    return "guest-" + hashlib.sha256(email.strip().lower().encode()).hexdigest()[:32]


def _code_asked(request: HoldPlaces) -> dict[str, str]:
    named = request.details.get("code")
    return {"code": str(named).strip().upper()} if named else {}


def _fingerprint(value: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


__all__ = ["OrderService", "PlaceOrder", "OrderLine", "describe_order", "KIND", "MAX_LINES"]
