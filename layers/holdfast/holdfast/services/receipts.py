"""The fiscal receipt (54-FZ) a booking's payment and refunds carry, for an organizer with receipts on.

The payment's receipt is decided once, when its attempt is stored (``sale_record``), and kept on
the payment record: every repeat of the provider call sends the same one, and refunds list the
same items. The customer's address is the booking's (its contact address, or the verified
identity's that the hold took), read when a receipt is sent.
"""
from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

from ..domain import fiscal, pricing
from ..domain.booking import Booking, settled_lines
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
        return fiscal.sale_record(receipt_lines(booking, str(offering.get("name") or "Booking"), settings), settings)


def receipt_lines(booking: Booking, offering_name: str, settings: fiscal.FiscalSettings) -> list[fiscal.ReceiptLine]:
    """The receipt's lines of a booking's sale: one per order line and place group (price category
    and ticket type), as ``pricing.line_items`` spells them (a code's discount spread over them, to
    the kopeck), each taxed by its own offering's VAT rate. A sale of more groups than a receipt
    lists is one line per offering."""
    items = pricing.line_items(booking, offering_name)
    if len(items) > fiscal.ITEMS_MAX:
        by_offering: dict[str, list[pricing.LineItem]] = {}
        for item in items:
            by_offering.setdefault(item.offering_id, []).append(item)
        return [fiscal.line_for(group[0].description, Money(sum((i.amount.value for i in group), Decimal("0.00")),
                                                            booking.amount.currency),
                                sum(i.quantity for i in group), settings.vat_for(offering or booking.event_id),
                                offering_id=_line_offering(booking, offering))
                for offering, group in by_offering.items()]
    return [fiscal.line_for(item.description, item.amount, item.quantity,
                            settings.vat_for(item.offering_id or booking.event_id),
                            offering_id=_line_offering(booking, item.offering_id)) for item in items]


def _line_offering(booking: Booking, offering_id: str) -> str:
    """The offering an order's receipt line names (its settlement receipt is the line's own); ""
    for any other booking's, settled whole."""
    return offering_id if (booking.kind_details or {}).get("lines") else ""


def payment_receipt(booking: Booking) -> dict[str, Any] | None:
    """The ``receipt`` of the booking's payment request (None: its payment carries none)."""
    record = booking.payment.receipt if booking.payment else None
    if not record or not booking.contact_email:
        return None
    return fiscal.receipt(booking.contact_email, record, booking.amount)


def refund_receipt(booking: Booking, amount: dict[str, str], offering_id: str | None = None) -> dict[str, Any] | None:
    """The ``receipt`` of a refund of ``amount``: the items given back (a part of them, for a
    partial refund), when the payment carried a receipt; after the settlement receipt was sent,
    of the settled kind (``full_payment``). A refund of more than the receipt listed (a payment of
    another amount than the booking's, which the engine did not create, given back whole) lists one
    item of what is given back, described and taxed as the sale's first line: a shop that requires
    receipts refuses a refund without one. ``offering_id``: the refund of one order line alone (a
    refunded no-show) lists that line's items; any other refund of an order lists the items of
    the lines not refunded on their own already."""
    record = booking.payment.receipt if booking.payment else None
    if not record or not booking.contact_email:
        return None
    given_back = Money.parse(amount["value"], amount["currency"])
    payment = booking.payment
    settled = ((payment.settlement if payment else None) or {}).get("state") == "sent"
    # an order's lines settle one by one: those settled already are given back of the settled kind
    settled_offerings = {line.offering_id for line in settled_lines(booking)
                         if payment is not None and line.settlement(payment).get("state") == "sent"}
    lines = [replace(line, payment_mode=fiscal.PAID_AND_RENDERED) if line.offering_id in settled_offerings else line
             for line in fiscal.lines_of(record)]
    given_up = {str(entry.get("offering_id")) for entry in ((payment.exchange_refunds if payment else None) or [])
                if entry.get("line_id")}
    if offering_id is not None:
        lines = [line for line in lines if line.offering_id == offering_id] or lines
    elif given_up:
        lines = [line for line in lines if line.offering_id not in given_up] or lines
    if given_back.value > fiscal.lines_total(lines) or any(line.unit_amount.currency != given_back.currency for line in lines):
        first = lines[0]
        parts = [fiscal.line_for(first.description, given_back, 1, first.vat_code, first.payment_mode)]
    else:
        parts = fiscal.part_of(lines, given_back)
    return fiscal.receipt(booking.contact_email, record, given_back, lines=parts,
                          payment_mode=fiscal.PAID_AND_RENDERED if settled else None)
