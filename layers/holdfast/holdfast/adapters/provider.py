"""The payment provider (YooKassa API v3) through its official SDK, with the SDK's traps closed.

- Every call has a socket timeout: the SDK sets none, so a provider that never answers would
  hang the function until Lambda kills it.
- Every POST carries an explicit idempotence key chosen by the caller and stored before the call.
- Every failure becomes one of two outcomes the services branch on:
  ``ProviderRejected`` (it did not happen; the provider said no) or ``ProviderOutcomeUnknown``
  (it may have happened: repeat with the same key, or look it up with GET).
"""
from __future__ import annotations

import threading
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3 import Retry
from yookassa import Configuration, Payment, Refund
from yookassa.client import ApiClient
from yookassa.domain.exceptions import (
    ApiError,
    BadRequestError,
    ForbiddenError,
    NotFoundError,
    ResponseProcessingError,
    TooManyRequestsError,
    UnauthorizedError,
)


class ProviderError(Exception):
    """Base of provider outcomes."""


class ProviderRejected(ProviderError):
    """The provider refused the request; nothing happened there."""

    def __init__(self, code: str, description: str = "", status: int | None = None) -> None:
        super().__init__(f"{code}: {description}")
        self.code = code
        self.status = status


class ProviderNotFound(ProviderRejected):
    pass


class ProviderOutcomeUnknown(ProviderError):
    """Timeout, dropped connection, 5xx, 202 or an unreadable answer: the effect may have happened."""


_timeouts = threading.local()


class _TimeoutAdapter(HTTPAdapter):
    def __init__(self, timeout: float, **kwargs: Any) -> None:
        self._timeout = timeout
        super().__init__(**kwargs)

    def send(self, request, **kwargs):  # noqa: ANN001 - requests' own signature
        kwargs["timeout"] = kwargs.get("timeout") or self._timeout
        try:
            return super().send(request, **kwargs)
        except requests.RequestException as exc:
            # The SDK swallows transport errors into a bare AttributeError; keep the real cause.
            _timeouts.last_error = exc
            raise


class YooKassaProvider:
    """Payments and refunds at a YooKassa-compatible provider."""

    def __init__(self, api_url: str, shop_id: str, secret_key: str, timeout_seconds: float) -> None:
        self.api_url = api_url.rstrip("/")
        Configuration.configure(shop_id, secret_key, api_url=self.api_url)
        timeout = float(timeout_seconds)

        def session_with_timeout(client: ApiClient) -> requests.Session:
            session = requests.Session()
            # Keep the SDK's own behaviour (retry a POST answered 202, https only), plus a timeout.
            retries = Retry(total=client.max_attempts, backoff_factor=client.timeout / 1000,
                            allowed_methods=["POST"], status_forcelist=[202])
            session.mount("https://", _TimeoutAdapter(timeout, max_retries=retries))
            session.mount("http://", _TimeoutAdapter(timeout))
            return session

        ApiClient.get_session = session_with_timeout

    # ---------------------------------------------------------------------------------- payments

    def create_payment(self, *, amount: dict[str, str], description: str, metadata: dict[str, str],
                       capture: bool, return_url: str, idempotence_key: str) -> dict[str, Any]:
        body = {
            "amount": amount,
            "capture": capture,
            "description": description[:128],
            "metadata": metadata,
            "confirmation": {"type": "redirect", "return_url": return_url},
        }
        return self._call(lambda: Payment.create(body, idempotence_key))

    def get_payment(self, payment_id: str) -> dict[str, Any]:
        return self._call(lambda: Payment.find_one(payment_id))

    def capture_payment(self, payment_id: str, amount: dict[str, str], idempotence_key: str) -> dict[str, Any]:
        return self._call(lambda: Payment.capture(payment_id, {"amount": amount}, idempotence_key))

    def cancel_payment(self, payment_id: str, idempotence_key: str) -> dict[str, Any]:
        return self._call(lambda: Payment.cancel(payment_id, idempotence_key))

    def find_payments(self, *, created_gte: str, created_lte: str, metadata: dict[str, str]) -> list[dict[str, Any]]:
        """Payments created in a time range whose metadata contains ``metadata`` (list API pages)."""
        found: list[dict[str, Any]] = []
        params: dict[str, Any] = {"created_at.gte": created_gte, "created_at.lte": created_lte, "limit": 100}
        while True:
            page = self._call(lambda: Payment.list(params))
            for item in page.get("items", []):
                item_meta = item.get("metadata") or {}
                if all(item_meta.get(key) == value for key, value in metadata.items()):
                    found.append(item)
            cursor = page.get("next_cursor")
            if not cursor:
                return found
            params = {**params, "cursor": cursor}

    # ----------------------------------------------------------------------------------- refunds

    def create_refund(self, payment_id: str, amount: dict[str, str], description: str, idempotence_key: str) -> dict[str, Any]:
        body = {"payment_id": payment_id, "amount": amount, "description": description[:250]}
        return self._call(lambda: Refund.create(body, idempotence_key))

    def get_refund(self, refund_id: str) -> dict[str, Any]:
        return self._call(lambda: Refund.find_one(refund_id))

    def list_refunds(self, payment_id: str) -> list[dict[str, Any]]:
        """Every refund of one payment, whatever its status (list API pages)."""
        found: list[dict[str, Any]] = []
        params: dict[str, Any] = {"payment_id": payment_id, "limit": 100}
        while True:
            page = self._call(lambda: Refund.list(params))
            found.extend(dict(item) for item in page.get("items", []))
            cursor = page.get("next_cursor")
            if not cursor:
                return found
            params = {**params, "cursor": cursor}

    # ----------------------------------------------------------------------------------- mapping

    @staticmethod
    def _call(operation) -> dict[str, Any]:  # noqa: ANN001
        _timeouts.last_error = None
        try:
            answer = operation()
        except NotFoundError as exc:
            raise ProviderNotFound("not_found", _describe(exc), 404) from None
        except (BadRequestError, UnauthorizedError, ForbiddenError) as exc:
            raise ProviderRejected(_error_code(exc), _describe(exc), getattr(exc, "HTTP_CODE", None)) from None
        except TooManyRequestsError:
            # 429 means the request was not processed; the caller retries later with the same key.
            raise ProviderOutcomeUnknown("provider rate-limited the request (429)") from None
        except ResponseProcessingError:
            raise ProviderOutcomeUnknown("provider still processing (202)") from None
        except ApiError as exc:
            raise ProviderOutcomeUnknown(f"provider error {getattr(exc, 'HTTP_CODE', '?')}") from None
        except requests.JSONDecodeError:
            raise ProviderOutcomeUnknown("unreadable provider answer") from None
        except requests.RequestException as exc:
            raise ProviderOutcomeUnknown(f"transport failure: {type(exc).__name__}") from None
        except AttributeError:
            cause = getattr(_timeouts, "last_error", None)
            if cause is None:
                raise
            raise ProviderOutcomeUnknown(f"no answer from provider: {type(cause).__name__}") from None
        return _as_dict(answer)


def _as_dict(answer: Any) -> dict[str, Any]:
    if isinstance(answer, dict):
        return answer
    return dict(answer)


def _error_code(exc: ApiError) -> str:
    content = exc.args[0] if exc.args and isinstance(exc.args[0], dict) else {}
    return str(content.get("code") or type(exc).__name__)


def _describe(exc: ApiError) -> str:
    content = exc.args[0] if exc.args and isinstance(exc.args[0], dict) else {}
    return str(content.get("description") or "")[:200]
