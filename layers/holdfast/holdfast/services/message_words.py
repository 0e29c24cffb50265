"""Dates, times, amounts and counts as a customer reads them, in the two languages we write in
(domain/languages.py). Small on purpose: two languages need a handful of month names and one
plural rule, not a locale database."""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from ..clock import parse_iso

_MONTHS = {
    "en": ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"),
    # the genitive: "1 февраля", as a date is read
    "ru": ("января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября",
           "ноября", "декабря"),
}
_SYMBOLS = {"RUB": "₽", "USD": "$", "EUR": "€", "GBP": "£"}
NBSP = "\u00a0"


def zone(name: str | None):  # noqa: ANN201 - a ZoneInfo, imported on first use
    """The zone by its IANA name; UTC for none or a name this runtime does not know."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def local(moment: str | datetime, zone_name: str | None) -> datetime:
    at = parse_iso(moment) if isinstance(moment, str) else moment
    return at.astimezone(zone(zone_name))


def date_time(moment: str | datetime | None, zone_name: str | None, language: str) -> str:
    """``1 February 2030, 23:00 (Europe/Moscow)``; the zone is named, never assumed."""
    if not moment:
        return ""
    at = local(moment, zone_name)
    return f"{at.day} {_MONTHS[language][at.month - 1]} {at.year}, {at:%H:%M} ({_name(at)})"


def time_range(start: str | None, end: str | None, zone_name: str | None, language: str) -> str:
    """``2 January 2030, 10:00–12:00 (UTC)``; both dates when it crosses midnight."""
    if not start:
        return ""
    if not end:
        return date_time(start, zone_name, language)
    first, last = local(start, zone_name), local(end, zone_name)
    if first.date() == last.date():
        return f"{first.day} {_MONTHS[language][first.month - 1]} {first.year}, {first:%H:%M}–{last:%H:%M} " \
               f"({_name(first)})"
    return f"{date_time(first, zone_name, language).rsplit(' (', 1)[0]} – {date_time(last, zone_name, language)}"


def _name(at: datetime) -> str:
    """The zone a time is shown in: the one really used (UTC when the name was unknown)."""
    return str(getattr(at.tzinfo, "key", "UTC"))


def money(amount: dict[str, Any] | None, language: str) -> str:
    """``₽1,500.00`` in English, ``1 500,00 ₽`` in Russian; an unknown currency by its code."""
    if not amount:
        return ""
    value = Decimal(str(amount["value"])).quantize(Decimal("0.01"))
    currency = str(amount["currency"])
    whole, _, cents = f"{abs(value):,.2f}".partition(".")
    sign = "-" if value < 0 else ""
    symbol = _SYMBOLS.get(currency)
    if language == "ru":
        return f"{sign}{whole.replace(',', NBSP)},{cents}{NBSP}{symbol or currency}"
    return f"{sign}{symbol}{whole}.{cents}" if symbol else f"{sign}{currency}{NBSP}{whole}.{cents}"


def count(number: int, language: str, forms: tuple[str, ...]) -> str:
    """``1 place`` / ``2 places``; in Russian the three forms: ``1 место``, ``2 места``, ``5 мест``."""
    if language == "ru":
        one, few, many = forms
        tens, units = number % 100, number % 10
        word = one if units == 1 and tens != 11 else few if 2 <= units <= 4 and not 12 <= tens <= 14 else many
    else:
        word = forms[0] if number == 1 else forms[1]
    return f"{number} {word}"


def duration(minutes: int, language: str) -> str:
    hours, rest = divmod(int(minutes), 60)
    if language == "ru":
        parts = [f"{hours} ч"] if hours else []
        return " ".join(parts + ([f"{rest} мин"] if rest or not hours else []))
    parts = [f"{hours} h"] if hours else []
    return " ".join(parts + ([f"{rest} min"] if rest or not hours else []))
