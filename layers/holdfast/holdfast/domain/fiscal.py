"""Fiscal receipts (54-FZ): an organizer's fiscal settings, and the receipt a sale carries.

An organizer with fiscal settings sells with receipts: every payment the engine creates for it
carries YooKassa's ``receipt`` (the customer's address and one item per line), and so does every
refund. The receipt is built from lines, whatever sells them: a booking passes one line per place
group; an order passes its own lines. Pure: no I/O, no clock. docs/payments.md describes the flow,
docs/payment-sandbox.md the receipt object as the provider checks it.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Iterable

from .money import Money

TAX_SYSTEM_CODES = range(1, 7)     # 1 general, 2 simplified (income), 3 simplified (income - expenses), 4-6
VAT_CODES = range(1, 13)           # 1 without VAT ... 11 22 %, 12 22/122
PAYMENT_SUBJECTS = frozenset({"service", "commodity", "job", "another"})
DEFAULT_SUBJECT = "service"
ITEM_DESCRIPTION_MAX = 128
ITEMS_MAX = 80
#: Paid now for something rendered later (a ticket, a slot, a reserved window): a settlement
#: receipt follows when it is rendered.
PREPAYMENT = "full_prepayment"
#: Paid and rendered at once (a drive-up paying at the exit).
PAID_AND_RENDERED = "full_payment"
_CENT = Decimal("0.01")


@dataclass(frozen=True)
class FiscalSettings:
    """An organizer's receipts switched on: its tax system, its default VAT rate, what it sells,
    and VAT rates of particular offerings that differ from the default."""

    tax_system_code: int
    vat_code: int
    payment_subject: str = DEFAULT_SUBJECT
    vat_overrides: tuple[tuple[str, int], ...] = ()

    def vat_for(self, offering_id: str) -> int:
        return dict(self.vat_overrides).get(offering_id, self.vat_code)

    def as_item(self) -> dict[str, Any]:
        return {"tax_system_code": self.tax_system_code, "vat_code": self.vat_code,
                "payment_subject": self.payment_subject,
                "vat_overrides": {offering: code for offering, code in self.vat_overrides}}

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> "FiscalSettings":
        overrides = item.get("vat_overrides") or {}
        return cls(int(item["tax_system_code"]), int(item["vat_code"]),
                   str(item.get("payment_subject") or DEFAULT_SUBJECT),
                   tuple(sorted((str(k), int(v)) for k, v in overrides.items())))


@dataclass(frozen=True)
class ReceiptLine:
    """One line of a sale as its receipt lists it: ``unit_amount`` x ``quantity`` is what it costs."""

    description: str
    quantity: int
    unit_amount: Money
    vat_code: int
    payment_mode: str = PREPAYMENT
    #: The offering the line sells (an order's line's): its settlement receipt lists it alone.
    offering_id: str = ""

    @property
    def total(self) -> Decimal:
        return (self.unit_amount.value * self.quantity).quantize(_CENT, rounding=ROUND_HALF_UP)


def line_for(description: str, amount: Money, quantity: int, vat_code: int,
             payment_mode: str = PREPAYMENT, offering_id: str = "") -> ReceiptLine:
    """A line of ``quantity`` places costing ``amount`` together: ``quantity`` units when the amount
    divides into whole cents, one unit of the whole amount otherwise (a tariff by the minute), so
    the line always sums exactly to ``amount``."""
    quantity = max(1, quantity)
    unit = (amount.value / quantity).quantize(_CENT)
    if unit * quantity != amount.value:
        unit, quantity = amount.value, 1
    return ReceiptLine(_description(description), quantity, Money(unit, amount.currency), vat_code, payment_mode,
                       offering_id)


def _description(text: str) -> str:
    text = " ".join((text or "").split()) or "Booking"
    return text if len(text) <= ITEM_DESCRIPTION_MAX else text[:ITEM_DESCRIPTION_MAX - 1] + "…"


def lines_total(lines: Iterable[ReceiptLine]) -> Decimal:
    return sum((line.total for line in lines), Decimal("0.00"))


def sale_record(lines: list[ReceiptLine], settings: FiscalSettings) -> dict[str, Any]:
    """What a payment record keeps of its receipt, stored with the attempt before the provider is
    called: every repeat of the call (a retry, reconciliation) sends the same receipt, whatever the
    organizer changes meanwhile, and the refunds list the same items. No address: it is the
    booking's, read when the receipt is sent (and erased with the booking's personal data)."""
    return {"tax_system_code": settings.tax_system_code, "payment_subject": settings.payment_subject,
            "lines": [{"description": line.description, "quantity": line.quantity,
                       "unit": line.unit_amount.text, "currency": line.unit_amount.currency,
                       "vat_code": line.vat_code, "payment_mode": line.payment_mode,
                       **({"offering_id": line.offering_id} if line.offering_id else {})} for line in lines]}


def lines_of(record: dict[str, Any]) -> list[ReceiptLine]:
    """The lines of a stored ``sale_record`` (numbers may come back from storage as decimals)."""
    return [ReceiptLine(str(line["description"]), int(line["quantity"]),
                        Money(Decimal(str(line["unit"])), str(line["currency"])), int(line["vat_code"]),
                        str(line["payment_mode"]), str(line.get("offering_id") or "")) for line in record["lines"]]


def receipt(email: str, record: dict[str, Any], amount: Money, lines: list[ReceiptLine] | None = None,
            payment_mode: str | None = None) -> dict[str, Any]:
    """YooKassa's ``receipt`` for ``amount``: the customer's address and one item per line (the
    record's, or ``lines``: a refunded part). ``payment_mode`` replaces each line's own
    (``full_payment`` in a settlement receipt). The items sum exactly to ``amount`` or this raises
    ValueError: a receipt that does not add up is a bug, never something to send."""
    lines = lines_of(record) if lines is None else lines
    if not lines or len(lines) > ITEMS_MAX:
        raise ValueError(f"a receipt lists 1-{ITEMS_MAX} items, not {len(lines)}")
    if lines_total(lines) != amount.value or any(line.unit_amount.currency != amount.currency for line in lines):
        raise ValueError(f"receipt lines sum to {lines_total(lines)}, not {amount.value}")
    return {
        "customer": {"email": email},
        "tax_system_code": int(record["tax_system_code"]),
        "items": [{"description": line.description, "quantity": str(line.quantity),
                   "amount": line.unit_amount.as_dict(), "vat_code": line.vat_code,
                   "payment_mode": payment_mode or line.payment_mode,
                   "payment_subject": str(record["payment_subject"])} for line in lines],
    }


def part_of(lines: list[ReceiptLine], amount: Money) -> list[ReceiptLine]:
    """The lines of a partial refund of ``amount``: each line given back in proportion, the last
    one taking the rounding, as single units (a part of a ticket is not a number of tickets)."""
    total = lines_total(lines)
    if amount.value >= total:
        return list(lines)
    out: list[ReceiptLine] = []
    left = amount.value
    for index, line in enumerate(lines):
        share = left if index == len(lines) - 1 else (line.total * amount.value / total).quantize(_CENT)
        share = min(share, left)
        left -= share
        if share > 0:
            out.append(ReceiptLine(line.description, 1, Money(share, amount.currency), line.vat_code,
                                   line.payment_mode, line.offering_id))
    return out


def line_amount(record: dict[str, Any], offering_id: str, currency: str) -> Money:
    """What the receipt's items of one offering (an order's line) come to."""
    return Money(lines_total(line for line in lines_of(record) if line.offering_id == offering_id), currency)


def rendered_at(granule_starts: list[str], offering_starts_at: str | None) -> str | None:
    """When a sale's service is rendered: the first of its granules' starts (a slot, a parking
    window), else its offering's start as the offering has it now (an event, after any change)."""
    from ..clock import iso, parse_iso

    moments = granule_starts or ([offering_starts_at] if offering_starts_at else [])
    return iso(min(parse_iso(moment) for moment in moments)) if moments else None


