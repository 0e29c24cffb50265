"""Who may be mailed: the step the notifier takes before each message goes out (issue 33).

* **Suppressed.** An address SES reported as a permanent bounce or a complaint (through the
  configuration set's SNS topic, ``functions/mail_feedback``) gets nothing more.
* **Confirmed.** A customer's own address (their identity's) is mailed; any other address first
  receives one message asking to confirm it, with a link carrying a single-use token that expires.
  Until it is confirmed the customer's messages to it are recorded as ``unconfirmed`` and not sent.
  The confirmation announces itself (``contact.confirmed``, written with it), and the notifier then
  sends those of the held messages that are still true (their booking unchanged since: a waitlist
  offer still standing, say; ``notifications.deliver_held``); the others stay held, the booking
  page showing what is true now (issue 42, finding 6).
* **Limited.** Each address takes at most ``per_hour`` messages an hour (the confirmation request
  included); past that a message is recorded as ``rate_limited``.
* **Few strangers per customer.** Naming an address (a hold's or a waitlist entry's
  ``contact_email``) that is neither the customer's own nor one they confirmed is refused with 429
  (``admit_address``) when they already have ``PENDING_ADDRESSES`` addresses waiting to be
  confirmed (``unconfirmed_address_limit``) or named ``NEW_ADDRESSES_PER_DAY`` new ones this UTC
  day (``confirmation_limit_reached``): each may cost a confirmation message to a stranger, so one
  account cannot aim them at many.

A held-back message is never retried and never dead-lettered: the verdict is recorded on the
notification instead. Addresses are never stored or logged here, only their digest
(``address_key``).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Callable

from ..clock import Clock, iso, parse_iso
from ..domain.commands import HoldPlaces
from ..domain.errors import AddressLimitReached
from ..ports import MailPolicy

SENT, CONFIRMATION_SENT = "sent", "confirmation_sent"
#: Addresses one customer may have waiting to be confirmed at once, and new ones they may name a day.
PENDING_ADDRESSES = 3
NEW_ADDRESSES_PER_DAY = 5
SUPPRESSED, UNCONFIRMED, RATE_LIMITED = "suppressed", "unconfirmed", "rate_limited"
#: SES event types (configuration set event publishing) that suppress an address. A transient
#: bounce (a full mailbox) does not: the next message may well arrive.
SUPPRESSING = {"Bounce": "bounce", "Complaint": "complaint"}

CONFIRM_SUBJECT = "Confirm your address for booking notifications"
CONFIRM_TEXT = """Someone asked for booking notifications to be sent to this address.

If it was you, confirm the address here (the link works for {days} days):
{link}

If it was not you, ignore this message: nothing else will be sent to you.
"""


def address_key(address: str) -> str:
    """The digest the policy knows an address by (SES compares addresses without regard to case)."""
    return hashlib.sha256(address.strip().lower().encode()).hexdigest()


def _token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@dataclass(frozen=True)
class MailVerdict:
    delivery: str
    #: with CONFIRMATION_SENT: the link's token (the store keeps only its hash)
    token: str | None = None
    token_hash: str | None = None

    @property
    def sends(self) -> bool:
        return self.delivery in (SENT, CONFIRMATION_SENT)

    def recorded(self) -> dict[str, Any]:
        """What the notification's record says of its delivery: the message itself is held back
        (``unconfirmed``) when the request to confirm went out in its place."""
        if self.delivery == CONFIRMATION_SENT:
            return {"delivery": UNCONFIRMED, "confirmation_requested": True}
        return {"delivery": self.delivery}


class InvalidConfirmation(ValueError):
    """The link's token is malformed, unknown, replaced or expired."""


