"""An organizer's fiscal settings (54-FZ receipts): PUT, GET and DELETE /organizers/me/fiscal.

With settings stored, every payment the engine creates for the organizer's offerings carries a
receipt (services/receipts.py); without them it sells as it always did.
"""
from __future__ import annotations

from typing import Any

from ..clock import iso
from ..domain.errors import NotFound
from ..domain.fiscal import FiscalSettings
from ..domain.organizers import Caller, require_owner
from ..ports import Clock, EventReads, OrganizerDirectory


class FiscalSettingsService:
    def __init__(self, directory: OrganizerDirectory, offerings: EventReads, clock: Clock) -> None:
        self.directory = directory
        self.offerings = offerings
        self.clock = clock

    def put(self, caller: Caller, settings: FiscalSettings) -> dict[str, Any]:
        """Receipts on (or their settings replaced whole). A VAT override names an offering of the
        caller's: another organizer's, or none, answers 404 as an unknown id does."""
        for offering_id, _ in settings.vat_overrides:
            require_owner(self.offerings.get_event(offering_id), caller,
                          NotFound(f"No offering {offering_id}.", code="offering_not_found", offering_id=offering_id))
        self.directory.put_fiscal(caller.organizer_id, settings, iso(self.clock()))
        return _view(settings)

    def get(self, caller: Caller) -> dict[str, Any]:
        settings = self.directory.get_fiscal(caller.organizer_id)
        if settings is None:
            raise NotFound("Receipts are off: no fiscal settings.", code="fiscal_settings_not_found")
        return _view(settings)

    def delete(self, caller: Caller) -> None:
        """Receipts off; a repeat finds them off and answers the same."""
        self.directory.delete_fiscal(caller.organizer_id)


def _view(settings: FiscalSettings) -> dict[str, Any]:
    return {"receipts": True, **settings.as_item()}
