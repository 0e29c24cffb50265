"""Commands: what a caller asks a service to do, independent of the API's request models.

The HTTP handlers build them from the validated request bodies (schemas.py); the waitlist builds
them for its offers. A service never sees an API model: the request models turn themselves into
these (``command()``), and ``HoldPlaces.of`` turns a hold request into its command."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

#: The request fields every kind may read; anything else a kind adds travels in ``details``.
_COMMON = ("quantity", "seats", "best_available", "contact_email", "contact_own", "language", "holder_address",
           "captcha_token")


@dataclass(frozen=True)
class HoldPlaces:
    """Take places for a customer: a quantity, named seats, or a quantity the engine places.
    Fields a kind adds to the booking request (a time range, a vehicle type) are in ``details``
    and read as attributes too, so a new kind needs no change here."""

    quantity: int | None = None
    seats: tuple[str, ...] | None = None
    best_available: bool = False
    contact_email: str | None = None
    #: ``contact_email`` is the customer's own, vouched for by their identity (``mail_policy.addressed``
    #: sets it; ``of`` never takes it from a request body): its messages need no confirmation.
    contact_own: bool = False
    #: What the customer's messages are written in (domain/languages.py); not part of the
    #: request's identity: a repeat from a browser set to another language is the same hold.
    language: str = "en"
    #: The network address the request came from (the handler sets it, ``of`` never takes it from
    #: a body): for an offering with a cap on live holds per address, the service counts the hold
    #: under the address's key (domain/holder_address.py), the only form of it ever stored. Not
    #: part of the request's identity either: a repeat from another network is the same hold.
    holder_address: str | None = None
    #: A solved challenge's token (``X-Captcha-Token``), for an offering that asks for one
    #: (services/challenges.py); set by the handler, never part of the request's identity.
    captcha_token: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        # Only called for names that are not fields: a kind's own request fields.
        if name.startswith("__") or name == "details":
            raise AttributeError(name)
        try:
            return self.details[name]
        except KeyError:
            raise AttributeError(name) from None

    @classmethod
    def of(cls, request: Any) -> "HoldPlaces":
        """The command for a request (an API model, a plain mapping, or already a command)."""
        if isinstance(request, cls):
            return request
        values = dict(request) if isinstance(request, Mapping) else request.model_dump()
        seats = values.get("seats")
        return cls(quantity=values.get("quantity"), seats=tuple(seats) if seats is not None else None,
                   best_available=bool(values.get("best_available")), contact_email=values.get("contact_email"),
                   language=values.get("language") or "en",
                   details={key: value for key, value in values.items() if key not in _COMMON})


@dataclass(frozen=True)
class Price:
    """A price as asked, not yet parsed: the service parses it (``Money.parse``) where it checks the
    rest of the request, so a bad amount is refused in the same order as before."""

    value: object
    currency: str
