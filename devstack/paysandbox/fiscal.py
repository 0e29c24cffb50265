"""Fiscal receipts (54-FZ) as YooKassa checks them: the ``receipt`` of a payment, a capture or a
refund, and the body of ``POST /v3/receipts``.

Pure validation: every function takes the request's JSON and answers parsed values, or raises the
provider's 400 ``invalid_request`` naming the parameter at fault. docs/payment-sandbox.md lists the
rules and where they come from.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from .models import CENT, invalid, parse_amount

ITEM_DESCRIPTION_MAX = 128
ITEMS_MAX = 80           # YooKassa's own receipts (third-party registers take 100)
VAT_CODES = range(1, 13)          # 1 without VAT ... 11 22 %, 12 22/122
TAX_SYSTEM_CODES = range(1, 7)    # 1 general ... 6 patent
PAYMENT_MODES = frozenset({"full_prepayment", "partial_prepayment", "advance", "full_payment",
                           "partial_payment", "credit", "credit_payment"})
PAYMENT_SUBJECTS = frozenset({
    "commodity", "excise", "job", "service", "gambling_bet", "gambling_prize", "lottery",
    "lottery_prize", "intellectual_activity", "payment", "agent_commission", "property_right",
    "non_operating_gain", "insurance_premium", "sales_tax", "resort_fee", "composite", "another",
})
SETTLEMENT_TYPES = frozenset({"cashless", "prepayment", "postpayment", "consideration"})
RECEIPT_TYPES = ("payment", "refund")
RECEIPT_STATUSES = ("pending", "succeeded", "canceled")
#: What a payment or refund without a receipt is told by a shop that must send them.
MISSING = "Receipt is missing or illegal"

_EMAIL_RE = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,255}\.[^@\s]{2,}$")
_PHONE_RE = re.compile(r"^\+?\d{11,15}$")
_QUANTITY_RE = re.compile(r"^\d{1,10}(\.\d{1,3})?$")


@dataclass(frozen=True)
class Item:
    description: str
    quantity: Decimal
    amount: Decimal          # the price of ONE unit
    currency: str
    vat_code: int
    payment_mode: str | None
    payment_subject: str | None

    @property
    def total(self) -> Decimal:
        """What the item weighs in the receipt's sum: unit price times quantity, to the cent."""
        return (self.amount * self.quantity).quantize(CENT, rounding=ROUND_HALF_UP)

    def render(self) -> dict:
        out = {"description": self.description, "quantity": _plain(self.quantity),
               "amount": {"value": str(self.amount), "currency": self.currency},
               "vat_code": self.vat_code}
        if self.payment_mode:
            out["payment_mode"] = self.payment_mode
        if self.payment_subject:
            out["payment_subject"] = self.payment_subject
        return out


@dataclass(frozen=True)
class ReceiptData:
    """A receipt as the shop sent it: who gets it, what it lists, under which tax system."""

    customer: dict
    items: tuple[Item, ...]
    tax_system_code: int | None

    @property
    def total(self) -> Decimal:
        return sum((item.total for item in self.items), Decimal("0.00"))


