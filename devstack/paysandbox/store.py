"""In-memory provider state: payments, refunds, receipts, idempotence keys, and the lifecycle rules.

Every public method takes the shared state lock itself (it is an RLock) and never does network
I/O. Methods that change a status return ``events``: ``(event_name, object_snapshot)`` pairs
that the caller hands to the notifier after the lock is released.
"""
from __future__ import annotations

import base64
import heapq
import json
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from .clock import iso, parse_iso
from .fiscal import RECEIPT_STATUSES, ReceiptData, parse_receipt, parse_receipt_request
from .models import (CANCELLATION_PARTIES, CANCELLATION_REASONS, CENT, PAYMENT_STATUSES,
                     REFUND_STATUSES, ApiError, invalid, looks_like_id, money, new_id, not_found,
                     parse_amount, parse_description, parse_metadata, quantize_fee)

Event = tuple[str, dict]


@dataclass
class Payment:
    id: str
    seq: int
    amount: Decimal
    currency: str
    capture: bool
    created_at: datetime
    pending_deadline: datetime
    description: str | None = None
    metadata: dict | None = None
    return_url: str | None = None
    confirmation: bool = False
    status: str = "pending"
    paid: bool = False
    captured_at: datetime | None = None
    expires_at: datetime | None = None
    refunded: Decimal = Decimal("0.00")
    income: Decimal | None = None
    cancellation: dict | None = None
    payment_method: dict | None = None
    authorization: dict | None = None
    merchant_customer_id: str | None = None
    #: the receipt sent with the payment (or with its partial capture), registered once it succeeds
    receipt: ReceiptData | None = None


@dataclass
class Refund:
    id: str
    seq: int
    payment_id: str
    amount: Decimal
    currency: str
    created_at: datetime
    description: str | None = None
    metadata: dict | None = None
    status: str = "succeeded"


@dataclass
class Receipt:
    """A fiscal receipt: registered ``pending``, then ``succeeded`` (or ``canceled``) at ``due_at``."""

    id: str
    seq: int
    type: str                    # payment | refund
    payment_id: str | None
    refund_id: str | None
    data: ReceiptData
    created_at: datetime
    due_at: datetime
    ends_canceled: bool          # a "canceled" fault picked at registration
    settlements: tuple = ()
    status: str = "pending"
    registered_at: datetime | None = None


@dataclass
class IdempotenceRecord:
    fingerprint: str
    created_at: datetime
    done: threading.Event = field(default_factory=threading.Event)
    status: int | None = None
    body: bytes | None = None


