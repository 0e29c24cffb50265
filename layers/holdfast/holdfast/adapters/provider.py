"""The payment provider (YooKassa API v3) through its official SDK, with the SDK's traps closed.

- Every call has a socket timeout: the SDK sets none, so a provider that never answers would
  hang the function until Lambda kills it.
- Every POST carries an explicit idempotence key chosen by the caller and stored before the call.
- Every failure becomes one of two outcomes the services branch on (holdfast/ports.py):
  ``ProviderRejected`` (it did not happen; the provider said no) or ``ProviderOutcomeUnknown``
  (it may have happened: repeat with the same key, or look it up with GET).

The SDK itself (adapters/yookassa_sdk.py, with requests) is imported by the first call, not here:
every function that builds the payment service holds a provider, few of them call it on a given
invocation, and none should pay for its import at a cold start.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any


class YooKassaProvider:
    """Payments and refunds at a YooKassa-compatible provider."""

    def __init__(self, api_url: str, shop_id: str, secret_key: str, timeout_seconds: float) -> None:
        self.api_url = api_url.rstrip("/")
        self._shop = (shop_id, secret_key, float(timeout_seconds))

    def _sdk(self) -> ModuleType:
        """The SDK, configured for this shop (its configuration is process-wide)."""
        from . import yookassa_sdk

        yookassa_sdk.configure(self.api_url, *self._shop)
        return yookassa_sdk

    # ---------------------------------------------------------------------------------- payments

    def create_payment(self, *, amount: dict[str, str], description: str, metadata: dict[str, str],
                       capture: bool, return_url: str, idempotence_key: str,
                       receipt: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "amount": amount,
            "capture": capture,
            "description": description[:128],
            "metadata": metadata,
            "confirmation": {"type": "redirect", "return_url": return_url},
        }
        if receipt is not None:
            body["receipt"] = receipt   # the SDK's PaymentRequest reads it into its Receipt classes
        sdk = self._sdk()
        return sdk.call(lambda: sdk.Payment.create(body, idempotence_key))

    def get_payment(self, payment_id: str) -> dict[str, Any]:
        sdk = self._sdk()
        return sdk.call(lambda: sdk.Payment.find_one(payment_id))

    def capture_payment(self, payment_id: str, amount: dict[str, str], idempotence_key: str) -> dict[str, Any]:
        sdk = self._sdk()
        return sdk.call(lambda: sdk.Payment.capture(payment_id, {"amount": amount}, idempotence_key))

    def cancel_payment(self, payment_id: str, idempotence_key: str) -> dict[str, Any]:
        sdk = self._sdk()
        return sdk.call(lambda: sdk.Payment.cancel(payment_id, idempotence_key))

    def find_payments(self, *, created_gte: str, created_lte: str, metadata: dict[str, str]) -> list[dict[str, Any]]:
        """Payments created in a time range whose metadata contains ``metadata`` (list API pages)."""
        sdk = self._sdk()
        found: list[dict[str, Any]] = []
        params: dict[str, Any] = {"created_at.gte": created_gte, "created_at.lte": created_lte, "limit": 100}
        while True:
            page = sdk.call(lambda: sdk.Payment.list(params))
            for item in page.get("items", []):
                item_meta = item.get("metadata") or {}
                if all(item_meta.get(key) == value for key, value in metadata.items()):
                    found.append(item)
            cursor = page.get("next_cursor")
            if not cursor:
                return found
            params = {**params, "cursor": cursor}

    # ----------------------------------------------------------------------------------- refunds

    def create_refund(self, payment_id: str, amount: dict[str, str], description: str, idempotence_key: str,
                      receipt: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"payment_id": payment_id, "amount": amount, "description": description[:250]}
        if receipt is not None:
            body["receipt"] = receipt
        sdk = self._sdk()
        return sdk.call(lambda: sdk.Refund.create(body, idempotence_key))

    def get_refund(self, refund_id: str) -> dict[str, Any]:
        sdk = self._sdk()
        return sdk.call(lambda: sdk.Refund.find_one(refund_id))

    # ---------------------------------------------------------------------------------- receipts

    def create_receipt(self, body: dict[str, Any], idempotence_key: str) -> dict[str, Any]:
        sdk = self._sdk()
        return sdk.call(lambda: sdk.Receipt.create(body, idempotence_key))

    def get_receipt(self, receipt_id: str) -> dict[str, Any]:
        sdk = self._sdk()
        return sdk.call(lambda: sdk.Receipt.find_one(receipt_id))

    def list_refunds(self, payment_id: str) -> list[dict[str, Any]]:
        """Every refund of one payment, whatever its status (list API pages)."""
        sdk = self._sdk()
        found: list[dict[str, Any]] = []
        params: dict[str, Any] = {"payment_id": payment_id, "limit": 100}
        while True:
            page = sdk.call(lambda: sdk.Refund.list(params))
            found.extend(dict(item) for item in page.get("items", []))
            cursor = page.get("next_cursor")
            if not cursor:
                return found
            params = {**params, "cursor": cursor}
