"""A confirmed booking given to another customer (issue 45, "Transfer"; the rules in
domain/transfers.py).

* ``offer``: the holder names an address. One journalled write of the booking keeps the offer
  (the token's digest, the address's digest) and its outbox event, which the notifier mails to the
  address with the link (services/notifications.py ``TRANSFER_OFFERED``). The token itself is
  answered to the holder and carried by that outbox event only.
* ``withdraw``: the holder takes a waiting offer back (one write; nothing waiting: nothing to do).
* ``accept``: a signed-in customer holding the link takes the booking. One write, conditioned on
  the booking's version, so on the offer still waiting and the booking still CONFIRMED: the owner
  changes, the tickets shown so far are voided (online by the entry rule, offline through the
  doors' void list) and new ones are issued under the next issue; the journal entry names both owners.

Each is decided again on a fresh read when another write won the booking's version race.
"""
from __future__ import annotations

import secrets
import uuid
from typing import Any, Callable

from .. import kinds
from ..domain import transfers
from ..domain.booking import Booking
from ..domain.errors import Busy, Conflict, Forbidden, InvalidRequest, NotFound
from ..clock import iso
from ..ports import Clock, LifecycleStore
from . import transitions
from .mail_policy import address_key, same_address

ATTEMPTS = 4
OFFERED = "booking.transfer_offered"
#: the acceptance's outbox event: a fact for the organizer's systems, not a message (notifications.py)
TRANSFERRED = "booking.transferred"


