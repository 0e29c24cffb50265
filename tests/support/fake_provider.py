"""An in-memory provider with the adapter's interface, for service tests that need no HTTP.

It keeps the provider's rules that matter to the services: one payment per idempotence key,
capture and cancel only from waiting_for_capture, refunds never above the amount paid. Faults are
injected per operation: ``unknown`` raises ProviderOutcomeUnknown before (``"before"``) or after
(``"after"``) the effect happens.
"""
from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

from holdfast.clock import Clock, iso, system_clock
from holdfast.ports import ProviderNotFound, ProviderOutcomeUnknown, ProviderRejected


class FakeProvider:
    """Its times (a payment's ``created_at``, ``captured_at``, a refund's) are read from ``clock``,
    the service's clock (holdfast.clock, which a local stack turns), as the sandbox's and the
    provider's own are its time: tests/contract/test_fake_provider_contract.py holds it to the
    sandbox."""

    def __init__(self, clock: Clock = system_clock) -> None:
        self.clock = clock
        self.payments: dict[str, dict[str, Any]] = {}
        self.refunds: dict[str, dict[str, Any]] = {}
        self.receipts: dict[str, dict[str, Any]] = {}   # receipts of their own (settlements)
        self.keys: dict[str, tuple[Any, dict[str, Any]]] = {}
        self.faults: dict[str, list[str]] = {}
        self.calls: list[tuple[str, str]] = []
        self.refund_status = "succeeded"   # "pending": new refunds wait, as YooKassa's may

    def fail(self, operation: str, *modes: str) -> None:
        self.faults.setdefault(operation, []).extend(modes)

    def _fault(self, operation: str) -> str | None:
        queue = self.faults.get(operation)
        return queue.pop(0) if queue else None

    def _idempotent(self, operation: str, key: str, request: Any, effect) -> dict[str, Any]:  # noqa: ANN001
        self.calls.append((operation, key))
        fault = self._fault(operation)
        if fault == "before":
            raise ProviderOutcomeUnknown(f"injected before {operation}")
        if fault == "refused":   # the provider answers no, for good (a refund it will not make)
            raise ProviderRejected("forbidden", f"injected refusal of {operation}", 403)
        if key in self.keys:
            stored_request, answer = self.keys[key]
            if stored_request != request:
                raise ProviderRejected("invalid_request", "Idempotence-Key reused", 400)
            result = dict(answer)
        else:
            result = effect()
            self.keys[key] = (request, result)
        if fault == "after":
            raise ProviderOutcomeUnknown(f"injected after {operation}")
        return dict(result)

    # payments
    def create_payment(self, *, amount, description, metadata, capture, return_url, idempotence_key, receipt=None):
        request = (tuple(amount.items()), tuple(metadata.items()), capture, repr(receipt))

        def effect():
            payment_id = str(uuid.uuid4())
            self.payments[payment_id] = {
                "id": payment_id, "status": "pending", "paid": False, "amount": dict(amount), "capture": capture,
                "metadata": dict(metadata), "description": description, "created_at": self._now(),
                **({"receipt": receipt} if receipt is not None else {}),
                "confirmation": {"type": "redirect", "confirmation_url": f"http://sandbox.invalid/{payment_id}"},
            }
            return self._public(self.payments[payment_id])

        return self._idempotent("create_payment", idempotence_key, request, effect)

    def get_payment(self, payment_id: str) -> dict[str, Any]:
        self.calls.append(("get_payment", payment_id))
        if self._fault("get_payment"):
            raise ProviderOutcomeUnknown("injected get failure")
        if payment_id not in self.payments:
            raise ProviderNotFound("not_found", "", 404)
        return self._public(self.payments[payment_id])

    def capture_payment(self, payment_id, amount, idempotence_key):
        def effect():
            payment = self.payments[payment_id]
            if payment["status"] != "waiting_for_capture":
                raise ProviderRejected("invalid_request", "not capturable", 400)
            payment.update(status="succeeded", captured_at=self._now())
            return self._public(payment)

        return self._idempotent("capture_payment", idempotence_key, (payment_id, tuple(amount.items())), effect)

    def cancel_payment(self, payment_id, idempotence_key):
        def effect():
            payment = self.payments[payment_id]
            if payment["status"] != "waiting_for_capture":
                raise ProviderRejected("invalid_request", "not cancellable", 400)
            payment.update(status="canceled", cancellation_details={"party": "merchant", "reason": "canceled_by_merchant"})
            return self._public(payment)

        return self._idempotent("cancel_payment", idempotence_key, (payment_id,), effect)

    def create_refund(self, payment_id, amount, description, idempotence_key, receipt=None):
        def effect():
            payment = self.payments[payment_id]
            refunded = sum(Decimal(r["amount"]["value"]) for r in self.refunds.values() if r["payment_id"] == payment_id)
            if payment["status"] != "succeeded" or refunded + Decimal(amount["value"]) > Decimal(payment["amount"]["value"]):
                raise ProviderRejected("invalid_request", "refund not possible", 400)
            refund_id = str(uuid.uuid4())
            self.refunds[refund_id] = {"id": refund_id, "payment_id": payment_id, "status": self.refund_status,
                                       "amount": dict(amount), "created_at": self._now(),
                                       **({"receipt": receipt} if receipt is not None else {})}
            return dict(self.refunds[refund_id])

        return self._idempotent("create_refund", idempotence_key, (payment_id, tuple(amount.items()), repr(receipt)),
                                effect)

    def find_payments(self, *, created_gte: str, created_lte: str,
                      metadata: dict[str, str]) -> list[dict[str, Any]]:
        return [self._public(p) for p in self.payments.values()
                if created_gte <= p["created_at"] <= created_lte
                and all((p.get("metadata") or {}).get(k) == v for k, v in metadata.items())]

    def list_refunds(self, payment_id):
        self.calls.append(("list_refunds", payment_id))
        if self._fault("list_refunds"):
            raise ProviderOutcomeUnknown("injected list failure")
        return [dict(r) for r in self.refunds_for(payment_id)]

    def get_refund(self, refund_id):
        if refund_id not in self.refunds:
            raise ProviderNotFound("not_found", "", 404)
        return dict(self.refunds[refund_id])

    # customer actions
    def paid_stray(self, booking_id: str, value: str = "3000.00") -> dict[str, Any]:
        """A second payment for a booking, made outside our flow (another tab, a dashboard) and paid."""
        stray = self.create_payment(amount={"value": value, "currency": "RUB"}, description="x",
                                    metadata={"booking_id": booking_id}, capture=True, return_url="r",
                                    idempotence_key=f"someone-else-{booking_id}")
        return self.pay(stray["id"])

    def pay(self, payment_id: str, at: str | None = None) -> dict[str, Any]:
        payment = self.payments[payment_id]
        assert payment["status"] == "pending"
        if payment["capture"]:
            payment.update(status="succeeded", paid=True, captured_at=at or self._now())
        else:
            payment.update(status="waiting_for_capture", paid=True)
        return self._public(payment)

    def decline(self, payment_id: str) -> dict[str, Any]:
        payment = self.payments[payment_id]
        payment.update(status="canceled", cancellation_details={"party": "payment_network", "reason": "card_expired"})
        return self._public(payment)

    def create_receipt(self, body, idempotence_key):
        def effect():
            receipt_id = str(uuid.uuid4())
            # the register answers at once unless told to cancel one (``fail("register_receipt",
            # "canceled")``): then the receipt is pending until read back (get_receipt)
            status = "pending" if self.faults.get("register_receipt") else "succeeded"
            self.receipts[receipt_id] = {"id": receipt_id, "status": status, **body}
            return dict(self.receipts[receipt_id])

        return self._idempotent("create_receipt", idempotence_key, repr(body), effect)

    def get_receipt(self, receipt_id):
        """The register answers on the first read: ``succeeded``, or ``canceled`` when told so
        (``fail("register_receipt", "canceled")``); a read may fail like any call ("before")."""
        self.calls.append(("get_receipt", receipt_id))
        receipt = self.receipts.get(receipt_id)
        if receipt is None:
            raise ProviderNotFound("not_found", "no such receipt", 404)
        fault = self._fault("get_receipt")
        if fault == "before":
            raise ProviderOutcomeUnknown("injected before get_receipt")
        if receipt["status"] == "pending":
            receipt["status"] = "canceled" if self._fault("register_receipt") == "canceled" else "succeeded"
        return dict(receipt)

    def payments_for(self, booking_id: str) -> list[dict[str, Any]]:
        return [p for p in self.payments.values() if p["metadata"].get("booking_id") == booking_id]

    def refunds_for(self, payment_id: str) -> list[dict[str, Any]]:
        return [r for r in self.refunds.values() if r["payment_id"] == payment_id]

    def _now(self) -> str:
        return iso(self.clock())

    def _public(self, payment: dict[str, Any]) -> dict[str, Any]:
        public = {key: value for key, value in payment.items() if key != "capture"}
        if payment["status"] == "succeeded":
            # Like the provider: what succeeded refunds gave back, in the payment's currency.
            back = sum((Decimal(r["amount"]["value"]) for r in self.refunds.values()
                        if r["payment_id"] == payment["id"] and r["status"] == "succeeded"), Decimal("0"))
            public["refunded_amount"] = {"value": f"{back:.2f}", "currency": payment["amount"]["currency"]}
        return public
