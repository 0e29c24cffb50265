"""Builds the orders service from the core's wiring, once per cold start."""
from __future__ import annotations

from holdfast.wiring import bookings, cached


@cached
def orders():
    from .services import OrderService

    return OrderService(bookings())
