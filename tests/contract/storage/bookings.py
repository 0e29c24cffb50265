"""Makers for the booking store's cases: an offering written through ``put_event``, and the
``Change`` of a new hold or of one step of a booking, built as the services build them."""
from __future__ import annotations

from dataclasses import replace

from holdfast.domain.booking import Booking, JournalEntry, PaymentMode
from holdfast.domain.inventory import InventoryKind, Move, Places
from holdfast.domain.money import Money
from holdfast.domain.statuses import BookingStatus
from holdfast.ports import Change, IdempotencyRecord

AT = "2030-01-01T12:00:00.000Z"
EXPIRES = "2030-01-01T12:10:02.000Z"


def offering(store, event_id: str, pools: list[int] | None = None, units: list[str] | None = None) -> dict:
    event = {"event_id": event_id, "name": "Club night", "created_at": AT, "hold_ttl_seconds": 600,
             "inventory_kind": "named" if units else "counted"}
    store.put_event(event, pools, units, f"fp-{event_id}")
    return event


def counted(quantity: int, pools: dict[str, int] | None = None) -> Places:
    return Places(InventoryKind.COUNTED, quantity, pools=tuple(sorted((pools or {"POOL#000": quantity}).items())))


def named(*units: str) -> Places:
    return Places(InventoryKind.NAMED, len(units), units=tuple(units))


def booking(booking_id: str, event_id: str, places: Places, customer: str = "ann", **more) -> Booking:
    fields = {"status": BookingStatus.HELD, "amount": Money.parse("100.00", "RUB"),
              "payment_mode": PaymentMode.ONE_STAGE, "hold_expires_at": EXPIRES, "created_at": AT, "updated_at": AT,
              "version": 1, "counted_hold": True, **more}
    return Booking(booking_id=booking_id, event_id=event_id, customer_id=customer, places=places, **fields)


def new_hold(held: Booking, key: str | None = None, limit: int | None = 4, **more) -> Change:
    record = IdempotencyRecord(held.customer_id, key or f"key-{held.booking_id}", "booking", f"fp-{held.booking_id}",
                               held.booking_id)
    entry = JournalEntry(at=AT, action="hold_created", actor="customer", from_status=None, to_status="HELD",
                         decision="held", ids={"booking_id": held.booking_id})
    return Change(after=held, journal=entry, outbox={"type": "booking.held", "at": AT}, idempotency=record,
                  hold_limit=limit, **more)


def step(before: Booking, status: BookingStatus | None = None, move: Move | None = None, **more) -> Change:
    """``before`` moved one version on (to ``status``), its places moved by ``move``."""
    after = replace(before, version=before.version + 1, status=status or before.status, updated_at=AT)
    entry = JournalEntry(at=AT, action="step", actor="system", from_status=before.status.value,
                         to_status=after.status.value, decision="a step", ids={})
    return Change(before=before, after=after, journal=entry, outbox={"type": "booking.changed"}, move=move, **more)


def pools(store, event_id: str) -> list[tuple[str, int, int, int]]:
    return [(pool.pool_id, pool.available, pool.held, pool.sold) for pool in store.read_pools(event_id)]
