"""An event's doors and the scans of its tickets through them: the check-in machinery a lot's gates
use too (device keys stored hashed, signed passes, pass ids answered once, the sequenced sync,
check-in cases), with the rules of a ticket.

A ticket is checked in once: the check-in item (``CHECKINS#<event> T#<ticket>``) is created by the
scan's one transaction, conditioned on not existing, with the pass record (its answer) and the
booking's journalled change (its version, so a customer's cancel racing the scan reads it again
and sees the ticket used). Two new scans of one ticket, at one door or two, are decided on a fresh
read each: the one whose write lands admits, the other reads again and answers
``already_checked_in`` with the first scan's time and door.

A door that could not reach the backend admitted by the signature alone; at sync its scans are
applied as they happened (at their own time). What the backend would have refused (a ticket
another door admitted too, a ticket voided meanwhile) is already inside: it opens a check-in case
for an operator, written with the pass record, and nothing is undone. A synced scan dated ahead of
the backend's clock beyond the allowed skew (a door whose clock is wrong, or a forged sync) checks
nothing in: it is refused for good (``pass_time_in_future``, the gates' rule) with a case.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Callable, Iterable

from holdfast import kinds
from holdfast.clock import iso
from holdfast.domain import entry_rights
from holdfast.domain.booking import Booking
from holdfast.domain.errors import Busy, NotFound, Unauthorized
from holdfast.domain.exports import ProductExport, moment
from holdfast.domain.organizers import Caller, require_owner
from holdfast.domain.signatures import TokenInvalid, device_key_matches, new_device, pass_id_of, revoked_may_sync
from holdfast.ports import Change, Clock
from holdfast.services import checkin_cases, transitions
from holdfast.services.checkin_cases import CaseDesk, CaseKind
from holdfast.services.checkin_passes import (DEFAULT_MAX_CLOCK_SKEW_SECONDS, PassIdReused, dated_ahead,
                                              names_another, naming)
from .. import tickets
from ..general_admission import GeneralAdmission
from ..ports import CheckinCaseStore, DoorStore
from ..seat_map import SeatMap
from holdfast.domain.signatures import PublicKeys

ATTEMPTS = 4
#: How a scan names its ticket; a repeat of a pass id must name it the same way.
NAMING_FIELDS = ("token",)
CASE_NAMESPACE = uuid.UUID("6e2f9b41-0d3a-4c6e-9f85-1a7b3c5d2e90")
RESOLUTIONS = {"checkin": ("acknowledged", "dismissed")}
#: The outbox event of a ticket admitted at a door: a fact for the organizer's webhooks
#: (``checkin.created``), which the notifier leaves alone (services/notifications.py).
CHECKED_IN = "booking.checked_in"
#: Statuses of a booking whose tickets were issued and are void now (a door refuses them offline).
#: How long a door may trust the voided list it read before reading it again.
VOIDED_TTL_SECONDS = 60


class DoorUnauthorized(Unauthorized):
    code = "door_unauthorized"


@dataclass(frozen=True)
class Scan:
    """One scan being applied: which event and door, the door's pass id, when, online or not."""

    event_id: str
    door_id: str
    pass_id: str
    at: datetime
    offline: bool
    body: dict[str, str]


_UNREAD = object()   # ``Doors.scan``: the pass record is read by the scan itself
#: a ticket's token payload, the booking it names and the ticket's check-in, as read together
TicketRead = tuple[dict[str, Any], Booking | None, dict[str, Any] | None]


