"""Webhooks, the pure part: which published facts an organizer's endpoint may hear about, the body
and ids of one delivery, its signature, the retry schedule, and which URLs and addresses an
endpoint may use (docs/api.md, "Webhooks"). No I/O: the service resolves names and sends.
"""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping
from urllib.parse import urlsplit

from .errors import InvalidRequest

#: The outbox events (the facts the engine publishes on its notifications bus) an endpoint hears
#: about, under the names organizers subscribe to. A fact not listed here is no webhook's.
FROM_OUTBOX: dict[str, str] = {
    "booking.confirmed": "order.confirmed",
    "booking.cancelled": "order.cancelled",
    "booking.expired": "order.expired",
    "booking.refunded": "refund.succeeded",
    "booking.manual_review": "review.opened",
    "booking.checked_in": "checkin.created",
    "vehicle.entered": "checkin.created",
    "vehicle.exited": "checkout.created",
    "booking.no_show": "order.no_show",
    "event.changed": "event.changed",
    # a case for an operator opened at a door (check-in) or a gate (parking); a booking's review is review.opened
    "case.opened": "case.opened",
    # issue 45: a booking given to another customer (accepted), or moved to other places
    "booking.transferred": "order.transferred",
    "booking.exchanged": "order.exchanged",
}
TEST_EVENT = "webhook.test"
#: What ``events`` may name, in the order the docs list them.
EVENT_TYPES: tuple[str, ...] = tuple(dict.fromkeys(FROM_OUTBOX.values()))

#: Fields of an outbox event a receiver does not get in ``data``: the customer (their id and address
#: stay with the engine, which erases them when their time is up) and the item's own keys. The
#: rest (the booking, its status and version, what the kind adds: a door, a gate) is the fact.
WITHHELD = frozenset({"customer_id", "contact_email", "contact_own", "pk", "sk", "ttl", "type", "event_id"})

SIGNATURE_HEADER = "Holdfast-Signature"
DELIVERY_HEADER = "Holdfast-Delivery-Id"
EVENT_TYPE_HEADER = "Holdfast-Event-Type"
MAX_URL_LENGTH = 2048
MAX_WEBHOOKS = 10
SECRET_PREFIX = "whsec_"

#: Seconds after each failed attempt before the next (the last repeats), within the window.
RETRY_DELAYS: tuple[int, ...] = (30, 120, 600, 1800, 3600, 7200, 14400, 21600)
RETRY_WINDOW_SECONDS = 24 * 3600


def event_type_of(outbox_type: str) -> str | None:
    return FROM_OUTBOX.get(outbox_type)


def check_event_types(events: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(str(e) for e in events))
    unknown = [e for e in chosen if e not in EVENT_TYPES]
    if not chosen or unknown:
        raise InvalidRequest("Choose one or more of the webhook events.", code="unknown_webhook_event",
                             unknown=unknown, known=list(EVENT_TYPES))
    return chosen


def fact_id(outbox: Mapping[str, Any]) -> str:
    """The fact's id, the same for every endpoint and every repeat of the bus: from the outbox
    item's own identity (a booking's version, or an event's change)."""
    if outbox.get("type") == "case.opened":   # a case is opened once: its id is the fact's
        key = f"case-{outbox.get('case_id')}#{outbox.get('type')}"
    elif outbox.get("booking_id"):
        key = f"{outbox['booking_id']}#{int(outbox['version']):06d}#{outbox.get('type')}"
    else:
        key = f"event-{outbox.get('event_id')}#{int(outbox.get('version') or 0):06d}#{outbox.get('type')}"
    return "evt_" + hashlib.sha256(key.encode()).hexdigest()[:32]


def delivery_id(webhook_id: str, event_id: str) -> str:
    """One fact to one endpoint is one delivery, however often the bus repeats the fact."""
    return "dlv_" + hashlib.sha256(f"{webhook_id}#{event_id}".encode()).hexdigest()[:32]


def body(event_id: str, event_type: str, organizer_id: str, created_at: str, outbox: Mapping[str, Any]) -> str:
    data = {name: value for name, value in outbox.items() if name not in WITHHELD and value not in (None, "")}
    if "version" in data:
        data["version"] = int(data["version"])
    if outbox.get("event_id"):
        data["offering_id"] = outbox["event_id"]
    return json.dumps({"id": event_id, "type": event_type, "created_at": created_at, "organizer_id": organizer_id,
                       "data": data}, separators=(",", ":"), sort_keys=True, default=str)


# ------------------------------------------------------------------------------- the signature

def derive_secret(key: bytes, webhook_id: str, salt: str) -> str:
    """An endpoint's signing secret: never stored, derived from the deployment's webhook key."""
    return SECRET_PREFIX + hmac.new(key, f"{webhook_id}#{salt}".encode(), hashlib.sha256).hexdigest()


def signature(secret: str, timestamp: int, payload: str | bytes) -> str:
    raw = payload.encode() if isinstance(payload, str) else payload
    return hmac.new(secret.encode(), str(int(timestamp)).encode() + b"." + raw, hashlib.sha256).hexdigest()


