"""The network a hold comes from, as the key of the cap on live holds per address (issue 42,
finding 13): sign-up is open, so a cap per account resets with every new account; the network
address does not. An IPv4 address counts alone; an IPv6 address by its /64, the block one
subscriber is usually given (counting single IPv6 addresses would give a script 2^64 keys).

The stored key is keyed with a deployment secret of its own (``holder_key``, wiring.HOLDER_KEY_SECRET),
never the address itself, nor a key anyone can learn (the id salt is the public stack id): the table
keeps no network address a reader could tell (2^32 IPv4 addresses are easily tried against a plain
or publicly keyed hash).
"""
from __future__ import annotations

import hashlib
import hmac
import ipaddress

#: The prefix an IPv6 holder is counted by.
IPV6_PREFIX = 64


def network_of(address: str) -> str | None:
    """The network a hold from ``address`` counts toward (None for something that is no address)."""
    try:
        ip = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/{IPV6_PREFIX}", strict=False))
    return str(ip)


def holder_key(secret: str, address: str) -> str | None:
    """The stored key of ``address``'s network: an HMAC with the deployment's ``secret``."""
    network = network_of(address)
    if network is None or not secret:
        return None
    return hmac.new(secret.encode(), f"holder-network:{network}".encode(), hashlib.sha256).hexdigest()[:32]


def address_limit(offering_cap: int | None, default_cap: int) -> int | None:
    """The cap on one address's live holds of an offering: the offering's own
    (``max_holds_per_address``) or the deployment's default (``HOLDS_PER_ADDRESS``); None (0) is no cap."""
    cap = int(offering_cap) if offering_cap else int(default_cap or 0)
    return cap if cap > 0 else None
