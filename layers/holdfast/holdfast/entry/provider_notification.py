"""The parts of a provider notification the webhook reads, checked without pydantic.

The webhook validates every request it gets, so a pydantic model here cost its every cold start
pydantic's import and a model build (issue 15); the shape is small enough to check by hand. The
body is only a hint: the payment is fetched from the provider before anything is acted on.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_EVENT = re.compile(r"[a-z_]+\.[a-z_]+")
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_STATUS = re.compile(r"[a-z_]{1,32}")


@dataclass(frozen=True)
class Notification:
    event: str          # e.g. payment.succeeded, refund.succeeded
    object_id: str      # the payment's id, or the refund's
    status: str
    payment_id: str | None = None   # a refund's payment

    @property
    def about_payment(self) -> str:
        """The payment the notification is about: a refund's payment, else the object itself."""
        return self.payment_id if self.event.startswith("refund.") and self.payment_id else self.object_id


def _text(value: Any, pattern: re.Pattern[str], max_length: int, name: str) -> str:
    if not isinstance(value, str) or len(value) > max_length or not pattern.fullmatch(value):
        raise ValueError(f"{name} is not valid")
    return value


def parse_notification(data: Any) -> Notification:
    """The notification in a decoded JSON body (ValueError when it is not one). Unknown fields are
    ignored, as the provider may add some."""
    if not isinstance(data, dict) or data.get("type") != "notification" or not isinstance(data.get("object"), dict):
        raise ValueError("not a provider notification")
    obj = data["object"]
    payment_id = obj.get("payment_id")
    return Notification(event=_text(data.get("event"), _EVENT, 64, "event"),
                        object_id=_text(obj.get("id"), _ID, 64, "object.id"),
                        status=_text(obj.get("status"), _STATUS, 32, "object.status"),
                        payment_id=None if payment_id is None else _text(payment_id, _ID, 64, "object.payment_id"))