def signature_header(secret: str, timestamp: int, payload: str | bytes) -> str:
    return f"t={int(timestamp)},v1={signature(secret, timestamp, payload)}"


def verify(secret: str, header: str, payload: str | bytes, now: float, tolerance: int = 300) -> bool:
    """What a receiver does (docs/api.md): the HMAC over ``t``, a dot and the raw body, and ``t``
    near its own clock."""
    try:
        parts = dict(item.strip().split("=", 1) for item in header.split(","))
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    return hmac.compare_digest(signature(secret, timestamp, payload), parts.get("v1", "")) \
        and abs(now - timestamp) <= tolerance


# ------------------------------------------------------------------------------ the schedule

def next_delay(attempts: int, first_attempt_at: float, now: float,
               window: int = RETRY_WINDOW_SECONDS) -> int | None:
    """Seconds until the next attempt after ``attempts`` failed ones (the last one falls at the
    window's end), or None: the window is over (the delivery is dead-lettered)."""
    delay = RETRY_DELAYS[min(max(attempts, 1), len(RETRY_DELAYS)) - 1]
    left = first_attempt_at + window - now
    if left <= 0:
        return None
    return int(min(delay, left))


# ------------------------------------------------------------------------------ the addresses

#: What the standard library's flags do not call private but no endpoint may reach either.
_NOT_PUBLIC = tuple(ipaddress.ip_network(n) for n in ("100.64.0.0/10", "192.0.0.0/24", "198.18.0.0/15", "0.0.0.0/8",
                                                       "64:ff9b::/96", "2001:db8::/32"))


@dataclass(frozen=True)
class Target:
    """A checked URL: where one attempt goes."""
    scheme: str
    host: str
    port: int
    path: str     # with its query

    @property
    def literal(self) -> bool:
        return address_of(self.host) is not None


def address_of(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def why_not_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """None for a public address; else the kind of range it is in."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return why_not_public(address.ipv4_mapped)
    for name in ("unspecified", "loopback", "link_local", "multicast", "private", "reserved"):
        if getattr(address, f"is_{name}"):
            return name
    if any(address in network for network in _NOT_PUBLIC):
        return "reserved"
    if not address.is_global:
        return "private"
    return None


def local_allows(address: ipaddress.IPv4Address | ipaddress.IPv6Address,
                 local_networks: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> bool:
    return any(address.version == network.version and address in network for network in local_networks)


def parse_networks(text: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(part.strip(), strict=False) for part in text.split(",") if part.strip())


def check_url(url: str, local_networks: Iterable[Any] = ()) -> Target:
    """An endpoint's URL as registration accepts it: https (plain http only to a configured local
    network), no user info or fragment, and a host that, when an address literal, is public (or in
    a configured local network). A name is checked at every attempt (``check_addresses``)."""
    local = tuple(local_networks)
    if not isinstance(url, str) or len(url) > MAX_URL_LENGTH or any(c.isspace() for c in url):
        raise _invalid("The webhook URL must be an absolute https URL of at most 2048 characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise _invalid("The webhook URL cannot be parsed.") from None
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.username is not None \
            or parts.password is not None or parts.fragment:
        raise _invalid("The webhook URL must be https://host/path, without user info or a fragment.")
    host = parts.hostname.lower().rstrip(".")
    target = Target(parts.scheme, host, port or (443 if parts.scheme == "https" else 80),
                    (parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
    address = address_of(host)
    if address is None and (host == "localhost" or host.endswith(".localhost")):
        address = ipaddress.ip_address("127.0.0.1")
    if address is not None:
        reason = why_not_public(address)
        if reason is not None and not local_allows(address, local):
            raise InvalidRequest("The webhook URL names an address that is not public.", code="webhook_url_not_public",
                                 reason=reason)
        if target.scheme == "http" and not (reason is not None and local_allows(address, local)):
            raise _invalid("The webhook URL must use https.")
    elif target.scheme == "http" and not local:
        raise _invalid("The webhook URL must use https.")
    return target


def check_addresses(target: Target, addresses: Iterable[str], local_networks: Iterable[Any] = ()) -> str:
    """The address one attempt connects to, from those the host resolved to at this attempt:
    every one must be public (or, on the local stack, in a configured network), else the attempt
    fails with ``address_not_public`` (a name that answers an inner address, however it answered
    at registration). Where local networks are configured, only their addresses are reached.
    ``ValueError`` carries the reason."""
    local = tuple(local_networks)
    found = [address_of(a) for a in addresses]
    if not found or any(a is None for a in found):
        raise ValueError("unresolved")
    for address in found:
        reason = why_not_public(address)    # type: ignore[arg-type]
        # a stack given local networks (a development one) reaches nothing else: its tests and
        # its demo talk to this machine only, whatever URL a test registered
        if local and not local_allows(address, local):    # type: ignore[arg-type]
            raise ValueError("outside_local_networks")
        if reason is not None and not local_allows(address, local):    # type: ignore[arg-type]
            raise ValueError("address_not_public")
        if target.scheme == "http" and reason is None:
            raise ValueError("plain_http_to_public_address")
    return str(found[0])


def _invalid(message: str) -> InvalidRequest:
    return InvalidRequest(message, code="webhook_url_invalid")
