"""Customer notifications.

The outbox relay publishes every outbox event to the notifications bus (EventBridge); a rule
sends them to an SQS queue and ``NotifierFunction`` turns each into one notification. The
de-duplication id is the outbox item's key (booking and version; ``<booking>#reminder`` for the
payment reminder): the conditional ``record_notification`` put lets exactly one delivery through,
however often the stream, the bus or the queue repeat it. The recorded item is the local sink
(``python -m holdfast.tools.cli notifications <customer>``); with a sender configured the same text
also goes out by email through SES, as the mail policy allows (services/mail_policy.py). The
message (subject, text, HTML, files) is rendered by services/messages.py.
"""
from __future__ import annotations

import hmac
import json
from collections.abc import Iterable
from typing import Any

from ..domain.statuses import HOLDING
from ..observability import logger
from ..ports import EmailSender, Message, NotificationStore
from .mail_policy import SENT, UNCONFIRMED, MailGate, address_key, same_address
from .messages import Site, compose

SOURCE = "holdfast.bookings"
#: Outbox events that are facts for the organizer's systems (webhooks), not messages to customers:
#: the notifier records and sends nothing for them.
NOT_FOR_CUSTOMERS = frozenset({"booking.checked_in", "case.opened", "booking.transferred"})
#: A booking offered to another address (services/transfers.py): mailed to that address, not the
#: holder's. Its link is what the message is for, so no confirmation is asked first (the recipient
#: would have to confirm an address before learning why); suppression and the hourly limit apply,
#: and the holder can have one waiting offer per booking.
TRANSFER_OFFERED = "booking.transfer_offered"


def dedup_id(detail: dict[str, Any]) -> str:
    if detail.get("type") == "booking.hold_expiring":
        return f"{detail['booking_id']}#reminder"
    if detail.get("type") == "event.changed":   # once per customer and change, not per booking
        return f"event-{detail['event_id']}#{int(detail['version']):06d}"
    return f"{detail['booking_id']}#{int(detail['version']):06d}"


def recipient(detail: dict[str, Any]) -> str | None:
    """The booking's contact address (given when booking or joining the waitlist); failing that,
    the customer id when the identity provider uses email addresses as ids; else nobody."""
    if detail.get("type") == TRANSFER_OFFERED:
        return str(detail.get("transfer_to") or "") or None
    contact = detail.get("contact_email")
    if contact:
        return str(contact)
    customer = str(detail.get("customer_id", ""))
    return customer if "@" in customer else None


def notify(store: NotificationStore, detail: dict[str, Any], sender: EmailSender | None = None,
           site: Site | None = None, gate: MailGate | None = None) -> bool:
    """One notification for one change: recorded once (False for a repeat), then emailed when a
    sender is configured and the booking has an address, as the mail policy allows (``gate``:
    suppressed, unconfirmed and rate-limited messages are recorded with that verdict and not
    sent). If the email fails, the record is taken back and the error raised, so the queue's
    redelivery tries again."""
    message_type = str(detail.get("type", ""))
    if message_type in NOT_FOR_CUSTOMERS:
        return False
    if message_type == "booking.held" and detail.get("comp"):
        # a comp's hold (domain/codes.py ``comp_mark``): confirmed without a payment in the next
        # write, whose booking.confirmed is its message; "please pay" would be wrong
        return False
    dedup = dedup_id(detail)
    customer = str(detail["customer_id"])
    to = recipient(detail) if sender is not None else None
    if to is not None and gate is None:
        raise TypeError("a sender needs the mail policy (gate): no mail goes out unchecked")
    # A repeat (the stream, the bus and the queue each deliver at least once) is known by its
    # record before anything is read or rendered for it; the conditional put below still decides
    # between two deliveries racing past this check.
    if store.notification_recorded(customer, dedup):
        return False
    if message_type == "booking.hold_expiring" and (store.get_event(str(detail.get("event_id") or "")) or {}).get("cancelled_at"):
        # its event was cancelled: the cancellation job releases the hold and nothing is paid for
        # it (start_payment refuses), so nobody is asked to pay (a batch read the offering already)
        return False
    # the record keeps the subject and the text; HTML and files only for a message that may go out
    message = compose(store, detail, site, html=to is not None)
    subject, body = message.subject, message.text
    # the identity's own address: the booking says so (``contact_own``), or it is the customer's id
    own = (bool(detail.get("contact_own")) and same_address(to, detail.get("contact_email"))) \
        or same_address(to, customer) or message_type == TRANSFER_OFFERED
    verdict = gate.decide(customer, to, dedup, own=own) if to and gate else None
    recorded = store.record_notification(customer, dedup, {
        "type": message_type, "booking_id": detail["booking_id"], "status": detail.get("status"), "at": detail.get("at"),
        "channel": "email" if to else "record", "subject": subject,
        "message": body.strip(), **(verdict.recorded() if verdict else {}),
    })
    if not recorded or to is None or sender is None or verdict is None:
        return recorded
    if not verdict.sends:
        logger.info("notification held back",
                    extra={"booking_id": detail["booking_id"], "delivery": verdict.delivery})
        return True
    try:
        if verdict.delivery == SENT:
            sender.send(to, message)
        else:
            sender.send(to, Message(*gate.confirmation_message(verdict)))  # type: ignore[union-attr]
    except Exception as exc:
        store.forget_notification(customer, dedup)
        gate.withdraw(customer, to, verdict)  # type: ignore[union-attr]
        # SES quotes the address in some errors (an unverified identity): keep it out of the logs.
        code = (getattr(exc, "response", None) or {}).get("Error", {}).get("Code") or type(exc).__name__
        raise NotificationNotSent(f"email for booking {detail['booking_id']} not sent ({code}); "
                                  "the queue will retry") from None
    return True


