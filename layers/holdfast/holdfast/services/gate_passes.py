"""Passes through a lot's gates: entries (a reservation's token, a subscriber's or a drive-up
plate) and exits (a ticket, or the plate of a car inside), each applied once per ``event_id``.

Every pass that changes something is one transaction: the pass record (its answer), the ticket,
the places' move and, for a reservation, the booking's status change with its journal and outbox.
A repeated ``event_id`` gets the stored answer back and changes nothing; a second exit of a closed
ticket is conditioned away (the ticket must be OPEN), so a space is released once.
"""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Callable

from .. import kinds
from ..adapters.dynamo import BookingStore, StaleBooking
from ..adapters.granule_claims import granule_claim
from ..clock import Clock, iso, parse_iso
from ..domain import parking as rules
from ..adapters.provider import ProviderError
from ..domain.errors import InvalidRequest, PaymentProviderUnavailable
from ..domain.inventory import Move
from ..domain.money import Money
from ..kinds.parking import CHECKED_IN, COMPLETED, Parking, allocate
from ..parking_tokens import TokenInvalid, in_window, verify
from . import transitions
from .parking import ParkingService

TICKETS = uuid.UUID("8d7a1f0c-52b3-4e9a-b6d1-0f4c3a2e9b57")
ATTEMPTS = 3
#: What a drive-up car is taken for: a plate camera cannot tell a vehicle's size.
DRIVE_UP_VEHICLE = "REGULAR"


def apply_pass(lot_id: str, gate_id: str, event: dict[str, Any], *, at: datetime, offline: bool) -> dict[str, Any]:
    """The one entry point for a gate pass (online routes and gate-controller's sync)."""
    from .. import wiring

    return wiring.gate_passes().apply(lot_id, gate_id, event, at=at, offline=offline)


