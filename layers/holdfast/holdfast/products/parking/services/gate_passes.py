"""Passes through a lot's gates: entries (a reservation's token, a subscriber's or a drive-up
plate) and exits (a ticket, or the plate of a car inside), each applied once per pass id (the
gate's request calls it ``event_id``; the code says ``pass_id``).

Every pass that changes something is one transaction: the pass record (its answer), the ticket,
the places' move and, for a reservation, the booking's status change with its journal and outbox.
A pass is a gate's: its record is keyed by lot, gate and pass id. A repeat (the same gate,
id and direction, naming the car the same way) gets the stored answer back and changes nothing; the
same id naming another car is refused (409 ``pass_id_reused``). A new pass on a closed ticket is
refused (``ticket_closed``, counted) and the close is conditioned on the ticket being OPEN, so a
space is released once.

An offline pass whose id the backend had already answered online with a refusal (the gate's call
timed out, the gate decided offline and queued the same id) is not answered with that refusal: the
gate opened, so the pass is applied as the offline pass it is, in place of the online answer, and
whatever the backend still refuses opens a gate case like any offline refusal.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Callable

from holdfast import kinds
from holdfast.clock import iso, parse_iso
from holdfast.domain import entry_rights
from holdfast.domain.errors import InvalidRequest
from holdfast.domain.inventory import Move
from holdfast.domain.money import Money
from holdfast.observability import count, logger
from holdfast.ports import Change, Clock, FiscalReads, PaymentProvider, StaleBooking
from holdfast.services import checkin_cases, checkin_passes, transitions
from holdfast.services.checkin_passes import DEFAULT_MAX_CLOCK_SKEW_SECONDS, PassIdReused, dated_ahead, names_another
from .. import rules
from ..kind import CHECKED_IN, COMPLETED, Parking, allocate
from holdfast.domain.signatures import TokenInvalid, pass_id_of
from ..tokens import in_window, verify
from . import exit_payments, gate_cases
from .exit_payments import ExitPayments
from .lots import ParkingService
from ..ports import GatePassStore

TICKETS = gate_cases.NAMESPACE
#: The metric of a new exit pass showing a ticket whose car already left (docs/parking.md).
CLOSED_TICKET_PASSES = "ClosedTicketPasses"
ATTEMPTS = 3
#: What a drive-up car is taken for: a plate camera cannot tell a vehicle's size.
DRIVE_UP_VEHICLE = "REGULAR"
#: How a pass names its car; a repeat of an id must name it the same way (fields both carry).
#: What reading a record that lacks a field it should have raises: a defect, never a busy store or
#: an absent provider (those are resent by the gate).
UNREADABLE_RECORD = (KeyError, TypeError, AttributeError, IndexError)
NAMING_FIELDS = ("token", "plate", "ticket_id", "local_ticket_id", "booking_id")
#: How a gate controller's local ticket id begins (gate_controller/offline.py).
LOCAL_TICKET_PREFIX = "L-"


@dataclass(frozen=True)
class Pass:
    """One gate pass being applied: who sent it, when, whether the gate was offline, and the
    online answer it replaces (a queued pass the backend had refused while the gate timed out)."""

    lot_id: str
    gate_id: str
    pass_id: str
    at: datetime
    offline: bool
    body: dict[str, str]
    replaces_online: bool = False


class GatePasses:
    def __init__(self, store: GatePassStore, clock: Clock, parking: ParkingService, provider: Callable[[], PaymentProvider],
                 return_url: str, max_clock_skew_seconds: int = DEFAULT_MAX_CLOCK_SKEW_SECONDS,
                 exit_page_url: str | None = None, fiscal_reads: FiscalReads | None = None) -> None:
        self.store = store
        self.clock = clock
        self.parking = parking
        self.exit_payments = ExitPayments(store, clock, provider, return_url, exit_page_url, fiscal_reads)
        self.max_clock_skew = timedelta(seconds=max_clock_skew_seconds)

    def apply(self, lot_id: str, gate_id: str, event: dict[str, Any], *, at: datetime, offline: bool) -> dict[str, Any]:
        direction = "exit" if event.get("kind") == "exit" else "entry"
        call = Pass(lot_id, gate_id, pass_id_of(event), at, offline, naming(event))
        lot = self.parking.lot(lot_id)
        if offline and event.get("gate_opened") is False:
            return self._kept_shut(call, direction, event)

        def read() -> dict[str, Any] | None:
            return self.store.get_pass(lot_id, gate_id, call.pass_id, direction)

        def pass_through(done: dict[str, Any] | None) -> dict[str, Any]:
            this = call
            if done is not None:
                if names_another(done.get("body"), call.body):
                    raise PassIdReused(call.pass_id)
                if not (offline and _refused_online(done)):
                    return done["answer"]
                # the gate opened after all: what it did replaces what the backend answered
                this = replace(call, replaces_online=True)
            ahead = dated_ahead(at, self.clock(), self.max_clock_skew) if offline else None
            if ahead is not None:
                return self._from_the_future(this, event, direction, ahead)
            try:
                if direction == "entry":
                    return self._entry(lot, this, event)
                return self._exit(lot, this, event)
            except UNREADABLE_RECORD:
                if not offline:
                    raise
                # A pass the gate already let through whose records this code cannot read (a
                # field gone that it expected): a case for an operator, recorded like any refusal,
                # so the gate's later passes are applied instead of waiting behind it for ever.
                logger.exception("an offline pass could not be applied", extra={
                    "lot_id": lot_id, "gate_id": gate_id, "pass_id": call.pass_id})
                return self._refuser(this, _named(event), direction)("pass_not_applicable")

        def busy() -> dict[str, Any]:
            done = read()
            if done is not None and not (offline and _refused_online(done)):
                return done["answer"]
            return _refused(direction, "busy")

        # The booking, ticket or pass moved meanwhile (StaleBooking): read everything again. A pass
        # not recorded yet is the usual case, decided like one that was.
        return transitions.decide_again(read, pass_through, attempts=ATTEMPTS, exhausted=busy)

    def _pass_put(self, call: Pass, answer: dict[str, Any], direction: str | None = None):  # noqa: ANN202
        return self.store.pass_put(call.lot_id, call.gate_id, call.pass_id, answer, iso(call.at), direction,
                                   offline=call.offline, body=call.body, replacing_online=call.replaces_online)

    # ------------------------------------------------------------------------------ entry
    def _entry(self, lot: dict[str, Any], call: Pass, event: dict[str, Any]) -> dict[str, Any]:
        lot_id, settings, at = rules.lot_id_of(lot), Parking.settings(lot), call.at
        if event.get("token"):
            return self._entry_by_token(lot, call, str(event["token"]))
        if not event.get("plate"):
            raise InvalidRequest("An entry needs a token or a plate.", code="token_or_plate_required")
        plate = rules.normalise_plate(str(event["plate"]))
        if event.get("booking_id"):
            return self._entry_by_reservation(lot, call, plate, str(event["booking_id"]))
        refuse = self._refuser(call, {"basis": "plate", "plate": plate})
        if self.store.open_ticket_of(lot_id, plate) is not None:
            return refuse("already_inside")
        # a reservation holder the camera reads comes in on the reservation (paid, and due to go
        # NO_SHOW otherwise), not as a drive-up paying by the hour
        booking_id = self.parking.reservation_entering(lot_id, plate, at, settings.early_entry_minutes)
        if booking_id is not None:
            booking = self.store.get_booking(booking_id)
            if booking is not None:
                return self._check_in(lot, call, booking, refuse)
        if not call.offline and self.store.event_cancelled(lot_id):
            # A cancelled lot sells nothing more, drive-ups included. A car a gate let in offline
            # is inside already: its ticket is opened so that it can leave (and pay) like any other.
            return refuse("lot_closed")
        subscriber = bool(self.parking.active_subscriptions_at(lot_id, plate, at))
        start = rules.floor_granule(at)
        end = start + timedelta(minutes=settings.default_stay_minutes)
        space = allocate(self.store, lot_id, settings, DRIVE_UP_VEHICLE, False, start, end)
        conflict = None
        if space is None and call.offline and rules.floor_granule(self.clock()) > start:
            # The car went in while the gate was offline and its recorded window is taken now: it
            # is given a space free from now on, by the same fallback, if there is one.
            start = rules.floor_granule(self.clock())
            end = start + timedelta(minutes=settings.default_stay_minutes)
            space = allocate(self.store, lot_id, settings, DRIVE_UP_VEHICLE, False, start, end)
            if space is not None:
                conflict = {"type": "space_taken", "resolution": "moved", "space_id": space.space_id,
                            "needs_review": False}
        if space is None:
            return refuse("lot_full")
        local = event.get("local_ticket_id")
        # a local ticket id is the gate's own (random, and shown at another gate's exit); an event
        # id is only unique at its gate
        ticket_id = str(uuid.uuid5(TICKETS, f"{lot_id}/{local}" if local else f"{lot_id}/{call.gate_id}/{call.pass_id}"))
        places = kinds.named("parking").places(lot_id, space.space_id, start, end)  # type: ignore[attr-defined]
        ticket = self._ticket(lot, ticket_id, space, plate, call, subscription=subscriber,
                              granules=[g.at for g in places.granules])
        answer = _opened(ticket) | ({"conflict": conflict} if conflict else {})
        items = [(f"claim:{g.at}", self.store.granule_claim(g, ticket_id, Move.RETAKE)) for g in places.granules]
        items += self.store.ticket_open(ticket) + [self._pass_put(call, answer)]
        if not call.offline:
            # the sale gate, as in every hold: a cancellation between the check above and this
            # write closes it, and the retry then answers lot_closed
            items.append(self.store.sale_gate_check(lot_id, ticket_id))
        # StaleBooking: the space went meanwhile (or the pass was applied): again
        self.store.commit(Change(items=tuple(items)))
        return answer

    def _entry_by_token(self, lot: dict[str, Any], call: Pass, token: str) -> dict[str, Any]:
        lot_id, settings = rules.lot_id_of(lot), Parking.settings(lot)
        refuse = self._refuser(call, {"basis": "token"})
        try:
            # the window's end is the pass's exp: after it, outside_window (in_window) says so first
            payload = verify(token, self.parking.keys(), lot_id)
        except TokenInvalid as exc:
            return refuse(exc.reason)
        if not in_window(payload, call.at, settings.early_entry_minutes):
            return refuse("outside_window")
        booking = self.store.get_booking(payload["bk"])
        if booking is None or _part(booking, lot_id) is None:
            return refuse("reservation_not_found")
        return self._check_in(lot, call, booking, refuse)

    def _entry_by_reservation(self, lot: dict[str, Any], call: Pass, plate: str, booking_id: str) -> dict[str, Any]:
        """A plate an offline gate let in as the holder of a reservation it had cached (the gate
        configuration lists them): that reservation is checked in, as a token would have been."""
        refuse = self._refuser(call, {"basis": "reservation", "plate": plate, "booking_id": booking_id})
        booking = self.store.get_booking(booking_id)
        part = _part(booking, rules.lot_id_of(lot)) if booking is not None else None
        details = (part.kind_details or {}) if part is not None else {}
        if booking is None or part is None or details.get("plate") != plate:
            return refuse("reservation_not_found")
        window = {"from": details["from"], "to": details["to"]}
        if not in_window(window, call.at, Parking.settings(lot).early_entry_minutes):
            return refuse("outside_window")
        return self._check_in(lot, call, booking, refuse)

    def _check_in(self, lot: dict[str, Any], call: Pass, booking: Any, refuse: Callable[..., dict[str, Any]]
                  ) -> dict[str, Any]:
        lot_id, gate_id = rules.lot_id_of(lot), call.gate_id
        part = _part(booking, lot_id)   # the lot's part of it: the booking, or an order's parking line
        assert part is not None
        if not entry_rights.admits(part):   # the one rule of doors and gates (domain/entry_rights.py)
            reason = "already_inside" if str(part.status) == CHECKED_IN else "reservation_not_active"
            return refuse(reason, booking_id=booking.booking_id)
        details = part.kind_details or {}
        if booking.erased_at or not details.get("plate"):
            return refuse("reservation_not_active", booking_id=booking.booking_id)   # ended and erased
        if self.store.open_ticket_of(lot_id, details["plate"]) is not None:
            return refuse("already_inside", booking_id=booking.booking_id, plate=details["plate"])
        settings = Parking.settings(lot)
        space = settings.by_id()[details["space_id"]]
        ticket_id = str(uuid.uuid5(TICKETS, f"{lot_id}/booking/{booking.booking_id}"))
        claims: list[Any] = []
        granules = None
        if space.space_id in {t["space_id"] for t in self.store.open_tickets(lot_id)}:
            # A car that stayed past its own window is still on the reserved space: the holder is
            # put on a space free for the rest of its window, which its ticket claims itself (the
            # reservation keeps its own granules, released when it completes).
            start = rules.floor_granule(call.at)
            end = max(parse_iso(details["to"]), start + rules.GRANULE)
            space = allocate(self.store, lot_id, settings, details["vehicle_type"], bool(details.get("permit")),
                             start, end)
            if space is None:
                return refuse("space_occupied", booking_id=booking.booking_id, plate=details["plate"])
            places = kinds.named("parking").places(lot_id, space.space_id, start, end)  # type: ignore[attr-defined]
            granules = [g.at for g in places.granules]
            claims = [(f"ticket-claim:{g.at}", self.store.granule_claim(g, ticket_id, Move.RETAKE))
                      for g in places.granules]
        ticket = self._ticket(lot, ticket_id, space, details["plate"], call, booking_id=booking.booking_id,
                              prepaid=booking.amount.text, customer_id=booking.customer_id, granules=granules)
        answer = _opened(ticket)
        extra = claims + self.store.ticket_open(ticket) + [self._pass_put(call, answer)]
        transitions.advance_part(self.store, booking, part, self.clock(), CHECKED_IN, actor="gate",
                                 action="vehicle_entered",
                                 decision=f"entered through gate {gate_id} onto space {space.space_id}",
                                 ids={"ticket_id": ticket_id, "gate_id": gate_id}, extra=extra)
        return answer

    # ------------------------------------------------------------------------------- exit
    def _exit(self, lot: dict[str, Any], call: Pass, event: dict[str, Any]) -> dict[str, Any]:
        lot_id, settings, at, gate_id = rules.lot_id_of(lot), Parking.settings(lot), call.at, call.gate_id
        ticket = self._exit_ticket(lot_id, event, at)
        if ticket is None:
            return self._refuse_exit(call, "ticket_not_found", _named(event))
        if ticket["status"] != "OPEN":
            # its car left once: a new pass showing it is another car, or the same one again for
            # free (a repeat of the pass that closed it has that pass's id, answered above)
            count(CLOSED_TICKET_PASSES)
            logger.warning("exit pass on a closed ticket", extra={"lot_id": lot_id, "gate_id": gate_id,
                                                                   "pass_id": call.pass_id,
                                                                   "ticket_id": ticket["ticket_id"]})
            return self._refuse_exit(call, "ticket_closed", {**_named(event), "ticket_id": ticket["ticket_id"],
                                                             "plate": ticket.get("plate")})
        currency = lot["currency"]
        tariff = rules.Tariff.of(settings, currency)
        minutes = tariff.stay_minutes(parse_iso(ticket["entered_at"]), at)
        charge = Decimal("0.00") if ticket.get("subscription") else tariff.charge(minutes).value
        records = self.exit_payments.settled(ticket)
        prepaid, paid = Decimal(ticket.get("prepaid") or "0"), exit_payments.paid_total(records)
        due = rules.amount_due(charge, prepaid + paid)
        # every exit payment not counted here must still be unpaid when the ticket closes
        extra = [self.store.exit_payment_not_paid(ticket["ticket_id"], int(r["number"]))
                 for r in records if r["state"] != "paid"]
        if due > 0 and not call.offline:
            url = self.exit_payments.ask(ticket, Money(due, currency), records, iso(at), lot)
            return self._record(call, _owed(Money(due, currency), url))
        if due > 0:
            # the offline gate let the car out owing money: the ticket closes (the space is free)
            # with what it left unpaid, and a case goes to an operator
            answer = _owed(Money(due, currency), None)
            case = self._case(call, "exit", "payment_required", ticket_id=ticket["ticket_id"],
                              plate=ticket.get("plate"), booking_id=ticket.get("booking_id"),
                              amount_due=answer["amount_due"])
            answer["conflict"] = checkin_cases.conflict_of(case)
            extra += self.store.gate_case_items(case)
        else:
            answer = _granted(None)
            over = min(paid, prepaid + paid - charge)
            if over > 0:   # exit payments beyond the charge: an operator gives the rest back
                extra += self.store.gate_case_items(gate_cases.new_case(
                    gate_cases.case_id(lot_id, "overpaid", ticket["ticket_id"]), "payment", lot_id, "exit_overpaid",
                    iso(self.clock()), "gate", ticket_id=ticket["ticket_id"], plate=ticket.get("plate"),
                    amount={"value": f"{over:.2f}", "currency": currency},
                    payment_ids=[r["payment_id"] for r in records if r["state"] == "paid"]), ticket.get("booking_id"))
        extra += self.store.ticket_close(ticket, iso(at), f"{charge:.2f}", f"{due:.2f}" if due > 0 else None) + \
            [self._pass_put(call, answer, "exit")]
        if ticket.get("booking_id"):
            booking = self.store.get_booking(ticket["booking_id"])
            # a holder put on another space (its own was taken) frees that one too
            extra += [(f"ticket-claim:{at_key}", self.store.granule_claim(_granule(lot_id, ticket, at_key),
                                                               ticket["ticket_id"], Move.UNSELL))
                      for at_key in ticket.get("granules") or ()]
            # the customer's receipt (services/messages.py): the stay, the tariff and the money
            receipt = {"space_id": ticket["space_id"], "entered_at": ticket["entered_at"], "exited_at": iso(at),
                       "minutes": rules.stay_minutes(parse_iso(ticket["entered_at"]), at, 0),
                       "hourly": tariff.hourly.as_dict(), "grace_minutes": tariff.grace_minutes,
                       "charge": Money(charge, currency).as_dict(), "prepaid": Money(prepaid, currency).as_dict(),
                       "paid": Money(paid, currency).as_dict(),
                       **({"daily_cap": tariff.daily_cap.as_dict()} if tariff.daily_cap else {}),
                       **({"due": Money(due, currency).as_dict()} if due > 0 else {})}
            # an order's parking line: its own granules are freed with it (transitions.apply_part),
            # the order's other lines stay
            part = _part(booking, lot_id) if booking is not None else None
            transitions.advance_part(self.store, booking, part or booking, self.clock(), COMPLETED, actor="gate",
                                     action="vehicle_exited",
                                     decision=f"left through gate {gate_id}; charged {charge:.2f}"
                                              + (f"; left owing {due:.2f}" if due > 0 else ""),
                                     ids={"ticket_id": ticket["ticket_id"], "gate_id": gate_id}, extra=extra,
                                     notice={"receipt": receipt})
            return answer
        claims = [(f"claim:{at_key}", self.store.granule_claim(_granule(lot_id, ticket, at_key),
                                                      ticket["ticket_id"], Move.UNSELL)) for at_key in ticket["granules"]]
        outbox = self.store.ticket_outbox(ticket, {"type": "vehicle.exited", "at": iso(at), "status": "COMPLETED",
                                                   "space_id": ticket["space_id"],
                                                   "charge": Money(charge, currency).as_dict()})
        self.store.commit(Change(items=(*claims, *extra, outbox)))
        return answer

    def _kept_shut(self, call: Pass, direction: str, event: dict[str, Any]) -> dict[str, Any]:
        """A pass the gate refused on its own after its call went unanswered, reported at sync. If
        the backend had let the car through (an entry that opened a ticket, an exit that closed
        one), the gate did not: a ticket is open for a car that never came in, or closed on a car
        still inside. An operator settles it (a case naming the ticket); the ticket is left as it
        is, since the car may have come back through another pass meanwhile."""
        def settle(done: dict[str, Any] | None) -> dict[str, Any]:
            if done is not None and names_another(done.get("body"), call.body):
                raise PassIdReused(call.pass_id)
            if done is not None:
                answer = done["answer"]
                if not (answer.get("gate_open") or answer.get("exit_granted")):
                    return answer
                known = _named(event)
                # an exit by plate names no ticket now closed (the plate's open one may be a later visit's)
                ticket = self._exit_ticket(call.lot_id, {**event, "plate": None}, call.at) if direction == "exit" else \
                    self.store.get_ticket(answer["ticket_id"])
                if ticket is not None:
                    known.update(ticket_id=ticket["ticket_id"], plate=ticket.get("plate"),
                                 booking_id=ticket.get("booking_id"))
                case = self._case(call, direction, "gate_kept_shut", **known)
                if self.store.get_gate_case(case["case_id"]) is None:   # once: a repeated sync finds it
                    try:
                        self.store.commit(Change(items=tuple(self.store.gate_case_items(case))))
                    except StaleBooking:
                        pass   # a sync running beside this one wrote it first
                return {**answer, "conflict": checkin_cases.conflict_of(case)}
            answer = _refused(direction, "gate_kept_shut")
            self.store.commit(Change(items=(self._pass_put(call, answer, direction),)))
            return answer

        def read() -> dict[str, Any] | None:
            return self.store.get_pass(call.lot_id, call.gate_id, call.pass_id, direction)

        # a pass recorded meanwhile (StaleBooking): the stored answer is read again
        return transitions.decide_again(read, settle, attempts=ATTEMPTS,
                                        exhausted=lambda: _refused(direction, "busy"))

    def _exit_ticket(self, lot_id: str, event: dict[str, Any], at: datetime) -> dict[str, Any] | None:
        """The ticket an exit names: the backend's id, or a gate's local one (printed offline, shown
        at any gate: once its entry is synced the backend knows it by the id derived from it), or
        the plate's open ticket if its car came in before the exit (an offline gate's exit synced
        late was another visit's: it never closes a visit that began after it)."""
        shown = [str(event["ticket_id"])] if event.get("ticket_id") else []
        local = [str(event["local_ticket_id"])] if event.get("local_ticket_id") else \
            [t for t in shown if t.startswith(LOCAL_TICKET_PREFIX)]
        for wanted in shown + [str(uuid.uuid5(TICKETS, f"{lot_id}/{t}")) for t in local]:
            found = self.store.get_ticket(wanted)
            if found is not None and found["lot_id"] == lot_id:
                return found
        if event.get("plate"):
            found = self.store.open_ticket_of(lot_id, rules.normalise_plate(str(event["plate"])))
            return found if found is not None and parse_iso(found["entered_at"]) <= at else None
        return None

    def _refuse_exit(self, call: Pass, reason: str, known: dict[str, Any]) -> dict[str, Any]:
        """An exit the lot cannot match to a car inside. Offline the car is gone (a case, as any
        offline refusal). Online a car waits at a shut barrier: another car on an old ticket, a
        ticket the lot never saw, or the ticket's own car whose granted exit the gate never heard
        (asking again at another gate). Only a person can tell which, so it is a case too; the
        answer stays the plain refusal."""
        if call.offline:
            return self._refuser(call, known, "exit")(reason)
        answer = _refused("exit", reason)
        case = self._case(call, "exit", reason, **known)
        # StaleBooking: recorded meanwhile, the stored answer is read again
        self.store.commit(Change(items=(*self.store.gate_case_items(case), self._pass_put(call, answer, "exit"))))
        return answer

    def _from_the_future(self, call: Pass, event: dict[str, Any], direction: str,
                         answer: dict[str, Any]) -> dict[str, Any]:
        """An offline pass dated too far ahead (checkin_passes.dated_ahead): refused for good and
        recorded, so the gate's sequence moves on (the sync reports it ``failed``); the car did
        pass, so a case goes to an operator."""
        basis = ("token" if event.get("token") else "plate") if direction == "entry" else None
        return self._record_case(call, direction, answer, "pass_time_in_future", {"basis": basis, **_named(event)})

    # ------------------------------------------------------------------------------ parts
    def _ticket(self, lot: dict[str, Any], ticket_id: str, space: Any, plate: str, call: Pass,
                **more: Any) -> dict[str, Any]:
        return {"ticket_id": ticket_id, "lot_id": rules.lot_id_of(lot), "space_id": space.space_id, "space_type": space.type,
                "plate": plate, "entered_at": iso(call.at), "status": "OPEN", "gate_id": call.gate_id,
                "entry_event_id": call.pass_id,
                **{key: value for key, value in more.items() if value not in (None, False)}}

    def _refuser(self, call: Pass, known: dict[str, Any], direction: str = "entry") -> Callable[..., dict[str, Any]]:
        """Refuses a pass. Online the gate stays shut; offline the car has already passed, so the
        refusal opens a case for an operator (GET /admin/reviews), written with the pass record so
        that a repeated sync neither loses nor doubles it."""
        def refuse(reason: str, **more: Any) -> dict[str, Any]:
            answer = _refused(direction, reason)
            if not call.offline:
                return self._record(call, answer)
            return self._record_case(call, direction, answer, reason, {**known, **more})
        return refuse

    def _case(self, call: Pass, direction: str, reason: str, **known: Any) -> dict[str, Any]:
        # event ids are unique per gate only: two gates' passes never share a case
        case_id = gate_cases.case_id(call.lot_id, direction, call.gate_id, call.pass_id)
        return gate_cases.new_case(case_id, direction, call.lot_id, reason, iso(self.clock()), "gate_sync",
                                   gate_id=call.gate_id, event_id=call.pass_id, at=iso(call.at), **known)

    def _record_case(self, call: Pass, direction: str, answer: dict[str, Any], reason: str,
                     known: dict[str, Any]) -> dict[str, Any]:
        case = self._case(call, direction, reason, **known)
        answer["conflict"] = checkin_cases.conflict_of(case)
        items = [self._pass_put(call, answer, direction)]
        # the online refusal this pass replaces may have opened the same case (a car at a shut exit)
        if not (call.replaces_online and self.store.get_gate_case(case["case_id"]) is not None):
            items += self.store.gate_case_items(case)
        self.store.commit(Change(items=tuple(items)))   # StaleBooking: applied meanwhile, read it again
        return answer

    def _record(self, call: Pass, answer: dict[str, Any]) -> dict[str, Any]:
        """An answer that changes nothing, kept so that a repeat of the pass gets it back."""
        # StaleBooking: recorded meanwhile, the stored answer is read again
        self.store.commit(Change(items=(self._pass_put(call, answer),)))
        return answer


