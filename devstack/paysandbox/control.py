"""A small stdlib-only client for the sandbox control API (``/sandbox``)."""
from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from urllib.parse import urlencode


class SandboxControlError(Exception):
    def __init__(self, status: int, body):
        super().__init__(f"control API answered {status}: {body}")
        self.status = status
        self.body = body


class SandboxControl:
    """Drive the sandbox from tests: customer actions, faults, clock, inspection, reset."""

    def __init__(self, control_base_url: str, timeout: float = 10.0):
        self.base = control_base_url.rstrip("/")
        self.timeout = timeout
        self._ctx = None
        if self.base.startswith("https://"):  # the sandbox's certificate is self-signed
            self._ctx = ssl.create_default_context()
            self._ctx.check_hostname = False
            self._ctx.verify_mode = ssl.CERT_NONE

    def _call(self, method: str, path: str, body=None, query: dict | None = None):
        url = self.base + path
        if query:
            url += "?" + urlencode({k: v for k, v in query.items() if v is not None})
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ctx) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = raw.decode("utf-8", "replace")
            raise SandboxControlError(exc.code, parsed) from None

    # -- state ---------------------------------------------------------------------------------
    def health(self) -> dict:
        return self._call("GET", "/health")

    def reset(self) -> None:
        self._call("POST", "/reset", {})

    # -- customer actions ----------------------------------------------------------------------
    def pay(self, payment_id: str) -> dict:
        return self._call("POST", f"/payments/{payment_id}/pay", {})

    def decline(self, payment_id: str, reason: str | None = None, party: str | None = None) -> dict:
        body = {k: v for k, v in {"reason": reason, "party": party}.items() if v is not None}
        return self._call("POST", f"/payments/{payment_id}/decline", body)

    # -- inspection ----------------------------------------------------------------------------
    def payment(self, payment_id: str) -> dict:
        return self._call("GET", f"/payments/{payment_id}")

    def payments(self, status: str | None = None, **metadata: str) -> list[dict]:
        query = {f"metadata.{k}": v for k, v in metadata.items()}
        query["status"] = status
        return self._call("GET", "/payments", query=query)["items"]

    def find_payments(self, **metadata: str) -> list[dict]:
        """Payments whose metadata contains every given key/value (e.g. booking_id=...)."""
        return self.payments(**metadata)

    def refunds(self, payment_id: str | None = None) -> list[dict]:
        return self._call("GET", "/refunds", query={"payment_id": payment_id})["items"]

    def receipts(self, payment_id: str | None = None) -> list[dict]:
        """Every receipt (oldest first), or those of one payment and its refunds."""
        return self._call("GET", "/receipts", query={"payment_id": payment_id})["items"]

    def wait_for_receipts(self, payment_id: str, count: int, *, status: str | None = None,
                          timeout: float = 5.0) -> list[dict]:
        """Poll until at least ``count`` of the payment's receipts exist (with ``status``, if given)."""
        deadline = time.monotonic() + timeout
        while True:
            items = [r for r in self.receipts(payment_id) if not status or r["status"] == status]
            if len(items) >= count or time.monotonic() > deadline:
                return items
            time.sleep(0.02)

    # -- shop settings -------------------------------------------------------------------------
    def shop(self) -> dict:
        return self._call("GET", "/shop")

    def set_receipts(self, mode: str) -> dict:
        """``required``: payments and refunds without a receipt are refused; ``optional``: not."""
        return self._call("POST", "/shop", {"receipts": mode})

    def deliveries(self, event: str | None = None, object_id: str | None = None) -> list[dict]:
        return self._call("GET", "/deliveries", query={"event": event, "object_id": object_id})["items"]

    def notifications(self) -> list[dict]:
        return self._call("GET", "/notifications")["items"]

    def wait_for_deliveries(self, count: int, *, event: str | None = None, object_id: str | None = None,
                            outcome: str | None = None, timeout: float = 5.0) -> list[dict]:
        """Poll until at least ``count`` matching delivery log entries exist (real-time timeout)."""
        deadline = time.monotonic() + timeout
        while True:
            items = [d for d in self.deliveries(event, object_id) if not outcome or d["outcome"] == outcome]
            if len(items) >= count or time.monotonic() > deadline:
                return items
            time.sleep(0.02)

    # -- faults --------------------------------------------------------------------------------
    def add_fault(self, kind: str, route: str = "webhook", *, times: int | None = None,
                  probability: float | None = None, seed: int | None = None, match: dict | None = None,
                  **params) -> dict:
        spec = {"kind": kind, "route": route, **params}
        for name, value in (("times", times), ("probability", probability), ("seed", seed), ("match", match)):
            if value is not None:
                spec[name] = value
        return self._call("POST", "/faults", spec)

    def faults(self) -> list[dict]:
        return self._call("GET", "/faults")["items"]

    def clear_faults(self) -> None:
        self._call("DELETE", "/faults")

    def remove_fault(self, fault_id: int) -> None:
        self._call("DELETE", f"/faults/{fault_id}")

    # -- webhooks ------------------------------------------------------------------------------
    def webhooks(self) -> dict:
        return self._call("GET", "/webhooks")

    def set_webhooks(self, urls: list[str]) -> list[str]:
        return self._call("PUT", "/webhooks", {"urls": list(urls)})["urls"]

    def add_webhook(self, url: str) -> list[str]:
        return self._call("POST", "/webhooks", {"url": url})["urls"]

    def release(self, order: str = "fifo", **match: str) -> int:
        return self._call("POST", "/webhooks/release", {"order": order, "match": match})["released"]

    def forge(self, object_id: str, event: str = "payment.succeeded") -> dict:
        return self._call("POST", "/webhooks/forge", {"object_id": object_id, "event": event})["forged"]

    # -- clock ---------------------------------------------------------------------------------
    def clock(self) -> dict:
        return self._call("GET", "/clock")

    def advance(self, seconds: float) -> dict:
        return self._call("POST", "/clock/advance", {"seconds": seconds})

    def set_clock(self, now_iso: str) -> dict:
        return self._call("POST", "/clock/set", {"now": now_iso})

    def set_time_scale(self, scale: float) -> dict:
        return self._call("POST", "/clock/scale", {"time_scale": scale})