def difference_line(record: dict[str, Any], amount: Money, offering_id: str = "") -> ReceiptLine:
    """The one item of a dearer exchange's difference payment (issue 45) of ``amount``: described
    and taxed as the sale's first line, a prepayment of the places it moved the booking to."""
    first = lines_of(record)[0]
    return line_for(f"Exchange difference: {first.description}", amount, 1, first.vat_code, first.payment_mode,
                    offering_id)


def settlement_receipt(email: str, record: dict[str, Any], amount: Money, payment_id: str,
                       offering_id: str | None = None, places: int = 1,
                       lines: list[ReceiptLine] | None = None) -> dict[str, Any]:
    """``POST /v3/receipts`` closing the prepayment of ``amount`` once the service is rendered: the
    same items, each ``full_payment``, settled against the prepayment. With ``offering_id``, one
    order line's: its items alone, and ``amount`` is theirs (``line_amount``). A booking exchanged
    since its payment (other places at another price) closes what its payment prepaid of the places
    it now has: the sale's items no longer add up to that, so it lists one line of ``places``
    place(s) for ``amount``, described and taxed as the sale's first line. ``lines``: the items it
    closes, where they are not the sale's (a difference payment's own, ``difference_line``)."""
    if lines is None and offering_id is not None:
        lines = [line for line in lines_of(record) if line.offering_id == offering_id]
    if lines is None and lines_total(lines_of(record)) != amount.value:
        first = lines_of(record)[0]
        lines = [line_for(first.description, amount, places, first.vat_code, first.payment_mode, first.offering_id)]
    body = receipt(email, record, amount, lines=lines, payment_mode=PAID_AND_RENDERED)
    return {"type": "payment", "payment_id": payment_id, "send": True, **body,
            "settlements": [{"type": "prepayment", "amount": amount.as_dict()}]}