class TransferService:
    def __init__(self, store: LifecycleStore, clock: Clock, accept_url: str = "", page_url: str = "") -> None:
        """``accept_url``: where the link points, ``{booking_id}`` in it replaced (TRANSFER_ACCEPT_URL);
        ``page_url``: the web page a browser opening it is sent to (TRANSFER_PAGE_URL)."""
        self.store = store
        self.clock = clock
        self.accept_url = accept_url or "/bookings/{booking_id}/transfer/accept"
        self.page_url = page_url

    def page(self, booking_id: str, token: str) -> str | None:
        """Where a browser opening the link is sent (None: no page configured)."""
        if not self.page_url:
            return None
        from urllib.parse import urlencode

        return f"{self.page_url}{'&' if '?' in self.page_url else '?'}{urlencode({'booking': booking_id, 'token': token})}"

    def _read(self, booking_id: str) -> Callable[[], Booking | None]:
        return lambda: self.store.get_booking(booking_id)

    def _gone(self, booking_id: str) -> NotFound:
        return NotFound(f"No booking {booking_id}.", code="booking_not_found")

    def rules(self, booking: Booking) -> transfers.Rules:
        kind = kinds.of_booking(booking)
        offering = self.store.get_event(booking.event_id) or {}
        return transfers.Rules(allowed=offering.get("transfers_allowed", True) is not False,
                               supported=kind.transferable, admitted=kind.admitted(booking))

    def link(self, booking_id: str, token: str) -> str:
        return f"{self.accept_url.replace('{booking_id}', booking_id)}?token={token}"

    def offer(self, booking_id: str, giver: str, to_email: str, giver_email: str | None = None) -> dict[str, Any]:
        """202 ``{"transfer_id", "accept_url", "expires_at"}``: the booking offered to ``to_email``."""
        transfer_id, secret = uuid.uuid4().hex, secrets.token_urlsafe(24)
        token = f"{transfer_id}.{secret}"
        url = self.link(booking_id, token)

        def decide(booking: Booking) -> dict[str, Any]:
            if booking.customer_id != giver:
                raise Forbidden("This booking belongs to another customer.")
            now = self.clock()
            to_self = same_address(to_email, giver_email) or same_address(to_email, booking.contact_email) \
                or same_address(to_email, giver)
            transfers.check_offer(booking, giver, self.rules(booking), now, to_self=to_self)
            pending = booking.held_difference
            if pending is not None:
                # a dearer exchange the giver is paying for: given now, the taker would get what the giver paid
                raise Conflict("An exchange of this booking is waiting for its difference to be paid.",
                               code="exchange_pending", expires_at=str(pending["expires_at"]))
            details = transfers.offered(booking, giver, transfer_id, secret, address_key(to_email), now)
            offer = details[transfers.PENDING]
            transitions.apply(self.store, booking, now, actor="customer", action="transfer_offered",
                              decision=f"offered to another customer until {offer['expires_at']}",
                              ids={"transfer_id": transfer_id}, publish=OFFERED, kind_details=details,
                              notice={"transfer_to": to_email, "accept_url": url, "transfer_id": transfer_id,
                                      "transfer_expires_at": offer["expires_at"]})
            return {"transfer_id": transfer_id, "accept_url": url, "expires_at": offer["expires_at"]}

        return transitions.decide_again(self._read(booking_id), decide, attempts=ATTEMPTS, exhausted=Busy(),
                                        gone=self._gone(booking_id))

    def withdraw(self, booking_id: str, customer: str) -> bool:
        """The holder takes back a waiting offer: True when one was withdrawn, False when none was
        waiting (a repeat, or it lapsed). Someone else's booking (given already): 403."""

        def decide(booking: Booking) -> bool:
            if booking.customer_id != customer:
                raise Forbidden("This booking belongs to another customer.")
            offer = (booking.kind_details or {}).get(transfers.PENDING)
            if not offer:
                return False
            transitions.apply(self.store, booking, self.clock(), actor="customer", action="transfer_withdrawn",
                              decision="the holder withdrew the transfer", ids={"transfer_id": offer["transfer_id"]},
                              kind_details=transfers.withdrawn(booking))
            return True

        return transitions.decide_again(self._read(booking_id), decide, attempts=ATTEMPTS, exhausted=Busy(),
                                        gone=self._gone(booking_id))

    def accept(self, booking_id: str, token: str, taker: str, taker_email: str | None = None) -> Booking:
        """``taker`` takes the booking with the link's ``token``: the booking as it is theirs."""
        transfer_id, secret = transfers.split_token(token)

        def decide(booking: Booking) -> Booking:
            now = self.clock()
            verdict = transfers.check_accept(booking, transfer_id, secret, taker, now)
            if verdict.replay:
                return booking
            assert verdict.offer is not None
            pending = booking.held_difference
            if pending is not None:
                # the giver is paying a dearer exchange's difference: taken now, it would be the taker's
                raise Conflict("An exchange of this booking is waiting for its difference to be paid; accept once "
                               "it is settled.", code="exchange_pending", expires_at=str(pending["expires_at"]))
            if booking.payment is not None and booking.payment.receipt and not taker_email:
                # its refunds' fiscal receipts go to the booking's address, which becomes the taker's
                # (a refund without one is refused by a shop that requires receipts)
                raise InvalidRequest("This booking's receipts are e-mailed to its holder: confirm your e-mail "
                                     "address, then accept again.", code="contact_required")
            giver = booking.customer_id
            details = transfers.accepted(booking, verdict.offer, taker,
                                         kinds.of_booking(booking).credential_ids(booking), now)
            # messages now go to the taker's own address (or, without one, their id if it is one)
            return transitions.apply(
                self.store, booking, now, actor="customer", action="transfer_accepted",
                decision="the booking passed to another customer; its earlier tickets are void",
                ids={"transfer_id": transfer_id, "from_customer": giver, "to_customer": taker},
                publish=TRANSFERRED, kind_details=details, customer_id=taker,
                contact_email=taker_email, contact_own=taker_email is not None)

        return transitions.decide_again(self._read(booking_id), decide, attempts=ATTEMPTS, exhausted=Busy(),
                                        gone=lambda: _unknown())

    def show(self, booking_id: str, token: str) -> dict[str, Any]:
        """What the link's page says before anything is pressed (a read: changes nothing)."""
        transfer_id, secret = transfers.split_token(token)
        booking = self.store.get_booking(booking_id)
        if booking is None:
            _unknown()
        offer = transfers.pending(booking) or {}
        if offer.get("transfer_id") != transfer_id or offer.get("token_hash") != transfers.token_digest(secret):
            done = (booking.kind_details or {}).get(transfers.ACCEPTED) or {}
            state = "accepted" if done.get("transfer_id") == transfer_id else "invalid"
            return {"state": state}
        offering = self.store.get_event(booking.event_id) or {}
        expired = str(offer["expires_at"]) <= iso(self.clock())
        return {"state": "expired" if expired else "pending", "expires_at": offer["expires_at"],
                "name": offering.get("name") or "", "starts_at": offering.get("starts_at") or ""}


def _unknown() -> Booking:
    from ..domain.errors import InvalidRequest

    raise InvalidRequest("The transfer link is unknown or was withdrawn.", code="transfer_invalid")
