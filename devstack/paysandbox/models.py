"""Provider-shaped values: money, errors, cancellation reasons, request validation."""
from __future__ import annotations

import re
import uuid
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")

CURRENCIES = frozenset({
    "RUB", "USD", "EUR", "BYN", "KZT", "UAH", "UZS", "TRY", "INR", "AMD", "AZN", "CNY", "GBP",
    "GEL", "KGS", "MDL", "TJS", "TMT", "CHF", "JPY", "SEK", "NOK", "PLN", "CZK", "AED",
})

# YooKassa cancellation reasons and the party that usually reports each of them.
CANCELLATION_REASONS = {
    "3d_secure_failed": "payment_network",
    "call_issuer": "payment_network",
    "canceled_by_merchant": "merchant",
    "card_expired": "payment_network",
    "country_forbidden": "yoo_money",
    "deal_expired": "yoo_money",
    "expired_on_capture": "yoo_money",
    "expired_on_confirmation": "yoo_money",
    "fraud_suspected": "yoo_money",
    "general_decline": "payment_network",
    "identification_required": "yoo_money",
    "insufficient_funds": "payment_network",
    "internal_timeout": "yoo_money",
    "invalid_card_number": "payment_network",
    "invalid_csc": "payment_network",
    "issuer_unavailable": "payment_network",
    "payment_method_limit_exceeded": "payment_network",
    "payment_method_restricted": "payment_network",
    "permission_revoked": "yoo_money",
    "unsupported_mobile_operator": "payment_network",
}
CANCELLATION_PARTIES = frozenset({"yoo_money", "payment_network", "merchant"})

PAYMENT_STATUSES = ("pending", "waiting_for_capture", "succeeded", "canceled")
REFUND_STATUSES = ("pending", "succeeded", "canceled")
PAYMENT_EVENTS = ("payment.waiting_for_capture", "payment.succeeded", "payment.canceled")
EVENTS = PAYMENT_EVENTS + ("refund.succeeded",)

_AMOUNT_RE = re.compile(r"^\d{1,12}(\.\d{1,2})?$")
_UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

DESCRIPTION_MAX = 128
METADATA_MAX_KEYS = 16
METADATA_KEY_MAX = 32
METADATA_VALUE_MAX = 512


class ApiError(Exception):
    """An error answered in the provider's own shape."""

    def __init__(self, status: int, code: str, description: str, parameter: str | None = None,
                 retry_after: int | None = None):
        super().__init__(description)
        self.status = status
        self.code = code
        self.description = description
        self.parameter = parameter
        self.retry_after = retry_after

    def body(self) -> dict:
        out = {"type": "error", "id": str(uuid.uuid4()), "code": self.code,
               "description": self.description}
        if self.parameter:
            out["parameter"] = self.parameter
        if self.retry_after is not None:
            out["retry_after"] = self.retry_after
        return out


def invalid(description: str, parameter: str | None = None) -> ApiError:
    return ApiError(400, "invalid_request", description, parameter)


def not_found(description: str = "Object not found") -> ApiError:
    return ApiError(404, "not_found", description)


def new_id() -> str:
    return str(uuid.uuid4())


def looks_like_id(value: str) -> bool:
    return bool(_UUID_RE.match(value or ""))


def money(value: Decimal, currency: str) -> dict:
    return {"value": str(value.quantize(CENT)), "currency": currency}


def parse_amount(raw, parameter: str = "amount") -> tuple[Decimal, str]:
    """Validate ``{"value": "100.00", "currency": "RUB"}``: positive, at most two decimals."""
    if not isinstance(raw, dict):
        raise invalid(f"Parameter {parameter} is missing or is not an object", parameter)
    value = raw.get("value")
    currency = raw.get("currency")
    if value is None:
        raise invalid(f"{parameter}.value is required", f"{parameter}.value")
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise invalid(f"{parameter}.value must be a decimal string", f"{parameter}.value")
    text = str(value).strip()
    if not _AMOUNT_RE.match(text):
        raise invalid(f"{parameter}.value must be a positive number with at most two decimals",
                      f"{parameter}.value")
    try:
        amount = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the regex already guards this
        raise invalid(f"{parameter}.value is not a number", f"{parameter}.value") from None
    if amount <= 0:
        raise invalid(f"{parameter}.value must be greater than zero", f"{parameter}.value")
    if not isinstance(currency, str) or not currency:
        raise invalid(f"{parameter}.currency is required", f"{parameter}.currency")
    if currency not in CURRENCIES:
        raise invalid(f"Unsupported currency {currency[:8]!r}", f"{parameter}.currency")
    return amount.quantize(CENT), currency


def parse_description(raw, parameter: str = "description") -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise invalid("description must be a string", parameter)
    if len(raw) > DESCRIPTION_MAX:
        raise invalid(f"description is longer than {DESCRIPTION_MAX} characters", parameter)
    return raw


def parse_metadata(raw) -> dict | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise invalid("metadata must be an object", "metadata")
    if len(raw) > METADATA_MAX_KEYS:
        raise invalid(f"metadata has more than {METADATA_MAX_KEYS} keys", "metadata")
    out = {}
    for key, value in raw.items():
        if len(key) > METADATA_KEY_MAX:
            raise invalid(f"metadata key longer than {METADATA_KEY_MAX} characters", "metadata")
        if isinstance(value, (dict, list)) or value is None:
            raise invalid("metadata values must be strings", "metadata")
        text = value if isinstance(value, str) else (str(value).lower() if isinstance(value, bool)
                                                      else str(value))
        if len(text) > METADATA_VALUE_MAX:
            raise invalid(f"metadata value longer than {METADATA_VALUE_MAX} characters", "metadata")
        out[key] = text
    return out


def quantize_fee(amount: Decimal, fee_percent: Decimal) -> Decimal:
    """income_amount = amount minus the provider's fee, rounded half-up to cents."""
    fee = (amount * fee_percent / Decimal(100)).quantize(CENT, rounding=ROUND_HALF_UP)
    return (amount - fee).quantize(CENT)