class Doors:
    def __init__(self, store: DoorStore, clock: Clock, keys: Callable[[], PublicKeys],
                 max_clock_skew_seconds: int = DEFAULT_MAX_CLOCK_SKEW_SECONDS,
                 sync_cursor: Callable[[str, str], int] | None = None) -> None:
        self.store = store
        #: a door's next expected sequence number (its sync's cursor), kept when the door is revoked
        self.sync_cursor = sync_cursor
        self.clock = clock
        self.keys = keys
        self.max_clock_skew = timedelta(seconds=max_clock_skew_seconds)

    # ------------------------------------------------------------------------------ doors
    def event(self, event_id: str, caller: Caller | None = None) -> dict[str, Any]:
        """The event (an organizer's own only), if it sells places with tickets."""
        missing = NotFound(f"No event {event_id}.", code="event_not_found")
        event = require_owner(self.store.get_event(event_id), caller, missing)
        if not isinstance(kinds.of_event(event), (GeneralAdmission, SeatMap)):
            raise missing
        return event

    def create_door(self, event_id: str, name: str, caller: Caller | None = None) -> dict[str, Any]:
        door, key = new_device("door_id", name, "dk_", iso(self.clock()), self.event(event_id, caller))
        self.store.put_door(event_id, door)
        return {**{k: door[k] for k in ("door_id", "name")}, "event_id": event_id, "door_key": key,
                **self.keys().public_key(event_id)}

    def delete_door(self, event_id: str, door_id: str, caller: Caller | None = None) -> None:
        """The door stops: its key answers 401 but on its sync, which may still report the scans it
        made before it heard, for a grace period and up to a number past the last one recorded now
        (``revoked_after_seq``). Its item stays (what it did stays explained); a repeat changes nothing."""
        self.event(event_id, caller)
        if self.store.get_door(event_id, door_id) is None:
            raise NotFound(f"No door {door_id}.", code="door_not_found")
        recorded = self.sync_cursor(event_id, door_id) - 1 if self.sync_cursor else 0
        self.store.retire_door(event_id, door_id, iso(self.clock()), recorded)

    def door(self, event_id: str, door_id: str, key: str | None, deleted_too: bool = False) -> dict[str, Any]:
        """The door, if ``key`` is its key (401 otherwise, alike for an unknown or deleted door;
        ``deleted_too``: a revoked door's key still names it, for the sync that reports its last scans,
        within the grace after its revocation: ``signatures.revoked_may_sync``)."""
        return self._authorized(self.store.get_door(event_id, door_id) if key else None, key, deleted_too)

    def _authorized(self, door: dict[str, Any] | None, key: str | None, deleted_too: bool = False) -> dict[str, Any]:
        if door is None or (door.get("deleted_at") and not (deleted_too and revoked_may_sync(door, self.clock()))) \
                or not device_key_matches(door.get("key_sha256"), key):
            raise DoorUnauthorized("The door key is missing or wrong.")
        return door

    def config(self, event_id: str, door_id: str, key: str | None) -> dict[str, Any]:
        """What a door needs to admit while offline: the event's public key, the tickets voided so
        far, and the doors' policy."""
        self.door(event_id, door_id, key)
        event, now = self.event(event_id), self.clock()
        return {"event_id": event_id, "door_id": door_id, **self.keys().public_key(event_id),
                "starts_at": event.get("starts_at"),
                "doors": [{"door_id": d["door_id"], "name": d["name"]} for d in self.store.list_doors(event_id)
                          if not d.get("deleted_at")],
                "voided_tickets": self.voided_tickets(event_id),
                "voided_valid_until": iso(now + timedelta(seconds=VOIDED_TTL_SECONDS)),
                "policy": {"offline_admission": "signature", "one_scan_per_ticket": True,
                           "refuse_voided": True}}

    def voided_tickets(self, event_id: str) -> list[str]:
        """Every ticket of the event's bookings that no longer admits (domain/entry_rights.py
        ``revoked``; one walk of the event's index)."""
        bookings = self.store.get_bookings(sorted(self.store.event_booking_ids(event_id)))
        voided: set[str] = set()
        for booking in bookings:
            part = kinds.of_booking(booking).part(booking, event_id)
            # a booking exchanged to another event keeps the tickets it had here void
            voided |= set(tickets.revoked(part)) if part is not None else entry_rights.voided_credentials(booking)
        return sorted(voided)

    # ------------------------------------------------------------------------------ scans
    def scan_online(self, event_id: str, door_id: str, key: str | None, read_body: Callable[[], dict[str, Any]], *,
                    at: datetime) -> dict[str, Any]:
        """The scan route: the door's key checked and the scan applied, the door and the pass id's
        record read together (one ``BatchGetItem``). A wrong key answers 401 before a bad body's 400."""
        try:
            body = read_body()
        except Exception:
            self.door(event_id, door_id, key)
            raise
        # the token is checked first (no call), so that the door, the pass id's record, and the
        # booking and check-in the ticket names are one read
        try:
            payload: dict[str, Any] | None = tickets.check(str(body.get("token") or ""), self.keys(), event_id, at)
        except TokenInvalid:
            payload = None
        ticket = (payload["bk"], payload["tk"]) if payload else None
        door, done, booking, first = (self.store.get_door_pass_and_ticket(event_id, door_id, pass_id_of(body),
                                                                          ticket) if key else (None,) * 4)
        self._authorized(door, key)
        return self.scan(event_id, door_id, body, at=at, offline=False, recorded=done,
                         ticket=(payload, booking, first) if payload else None)

    def scan(self, event_id: str, door_id: str, event: dict[str, Any], *, at: datetime, offline: bool,
             retired: bool = False, recorded: dict[str, Any] | None | object = _UNREAD,
             ticket: TicketRead | None = None) -> dict[str, Any]:
        """One scan (``event``: the door's pass id as ``event_id``, the ``token``; a synced one may
        say ``admitted: false``, a scan the door refused by itself), answered once per pass id.
        ``retired``: a revoked door's offline scan, applied on no door's authority: whoever it let
        in is inside, so it is refused (``door_deleted``) with a check-in case, never checked in.
        ``recorded``: the pass id's record as the caller read it already (None: not recorded);
        ``ticket``: the token's payload, its booking and its check-in as the caller read them."""
        call = Scan(event_id, door_id, pass_id_of(event), at, offline, naming(event, NAMING_FIELDS))

        def decide(done: dict[str, Any] | None) -> dict[str, Any]:
            if done is not None:
                if names_another(done.get("body"), call.body):
                    raise PassIdReused(call.pass_id, "ticket", "door")
                return done["answer"]
            if offline and event.get("admitted") is False:
                return self._record(call, _refused(event.get("reason") or "refused_at_door"))
            ahead = dated_ahead(at, self.clock(), self.max_clock_skew) if offline else None
            if ahead is not None:
                return self._from_the_future(call, str(event.get("token") or ""), ahead)
            if retired:
                return self._refuse(call, "door_deleted", None)
            return self._check_in(call, str(event.get("token") or ""), ticket_read.pop() if ticket_read else None)

        def exhausted() -> dict[str, Any]:
            raise Busy()

        known = [] if recorded is _UNREAD else [recorded]
        ticket_read = [ticket] if ticket else []   # the first decision's; after a collision, read again

        def read() -> dict[str, Any] | None:   # the caller's read first, a fresh one after a collision
            return known.pop() if known else self.store.get_door_pass(event_id, door_id, call.pass_id)

        return transitions.decide_again(read, decide,
                                        attempts=ATTEMPTS, exhausted=exhausted)

    def _check_in(self, call: Scan, token: str, read: TicketRead | None = None) -> dict[str, Any]:
        if read is None:
            try:
                payload = tickets.check(token, self.keys(), call.event_id, call.at)
            except TokenInvalid as exc:
                return self._refuse(call, exc.reason, None)
            booking, first = self.store.get_booking_and_checkin(payload["bk"], call.event_id, payload["tk"])
        else:
            payload, booking, first = read
        ticket_id = payload["tk"]
        # the event's part of the booking (an order's line of this event), or None
        part = kinds.of_booking(booking).part(booking, call.event_id) if booking is not None else None
        seat = dict(tickets.places(part)).get(ticket_id, "-") if part is not None else "-"
        if seat == "-" and part is not None and ticket_id in entry_rights.voided_credentials(part):
            seat = payload.get("seat")   # a ticket of an earlier issue (the booking was transferred): void
        if booking is not None and seat == "-" and ticket_id in entry_rights.voided_credentials(booking):
            # a ticket its booking no longer has: an exchange re-issued them (to this event or another)
            return self._refuse(call, "ticket_void", _refused("ticket_void", ticket_id=ticket_id, seat_id=None),
                                booking_id=booking.booking_id)
        if booking is None or part is None or seat == "-":
            return self._refuse(call, "bad_token", None)
        known = {"ticket_id": ticket_id, "seat_id": seat}
        if first is not None:
            answer = _refused("already_checked_in", **known, checked_in_at=first["checked_in_at"],
                              door_id=first["door_id"])
            return self._refuse(call, "already_checked_in", answer, case_reason="double_checkin",
                                booking_id=booking.booking_id)
        if not tickets.admits(part, ticket_id):
            return self._refuse(call, "ticket_void", _refused("ticket_void", **known), booking_id=booking.booking_id)
        return self._admit(call, booking, part, ticket_id, seat)

    def _admit(self, call: Scan, booking: Booking, part: Booking, ticket_id: str, seat: str | None
               ) -> dict[str, Any]:
        at = iso(call.at)
        answer = {"admitted": True, "reason": "admitted", "ticket_id": ticket_id, "seat_id": seat,
                  "checked_in_at": at, "door_id": call.door_id}
        checkin = {"ticket_id": ticket_id, "booking_id": booking.booking_id, "seat_id": seat, "door_id": call.door_id,
                   "checked_in_at": at, "pass_id": call.pass_id, "mode": "offline" if call.offline else "online"}
        details = dict(part.kind_details or {})
        details["checked_in"] = sorted({*details.get("checked_in", ()), ticket_id})
        # kept on the event's part of the booking (an order's line), put back into the booking
        details = kinds.of_booking(booking).with_part(booking, replace(part, kind_details=details)).kind_details
        # StaleBooking (the ticket checked in meanwhile, the pass recorded, the booking moved): the
        # scan is decided again on a fresh read
        transitions.apply(self.store, booking, self.clock(), actor="door", action="ticket_checked_in",
                          decision=f"ticket {ticket_id} checked in at door {call.door_id}"
                                   + (" (offline)" if call.offline else ""),
                          ids={"ticket_id": ticket_id, "door_id": call.door_id, "pass_id": call.pass_id},
                          extra=[self.store.checkin_put(call.event_id, checkin), self._pass_put(call, answer)],
                          publish=CHECKED_IN, notice={"ticket_id": ticket_id, "door_id": call.door_id},
                          kind_details=details)
        return answer

    def _refuse(self, call: Scan, reason: str, answer: dict[str, Any] | None, *, case_reason: str | None = None,
                **known: Any) -> dict[str, Any]:
        """A scan not admitted. Online the door stays shut; offline the holder is inside already, so
        a check-in case goes to an operator with the pass record (a repeated sync neither loses nor
        doubles it)."""
        answer = answer or _refused(reason)
        if not call.offline:
            return self._record(call, answer)
        case = checkin_cases.new_case(
            checkin_cases.case_id(CASE_NAMESPACE, call.event_id, call.door_id, call.pass_id), "checkin",
            ("event_id", call.event_id), case_reason or reason, iso(self.clock()), "door_sync",
            "checkin_case_opened", door_id=call.door_id, pass_id=call.pass_id, at=iso(call.at),
            **{"ticket_id": answer.get("ticket_id"), "seat_id": answer.get("seat_id"),
               "first_checked_in_at": answer.get("checked_in_at"), "first_door_id": answer.get("door_id"), **known})
        answer = {**answer, "conflict": checkin_cases.conflict_of(case)}
        self.store.commit(Change(items=(self._pass_put(call, answer), *self.store.checkin_case_items(case))))
        return answer

    def _from_the_future(self, call: Scan, token: str, answer: dict[str, Any]) -> dict[str, Any]:
        """A synced scan dated too far ahead (checkin_passes.dated_ahead): nothing is checked in,
        the refusal is recorded for good, and the holder the door let in is a case. The case names
        the ticket when the token is the event's own, so an operator can find who it was."""
        try:
            payload = tickets.check(token, self.keys(), call.event_id)
        except TokenInvalid:
            payload = {}
        return self._refuse(call, "pass_time_in_future", answer, ticket_id=payload.get("tk"),
                            booking_id=payload.get("bk"))

    def _record(self, call: Scan, answer: dict[str, Any]) -> dict[str, Any]:
        """An answer that changes nothing, kept so that a repeat of the pass gets it back."""
        self.store.commit(Change(items=(self._pass_put(call, answer),)))   # StaleBooking: recorded meanwhile
        return answer

    def _pass_put(self, call: Scan, answer: dict[str, Any]):  # noqa: ANN202
        return self.store.door_pass_put(call.event_id, call.door_id, call.pass_id, answer, iso(call.at),
                                        offline=call.offline, body=call.body)

    # --------------------------------------------------------------------------- check-ins
    def checkins(self, event_id: str, caller: Caller | None = None) -> dict[str, Any]:
        """Who is in: the count, per door, and per minute (for the operator page's live view)."""
        self.event(event_id, caller)
        doors = {d["door_id"]: d for d in self.store.list_doors(event_id)}
        found = sorted(self.store.event_checkins(event_id), key=lambda c: (c["checked_in_at"], c["ticket_id"]))
        by_door: dict[str, dict[str, Any]] = {
            door_id: {"door_id": door_id, "name": door["name"], "deleted": bool(door.get("deleted_at")),
                      "checked_in": 0, "offline": 0, "last_at": None} for door_id, door in doors.items()}
        per_minute: dict[str, dict[str, int]] = {}
        for checkin in found:
            row = by_door.setdefault(checkin["door_id"], {"door_id": checkin["door_id"], "name": None, "deleted": True,
                                                          "checked_in": 0, "offline": 0, "last_at": None})
            row["checked_in"] += 1
            row["offline"] += checkin.get("mode") == "offline"
            row["last_at"] = checkin["checked_in_at"]
            minute = per_minute.setdefault(checkin["checked_in_at"][:16], {})
            minute[checkin["door_id"]] = minute.get(checkin["door_id"], 0) + 1
        return {"event_id": event_id, "checked_in": len(found), "as_of": iso(self.clock()),
                "doors": sorted(by_door.values(), key=lambda r: (r["name"] or "", r["door_id"])),
                "over_time": [{"minute": minute, "by_door": counts, "checked_in": sum(counts.values())}
                              for minute, counts in sorted(per_minute.items())],
                "recent": [{key: c.get(key) for key in ("ticket_id", "seat_id", "door_id", "checked_in_at", "mode")}
                           for c in found[-20:][::-1]]}