def _part(booking: Any, lot_id: str) -> Any:
    """The lot's part of a booking (kinds/base.py ``part``): the reservation itself, or an
    order's parking line of this lot; None when it has no places here."""
    return kinds.of_booking(booking).part(booking, lot_id)


def _granule(lot_id: str, ticket: dict[str, Any], at_key: str):
    from holdfast.domain.inventory import Granule

    return Granule(f"{lot_id}|{ticket['space_id']}", at_key)


def _named(event: dict[str, Any]) -> dict[str, Any]:
    """How a pass named its car, for a case about it."""
    return {key: event.get(key) for key in ("plate", "ticket_id", "local_ticket_id")}


def _opened(ticket: dict[str, Any]) -> dict[str, Any]:
    return {"gate_open": True, "ticket_id": ticket["ticket_id"], "space_id": ticket["space_id"], "reason": None}


def _refused(direction: str, reason: str) -> dict[str, Any]:
    if direction == "entry":
        return {"gate_open": False, "ticket_id": None, "space_id": None, "reason": reason}
    return {"exit_granted": False, "amount_due": None, "confirmation_url": None, "reason": reason}


def _granted(reason: str | None) -> dict[str, Any]:
    return {"exit_granted": True, "amount_due": None, "confirmation_url": None, "reason": reason}


def _owed(due: Money, url: str | None) -> dict[str, Any]:
    return {"exit_granted": False, "amount_due": due.as_dict(), "confirmation_url": url, "reason": "payment_required"}


def naming(event: dict[str, Any]) -> dict[str, str]:
    """How a pass names its car, as digests (a token is a credential and is not stored)."""
    return checkin_passes.naming(event, NAMING_FIELDS,
                                 lambda name, raw: rules.normalise_plate(raw) if name == "plate" else raw)


def _refused_online(done: dict[str, Any]) -> bool:
    """A pass answered online with the gate kept shut (a refusal, or money to pay first)."""
    answer = done["answer"]
    opened = answer.get("gate_open", answer.get("exit_granted"))
    return done.get("mode") == "online" and opened is False