class MailGate:
    def __init__(self, policy: MailPolicy, clock: Clock, per_hour: int, confirm_url: str,
                 confirm_seconds: int = 7 * 86_400) -> None:
        self.policy = policy
        self.clock = clock
        self.per_hour = per_hour
        self.confirm_url = confirm_url
        self.confirm_seconds = confirm_seconds
        # (customer, address key) this process has recorded as the customer's own: each hold of a
        # signed-in customer would otherwise write the same item again
        self._owned: set[tuple[str, str]] = set()

    def decide(self, customer_id: str, to: str, dedup_id: str, own: bool = False) -> MailVerdict:
        """What becomes of one message (``dedup_id``) to ``to``; asked again for a redelivery, it
        counts nothing twice and starts no second confirmation."""
        key, now = address_key(to), self.clock()
        if self.policy.is_suppressed(key):
            return MailVerdict(SUPPRESSED)
        confirmed = own
        if not own:
            contact = self.policy.contact(customer_id, key) or {}
            if contact.get("status") == "confirmed":
                confirmed = True
            elif contact.get("status") == "pending" and str(contact.get("expires_at", "")) > iso(now):
                return MailVerdict(UNCONFIRMED)
        hour = now.strftime("%Y-%m-%dT%H")
        expires = int(now.timestamp()) + 2 * 3600
        if not self.policy.count_send(key, hour, dedup_id, self.per_hour, expires):
            return MailVerdict(RATE_LIMITED)
        if confirmed:
            return MailVerdict(SENT)
        secret = secrets.token_urlsafe(24)
        token_hash = _token_hash(secret)
        expires_at = iso(now + timedelta(seconds=self.confirm_seconds))
        if self.policy.request_confirmation(customer_id, key, token_hash, expires_at, iso(now)):
            return MailVerdict(CONFIRMATION_SENT, f"{_b64(customer_id)}.{key}.{secret}", token_hash)
        return MailVerdict(UNCONFIRMED)   # another message started the confirmation a moment ago

    def admit_address(self, customer_id: str, address: str) -> None:
        """Before a request that names ``address`` (not the customer's own) is taken: allowed when
        the customer confirmed it, or it waits for confirmation already; otherwise only within the
        customer's caps (AddressLimitReached, 429). Naming the same address again counts once."""
        key, now = address_key(address), self.clock()
        contact = self.policy.contact(customer_id, key) or {}
        if contact.get("status") == "confirmed" or \
                (contact.get("status") == "pending" and str(contact.get("expires_at", "")) > iso(now)):
            return
        waiting = self.policy.pending_contacts(customer_id, iso(now))
        if waiting >= PENDING_ADDRESSES:
            raise AddressLimitReached(
                "unconfirmed_address_limit", f"{waiting} addresses you gave are waiting to be confirmed; confirm one "
                "(the link in the message it received) or use your own address.", retry_after=3600,
                pending=waiting, limit=PENDING_ADDRESSES)
        tomorrow = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
        if not self.policy.claim_new_address(customer_id, key, now.strftime("%Y-%m-%d"), NEW_ADDRESSES_PER_DAY,
                                             int(tomorrow.timestamp()) + 86_400):
            raise AddressLimitReached(
                "confirmation_limit_reached", f"You named {NEW_ADDRESSES_PER_DAY} new addresses today; use your own "
                "address or one you confirmed.", retry_after=max(1, int((tomorrow - now).total_seconds())),
                limit=NEW_ADDRESSES_PER_DAY)

    def confirmation_message(self, verdict: MailVerdict) -> tuple[str, str]:
        link = f"{self.confirm_url}?token={verdict.token}"
        return CONFIRM_SUBJECT, CONFIRM_TEXT.format(link=link, days=max(1, self.confirm_seconds // 86_400))

    def withdraw(self, customer_id: str, to: str, verdict: MailVerdict) -> None:
        """The confirmation request could not be sent: let the redelivery start it afresh."""
        if verdict.token_hash:
            self.policy.withdraw_confirmation(customer_id, address_key(to), verdict.token_hash)

    def confirm(self, token: str) -> None:
        """Confirm the address a link names (a repeated click is fine); InvalidConfirmation otherwise."""
        parts = token.split(".") if isinstance(token, str) and len(token) <= 512 else []
        if len(parts) != 3 or not all(parts) or len(parts[1]) != 64:
            raise InvalidConfirmation("The confirmation link is malformed.")
        try:
            customer_id = base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4)).decode()
        except (binascii.Error, UnicodeDecodeError):
            raise InvalidConfirmation("The confirmation link is malformed.") from None
        if not self.policy.confirm_contact(customer_id, parts[1], _token_hash(parts[2]), iso(self.clock())):
            raise InvalidConfirmation("The confirmation link is unknown or has expired.")

    def own_address(self, customer_id: str, address: str) -> None:
        """The customer's identity vouches for the address (a verified e-mail claim)."""
        key = address_key(address)
        if (customer_id, key) not in self._owned:
            self.policy.own_contact(customer_id, key, iso(self.clock()))
            self._owned.add((customer_id, key))


def contact_for(gate: Callable[[], MailGate], customer_id: str, given: str | None, own: str | None) -> str | None:
    """Where a customer's messages about a request go: the address they gave, else their verified
    own (``own``, from their identity). Their own address, given or taken, is recorded as confirmed
    (``gate`` is asked for only then); any other must be confirmed by its holder first, and is
    taken only within the customer's caps (``MailGate.admit_address``)."""
    if own is None or not (given is None or same_address(given, own)):
        if given is not None:
            gate().admit_address(customer_id, given)
        return given
    gate().own_address(customer_id, own)
    return given or own


def addressed(command: HoldPlaces, own: str | None, gate: Callable[[], MailGate], customer_id: str) -> HoldPlaces:
    """A hold's command with the address its messages go to: the one given, else the customer's
    verified own (``own``). When it is their own the command says so (``contact_own``): the booking
    and its outbox events carry that to the notifier, so the hold writes nothing for the mail
    policy (a record per customer and container was one more write on the hold path). Another
    address is taken only within the customer's caps (``MailGate.admit_address``, 429)."""
    if own is None or not (command.contact_email is None or same_address(command.contact_email, own)):
        if command.contact_email is not None:
            gate().admit_address(customer_id, command.contact_email)
        return command
    return replace(command, contact_email=command.contact_email or own, contact_own=True)


def record_feedback(policy: MailPolicy, message: dict[str, Any], at: str) -> int:
    """One SES event (configuration set event publishing; the older identity notifications say
    ``notificationType`` instead of ``eventType``): a permanent bounce or a complaint puts each
    recipient on the suppression list. Returns how many were newly suppressed."""
    event_type = str(message.get("eventType") or message.get("notificationType") or "")
    if event_type not in SUPPRESSING:
        return 0
    if event_type == "Bounce":
        bounce = message.get("bounce") or {}
        if bounce.get("bounceType") != "Permanent":
            return 0
        recipients = [r.get("emailAddress") for r in bounce.get("bouncedRecipients") or []]
    else:
        recipients = [r.get("emailAddress") for r in (message.get("complaint") or {}).get("complainedRecipients") or []]
    newly = 0
    for address in recipients:
        if isinstance(address, str) and "@" in address:
            newly += policy.suppress(address_key(address), SUPPRESSING[event_type], at)
    return newly


def same_address(a: str | None, b: str | None) -> bool:
    return bool(a and b) and hmac.compare_digest(address_key(a), address_key(b))  # type: ignore[arg-type]
