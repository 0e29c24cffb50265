"""The request models of POST /orders and POST /admin/orders: their lines (each checked by its
offering's own hold model, ``order_lines``) and the address their messages go to."""
from __future__ import annotations

import importlib
from typing import Any

from pydantic import Field, ValidationError

from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import InvalidRequest
from holdfast.schemas import ContactEmail, _Strict

from .services import MAX_LINES, OrderLine

#: The field that names a line's offering, and the request model of that offering's own hold
#: route, named by module so that orders load another product's model only when a line needs it.
ORDER_LINE_MODELS = {"event_id": ("holdfast.schemas", "BookingIn"),
                     "service_id": ("holdfast.products.appointments.schemas", "SlotBookingIn"),
                     "lot_id": ("holdfast.products.parking.schemas", "ReservationIn")}


class OrderIn(_Strict):
    lines: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_LINES)
    contact_email: ContactEmail | None = None


class GivenOrderIn(_Strict):
    """POST /admin/orders: an order the organizer gives away (a comp) to the customer of
    ``for_email``, confirmed at once without a payment; ``note`` is the organizer's record."""

    lines: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_LINES)
    for_email: ContactEmail
    note: str = Field(default="", max_length=300)


def order_lines(lines: list[dict[str, Any]], blocks: bool = False) -> tuple[OrderLine, ...]:
    """Each line parsed by its offering's own hold model (400 with ``details.line`` otherwise).
    ``blocks``: an event's line may name the organizer's block its places come out of
    (``block_id``, POST /admin/orders)."""
    parsed = []
    for index, line in enumerate(lines):
        named = [field for field in ORDER_LINE_MODELS if field in line]
        if len(named) != 1:
            raise InvalidRequest("A line names one offering: event_id, service_id or lot_id.", code="validation_error",
                                 line=index)
        module, name = ORDER_LINE_MODELS[named[0]]
        body = {key: value for key, value in line.items() if key not in (named[0], "block_id")}
        block_id = line.get("block_id")
        if block_id is not None and not (blocks and named[0] == "event_id" and isinstance(block_id, str)
                                         and 1 <= len(block_id) <= 64):
            raise InvalidRequest("Only an event's line of the organizer's order names a block (a string).",
                                 code="validation_error", line=index)
        try:
            model = getattr(importlib.import_module(module), name).model_validate(body)
        except ValidationError as error:
            raise InvalidRequest("A line is not what its offering's hold route accepts.", code="validation_error",
                                 line=index, errors=error.errors(include_url=False, include_context=False,
                                                                 include_input=False)) from None
        if not isinstance(line[named[0]], str) or not 1 <= len(line[named[0]]) <= 100:
            raise InvalidRequest("An offering id is a string.", code="validation_error", line=index)
        command = model.command() if hasattr(model, "command") else HoldPlaces.of(model.model_dump())
        parsed.append(OrderLine(line[named[0]], HoldPlaces.of(command), block_id=block_id))
    return tuple(parsed)
