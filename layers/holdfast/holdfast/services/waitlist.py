"""The waitlist: customers queue for a sold-out event; when places come back, the first in line
gets an offer that is a real hold (a HELD booking made through BookingService, with its own
window and its own expiry execution).

Entries are ordered by join time and entry id (first come, first served) in the event's
``WAITLIST#<event>`` partition. Taking the head is a conditional transaction (the queue item is
deleted and a PENDING offer written), so two relays running at once cannot offer one entry twice.
The hold's idempotency key is ``waitlist-offer-<entry id>``, in the system's own scope (a customer
sending that key writes a different record): a redelivered outbox event, or a relay that crashed
between the claim and the hold, finishes the same offer instead of making a second one. An offer
that cannot be made (for a reason that will not pass, or after a few unexplained failures) is
dropped with its reason on the entry, and the next in line is offered the places.
See docs/catalog-waitlist-surge.md.
"""
from __future__ import annotations

import uuid
from typing import Any

from .. import kinds
from ..clock import iso
from ..domain import pricing
from ..domain.errors import (
    BookingError,
    Busy,
    Conflict,
    EventCancelled,
    InvalidRequest,
    NotFound,
    RequestInProgress,
    SeatsUnavailable,
    SoldOut,
    TooBusy,
)
from ..domain.statuses import OCCUPYING, BookingStatus
from ..observability import WAITLIST_OFFERS_TAKEN, count, logger
from ..domain.commands import HoldPlaces
from ..ports import Clock, StoreError, TransientStoreError, WaitlistStore
from .bookings import BookingService
from .releases import pause

#: Entry states in which the customer may join again (their earlier turn is over).
REJOINABLE = ("PASSED", "DONE", "SKIPPED")
#: How many offers one call of ``advance`` makes at most (a large release is served over several).
MAX_STEPS = 25
#: Failed attempts at one offer's hold, for reasons not known to be permanent, before it is skipped.
MAX_OFFER_FAILURES = 3
OFFER_TYPE = "waitlist.offer"
#: What an entry may wait for instead of any place of the event (issue 43): a zone, a price category.
SECTION = ("zone", "price_category")
#: Queue entries a line of sections looks through for the next one served.
LINE_LOOK = 100


def _section(item: dict[str, Any]) -> dict[str, str]:
    return {key: str(item[key]) for key in SECTION if item.get(key)}


def section_of(event: dict[str, Any], zone: str | None, price_category: str | None) -> dict[str, str]:
    """The section a join waits for: a general-admission event's zone (named, or the one zone of a
    named price category; one of several zones must be named, 400 ``zone_required``, as a hold's
    must), a seat map's price category (400 ``unknown_price_category`` for one it has not), or
    nothing: any place of the event."""
    if pricing.zones_of(event):
        if zone is None and price_category is not None:
            of_category = [z.zone_id for z in pricing.zones_of(event) if z.price_category == price_category]
            if len(of_category) != 1:
                raise InvalidRequest(f"Name the zone of price category {price_category} to wait for.",
                                     code="zone_required" if of_category else "unknown_price_category",
                                     price_category=price_category, zones=of_category)
            zone = of_category[0]
        if zone is not None and zone in pricing.hidden_zones(event):
            raise InvalidRequest("Not on sale.", code="not_on_sale", hidden=[zone])
        chosen = pricing.zone_of(event, zone)
        return {"zone": chosen.zone_id} if chosen is not None and len(pricing.zones_of(event)) > 1 else {}
    if zone is not None:
        raise InvalidRequest("This event has no zones.", code="unknown_zone", zone=zone)
    if price_category is not None:
        if price_category not in set(pricing.seat_category_map(event).values()):
            raise InvalidRequest(f"No price category {price_category} at this event.",
                                 code="unknown_price_category", price_category=price_category)
        return {"price_category": price_category}
    return {}


