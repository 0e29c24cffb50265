"""What the provider says about a reviewed booking's money, read at the moment an operator decides.

An operator's decision must rest on the money as it is, not on what the booking last recorded:
"confirm" needs captured money, "close" needs nothing owed, "refund" needs money not already
going back. Our record can be a day old (the review may exist because the provider could not be
reached), so the payment is fetched again every time.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from ..clock import parse_iso
from ..domain.booking import Booking
from ..domain.errors import PaymentProviderUnavailable
from .money_at_provider import MoneyAtProvider
from .provider_keys import PaymentOutcomeUnknown

#: Seconds an operator waits before trying again when the provider cannot be reached.
RETRY_AFTER = 5


@dataclass(frozen=True)
class ProviderMoney:
    payment: dict[str, Any] | None   # as the provider reports it; None: no payment exists there
    refunds: tuple[dict[str, Any], ...] = ()   # every refund of a succeeded payment

    @property
    def refund_pending(self) -> bool:
        """A refund the provider has accepted and not finished: no second one may be sent."""
        return any(refund.get("status") == "pending" for refund in self.refunds)

    @property
    def status(self) -> str | None:
        return self.payment.get("status") if self.payment else None

    @property
    def refunded(self) -> Decimal:
        try:
            return Decimal(((self.payment or {}).get("refunded_amount") or {}).get("value") or "0")
        except InvalidOperation:
            return Decimal("0")

    @property
    def fully_refunded(self) -> bool:
        paid = Decimal(((self.payment or {}).get("amount") or {}).get("value") or "0")
        return self.status == "succeeded" and paid > 0 and self.refunded >= paid

    def succeeded_refund(self, preferred_id: str | None = None, others: frozenset[str] = frozenset()
                         ) -> dict[str, Any] | None:
        """A finished refund of the payment: the one we recorded if it finished, else any that is
        none of ``others`` (the booking's refunds of an exchange's difference or an order line)."""
        done = [refund for refund in self.refunds if refund.get("status") == "succeeded"]
        rest = [refund for refund in done if refund.get("id") not in others]
        return next((refund for refund in done if refund.get("id") == preferred_id), rest[0] if rest else None)

    @property
    def captured(self) -> bool:
        """Money taken and none of it given back."""
        return self.status == "succeeded" and self.refunded == 0


def look_up(money: MoneyAtProvider, booking: Booking) -> ProviderMoney:
    """The booking's payment as the provider has it now. A payment whose creation never answered
    is looked for by its metadata, as reconciliation does. Unreachable provider: 503, retry later."""
    payment = booking.payment
    try:
        if payment is not None and payment.payment_id:
            paid = money.payment(payment.payment_id)
        elif payment is None or payment.state in ("REJECTED", "NOT_CREATED"):
            return ProviderMoney(None)
        else:
            found = money.found_by_booking(booking.booking_id, parse_iso(payment.requested_at or booking.created_at))
            if found is None:
                return ProviderMoney(None)
            paid = found
        # Our refund record may say "requested" for a call that never arrived, or miss one that
        # did: the provider's own list of refunds decides whether money is on its way back.
        refunds = tuple(money.refunds(paid["id"])) if paid.get("status") == "succeeded" else ()
    except PaymentOutcomeUnknown:
        raise PaymentProviderUnavailable("The payment provider did not answer; nothing was changed. Try again shortly.",
                                         retry_after=RETRY_AFTER) from None
    return ProviderMoney(paid, refunds)
