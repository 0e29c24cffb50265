"""The languages customers are written to in, and which of them a request prefers.

A booking keeps the language of the request that made it (its ``Accept-Language``), so the
messages about it, sent later by the notifier with no request at hand, read in that language."""
from __future__ import annotations

SUPPORTED = ("en", "ru")
DEFAULT = "en"


def preferred(accept_language: str | None) -> str:
    """The supported language the header ranks highest (RFC 9110 weights; ``ru-RU`` counts as
    ``ru``, ``*`` as the default); the default when it names none we write in or is malformed."""
    ranked: list[tuple[float, int, str]] = []
    for position, piece in enumerate((accept_language or "").split(",")[:32]):
        tag, _, params = piece.strip().partition(";")
        weight = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        primary = tag.strip().lower().split("-")[0]
        if primary == "*":
            primary = DEFAULT
        if primary in SUPPORTED and 0 < weight <= 1:
            ranked.append((-weight, position, primary))
    return min(ranked)[2] if ranked else DEFAULT


def known(language: str | None) -> str:
    """A stored language as written to: anything not supported (an older item) reads as the default."""
    return language if language in SUPPORTED else DEFAULT
