"""The request model of POST /orders: its lines (each checked by its offering's own hold model
in the handler, which knows every product's) and the address its messages go to."""
from __future__ import annotations

from typing import Any

from pydantic import Field

from holdfast.schemas import ContactEmail, _Strict

from .services import MAX_LINES


class OrderIn(_Strict):
    lines: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_LINES)
    contact_email: ContactEmail | None = None
