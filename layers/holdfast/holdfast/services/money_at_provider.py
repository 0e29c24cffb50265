"""Money at the provider, in one place: what a payment is there now, and capturing, voiding and
refunding it.

Every service that asks the provider about a booking's money, or moves it, does so here, and the
provider's outcomes are mapped here once:

- a capture or a void the provider refused (``ProviderRejected``: it may have been captured or
  cancelled meanwhile) is answered by the payment as it now is; the caller judges that;
- a call whose outcome is unknown (``ProviderOutcomeUnknown``: a timeout, a 5xx, a dropped
  connection), or the look that follows a refusal, is ``PaymentOutcomeUnknown`` naming the call:
  whoever started the work (a queue, a state machine, an operator) repeats it under the same key;
- a refund the provider refused stays ``ProviderRejected`` (the caller opens a review: an operator
  may send a new one under a new key); a payment it does not know stays ``ProviderNotFound``.

The idempotence keys come from the caller (services/provider_keys.py derives them), so any repeat
of a decision, by whichever path, is the same request at the provider.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Callable

from ..clock import iso
from ..ports import PaymentProvider, ProviderOutcomeUnknown, ProviderRejected
from .provider_keys import PaymentOutcomeUnknown


class MoneyAtProvider:
    def __init__(self, provider: PaymentProvider) -> None:
        self.provider = provider

    # ------------------------------------------------------------------------------------- reads

    def payment(self, payment_id: str) -> dict[str, Any]:
        """The payment as the provider has it now (never a notification's body)."""
        return self._known(None, lambda: self.provider.get_payment(payment_id))

    def refund_of(self, refund_id: str) -> dict[str, Any]:
        """The refund as the provider has it now."""
        return self._known(None, lambda: self.provider.get_refund(refund_id))

    def refunds(self, payment_id: str) -> list[dict[str, Any]]:
        """Every refund of a payment, as the provider lists them."""
        return list(self._known(None, lambda: self.provider.list_refunds(payment_id)))

    def found_by_booking(self, booking_id: str, requested: datetime) -> dict[str, Any] | None:
        """The first payment made for a booking around the moment its attempt was stored (a
        creation whose answer never came): looked for by its metadata, or None."""
        found = self._known(None, lambda: self.provider.find_payments(
            created_gte=iso(requested - timedelta(minutes=5)), created_lte=iso(requested + timedelta(hours=1)),
            metadata={"booking_id": booking_id}))
        return sorted(found, key=lambda item: item.get("created_at", ""))[0] if found else None

    # ------------------------------------------------------------------------------ moving money

    def create(self, **body: Any) -> dict[str, Any]:
        """Create a payment (``PaymentProvider.create_payment``'s arguments). A refusal stays
        ``ProviderRejected``: nothing was created."""
        return self._known(None, lambda: self.provider.create_payment(**body))

    def capture(self, payment_id: str, amount: dict[str, str], key: str) -> dict[str, Any]:
        """Capture an authorisation; the payment as it is after the call."""
        return self._as_it_now_is("capture", payment_id, lambda: self.provider.capture_payment(payment_id, amount, key))

    def void(self, payment_id: str, key: str, *, look_when_refused: bool = True) -> dict[str, Any]:
        """Cancel an authorisation (no money moves); the payment as it is after the call: a
        caller that needs it ``canceled`` checks, since it may have been captured meanwhile.
        ``look_when_refused=False``: a best-effort void whose refusal the caller leaves to whoever
        follows (the notification, an operator's review): ``ProviderRejected`` is raised as it is."""
        if not look_when_refused:
            return self._known(f"cancel of {payment_id}", lambda: self.provider.cancel_payment(payment_id, key))
        return self._as_it_now_is("cancel", payment_id, lambda: self.provider.cancel_payment(payment_id, key))

    def refund(self, payment_id: str, amount: dict[str, str], description: str, key: str,
               receipt: dict[str, Any] | None) -> dict[str, Any]:
        """Give money back; the refund as the provider answered. ``ProviderRejected``: refused."""
        return self._known(f"refund of {payment_id}",
                           lambda: self.provider.create_refund(payment_id, amount, description, key, receipt))

    # ----------------------------------------------------------------------------- the outcomes

    def _as_it_now_is(self, what: str, payment_id: str, call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            try:
                return call()
            except ProviderRejected:
                return self.provider.get_payment(payment_id)
        except ProviderOutcomeUnknown as exc:
            raise PaymentOutcomeUnknown(f"{what} of {payment_id}: {exc}") from None

    @staticmethod
    def _known(what: str | None, call: Callable[[], Any]) -> Any:
        """``what``: the call named in the signal (a read says nothing the provider's own words do not)."""
        try:
            return call()
        except ProviderOutcomeUnknown as exc:
            raise PaymentOutcomeUnknown(f"{what}: {exc}" if what else str(exc)) from None