class GatePasses:
    def __init__(self, store: BookingStore, clock: Clock, parking: ParkingService, provider: Callable[[], Any],
                 return_url: str) -> None:
        self.store = store
        self.clock = clock
        self.parking = parking
        self.provider = provider
        self.return_url = return_url

    def apply(self, lot_id: str, gate_id: str, event: dict[str, Any], *, at: datetime, offline: bool) -> dict[str, Any]:
        event_id = str(event["event_id"])
        direction = "exit" if event.get("kind") == "exit" else "entry"
        lot = self.parking.lot(lot_id)
        for _ in range(ATTEMPTS):
            done = self.store.get_pass(lot_id, event_id, direction)
            if done is not None:
                return done
            try:
                if direction == "entry":
                    return self._entry(lot, gate_id, event_id, event, at, offline)
                return self._exit(lot, gate_id, event_id, event, at)
            except StaleBooking:
                continue   # the booking, ticket or pass moved meanwhile: read everything again
        done = self.store.get_pass(lot_id, event_id, direction)
        return done if done is not None else _refused(direction, "busy")

    # ------------------------------------------------------------------------------ entry
    def _entry(self, lot: dict[str, Any], gate_id: str, event_id: str, event: dict[str, Any], at: datetime,
               offline: bool) -> dict[str, Any]:
        lot_id, settings = lot["event_id"], Parking.settings(lot)
        if event.get("token"):
            return self._entry_by_token(lot, gate_id, event_id, str(event["token"]), at, offline)
        if not event.get("plate"):
            raise InvalidRequest("An entry needs a token or a plate.", code="token_or_plate_required")
        plate = rules.normalise_plate(str(event["plate"]))
        refuse = self._refuser(lot_id, gate_id, event_id, at, offline, {"basis": "plate", "plate": plate})
        if self.store.open_ticket_of(lot_id, plate) is not None:
            return refuse("already_inside")
        subscriber = bool(self.parking.active_subscriptions_at(lot_id, plate, at))
        start = rules.floor_granule(at)
        end = start + timedelta(minutes=settings.default_stay_minutes)
        space = allocate(self.store, lot_id, settings, DRIVE_UP_VEHICLE, False, start, end)
        conflict = None
        if space is None and offline and rules.floor_granule(self.clock()) > start:
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
        ticket_id = str(uuid.uuid5(TICKETS, f"{lot_id}/{local or event_id}"))
        places = kinds.named("parking").places(lot_id, space.space_id, start, end)  # type: ignore[attr-defined]
        ticket = self._ticket(lot, ticket_id, space, plate, at, gate_id, event_id,
                              subscription=subscriber, granules=[g.at for g in places.granules])
        answer = _opened(ticket) | ({"conflict": conflict} if conflict else {})
        items = [(f"claim:{g.at}", granule_claim(self.store.table, g, ticket_id, Move.RETAKE)) for g in places.granules]
        items += self.store.ticket_open(ticket) + [self.store.pass_put(lot_id, gate_id, event_id, answer, iso(at))]
        if not self.store.write(items):
            raise StaleBooking(ticket_id)   # the space went meanwhile (or the pass was applied): again
        return answer

    def _entry_by_token(self, lot: dict[str, Any], gate_id: str, event_id: str, token: str, at: datetime,
                        offline: bool) -> dict[str, Any]:
        lot_id, settings = lot["event_id"], Parking.settings(lot)
        refuse = self._refuser(lot_id, gate_id, event_id, at, offline, {"basis": "token"})
        try:
            payload = verify(token, self.parking.keys().public_raw(lot_id), lot_id)
        except TokenInvalid as exc:
            return refuse(exc.reason)
        if not in_window(payload, at, settings.early_entry_minutes):
            return refuse("outside_window")
        booking = self.store.get_booking(payload["bk"])
        if booking is None or booking.event_id != lot_id:
            return refuse("reservation_not_found")
        if str(booking.status) != "CONFIRMED":
            reason = "already_inside" if str(booking.status) == CHECKED_IN else "reservation_not_active"
            return refuse(reason, booking_id=booking.booking_id)
        details = booking.kind_details or {}
        if self.store.open_ticket_of(lot_id, details["plate"]) is not None:
            return refuse("already_inside", booking_id=booking.booking_id, plate=details["plate"])
        space = Parking.settings(lot).by_id()[details["space_id"]]
        ticket_id = str(uuid.uuid5(TICKETS, f"{lot_id}/booking/{booking.booking_id}"))
        ticket = self._ticket(lot, ticket_id, space, details["plate"], at, gate_id, event_id,
                              booking_id=booking.booking_id, prepaid=booking.amount.text, customer_id=booking.customer_id)
        answer = _opened(ticket)
        extra = self.store.ticket_open(ticket) + [self.store.pass_put(lot_id, gate_id, event_id, answer, iso(at))]
        transitions.advance(self.store, booking, self.clock(), CHECKED_IN, actor="gate", action="vehicle_entered",
                            decision=f"entered through gate {gate_id} onto space {space.space_id}",
                            ids={"ticket_id": ticket_id, "gate_id": gate_id}, extra=extra)
        return answer

    # ------------------------------------------------------------------------------- exit
    def _exit(self, lot: dict[str, Any], gate_id: str, event_id: str, event: dict[str, Any], at: datetime) -> dict[str, Any]:
        lot_id, settings = lot["event_id"], Parking.settings(lot)
        ticket = None
        if event.get("ticket_id"):
            ticket = self.store.get_ticket(str(event["ticket_id"]))
            ticket = ticket if ticket and ticket["lot_id"] == lot_id else None
        elif event.get("plate"):
            ticket = self.store.open_ticket_of(lot_id, rules.normalise_plate(str(event["plate"])))
        if ticket is None:
            return self._record(lot_id, gate_id, event_id, at, _refused("exit", "ticket_not_found"))
        if ticket["status"] != "OPEN":
            return self._record(lot_id, gate_id, event_id, at, _granted("already_exited"))
        currency = lot["currency"]
        hourly = Money.parse(settings.hourly, currency)
        cap = Money.parse(settings.daily_cap, currency) if settings.daily_cap else None
        minutes = rules.stay_minutes(parse_iso(ticket["entered_at"]), at, settings.grace_minutes)
        charge = Decimal("0.00") if ticket.get("subscription") else rules.tariff(hourly, cap, minutes)
        payment = self._settle_exit_payment(ticket)
        paid = Decimal(ticket.get("prepaid") or "0") + Decimal(payment["amount"] if payment and payment.get("paid") else "0")
        due = rules.amount_due(charge, paid)
        if due > 0:
            return self._record(lot_id, gate_id, event_id, at, self._ask_payment(ticket, Money(due, currency)))
        answer = _granted(None)
        extra = self.store.ticket_close(ticket, iso(at), f"{charge:.2f}") + \
            [self.store.pass_put(lot_id, gate_id, event_id, answer, iso(at))]
        if ticket.get("booking_id"):
            booking = self.store.get_booking(ticket["booking_id"])
            transitions.advance(self.store, booking, self.clock(), COMPLETED, actor="gate", action="vehicle_exited",
                                decision=f"left through gate {gate_id}; charged {charge:.2f}",
                                ids={"ticket_id": ticket["ticket_id"], "gate_id": gate_id}, extra=extra)
            return answer
        claims = [(f"claim:{at_key}", granule_claim(self.store.table, _granule(lot_id, ticket, at_key),
                                                      ticket["ticket_id"], Move.UNSELL)) for at_key in ticket["granules"]]
        outbox = self.store.ticket_outbox(ticket, {"type": "vehicle.exited", "at": iso(at), "status": "COMPLETED",
                                                   "space_id": ticket["space_id"], "charge": f"{charge:.2f}"})
        if not self.store.write(claims + extra + [outbox]):
            raise StaleBooking(ticket["ticket_id"])
        return answer

    def _settle_exit_payment(self, ticket: dict[str, Any]) -> dict[str, Any] | None:
        """The ticket's exit payment, marked paid once the provider says it succeeded."""
        payment = ticket.get("exit_payment")
        if not payment or payment.get("paid") or not payment.get("payment_id"):
            return payment
        try:
            found = self.provider().get_payment(payment["payment_id"])
        except ProviderError:
            raise PaymentProviderUnavailable("The payment provider cannot be reached; try the exit again.",
                                             retry_after=5) from None
        if found.get("status") == "succeeded" and Money.parse(payment["amount"], payment["currency"]).matches(found.get("amount") or {}):
            settled = {**payment, "paid": True}
            if self.store.set_exit_payment(ticket["ticket_id"], settled, payment):
                return settled
        return payment

    def _ask_payment(self, ticket: dict[str, Any], due: Money) -> dict[str, Any]:
        payment = ticket.get("exit_payment")
        if payment and not payment.get("paid") and payment.get("amount") == due.text:
            if payment.get("confirmation_url"):
                return _owed(due, payment["confirmation_url"])
            record = {key: payment[key] for key in ("idempotence_key", "number", "amount", "currency")}
        else:
            # The key is stored before the call: a lost answer is asked again under the same key,
            # so the provider never makes a second payment for the same amount.
            number = int(payment["number"]) + 1 if payment else 1
            record = {"idempotence_key": f"hf-exit-{ticket['ticket_id']}-{number}", "number": number,
                      "amount": due.text, "currency": due.currency}
            if not self.store.set_exit_payment(ticket["ticket_id"], record, payment):
                raise StaleBooking(ticket["ticket_id"])
        key = record["idempotence_key"]
        try:
            created = self.provider().create_payment(
                amount=due.as_dict(), description=f"Parking exit, ticket {ticket['ticket_id']}",
                metadata={"ticket_id": ticket["ticket_id"], "lot_id": ticket["lot_id"]}, capture=True,
                return_url=self.return_url.replace("{booking_id}", ticket.get("booking_id") or ""), idempotence_key=key)
        except ProviderError:
            # the key is stored: the next exit asks again under it (a lost answer made no second payment)
            raise PaymentProviderUnavailable("The payment provider cannot be reached; try the exit again.",
                                             retry_after=5) from None
        url = (created.get("confirmation") or {}).get("confirmation_url")
        self.store.set_exit_payment(ticket["ticket_id"], {**record, "payment_id": created["id"], "confirmation_url": url},
                                    record)
        return _owed(due, url)

    # ------------------------------------------------------------------------------ parts
    def _ticket(self, lot: dict[str, Any], ticket_id: str, space: Any, plate: str, at: datetime, gate_id: str,
                event_id: str, **more: Any) -> dict[str, Any]:
        return {"ticket_id": ticket_id, "lot_id": lot["event_id"], "space_id": space.space_id, "space_type": space.type,
                "plate": plate, "entered_at": iso(at), "status": "OPEN", "gate_id": gate_id, "entry_event_id": event_id,
                **{key: value for key, value in more.items() if value not in (None, False)}}

    def _refuser(self, lot_id: str, gate_id: str, event_id: str, at: datetime, offline: bool,
                 known: dict[str, Any]) -> Callable[..., dict[str, Any]]:
        """Refuses an entry. Online the gate stays shut; offline the car is already inside, so the
        refusal opens a case for an operator (GET /admin/reviews), written with the pass record so
        that a repeated sync neither loses nor doubles it."""
        def refuse(reason: str, **more: Any) -> dict[str, Any]:
            answer = _refused("entry", reason)
            if not offline:
                return self._record(lot_id, gate_id, event_id, at, answer)
            case_id = str(uuid.uuid5(TICKETS, f"{lot_id}/case/{event_id}"))
            answer["conflict"] = {"type": "refused_after_pass", "reason": reason, "resolution": "review",
                                  "case_id": case_id, "needs_review": True}
            case = {"case_id": case_id, "lot_id": lot_id, "gate_id": gate_id, "event_id": event_id, "at": iso(at),
                    "reason": reason, "status": "OPEN", "opened_at": iso(self.clock()), **known, **more}
            items = [self.store.gate_case_put(case), self.store.pass_put(lot_id, gate_id, event_id, answer, iso(at))]
            if not self.store.write(items):
                raise StaleBooking(case_id)   # applied meanwhile: the stored answer is read again
            return answer
        return refuse

    def _record(self, lot_id: str, gate_id: str, event_id: str, at: datetime, answer: dict[str, Any]) -> dict[str, Any]:
        """An answer that changes nothing, kept so that a repeat of the pass gets it back."""
        if not self.store.write([self.store.pass_put(lot_id, gate_id, event_id, answer, iso(at))]):
            return self.store.get_pass(lot_id, event_id, "entry" if "gate_open" in answer else "exit") or answer
        return answer


def _granule(lot_id: str, ticket: dict[str, Any], at_key: str):
    from ..domain.inventory import Granule

    return Granule(f"{lot_id}|{ticket['space_id']}", at_key)


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
