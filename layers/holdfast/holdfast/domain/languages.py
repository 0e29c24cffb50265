"""The languages customers are written to in, and which of them a request prefers.

One source for both uses: the API answers a request in the language its ``Accept-Language``
prefers (``http.preferred_language``), and a booking keeps the language of the request that made
it, so the messages about it, sent later by the notifier with no request at hand, read in that
language."""
from __future__ import annotations

SUPPORTED = ("en", "ru")
DEFAULT = SUPPORTED[0]

#: More ranges than any browser sends: the rest of an overlong header is not read.
MAX_LANGUAGE_RANGES = 32


def preferred(accept_language: str | None, supported: tuple[str, ...] = SUPPORTED) -> str:
    """The supported language an ``Accept-Language`` value prefers (RFC 9110 q-values; a region
    such as ``ru-RU`` counts for its language, ``*`` for any language it does not name, ``q=0``
    refuses), the first supported one when none is acceptable or the value is absent or
    malformed. Ties go to the range named first, as browsers list them in order of preference."""
    plain: dict[str, float] = {}
    regional: dict[str, float] = {}
    first: dict[str, int] = {}
    for position, part in enumerate((accept_language or "").split(",")[:MAX_LANGUAGE_RANGES]):
        tag, _, params = part.strip().partition(";")
        tag = tag.strip().lower()
        language, q = tag.split("-")[0], _quality(params)
        if not language or q is None:
            continue
        first.setdefault(language, position)
        if tag == language:
            plain.setdefault(language, q)
        else:
            regional[language] = max(q, regional.get(language, 0.0))
    ranked = []
    for index, language in enumerate(supported):
        # the plain language's own q decides over its regions' (``ru;q=0.1, ru-RU``); only then
        # the wildcard, which stands for the languages the header does not name
        q = plain.get(language, regional.get(language, plain.get("*", 0.0)))
        position = first.get(language, first.get("*", 0))
        if q > 0:
            ranked.append((q, -position, -index, language))
    return max(ranked)[3] if ranked else supported[0]


def _quality(params: str) -> float | None:
    """The q of a range's parameters (1 without one), or None when it is not a number from 0 to 1."""
    for param in params.split(";"):
        name, _, value = param.strip().partition("=")
        if name.strip().lower() == "q":
            try:
                q = float(value.strip())
            except ValueError:
                return None
            return q if 0 <= q <= 1 else None
    return 1.0


def known(language: str | None) -> str:
    """A stored language as written to: anything not supported (an older item) reads as the default."""
    return language if language in SUPPORTED else DEFAULT