def checkin_rows(store: Any, offering: dict[str, Any]) -> list[dict[str, Any]]:
    """The check-in export's rows of one offering (``CHECKIN_EXPORT``): every ticket admitted at its
    doors, read from the check-ins themselves."""

    return [{"ticket_id": c["ticket_id"], "booking_id": c.get("booking_id"), "seat_id": c.get("seat_id"),
             "door_id": c.get("door_id"), "checked_in_at": moment(c.get("checked_in_at")), "mode": c.get("mode")}
            for c in store.event_checkins(offering["event_id"])]


#: The ``checkins`` CSV export (``Product.exports``; docs/api.md, "Exports"): a row per ticket admitted
CHECKIN_EXPORT = ProductExport(
    columns=("ticket_id", "booking_id", "offering_id", "offering_name", "seat_id", "door_id", "checked_in_at", "mode"),
    moment="checked_in_at", key="ticket_id", rows="holdfast.products.events.services.doors:checkin_rows")


def _refused(reason: str, **known: Any) -> dict[str, Any]:
    return {"admitted": False, "reason": reason, "ticket_id": None, "seat_id": None, "checked_in_at": None,
            "door_id": None, **known}


def refused_after_pass(event: dict[str, Any], result: dict[str, Any]) -> dict[str, Any] | None:
    """A synced scan the door admitted that the backend's answer refuses, without a case named (a
    scan the door itself refused is no conflict)."""
    if event.get("admitted") is not False and result.get("admitted") is False:
        return {"type": "refused_after_pass", "reason": result.get("reason"), "needs_review": True}
    return None


class CheckinCases(CaseDesk):
    def __init__(self, store: CheckinCaseStore, clock: Clock, organizers: Callable[[], Iterable[str]] = tuple) -> None:
        super().__init__(store, clock, organizers=organizers, kind=CaseKind(
            scope_field="event_id", resolutions=RESOLUTIONS, not_found_code="checkin_case_not_found",
            resolved_action="checkin_case_resolved", noun="check-in case", get=store.get_checkin_case,
            resolve_item=store.checkin_case_resolve, listed=store.list_checkin_cases))
