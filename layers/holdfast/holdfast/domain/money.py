"""Amounts as the provider writes them: a decimal string with exactly two places, and a currency."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from .errors import InvalidRequest

CURRENCIES = frozenset({"RUB", "USD", "EUR", "BYN", "KZT", "UAH", "UZS", "TRY", "INR", "GBP", "CNY"})
_CENT = Decimal("0.01")
MAX_AMOUNT = Decimal("10000000.00")


@dataclass(frozen=True)
class Money:
    value: Decimal
    currency: str

    @classmethod
    def parse(cls, value: object, currency: object) -> "Money":
        if not isinstance(currency, str) or currency not in CURRENCIES:
            raise InvalidRequest(f"Unsupported currency {currency!r}.", code="invalid_currency")
        try:
            amount = Decimal(str(value))
        except (InvalidOperation, ValueError):
            raise InvalidRequest("The amount is not a number.", code="invalid_amount") from None
        if not amount.is_finite() or amount <= 0 or amount > MAX_AMOUNT:
            raise InvalidRequest("The amount must be positive and at most 10,000,000.", code="invalid_amount")
        if amount != amount.quantize(_CENT):
            raise InvalidRequest("The amount has more than two decimal places.", code="invalid_amount")
        return cls(amount.quantize(_CENT), currency)

    @classmethod
    def stored(cls, value: object, currency: object) -> "Money":
        """An amount as the engine stored it, which may be zero (a comp: an order given away,
        confirmed without a payment); what a request asks for is ``parse``d, never zero."""
        if Decimal(str(value)) == 0 and isinstance(currency, str) and currency in CURRENCIES:
            return cls(Decimal("0.00"), currency)
        return cls.parse(value, currency)

    @property
    def is_zero(self) -> bool:
        return self.value == 0

    def times(self, count: int) -> "Money":
        return Money((self.value * count).quantize(_CENT, rounding=ROUND_HALF_UP), self.currency)

    @property
    def text(self) -> str:
        return f"{self.value:.2f}"

    def as_dict(self) -> dict[str, str]:
        return {"value": self.text, "currency": self.currency}

    def matches(self, other: dict) -> bool:
        """True when a provider amount object names exactly this sum and currency."""
        try:
            return Decimal(str(other["value"])) == self.value and other["currency"] == self.currency
        except (KeyError, TypeError, InvalidOperation):
            return False
