"""The storage appointments need besides the core's (holdfast/ports.py): resources, written once."""
from __future__ import annotations

from typing import Any, Protocol

from holdfast.ports import Catalog, InventoryReads


class Resources(Protocol):
    def put_resource(self, resource: dict[str, Any]) -> None: ...

    def get_resource(self, resource_id: str) -> dict[str, Any] | None: ...

    def owned_resources(self, organizer_id: str) -> list[dict[str, Any]]:
        """The organizer's resources, oldest first."""


class AppointmentStore(Catalog, Resources, InventoryReads, Protocol):
    """Services and resources of appointments, and their slots' availability."""