class WaitlistService:
    def __init__(self, store: WaitlistStore, bookings: BookingService, clock: Clock, offer_seconds: int = 900) -> None:
        self.store = store
        self.bookings = bookings
        self.clock = clock
        self.offer_seconds = offer_seconds

    # ------------------------------------------------------------------------------- customer

    def join(self, event_id: str, customer_id: str, quantity: int,
             contact_email: str | None = None, language: str = "en", zone: str | None = None,
             price_category: str | None = None) -> tuple[dict[str, Any], bool]:
        """Put the customer in line; joining again while on the list returns the same entry.
        ``contact_email`` and ``language`` are kept on the entry and given to the offer's hold, for its emails.
        ``zone`` (a general-admission event's) or ``price_category`` (a seat map's, or the one zone
        of that category) puts the customer in that section's line: offered only places released
        there (``section_of``)."""
        event = self.store.get_event(event_id)
        if event is None:
            raise NotFound(f"No event {event_id}.", code="event_not_found")
        if event.get("cancelled_at") or self.store.event_cancelled(event_id):
            raise EventCancelled(event_id)
        limit = int(event["max_per_booking"])
        if quantity < 1 or quantity > limit:
            raise InvalidRequest(f"quantity must be between 1 and {limit}.", code="invalid_quantity", max=limit)
        # The offer this entry would get, asked now: a kind that cannot make one (appointment
        # slots) refuses before an entry exists that every later release would trip over.
        kind = kinds.of_event(event)
        section = section_of(event, zone, price_category)
        offer = {**kind.waitlist_request(quantity), **section}
        for attempt in range(3):
            existing = self.store.waitlist_entry(event_id, customer_id)
            if existing is not None and existing["state"] not in REJOINABLE:
                return self._describe(event_id, existing), False
            if attempt == 0:
                # ...nor at this moment: a line for what is sold no more (an event that has
                # started) would never be served; one already in it is answered as it is
                kind.check_time(event, offer, self.clock())
                self._refuse_while_free(event, quantity, section)
            now = iso(self.clock())
            entry_id = uuid.uuid4().hex
            entry = {"entry_id": entry_id, "customer_id": customer_id, "quantity": quantity, "joined_at": now,
                     "queue_sk": self.store.waitlist_queue_key(now, entry_id), "state": "WAITING", **section}
            if contact_email:
                entry["contact_email"] = contact_email
            if language != "en":
                entry["language"] = language
            try:
                if self.store.waitlist_join(event_id, entry, REJOINABLE):
                    return self._describe(event_id, entry), True
            except TransientStoreError:
                pause(attempt)  # nothing was written; look at the entry again
        raise Busy()

    def _refuse_while_free(self, event: dict[str, Any], quantity: int, section: dict[str, str]) -> None:
        """A line is for places nobody can take now: with enough free for this request, joining
        would make the relay hold them for the customer on the system's behalf, past the waiting
        room and with the offer's window. Such a customer books them like anyone else."""
        free = self._free(event, section)
        if free >= quantity:
            raise Conflict(f"{free} place(s) are free: book them instead of joining the waitlist.",
                           code="places_available", available=free,
                           book=f"/events/{event['event_id']}/bookings")

    def status(self, event_id: str, customer_id: str) -> dict[str, Any]:
        entry = self.store.waitlist_entry(event_id, customer_id)
        if entry is None:
            raise NotFound("You are not on this event's waitlist.", code="not_on_waitlist")
        return self._describe(event_id, entry)

    def leave(self, event_id: str, customer_id: str) -> dict[str, Any]:
        entry = self.store.waitlist_entry(event_id, customer_id)
        if entry is None or entry["state"] in REJOINABLE:
            raise NotFound("You are not on this event's waitlist.", code="not_on_waitlist")
        if entry["state"] != "WAITING":
            raise Conflict("An offer is being made or stands for you; cancel its booking instead.",
                           code="offer_pending", booking_id=entry.get("booking_id"))
        if not self.store.waitlist_leave(event_id, customer_id, entry):
            raise Conflict("Your turn came while you were leaving; look at the waitlist again.", code="offer_pending")
        return {"event_id": event_id, "entry_id": entry["entry_id"], "state": "LEFT"}

    def _describe(self, event_id: str, entry: dict[str, Any]) -> dict[str, Any]:
        view: dict[str, Any] = {"event_id": event_id, "entry_id": entry["entry_id"], "state": entry["state"],
                                "quantity": int(entry["quantity"]), "joined_at": entry["joined_at"], "position": None}
        if entry["state"] == "WAITING":
            view["position"] = self.store.waitlist_position(event_id, entry["queue_sk"]) or None
        for key in SECTION:
            if entry.get(key):
                view[key] = entry[key]
        if entry["state"] == "SKIPPED" and entry.get("reason"):
            view["reason"] = entry["reason"]
        if entry.get("booking_id"):
            view["offer"] = {"booking_id": entry["booking_id"], "hold_expires_at": entry.get("hold_expires_at")}
        return view

    # ---------------------------------------------------------------------------------- offers

    def advance(self, event_id: str) -> list[str]:
        """Offer freed places to the first in line, as far as they go. Called by the outbox relay
        for every change that released places (and after a join). Safe to run twice at once and
        to repeat: returns the booking ids of the offers this call made or completed."""
        made: list[str] = []
        if self.store.event_cancelled(event_id):
            return made  # nothing is offered for a cancelled event; its holds are being released
        for _ in range(MAX_STEPS):
            offers = self.store.waitlist_offers(event_id)
            self._close_finished(event_id, offers)
            pending = sorted((o for o in offers if o["state"] == "PENDING"), key=lambda o: o["queue_sk"])
            if pending:
                # An offer claimed (here or by a relay that crashed) but without its hold yet comes
                # first, in queue order, so a later entry can never overtake it.
                booking_id = self._complete(event_id, pending[0])
                if booking_id is None:
                    return made
                if booking_id:  # "" when the offer could not be made and the entry was skipped
                    made.append(booking_id)
                continue
            head = self._next_served(event_id)
            if head is None:
                return made
            reason = self._skip_reason(event_id, head["customer_id"])
            if reason:
                self.store.waitlist_skip(event_id, head, reason)
                continue
            if self._available(event_id, _section(head)) < int(head["quantity"]):
                return made  # first come, first served: the head waits for enough places
            self.store.waitlist_claim(event_id, head, iso(self.clock()))
            # Won or lost, the next round finishes whichever PENDING offer is first in line.
        return made

    def _complete(self, event_id: str, offer: dict[str, Any]) -> str | None:
        """Make the hold of a PENDING offer; None when the places are not there (back in line), ""
        when the offer cannot be made for this entry (skipped, the next in line goes on)."""
        event = self.store.get_event(event_id)
        quantity = int(offer["quantity"])
        entry = self.store.waitlist_entry(event_id, offer["customer_id"]) or {}
        own = entry.get("entry_id") == offer["entry_id"]
        contact = entry.get("contact_email") if own else None
        wanted = {**kinds.of_event(event).waitlist_request(quantity), **_section(offer)} if event \
            else {"quantity": quantity}
        request = HoldPlaces.of({**wanted, "contact_email": contact, "language": entry.get("language") if own else None})
        try:
            result = self.bookings.hold_for_customer(
                event_id, offer["customer_id"], f"waitlist-offer-{offer['entry_id']}", request,
                hold_seconds=self.offer_window(event), outbox_type=OFFER_TYPE, actor="waitlist",
                extra={"waitlist_entry": offer["entry_id"]},
            )
        except (SoldOut, SeatsUnavailable):
            self.store.waitlist_unclaim(event_id, offer)
            return None
        except (StoreError, TooBusy, Busy, RequestInProgress):
            raise  # contention: the relay's redelivery tries again
        except BookingError as exc:
            # The same request would fail the same way every time (the event changed, say): holding
            # the line for it would stop everyone behind.
            self._drop(event_id, offer, f"offer_failed:{exc.code}")
            return ""
        except Exception as exc:
            # Unknown: may pass (the relay retries), but only so often before the next in line goes on.
            failures = int(offer.get("failures", 0)) + 1
            if failures < MAX_OFFER_FAILURES:
                self.store.waitlist_offer_failed(event_id, offer, failures)
                raise
            logger.exception("waitlist offer kept failing", extra={"event_id": event_id, "entry_id": offer["entry_id"]})
            self._drop(event_id, offer, f"offer_failed:{type(exc).__name__}")
            return ""
        booking = result.booking
        self.store.waitlist_offered(event_id, offer, booking.booking_id, booking.hold_expires_at)
        logger.info("waitlist offer", extra={"event_id": event_id, "entry_id": offer["entry_id"],
                                              "booking_id": booking.booking_id, "replayed": result.replayed})
        return booking.booking_id

    def offer_window(self, event: dict[str, Any] | None) -> int:
        """How long an offer holds: the offering's own hold time, never more (WAITLIST_OFFER_SECONDS
        only shortens it). A longer window would keep places from everyone else longer than a
        customer booking them is allowed to."""
        if event is None or not event.get("hold_ttl_seconds"):
            return self.offer_seconds
        return min(self.offer_seconds, int(event["hold_ttl_seconds"]))

    def _drop(self, event_id: str, offer: dict[str, Any], reason: str) -> None:
        logger.warning("waitlist entry skipped: its offer cannot be made",
                       extra={"event_id": event_id, "entry_id": offer["entry_id"], "reason": reason})
        self.store.waitlist_drop_offer(event_id, offer, reason)

    def _close_finished(self, event_id: str, offers: list[dict[str, Any]]) -> None:
        for offer in offers:
            if offer["state"] != "OFFERED":
                continue
            booking = self.store.get_booking(offer["booking_id"])
            if booking is None or booking.status in OCCUPYING and booking.status is not BookingStatus.CONFIRMED:
                continue
            state = "DONE" if booking.status is BookingStatus.CONFIRMED else "PASSED"
            if self.store.waitlist_close(event_id, offer, state):
                offer["state"] = state
                if state == "DONE":
                    count(WAITLIST_OFFERS_TAKEN)

    def _skip_reason(self, event_id: str, customer_id: str) -> str | None:
        for booking_id in self.store.customer_booking_ids(customer_id, event_id):
            booking = self.store.get_booking(booking_id)
            if booking is not None and booking.status in OCCUPYING:
                return f"already_has_places:{booking_id}"
        return None

    def _next_served(self, event_id: str) -> dict[str, Any] | None:
        """The entry served next: the head of the line, unless the line is one per zone or price
        category and the head waits for its own section's places. Then the first entry whose
        section has enough places, first come, first served within each section: an entry waiting
        in a section holds back the later ones of that section, and one waiting for any place of
        the event holds back everyone after it (any released place would be its)."""
        line = self.store.waitlist_line(event_id, LINE_LOOK)
        if not line or not any(_section(entry) for entry in line):
            return line[0] if line else None
        event = self.store.get_event(event_id)
        if event is None:
            return line[0]
        waiting: set[tuple[tuple[str, str], ...]] = set()
        for entry in line:
            section = _section(entry)
            key = tuple(sorted(section.items()))
            if key in waiting:
                continue
            if self._free(event, section) >= int(entry["quantity"]) or self._skip_reason(event_id, entry["customer_id"]):
                return entry
            if not section:
                return entry   # it waits for any place: nobody after it is served first
            waiting.add(key)
        return line[0]

    def _available(self, event_id: str, section: dict[str, str] | None = None) -> int:
        event = self.store.get_event(event_id)
        if event is None:
            return 0
        return self._free(event, section or {})

    def _free(self, event: dict[str, Any], section: dict[str, str]) -> int:
        """The most places one hold can take now, in ``section`` (a zone's or a price category's
        available places) or anywhere at the event."""
        kind = kinds.of_event(event)
        if section.get("zone"):   # only a general-admission event has zones (Kind.zone_counts)
            return int(kind.zone_counts(self.store, event).get(section["zone"], {}).get("available", 0))
        if section.get("price_category"):
            states = kind.unit_states(self.store, event["event_id"]) or {}
            return sum(1 for seat, category in pricing.seat_category_map(event).items()
                       if category == section["price_category"] and states.get(seat, "available") == "available")
        return kind.largest_hold(self.store, event["event_id"])
