"""The fiscal receipt (54-FZ) a booking's payment and refunds carry, for an organizer with receipts on.

The payment's receipt is decided once, when its attempt is stored (``sale_record``), and kept on
the payment record: every repeat of the provider call sends the same one, and refunds list the
same items. The customer's address is the booking's (its contact address, or the verified
identity's that the hold took), read when a receipt is sent.
"""
from __future__ import annotations

from typing import Any

from ..domain import fiscal
from ..domain.booking import Booking
from ..domain.errors import InvalidRequest
from ..domain.money import Money
from ..ports import EventReads, FiscalReads


class ContactRequired(InvalidRequest):
    def __init__(self) -> None:
        super().__init__("A fiscal receipt is e-mailed to the customer: give the booking a contact address "
                         "(contact_email) before paying.", code="contact_required")


class SaleReceipts:
    def __init__(self, offerings: EventReads, directory: FiscalReads | None) -> None:
        self.offerings = offerings
        self.directory = directory

    def sale_record(self, booking: Booking) -> dict[str, Any] | None:
        """What the booking's payment will keep of its receipt, or None when its organizer has
        receipts off. ContactRequired when receipts are on and the booking has no address."""
        if self.directory is None:
            return None
        offering = self.offerings.get_event(booking.event_id) or {}
        organizer_id = offering.get("organizer_id")
        settings = self.directory.get_fiscal(str(organizer_id)) if organizer_id else None
        if settings is None:
            return None
        if not booking.contact_email:
            raise ContactRequired()
        lines = [fiscal.line_for(str(offering.get("name") or "Booking"), booking.amount, booking.places.quantity,
                                 settings.vat_for(booking.event_id))]
        return fiscal.sale_record(lines, settings)


def payment_receipt(booking: Booking) -> dict[str, Any] | None:
    """The ``receipt`` of the booking's payment request (None: its payment carries none)."""
    record = booking.payment.receipt if booking.payment else None
    if not record or not booking.contact_email:
        return None
    return fiscal.receipt(booking.contact_email, record, booking.amount)


def refund_receipt(booking: Booking, amount: dict[str, str]) -> dict[str, Any] | None:
    """The ``receipt`` of a refund of ``amount``: the items given back (a part of them, for a
    partial refund), when the payment carried a receipt; after the settlement receipt was sent,
    of the settled kind (``full_payment``). None for more than the receipt listed:
    that is money the booking's receipt never covered (a payment of another amount than the
    booking's, which the engine did not create)."""
    record = booking.payment.receipt if booking.payment else None
    if not record or not booking.contact_email:
        return None
    given_back = Money.parse(amount["value"], amount["currency"])
    if given_back.value > fiscal.lines_total(fiscal.lines_of(record)):
        return None
    settled = ((booking.payment.settlement if booking.payment else None) or {}).get("state") == "sent"
    return fiscal.receipt(booking.contact_email, record, given_back,
                          lines=fiscal.part_of(fiscal.lines_of(record), given_back),
                          payment_mode=fiscal.PAID_AND_RENDERED if settled else None)
