"""What the shop's messages say beyond the core's: the places of a booking are bikes. No type or
template of its own: every message is the core's, with its words (services/messages.py)."""
from __future__ import annotations

from typing import Any

from holdfast.services import message_words as words
from holdfast.services.messages import Facts, MessageParts

LABELS = {"en": {"bikes": ("bike", "bikes")}, "ru": {"bikes": ("велосипед", "велосипеда", "велосипедов")}}


def booking(facts: Facts, values: dict[str, Any]) -> None:
    quantity = (facts.view.get("places") or {}).get("quantity")
    if quantity:
        values["places"] = words.count(int(quantity), facts.language, facts.labels["bikes"])


MESSAGES = MessageParts(package=__package__, labels=LABELS, booking=booking)
