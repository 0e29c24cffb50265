"""The YooKassa SDK (and requests under it), loaded only by a provider call (adapters/provider.py):
the SDK's configuration, a socket timeout on its session, and its errors mapped to our outcomes."""
from __future__ import annotations

import threading
from typing import Any, Callable

import requests
from requests.adapters import HTTPAdapter
from urllib3 import Retry
from yookassa import Configuration, Payment, Receipt, Refund  # noqa: F401 - the provider calls them through this module
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

from ..ports import ProviderNotFound, ProviderOutcomeUnknown, ProviderRejected

_timeouts = threading.local()
#: The settings the SDK's process-wide configuration was last given (it has no per-client one).
_configured: tuple[str, str, str, float] | None = None


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


def configure(api_url: str, shop_id: str, secret_key: str, timeout: float) -> None:
    """Point the SDK at this shop, with a timeout on every request (again only when it changed)."""
    global _configured
    wanted = (api_url, shop_id, secret_key, timeout)
    if _configured == wanted:
        return
    Configuration.configure(shop_id, secret_key, api_url=api_url)

    def session_with_timeout(client: ApiClient) -> requests.Session:
        session = requests.Session()
        # Keep the SDK's own behaviour (retry a POST answered 202, https only), plus a timeout.
        retries = Retry(total=client.max_attempts, backoff_factor=client.timeout / 1000,
                        allowed_methods=["POST"], status_forcelist=[202])
        session.mount("https://", _TimeoutAdapter(timeout, max_retries=retries))
        session.mount("http://", _TimeoutAdapter(timeout))
        return session

    ApiClient.get_session = session_with_timeout
    _configured = wanted


def call(operation: Callable[[], Any]) -> dict[str, Any]:
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