class Store:
    def __init__(self, lock, clock, *, shop_id: str, checkout_origin: str,
                 pending_expiry_seconds: float = 3600, capture_expiry_seconds: float = 7 * 86400,
                 idempotence_ttl_seconds: float = 86400, fee_percent: str | Decimal = "3.5",
                 receipts: str = "optional", receipt_seconds: float = 1.0, faults=None):
        self.lock = lock
        self.default_receipts = receipts
        self.receipt_registration = timedelta(seconds=receipt_seconds)
        self.faults = faults
        self.clock = clock
        self.shop_id = shop_id
        self.checkout_origin = checkout_origin
        self.pending_expiry = timedelta(seconds=pending_expiry_seconds)
        self.capture_expiry = timedelta(seconds=capture_expiry_seconds)
        self.idempotence_ttl = timedelta(seconds=idempotence_ttl_seconds)
        self.fee_percent = Decimal(str(fee_percent))
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.payments: dict[str, Payment] = {}
            self.refunds: dict[str, Refund] = {}
            self.receipts: dict[str, Receipt] = {}
            self._receipt_deadlines: list[tuple[datetime, int, str]] = []
            self.receipts_mode = self.default_receipts
            self.keys: dict[tuple[str, str], IdempotenceRecord] = {}
            # (deadline, seq, payment id) for every deadline a payment was given: tick() pops only
            # what is due instead of scanning every payment on every request
            self._deadlines: list[tuple[datetime, int, str]] = []
            self._seq = 0

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    # -- rendering ---------------------------------------------------------------------------
    def render_payment(self, p: Payment) -> dict:
        out = {
            "id": p.id,
            "status": p.status,
            "amount": money(p.amount, p.currency),
        }
        if p.income is not None:
            out["income_amount"] = money(p.income, p.currency)
        if p.description is not None:
            out["description"] = p.description
        out["recipient"] = {"account_id": self.shop_id, "gateway_id": "sandbox-gateway"}
        if p.payment_method is not None:
            out["payment_method"] = dict(p.payment_method)
        if p.captured_at is not None:
            out["captured_at"] = iso(p.captured_at)
        out["created_at"] = iso(p.created_at)
        if p.expires_at is not None and p.status == "waiting_for_capture":
            out["expires_at"] = iso(p.expires_at)
        if p.status == "pending" and p.confirmation:
            conf = {"type": "redirect", "confirmation_url": f"{self.checkout_origin}/checkout/{p.id}"}
            if p.return_url:
                conf["return_url"] = p.return_url
            out["confirmation"] = conf
        out["test"] = True
        if p.status == "succeeded":
            out["refunded_amount"] = money(p.refunded, p.currency)
        out["paid"] = p.paid
        out["refundable"] = p.status == "succeeded" and p.refunded < p.amount
        if p.metadata is not None:
            out["metadata"] = dict(p.metadata)
        if p.cancellation is not None:
            out["cancellation_details"] = dict(p.cancellation)
        if p.authorization is not None:
            out["authorization_details"] = json.loads(json.dumps(p.authorization))
        if p.merchant_customer_id is not None:
            out["merchant_customer_id"] = p.merchant_customer_id
        return out

    @staticmethod
    def render_refund(r: Refund) -> dict:
        out = {"id": r.id, "payment_id": r.payment_id, "status": r.status,
               "created_at": iso(r.created_at), "amount": money(r.amount, r.currency)}
        if r.description is not None:
            out["description"] = r.description
        if r.metadata is not None:
            out["metadata"] = dict(r.metadata)
        return out

    @staticmethod
    def render_receipt(r: Receipt) -> dict:
        out = {"id": r.id, "type": r.type}
        if r.payment_id is not None:
            out["payment_id"] = r.payment_id
        if r.refund_id is not None:
            out["refund_id"] = r.refund_id
        out["status"] = r.status
        out["items"] = [item.render() for item in r.data.items]
        if r.settlements:
            out["settlements"] = [{"type": kind, "amount": money(value, r.data.items[0].currency)}
                                  for kind, value in r.settlements]
        if r.data.tax_system_code is not None:
            out["tax_system_code"] = r.data.tax_system_code
        if r.status == "succeeded":
            out["fiscal_document_number"] = str(3986 + r.seq)
            out["fiscal_storage_number"] = "9288000100115785"
            out["fiscal_attribute"] = str(2617603921 + r.seq * 7919)
            out["registered_at"] = iso(r.registered_at)
            out["fiscal_provider_id"] = "sandbox-register"
        out["created_at"] = iso(r.created_at)
        return out

    # -- receipts mode -----------------------------------------------------------------------
    @property
    def receipts_required(self) -> bool:
        return self.receipts_mode == "required"

    def set_receipts_mode(self, mode) -> dict:
        if mode not in ("required", "optional"):
            raise invalid("receipts must be required or optional", "receipts")
        with self.lock:
            self.receipts_mode = mode
            return self.shop()

    def shop(self) -> dict:
        with self.lock:
            return {"shop_id": self.shop_id, "receipts": self.receipts_mode,
                    "receipt_registration_seconds": self.receipt_registration.total_seconds()}

    def _register(self, kind: str, data: ReceiptData, *, payment_id: str | None = None,
                  refund_id: str | None = None, settlements: tuple = ()) -> Receipt:
        """A receipt handed to the register: pending now, final after the registration delay (plus
        any ``delay`` fault), ``canceled`` instead of ``succeeded`` when a ``canceled`` fault fires."""
        canceled, extra = self.faults.pick_receipt() if self.faults is not None else (False, 0.0)
        now = self.clock.now()
        r = Receipt(id=new_id(), seq=self._next_seq(), type=kind, payment_id=payment_id,
                    refund_id=refund_id, data=data, created_at=now,
                    due_at=now + self.receipt_registration + timedelta(seconds=extra),
                    ends_canceled=canceled, settlements=settlements)
        self.receipts[r.id] = r
        heapq.heappush(self._receipt_deadlines, (r.due_at, r.seq, r.id))
        return r

    def _finish_due_receipts(self, now: datetime) -> None:
        while self._receipt_deadlines and self._receipt_deadlines[0][0] <= now:
            _, _, receipt_id = heapq.heappop(self._receipt_deadlines)
            r = self.receipts.get(receipt_id)
            if r is None or r.status != "pending":
                continue
            if r.ends_canceled:
                r.status = "canceled"
            else:
                r.status, r.registered_at = "succeeded", r.due_at

    # -- expiry ----------------------------------------------------------------------------
    def tick(self) -> list[Event]:
        """Apply every expiry that is due on the sandbox clock; forget old idempotence keys."""
        with self.lock:
            now = self.clock.now()
            due: dict[str, Payment] = {}
            later: list[tuple[datetime, int, str]] = []
            while self._deadlines and self._deadlines[0][0] <= now:
                _, seq, payment_id = heapq.heappop(self._deadlines)
                p = self.payments.get(payment_id)
                deadline = self._deadline(p) if p is not None else None
                if deadline is None:
                    continue  # paid, captured or canceled since: nothing left to expire
                if deadline <= now:
                    due[p.id] = p
                else:  # a deadline moved since it was queued: wait for the current one
                    later.append((deadline, seq, payment_id))
            for entry in later:
                heapq.heappush(self._deadlines, entry)
            self._finish_due_receipts(now)
            events: list[Event] = []
            for p in sorted(due.values(), key=lambda p: p.seq):  # creation order, as a scan gave
                if p.status == "pending":
                    events += self._cancel(p, "yoo_money", "expired_on_confirmation")
                else:
                    events += self._cancel(p, "yoo_money", "expired_on_capture")
            # keys are kept in the order they were made: the old ones are at the front
            stale = []
            for k, rec in self.keys.items():
                if now - rec.created_at < self.idempotence_ttl:
                    break
                if rec.done.is_set():
                    stale.append(k)
            for k in stale:
                del self.keys[k]
            return events

    @staticmethod
    def _deadline(p: Payment) -> datetime | None:
        """When the sandbox cancels the payment by itself, if it still can."""
        if p.status == "pending":
            return p.pending_deadline
        if p.status == "waiting_for_capture":
            return p.expires_at
        return None

    def _track_deadline(self, p: Payment) -> None:
        deadline = self._deadline(p)
        if deadline is not None:
            heapq.heappush(self._deadlines, (deadline, p.seq, p.id))

    # -- idempotence -----------------------------------------------------------------------
    def idem_begin(self, key: str, fingerprint: str):
        """Return ("new"|"replay"|"wait"|"conflict", record)."""
        with self.lock:
            now = self.clock.now()
            slot = (self.shop_id, key)
            rec = self.keys.get(slot)
            if rec is not None and rec.done.is_set() and now - rec.created_at >= self.idempotence_ttl:
                del self.keys[slot]
                rec = None
            if rec is None:
                rec = IdempotenceRecord(fingerprint=fingerprint, created_at=now)
                self.keys[slot] = rec
                return "new", rec
            if rec.fingerprint != fingerprint:
                return "conflict", rec
            if rec.done.is_set():
                return "replay", rec
            return "wait", rec

    def idem_finish(self, key: str, rec: IdempotenceRecord, status: int, body: bytes) -> None:
        with self.lock:
            rec.status, rec.body = status, body
            rec.done.set()

    def idem_abort(self, key: str, rec: IdempotenceRecord) -> None:
        """Forget an in-progress key (the request failed before any effect); wake waiters."""
        with self.lock:
            if self.keys.get((self.shop_id, key)) is rec:
                del self.keys[(self.shop_id, key)]
            rec.done.set()

    # -- payments --------------------------------------------------------------------------
    def _get_payment(self, payment_id: str) -> Payment:
        p = self.payments.get(payment_id)
        if p is None:
            raise not_found(f"Payment {payment_id[:40]} not found")
        return p

    def get_payment(self, payment_id: str) -> dict:
        with self.lock:
            return self.render_payment(self._get_payment(payment_id))

    def create_payment(self, body: dict) -> dict:
        amount, currency = parse_amount(body.get("amount"))
        description = parse_description(body.get("description"))
        metadata = parse_metadata(body.get("metadata"))
        capture = body.get("capture", False)
        if not isinstance(capture, bool):
            raise invalid("capture must be a boolean", "capture")
        confirmation = body.get("confirmation")
        return_url = None
        if confirmation is not None:
            if not isinstance(confirmation, dict):
                raise invalid("confirmation must be an object", "confirmation")
            ctype = confirmation.get("type")
            if ctype != "redirect":
                raise invalid("The sandbox supports only confirmation.type = redirect",
                              "confirmation.type")
            return_url = confirmation.get("return_url")
            if not isinstance(return_url, str) or not return_url.startswith(("http://", "https://")):
                raise invalid("confirmation.return_url must be an http(s) URL",
                              "confirmation.return_url")
        mcid = body.get("merchant_customer_id")
        if mcid is not None and not isinstance(mcid, str):
            raise invalid("merchant_customer_id must be a string", "merchant_customer_id")
        for name in ("payment_token", "payment_method_id"):
            if body.get(name):
                raise invalid(f"The sandbox does not support {name}", name)
        with self.lock:
            receipt = parse_receipt(body.get("receipt"), amount, currency, required=self.receipts_required)
            now = self.clock.now()
            p = Payment(id=new_id(), seq=self._next_seq(), amount=amount, currency=currency,
                        capture=capture, created_at=now,
                        pending_deadline=now + self.pending_expiry, description=description,
                        metadata=metadata, return_url=return_url,
                        confirmation=confirmation is not None, merchant_customer_id=mcid,
                        receipt=receipt)
            self.payments[p.id] = p
            self._track_deadline(p)
            return self.render_payment(p)

    def _cancel(self, p: Payment, party: str, reason: str) -> list[Event]:
        p.status = "canceled"
        p.cancellation = {"party": party, "reason": reason}
        p.expires_at = None
        return [("payment.canceled", self.render_payment(p))]

    def customer_pays(self, payment_id: str) -> tuple[dict, list[Event]]:
        """The customer confirms the payment on the payment page (or via the control API)."""
        with self.lock:
            p = self._get_payment(payment_id)
            if p.status != "pending":
                raise invalid(f"Payment is {p.status}, only a pending payment can be paid", "status")
            now = self.clock.now()
            p.paid = True
            p.income = quantize_fee(p.amount, self.fee_percent)
            p.payment_method = {"type": "bank_card", "id": new_id(), "saved": False,
                                "title": "Bank card *4444",
                                "card": {"first6": "555555", "last4": "4444", "expiry_month": "12",
                                         "expiry_year": "2030", "card_type": "MasterCard",
                                         "issuer_country": "RU"}}
            p.authorization = {"rrn": str(100000000000 + p.seq), "auth_code": f"{p.seq % 1000000:06d}",
                               "three_d_secure": {"applied": False}}
            if p.capture:
                p.status = "succeeded"
                p.captured_at = now
                self._register_payment_receipt(p)
                return self.render_payment(p), [("payment.succeeded", self.render_payment(p))]
            p.status = "waiting_for_capture"
            p.expires_at = now + self.capture_expiry
            self._track_deadline(p)
            return self.render_payment(p), [("payment.waiting_for_capture", self.render_payment(p))]

    def customer_declines(self, payment_id: str, reason: str | None = None,
                          party: str | None = None) -> tuple[dict, list[Event]]:
        reason = reason or "general_decline"
        if reason not in CANCELLATION_REASONS:
            raise invalid(f"Unknown cancellation reason {reason[:40]!r}", "reason")
        party = party or CANCELLATION_REASONS[reason]
        if party not in CANCELLATION_PARTIES:
            raise invalid(f"Unknown cancellation party {party[:40]!r}", "party")
        with self.lock:
            p = self._get_payment(payment_id)
            if p.status != "pending":
                raise invalid(f"Payment is {p.status}, only a pending payment can be declined", "status")
            events = self._cancel(p, party, reason)
            return self.render_payment(p), events

    def capture(self, payment_id: str, body: dict | None) -> tuple[dict, list[Event]]:
        body = body or {}
        with self.lock:
            p = self._get_payment(payment_id)
            if p.status != "waiting_for_capture":
                raise invalid(f"Payment is {p.status}; only a waiting_for_capture payment can be "
                              "captured", "payment_id")
            amount = p.amount
            if body.get("amount") is not None:
                amount, currency = parse_amount(body["amount"])
                if currency != p.currency:
                    raise invalid("Capture currency differs from the payment currency",
                                  "amount.currency")
                if amount > p.amount:
                    raise invalid("Capture amount exceeds the authorised amount", "amount.value")
            # A full capture keeps the payment's receipt; a partial one must bring the receipt of
            # what it captures (when the payment had one, or the shop requires them).
            partial = amount != p.amount
            receipt = parse_receipt(body.get("receipt"), amount, p.currency,
                                    required=partial and (p.receipt is not None or self.receipts_required))
            if receipt is not None:
                p.receipt = receipt
            p.amount = amount
            p.income = quantize_fee(amount, self.fee_percent)
            p.status = "succeeded"
            p.captured_at = self.clock.now()
            p.expires_at = None
            self._register_payment_receipt(p)
            return self.render_payment(p), [("payment.succeeded", self.render_payment(p))]

    def _register_payment_receipt(self, p: Payment) -> None:
        if p.receipt is not None:
            self._register("payment", p.receipt, payment_id=p.id)

    def cancel(self, payment_id: str) -> tuple[dict, list[Event]]:
        with self.lock:
            p = self._get_payment(payment_id)
            if p.status != "waiting_for_capture":
                raise invalid(f"Payment is {p.status}; only a waiting_for_capture payment can be "
                              "canceled", "payment_id")
            events = self._cancel(p, "merchant", "canceled_by_merchant")
            return self.render_payment(p), events

    # -- refunds ---------------------------------------------------------------------------
    def create_refund(self, body: dict) -> tuple[dict, list[Event]]:
        payment_id = body.get("payment_id")
        if not isinstance(payment_id, str) or not payment_id:
            raise invalid("payment_id is required", "payment_id")
        amount, currency = parse_amount(body.get("amount"))
        description = parse_description(body.get("description"))
        metadata = parse_metadata(body.get("metadata"))
        with self.lock:
            p = self.payments.get(payment_id)
            if p is None:
                raise not_found(f"Payment {payment_id[:40]} not found")
            if p.status != "succeeded":
                raise invalid(f"Payment is {p.status}; only a succeeded payment can be refunded",
                              "payment_id")
            if currency != p.currency:
                raise invalid("Refund currency differs from the payment currency", "amount.currency")
            remaining = p.amount - p.refunded
            if amount > remaining:
                raise invalid(f"Refund amount exceeds the refundable remainder {remaining}",
                              "amount.value")
            receipt = parse_receipt(body.get("receipt"), amount, currency, required=self.receipts_required)
            r = Refund(id=new_id(), seq=self._next_seq(), payment_id=p.id, amount=amount,
                       currency=currency, created_at=self.clock.now(), description=description,
                       metadata=metadata)
            self.refunds[r.id] = r
            p.refunded = (p.refunded + amount).quantize(CENT)
            if receipt is not None:
                self._register("refund", receipt, payment_id=p.id, refund_id=r.id)
            rendered = self.render_refund(r)
            return rendered, [("refund.succeeded", dict(rendered))]

    def get_refund(self, refund_id: str) -> dict:
        with self.lock:
            r = self.refunds.get(refund_id)
            if r is None:
                raise not_found(f"Refund {refund_id[:40]} not found")
            return self.render_refund(r)

    # -- receipts --------------------------------------------------------------------------
    def create_receipt(self, body: dict) -> dict:
        """``POST /v3/receipts``: a receipt of its own, e.g. the settlement of a prepayment."""
        req = parse_receipt_request(body)
        with self.lock:
            if req["target_field"] == "refund_id":
                refund = self.refunds.get(req["target"])
                if refund is None:
                    raise invalid(f"Refund {req['target'][:40]} not found", "refund_id")
                payment_id, refund_id = refund.payment_id, refund.id
            else:
                payment_id, refund_id = req["target"], None
            p = self.payments.get(payment_id)
            if p is None:
                raise invalid(f"Payment {payment_id[:40]} not found", "payment_id")
            if p.status != "succeeded":
                raise invalid(f"Payment is {p.status}; receipts are registered for succeeded payments",
                              "payment_id")
            if req["currency"] != p.currency:
                raise invalid("items currency differs from the payment currency", "items")
            r = self._register(req["type"], req["data"], payment_id=p.id, refund_id=refund_id,
                               settlements=req["settlements"])
            return self.render_receipt(r)

    def get_receipt(self, receipt_id: str) -> dict:
        with self.lock:
            r = self.receipts.get(receipt_id)
            if r is None:
                raise not_found(f"Receipt {receipt_id[:40]} not found")
            return self.render_receipt(r)

    def list_receipts(self, query: dict[str, str]) -> dict:
        """A payment's receipts and its refunds' (``payment_id``), a refund's (``refund_id``), or all."""
        allowed = {"payment_id", "refund_id", "status", "limit", "cursor"} | _date_filters("created_at")
        _reject_unknown(query, allowed)
        status = query.get("status")
        if status is not None and status not in RECEIPT_STATUSES:
            raise invalid("Unknown status filter", "status")
        created = _parse_date_filters(query, "created_at")
        payment_id, refund_id = query.get("payment_id"), query.get("refund_id")
        with self.lock:
            rows = [r for r in self.receipts.values()
                    if (not payment_id or r.payment_id == payment_id)
                    and (not refund_id or r.refund_id == refund_id)
                    and (not status or r.status == status) and _match_dates(r.created_at, created)]
            return _page(rows, query, self.render_receipt)

    def all_receipts(self, payment_id: str | None = None) -> list[dict]:
        with self.lock:
            return [self.render_receipt(r) for r in sorted(self.receipts.values(), key=lambda x: x.seq)
                    if not payment_id or r.payment_id == payment_id]

    # -- listing ---------------------------------------------------------------------------
    def list_payments(self, query: dict[str, str]) -> dict:
        allowed = {"status", "limit", "cursor", "payment_method"} | _date_filters("created_at") \
            | _date_filters("captured_at")
        _reject_unknown(query, allowed)
        status = query.get("status")
        if status is not None and status not in PAYMENT_STATUSES:
            raise invalid("Unknown status filter", "status")
        created = _parse_date_filters(query, "created_at")
        captured = _parse_date_filters(query, "captured_at")
        method = query.get("payment_method")
        with self.lock:
            def keep(p: Payment) -> bool:
                if status and p.status != status:
                    return False
                if method and (p.payment_method or {}).get("type") != method:
                    return False
                if not _match_dates(p.created_at, created):
                    return False
                if captured and (p.captured_at is None or not _match_dates(p.captured_at, captured)):
                    return False
                return True
            rows = [p for p in self.payments.values() if keep(p)]
            return _page(rows, query, self.render_payment)

    def list_refunds(self, query: dict[str, str]) -> dict:
        allowed = {"payment_id", "status", "limit", "cursor"} | _date_filters("created_at")
        _reject_unknown(query, allowed)
        status = query.get("status")
        if status is not None and status not in REFUND_STATUSES:
            raise invalid("Unknown status filter", "status")
        created = _parse_date_filters(query, "created_at")
        payment_id = query.get("payment_id")
        with self.lock:
            rows = [r for r in self.refunds.values()
                    if (not payment_id or r.payment_id == payment_id)
                    and (not status or r.status == status) and _match_dates(r.created_at, created)]
            return _page(rows, query, self.render_refund)

    # -- inspection (control API) ------------------------------------------------------------
    def find_payments(self, metadata: dict[str, str], status: str | None = None) -> list[dict]:
        with self.lock:
            out = []
            for p in sorted(self.payments.values(), key=lambda x: x.seq):
                md = p.metadata or {}
                if all(md.get(k) == v for k, v in metadata.items()) and (not status or p.status == status):
                    out.append(self.render_payment(p))
            return out

    def all_refunds(self, payment_id: str | None = None) -> list[dict]:
        with self.lock:
            return [self.render_refund(r) for r in sorted(self.refunds.values(), key=lambda x: x.seq)
                    if not payment_id or r.payment_id == payment_id]

    def current_object(self, object_id: str) -> tuple[str, dict] | None:
        with self.lock:
            if object_id in self.payments:
                return "payment", self.render_payment(self.payments[object_id])
            if object_id in self.refunds:
                return "refund", self.render_refund(self.refunds[object_id])
            return None