def _plain(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text if "." in text else text + ".00"


def _int_code(raw, allowed: range, parameter: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, (int, str)):
        raise invalid(f"{parameter} must be an integer from {allowed.start} to {allowed.stop - 1}", parameter)
    try:
        value = int(raw)
    except ValueError:
        raise invalid(f"{parameter} must be an integer from {allowed.start} to {allowed.stop - 1}",
                      parameter) from None
    if value not in allowed:
        raise invalid(f"{parameter} must be an integer from {allowed.start} to {allowed.stop - 1}", parameter)
    return value


def parse_customer(raw, parameter: str) -> dict:
    """The receipt's addressee: an e-mail and/or a phone; at least one is required."""
    if not isinstance(raw, dict):
        raise invalid(f"{parameter} is required: an email or a phone", parameter)
    out = {}
    email, phone = raw.get("email"), raw.get("phone")
    if email is not None:
        if not isinstance(email, str) or not _EMAIL_RE.match(email):
            raise invalid(f"{parameter}.email is not an e-mail address", f"{parameter}.email")
        out["email"] = email
    if phone is not None:
        if not isinstance(phone, str) or not _PHONE_RE.match(phone):
            raise invalid(f"{parameter}.phone must be digits in international format", f"{parameter}.phone")
        out["phone"] = phone
    if not out:
        raise invalid(f"{parameter} is required: an email or a phone", parameter)
    for name in ("full_name", "inn"):
        if isinstance(raw.get(name), str):
            out[name] = raw[name][:256]
    return out


def parse_item(raw, currency: str, parameter: str) -> Item:
    if not isinstance(raw, dict):
        raise invalid(f"{parameter} must be an object", parameter)
    description = raw.get("description")
    if not isinstance(description, str) or not description.strip():
        raise invalid(f"{parameter}.description is required", f"{parameter}.description")
    if len(description) > ITEM_DESCRIPTION_MAX:
        raise invalid(f"{parameter}.description is longer than {ITEM_DESCRIPTION_MAX} characters",
                      f"{parameter}.description")
    quantity_raw = raw.get("quantity")
    if isinstance(quantity_raw, bool) or not isinstance(quantity_raw, (str, int, float)) \
            or not _QUANTITY_RE.match(str(quantity_raw).strip()):
        raise invalid(f"{parameter}.quantity must be a positive decimal", f"{parameter}.quantity")
    try:
        quantity = Decimal(str(quantity_raw).strip())
    except InvalidOperation:  # pragma: no cover - the pattern already guards this
        raise invalid(f"{parameter}.quantity must be a positive decimal", f"{parameter}.quantity") from None
    if quantity <= 0:
        raise invalid(f"{parameter}.quantity must be greater than zero", f"{parameter}.quantity")
    amount, item_currency = parse_amount(raw.get("amount"), f"{parameter}.amount")
    if item_currency != currency:
        raise invalid(f"{parameter}.amount.currency differs from the operation's currency",
                      f"{parameter}.amount.currency")
    vat_code = _int_code(raw.get("vat_code"), VAT_CODES, f"{parameter}.vat_code")
    mode, subject = raw.get("payment_mode"), raw.get("payment_subject")
    if mode is not None and mode not in PAYMENT_MODES:
        raise invalid(f"{parameter}.payment_mode is not a known payment mode", f"{parameter}.payment_mode")
    if subject is not None and subject not in PAYMENT_SUBJECTS:
        raise invalid(f"{parameter}.payment_subject is not a known payment subject",
                      f"{parameter}.payment_subject")
    return Item(description=description, quantity=quantity, amount=amount, currency=currency,
                vat_code=vat_code, payment_mode=mode, payment_subject=subject)


def parse_items(raw, currency: str, parameter: str) -> tuple[Item, ...]:
    if not isinstance(raw, list) or not raw:
        raise invalid(f"{parameter} must be a non-empty list", parameter)
    if len(raw) > ITEMS_MAX:
        raise invalid(f"{parameter} has more than {ITEMS_MAX} items", parameter)
    return tuple(parse_item(item, currency, f"{parameter}[{i}]") for i, item in enumerate(raw))


def parse_receipt(raw, amount: Decimal, currency: str, *, required: bool,
                  parameter: str = "receipt") -> ReceiptData | None:
    """The ``receipt`` of a payment, capture or refund of ``amount``: None when none was sent and
    the shop does not require one. Its items must sum exactly to ``amount``."""
    if raw is None:
        if required:
            raise invalid(MISSING, parameter)
        return None
    if not isinstance(raw, dict):
        raise invalid(MISSING, parameter)
    customer = parse_customer(raw.get("customer"), f"{parameter}.customer")
    items = parse_items(raw.get("items"), currency, f"{parameter}.items")
    tax = raw.get("tax_system_code")
    tax_system_code = None if tax is None else _int_code(tax, TAX_SYSTEM_CODES, f"{parameter}.tax_system_code")
    data = ReceiptData(customer=customer, items=items, tax_system_code=tax_system_code)
    if data.total != amount:
        raise invalid(f"The sum of {parameter}.items ({data.total}) differs from the amount ({amount})",
                      f"{parameter}.items")
    return data


def parse_settlements(raw, currency: str) -> tuple[tuple[str, Decimal], ...]:
    if not isinstance(raw, list) or not raw:
        raise invalid("settlements must be a non-empty list", "settlements")
    out = []
    for i, entry in enumerate(raw):
        parameter = f"settlements[{i}]"
        if not isinstance(entry, dict):
            raise invalid(f"{parameter} must be an object", parameter)
        kind = entry.get("type")
        if kind not in SETTLEMENT_TYPES:
            raise invalid(f"{parameter}.type must be one of {sorted(SETTLEMENT_TYPES)}", f"{parameter}.type")
        value, settled_currency = parse_amount(entry.get("amount"), f"{parameter}.amount")
        if settled_currency != currency:
            raise invalid(f"{parameter}.amount.currency differs from the items' currency",
                          f"{parameter}.amount.currency")
        out.append((kind, value))
    return tuple(out)


def parse_receipt_request(body: dict) -> dict:
    """``POST /v3/receipts``: a receipt of its own (a settlement receipt, or one sent after the
    payment). Answers the parsed fields; the store checks what they point at."""
    kind = body.get("type")
    if kind not in RECEIPT_TYPES:
        raise invalid("type must be payment or refund", "type")
    # a payment receipt names its payment; a refund receipt its refund (or, failing that, the payment)
    id_field = "refund_id" if kind == "refund" and body.get("refund_id") is not None else "payment_id"
    target = body.get(id_field)
    if not isinstance(target, str) or not target:
        raise invalid(f"{id_field} is required for a {kind} receipt", id_field)
    if body.get("send") is not True:
        raise invalid("send must be true: the receipt is registered and sent now", "send")
    customer = parse_customer(body.get("customer"), "customer")
    currency = _currency_of(body.get("items"))
    items = parse_items(body.get("items"), currency, "items")
    settlements = parse_settlements(body.get("settlements"), currency)
    tax = body.get("tax_system_code")
    tax_system_code = None if tax is None else _int_code(tax, TAX_SYSTEM_CODES, "tax_system_code")
    data = ReceiptData(customer=customer, items=items, tax_system_code=tax_system_code)
    settled = sum((value for _, value in settlements), Decimal("0.00"))
    if data.total != settled:
        raise invalid(f"The sum of items ({data.total}) differs from the sum of settlements ({settled})", "items")
    return {"type": kind, "target_field": id_field, "target": target, "data": data, "settlements": settlements, "currency": currency}


def _currency_of(items) -> str:
    """The currency the first item names (every other one must match it)."""
    if isinstance(items, list) and items and isinstance(items[0], dict) \
            and isinstance(items[0].get("amount"), dict) and isinstance(items[0]["amount"].get("currency"), str):
        return items[0]["amount"]["currency"]
    return "RUB"
