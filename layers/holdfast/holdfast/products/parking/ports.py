"""The storage parking needs besides the core's (holdfast/ports.py): lots, gates, subscriptions,
tickets and their exit payments, gate cases, passes, and each gate's numbered offline passes.
The outcomes these raise are the core's (StaleBooking when a committed condition failed)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from holdfast.ports import Catalog, Commits, EventBookings, EventReads, InventoryReads, Labelled, LifecycleStore

if TYPE_CHECKING:
    from holdfast.domain.inventory import Granule, Move


class ParkingLots(Protocol):
    def sold_holders(self, lot_id: str, start: str, end: str) -> set[str]:
        """The bookings and tickets holding a sold granule of the lot in [start, end)."""
        ...

    def read_lot_granules(self, lot_id: str, start: str, end: str) -> dict[tuple[str, str], dict[str, Any]]: ...

    def reservation_summaries(self, booking_ids: list[str]) -> list[dict[str, Any]]: ...

    def put_gate(self, lot_id: str, gate: dict[str, Any]) -> None: ...

    def get_gate(self, lot_id: str, gate_id: str) -> dict[str, Any] | None: ...

    def list_gates(self, lot_id: str) -> list[dict[str, Any]]:
        """Every gate of the lot, deleted ones too."""

    def change_gate(self, lot_id: str, gate_id: str, changes: dict[str, Any]) -> bool:
        """False when the gate does not exist or was deleted (nothing written)."""

    def put_subscription(self, lot_id: str, subscription: dict[str, Any]) -> None: ...

    def subscriptions(self, lot_id: str, plate: str | None = None) -> list[dict[str, Any]]: ...

    def open_tickets(self, lot_id: str) -> list[dict[str, Any]]: ...


class ParkingStore(Catalog, ParkingLots, EventReads, EventBookings, InventoryReads, Protocol):
    """Lots, their gates and subscriptions (products/parking/services/lots.py)."""


class GateCaseItems(Protocol):
    def gate_case_put(self, case: dict[str, Any]) -> Labelled: ...

    def gate_case_items(self, case: dict[str, Any], booking_id: str | None = None) -> list[Labelled]: ...

    def get_gate_case(self, case_id: str) -> dict[str, Any] | None: ...

    def gate_case_resolve(self, case_id: str, resolution: dict[str, Any], entry: dict[str, Any]) -> bool: ...

    def list_gate_cases(self, organizer_id: str | None, limit: int, cursor: str | None
                        ) -> tuple[list[dict[str, Any]], str | None]:
        """A page of the organizer's open cases (None: of no organizer) and the next page's cursor;
        ValueError for a cursor this did not give."""


class RetiredGateCases(GateCaseItems, Commits, Protocol):
    """The gate cases a deleted gate's last passes open (services/retired_gates.py)."""


class GateCaseStore(GateCaseItems, EventReads, Protocol):
    """Gate cases as operators see them: each case's lot tells whose case it is."""


class TicketWrites(Commits, Protocol):
    """A ticket's items, committed as ``Change(items=...)`` (StaleBooking: a condition failed)."""

    def get_ticket(self, ticket_id: str) -> dict[str, Any] | None: ...

    def ticket_status_is(self, ticket_id: str, status: str) -> Labelled: ...


class ExitPaymentStore(TicketWrites, Protocol):
    """Payments at the exit of a lot (products/parking/services/exit_payments.py)."""

    def exit_payments(self, ticket_id: str) -> list[dict[str, Any]]: ...

    def exit_payment_put(self, ticket_id: str, record: dict[str, Any]) -> Labelled: ...

    def exit_payment_change(self, ticket_id: str, number: int, changes: dict[str, Any], state: str) -> Labelled: ...

    def exit_payment_not_paid(self, ticket_id: str, number: int) -> Labelled: ...

    def gate_case_put(self, case: dict[str, Any]) -> Labelled: ...

    def gate_case_items(self, case: dict[str, Any], booking_id: str | None = None) -> list[Labelled]: ...


class GatePassStore(LifecycleStore, ExitPaymentStore, GateCaseItems, ParkingLots, InventoryReads, Protocol):
    """Passes through a lot's gates (products/parking/services/gate_passes.py)."""

    def get_pass(self, lot_id: str, gate_id: str, pass_id: str, direction: str) -> dict[str, Any] | None: ...

    def pass_put(self, lot_id: str, gate_id: str, pass_id: str, answer: dict[str, Any], at: str,
                 direction: str | None = None, *, offline: bool = False, body: dict[str, str] | None = None,
                 replacing_online: bool = False) -> Labelled: ...

    def open_ticket_of(self, lot_id: str, plate: str) -> dict[str, Any] | None: ...

    def ticket_open(self, ticket: dict[str, Any]) -> list[Labelled]: ...

    def ticket_close(self, ticket: dict[str, Any], exited_at: str, charge: str, unpaid: str | None = None
                     ) -> list[Labelled]: ...

    def ticket_outbox(self, ticket: dict[str, Any], event: dict[str, Any]) -> Labelled: ...

    def granule_claim(self, granule: Granule, booking_id: str, move: Move) -> dict[str, Any]:
        """The conditional change of one time granule, for a transaction (label it yourself)."""
        ...

    def sale_gate_check(self, event_id: str, booking_id: str) -> Labelled:
        """The check that the event (the lot) is not cancelled, for a transaction."""
        ...
