"""Builds the appointments service from the core's wiring, once per cold start."""
from __future__ import annotations

from holdfast.clock import system_clock
from holdfast.config import settings
from holdfast.wiring import bookings, cached, id_salt, store


@cached
def appointments():
    from .services import AppointmentService

    return AppointmentService(store(), system_clock, bookings(), settings().default_hold_ttl_seconds, id_salt())
