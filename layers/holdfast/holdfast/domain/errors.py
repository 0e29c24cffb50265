"""Errors a client can act on. Each carries a machine-readable code and the HTTP status it maps to.

Handlers map these once (``holdfast.entry.http``); anything else is a bug or an infrastructure failure.
"""
from __future__ import annotations

from typing import Any


class BookingError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidRequest(BookingError):
    status = 400
    code = "invalid_request"

    def __init__(self, message: str, code: str = "invalid_request", **details: Any) -> None:
        super().__init__(message, **details)
        self.code = code


class Unauthorized(BookingError):
    status = 401
    code = "unauthorized"


class Forbidden(BookingError):
    status = 403
    code = "forbidden"

    def __init__(self, message: str, code: str | None = None, **details: Any) -> None:
        super().__init__(message, **details)
        if code is not None:
            self.code = code


class NotFound(BookingError):
    status = 404
    code = "not_found"

    def __init__(self, message: str, code: str = "not_found", **details: Any) -> None:
        super().__init__(message, **details)
        self.code = code


class Conflict(BookingError):
    status = 409
    code = "conflict"

    def __init__(self, message: str, code: str = "conflict", **details: Any) -> None:
        super().__init__(message, **details)
        self.code = code


class SoldOut(Conflict):
    def __init__(self, available: int) -> None:
        super().__init__("Not enough places are left for this request.", code="sold_out", available=available)


class SeatsUnavailable(Conflict):
    def __init__(self, unavailable: list[str], available: list[str], available_count: int) -> None:
        super().__init__(
            "Some of the requested seats are taken or held by someone else.",
            code="seats_unavailable",
            unavailable=unavailable,
            available=available,
            available_count=available_count,
        )


class RequestInProgress(Conflict):
    def __init__(self) -> None:
        super().__init__(
            "A request with this Idempotency-Key is still being processed; retry shortly.",
            code="request_in_progress",
        )


class IdempotencyKeyReused(BookingError):
    status = 422
    code = "idempotency_key_reused"

    def __init__(self) -> None:
        super().__init__("This Idempotency-Key was already used with a different request.")


class TooBusy(BookingError):
    """Contention on the inventory outlasted the retries; the request changed nothing."""

    status = 429
    code = "too_busy"

    def __init__(self) -> None:
        super().__init__("The event is very busy right now; nothing was reserved. Retry in a second.", retry_after=1)


class PaymentProviderUnavailable(BookingError):
    """The provider could not be reached before anything was created there (safe to retry)."""

    status = 503
    code = "payment_provider_unavailable"


class Busy(BookingError):
    """Writes to the same booking or list kept colliding past the retries; the request changed nothing."""

    status = 429
    code = "busy"

    def __init__(self) -> None:
        super().__init__("Too many changes at once here; nothing was changed. Retry in a second.", retry_after=1)


class AddressLimitReached(BookingError):
    """A customer named more addresses they have not confirmed than the mail policy allows
    (services/mail_policy.py): nothing was changed, and no message goes to the new address."""

    status = 429

    def __init__(self, code: str, message: str, retry_after: int, **details: Any) -> None:
        super().__init__(message, retry_after=retry_after, **details)
        self.code = code


class TooManyHolds(BookingError):
    """The network address the hold came from already has as many live holds of the offering as
    it allows (``max_holds_per_address``, else the deployment's ``HOLDS_PER_ADDRESS``), whatever
    accounts made them (issue 42, finding 13). Nothing was held; a slot frees when one of those
    holds is paid, cancelled or lapses, so ``Retry-After`` is the offering's hold time."""

    status = 429
    code = "too_many_holds"

    def __init__(self, limit: int, retry_after: int, offering: str | None = None) -> None:
        super().__init__(f"Too many unpaid bookings are held from your network address for this sale ({limit} "
                         "at most); one frees when a booking is paid, cancelled or its hold ends.",
                         retry_after=retry_after, limit=limit, per="address",
                         **({"event_id": offering} if offering else {}))


class ChallengeRefused(BookingError):
    """A hold of an offering (or a deployment) that asks for a solved challenge (CAPTCHA) came
    without one (``captcha_required``, 400) or with one the verifier refused (``captcha_invalid``,
    403: solve it again; a token is good once). Nothing was held."""

    def __init__(self, code: str) -> None:
        missing = code == "captcha_required"
        super().__init__("This sale asks you to solve the challenge on the booking page first." if missing else
                         "The challenge was not solved, or its answer was already used; solve it again.")
        self.code = code
        self.status = 400 if missing else 403


class ChallengeUnavailable(BookingError):
    """The challenge could not be checked just now (its verifier did not answer); nothing was held."""

    status = 503
    code = "captcha_unavailable"

    def __init__(self) -> None:
        super().__init__("The challenge cannot be checked right now; nothing was held. Retry in a few seconds.",
                         retry_after=5)


class ViewerAddressUnknown(BookingError):
    """A hold came through the web distribution (it carries the distribution's ``X-Holdfast-Edge``)
    without the viewer's address (``CloudFront-Viewer-Address``): the distribution is not forwarding
    it. Refused, nothing held (fail closed, docs/deploy.md): counted by the caller's address
    instead, every viewer behind one CloudFront edge would share one cap of live holds, and the
    buyers refused would be told their own network holds too many."""

    status = 503
    code = "viewer_address_unknown"

    def __init__(self) -> None:
        super().__init__("Bookings cannot be taken through this site right now; nothing was held. "
                         "Please try again later.")


class EventCancelled(Conflict):
    def __init__(self, event_id: str) -> None:
        super().__init__("The organizer cancelled this event; nothing more is sold for it.", code="event_cancelled",
                         event_id=event_id)