#: A held message delivered once its address was confirmed (the record's ``delivery`` then).
SENT_AFTER_CONFIRMATION = "sent_after_confirmation"


def deliver_held(store: NotificationStore, detail: dict[str, Any], sender: EmailSender | None = None,
                 site: Site | None = None, gate: MailGate | None = None) -> int:
    """``contact.confirmed`` (the customer confirmed the address whose digest is ``address_key``):
    the messages held for it (recorded ``unconfirmed``) are sent now, each while what it says is
    still so and still asks something of the customer: its booking has not changed since (the
    message was about its current version), still holds places (a hold or an offer waiting for
    its payment; a cancellation the customer made needs no message afterwards) and still names
    that address. A waitlist offer told to an address given at the join was held and
    lapsed unseen otherwise. The message is the booking's own outbox event, rendered as it is now;
    each is moved to ``sent_after_confirmation`` before it goes out (a redelivery sends none twice)
    and back if the email fails (the queue retries). Returns how many went out."""
    customer, key = str(detail.get("customer_id") or ""), str(detail.get("address_key") or "")
    if sender is None or gate is None or not customer or not key:
        return 0
    sent = 0
    for note in store.list_notifications(customer):
        dedup = str(note.get("sk", "")).removeprefix("NOTE#")
        booking_id, _, version = dedup.rpartition("#")
        if note.get("delivery") != UNCONFIRMED or not version.isdigit() or booking_id != note.get("booking_id"):
            continue   # sent already, or not one booking's change (a reminder, an event's announcement)
        booking = store.get_booking(booking_id)
        if booking is None or booking.version != int(version) or booking.status not in HOLDING \
                or not same_address_key(booking.contact_email, key):
            continue   # the booking moved on or ended (its page shows what is true now), or names another address
        original = store.booking_outbox(booking_id, int(version))
        if original is None or gate.decide(customer, str(booking.contact_email), dedup).delivery != SENT:
            continue
        if not store.mark_notification(customer, dedup, UNCONFIRMED, SENT_AFTER_CONFIRMATION):
            continue
        try:
            sender.send(str(booking.contact_email), compose(store, original, site))
        except Exception:
            store.mark_notification(customer, dedup, SENT_AFTER_CONFIRMATION, UNCONFIRMED)
            raise NotificationNotSent(f"held email for booking {booking_id} not sent; the queue will retry") from None
        sent += 1
    return sent


def same_address_key(address: str | None, key: str) -> bool:
    return bool(address) and hmac.compare_digest(address_key(str(address)), key)


class BatchReads:
    """The store as a batch of notifications reads it: the bookings, their offerings and which
    notifications are recorded already, fetched for the whole batch in one request
    (``message_reads``) instead of three per message; every other call goes to the store.

    A notification recorded after the batch was read is still refused by the record's
    conditional put, so the snapshot decides nothing on its own."""

    def __init__(self, store: NotificationStore, details: list[dict[str, Any]], bookings: Iterable[Any] = ()) -> None:
        """``bookings``: those the caller has read already (a reminder's holds), not read again."""
        self.store = store
        known = {booking.booking_id: booking for booking in bookings}
        wanted = [d for d in details if d.get("booking_id") and d.get("customer_id")
                  and d.get("type") not in ("event.changed", *NOT_FOR_CUSTOMERS)]
        self.bookings, self.events, self.recorded = store.message_reads(
            sorted({str(d["booking_id"]) for d in wanted} - known.keys()),
            sorted({str(d["event_id"]) for d in wanted if d.get("event_id")}),
            sorted({(str(d["customer_id"]), dedup_id(d)) for d in wanted})) if wanted else ({}, {}, set())
        self.bookings = {**self.bookings, **known}

    def notification_recorded(self, customer_id: str, dedup_id: str) -> bool:
        return (customer_id, dedup_id) in self.recorded

    def record_notification(self, customer_id: str, dedup_id: str, notification: dict[str, Any]) -> bool:
        # a message the bus delivered twice into one batch: the second is known without a call
        recorded = self.store.record_notification(customer_id, dedup_id, notification)
        self.recorded.add((customer_id, dedup_id))
        return recorded

    def forget_notification(self, customer_id: str, dedup_id: str) -> None:
        self.store.forget_notification(customer_id, dedup_id)
        self.recorded.discard((customer_id, dedup_id))

    def get_booking(self, booking_id: str) -> Any:
        return self.bookings[booking_id] if booking_id in self.bookings else self.store.get_booking(booking_id)

    def get_event(self, event_id: str) -> dict[str, Any] | None:
        return self.events[event_id] if event_id in self.events else self.store.get_event(event_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


class NotificationNotSent(RuntimeError):
    """The email failed; the message carries the error code, never the address."""


def bus_entry(bus_name: str, image: dict[str, Any]) -> dict[str, Any]:
    detail = {key: (int(value) if key == "version" else value) for key, value in image.items()
              if key not in ("pk", "sk", "ttl")}
    return {"EventBusName": bus_name, "Source": SOURCE, "DetailType": str(image.get("type", "booking.changed")),
            "Detail": json.dumps(detail, default=str)}


def log_sent(detail: dict[str, Any], recorded: bool) -> None:
    logger.info("notification", extra={"type": detail.get("type"), "booking_id": detail.get("booking_id"),
                                       "sent": recorded})