def _date_filters(name: str) -> set[str]:
    return {f"{name}.{op}" for op in ("gte", "gt", "lte", "lt")}


def _reject_unknown(query: dict, allowed: set[str]) -> None:
    for key in query:
        if key not in allowed:
            raise invalid(f"Unknown parameter {key[:40]}", key[:40])


def _parse_date_filters(query: dict, name: str) -> dict:
    out = {}
    for op in ("gte", "gt", "lte", "lt"):
        raw = query.get(f"{name}.{op}")
        if raw is None:
            continue
        try:
            out[op] = parse_iso(raw)
        except ValueError:
            raise invalid(f"{name}.{op} must be an ISO-8601 timestamp", f"{name}.{op}") from None
    return out


def _match_dates(value: datetime, flt: dict) -> bool:
    if "gte" in flt and not value >= flt["gte"]:
        return False
    if "gt" in flt and not value > flt["gt"]:
        return False
    if "lte" in flt and not value <= flt["lte"]:
        return False
    if "lt" in flt and not value < flt["lt"]:
        return False
    return True


def _page(rows: list, query: dict, render) -> dict:
    raw_limit = query.get("limit", "10")
    try:
        limit = int(raw_limit)
    except ValueError:
        raise invalid("limit must be an integer from 1 to 100", "limit") from None
    if not 1 <= limit <= 100:
        raise invalid("limit must be an integer from 1 to 100", "limit")
    rows = sorted(rows, key=lambda x: x.seq, reverse=True)  # newest first
    cursor = query.get("cursor")
    if cursor:
        try:
            below = int(json.loads(base64.urlsafe_b64decode(cursor.encode() + b"==").decode())["s"])
        except Exception:
            raise invalid("Invalid cursor", "cursor") from None
        rows = [x for x in rows if x.seq < below]
    page = rows[:limit]
    out = {"type": "list", "items": [render(x) for x in page]}
    if len(rows) > limit:
        token = json.dumps({"s": page[-1].seq}).encode()
        out["next_cursor"] = base64.urlsafe_b64encode(token).decode().rstrip("=")
    return out


__all__ = ["Store", "Payment", "Refund", "Receipt", "IdempotenceRecord", "ApiError", "looks_like_id"]
