"""Surge control, the pure part: admission tokens, the admission horizon of a waiting room, and
the per-customer rate limit (GCRA, a token bucket kept as one timestamp).

Nothing here does I/O or reads the clock; the services pass ``now`` in.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
from dataclasses import dataclass
from typing import Any

from .errors import BookingError, Forbidden

TOKEN_PREFIX = "hf1"


class AdmissionDenied(Forbidden):
    """The booking route of a high-demand event needs a valid admission token."""

    def __init__(self, code: str, message: str, event_id: str) -> None:
        super().__init__(message, queue=f"/events/{event_id}/queue")
        self.code = code


class RateLimited(BookingError):
    status = 429
    code = "rate_limited"

    def __init__(self, retry_after: int) -> None:
        super().__init__("Too many requests from this customer; slow down.", retry_after=max(1, int(retry_after)))


# ------------------------------------------------------------------------------------- tokens

def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, signed_part: str) -> bytes:
    return hmac.new(key, signed_part.encode(), hashlib.sha256).digest()


def sign_token(key: bytes, event_id: str, customer_id: str, seq: int, expires_at: int) -> str:
    """``hf1.<payload>.<mac>``: the payload names the event, the customer, the queue number and the
    expiry (epoch seconds); the MAC is HMAC-SHA256 over ``hf1.<payload>``."""
    payload = json.dumps({"e": event_id, "c": customer_id, "q": int(seq), "x": int(expires_at)},
                         separators=(",", ":"), sort_keys=True)
    signed_part = f"{TOKEN_PREFIX}.{_b64(payload.encode())}"
    return f"{signed_part}.{_b64(_mac(key, signed_part))}"


def check_token(key: bytes, token: str | None, event_id: str, customer_id: str, now: float) -> dict[str, Any]:
    """The token's claims if it admits this customer to this event now; otherwise AdmissionDenied
    with ``admission_required``, ``admission_token_invalid``, ``admission_token_mismatch`` or
    ``admission_token_expired``. The MAC is checked (in constant time) before anything is read."""
    if not token:
        raise AdmissionDenied("admission_required", "This sale runs a waiting room: join the queue and send "
                              "the admission token it gives you as X-Admission-Token.", event_id)
    parts = token.strip().split(".")
    if len(parts) != 3 or parts[0] != TOKEN_PREFIX or len(token) > 2048:
        raise AdmissionDenied("admission_token_invalid", "The admission token is malformed.", event_id)
    try:
        given = _unb64(parts[2])
        valid = hmac.compare_digest(given, _mac(key, f"{parts[0]}.{parts[1]}"))
    except (binascii.Error, ValueError):
        valid = False
    if not valid:
        raise AdmissionDenied("admission_token_invalid", "The admission token's signature does not match.", event_id)
    try:
        claims = json.loads(_unb64(parts[1]))
        bound = (str(claims["e"]), str(claims["c"]), int(claims["x"]))
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise AdmissionDenied("admission_token_invalid", "The admission token is malformed.", event_id) from None
    if bound[0] != event_id or bound[1] != customer_id:
        raise AdmissionDenied("admission_token_mismatch",
                              "The admission token was issued for another customer or event.", event_id)
    if now >= bound[2]:
        raise AdmissionDenied("admission_token_expired", "The admission token has expired; join the queue again.",
                              event_id)
    return claims


# ----------------------------------------------------------------------------- the horizon

@dataclass(frozen=True)
class Advance:
    admitted: int
    advanced_at_ms: int


def advance(issued: int, admitted: int, advanced_at_ms: int, now_ms: int, rate_per_second: float,
            burst: int) -> Advance | None:
    """How far the admission horizon moves now, or None if it stays.

    The horizon (``admitted``: numbers 1..admitted are let in) moves at ``rate_per_second`` since
    ``advanced_at_ms``, never past the last number issued and never more than ``burst`` at once.
    When it moved the full amount earned, ``advanced_at`` moves by exactly that much time (the
    fraction of a number earned is kept); when a cap stopped it, ``advanced_at`` becomes now, so
    an idle queue does not bank admissions for the next crowd."""
    if rate_per_second <= 0 or now_ms <= advanced_at_ms or admitted >= issued:
        return None
    earned = int((now_ms - advanced_at_ms) * rate_per_second // 1000)
    grant = min(earned, max(1, burst), issued - admitted)
    if grant <= 0:
        return None
    if grant == earned:
        at = advanced_at_ms + math.ceil(grant * 1000 / rate_per_second)
        return Advance(admitted + grant, min(at, now_ms))
    return Advance(admitted + grant, now_ms)


# --------------------------------------------------------------------------------- the limit

@dataclass(frozen=True)
class RateRule:
    """``per_minute`` requests a minute sustained, up to ``burst`` at once (a token bucket of
    ``burst`` tokens refilled at ``per_minute``), kept as GCRA's theoretical arrival time."""

    per_minute: int
    burst: int

    @property
    def interval_ms(self) -> int:
        return max(1, math.ceil(60_000 / self.per_minute))

    def ceiling(self, now_ms: int) -> int:
        """A request is allowed while the stored arrival time is at most this."""
        return now_ms + (max(1, self.burst) - 1) * self.interval_ms

    def retry_after(self, tat_ms: int, now_ms: int) -> int:
        return max(1, math.ceil((tat_ms - self.ceiling(now_ms)) / 1000))
