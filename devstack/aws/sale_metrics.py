"""GET /_local/metrics: the sale's business metrics for the operator page, on the local stack only.

It answers what `python -m holdfast.tools.cli metrics --json` prints (the EMF lines the functions wrote
into the emulator's CloudWatch Logs, summed), to the organizer key the admin routes accept.

There is no such route on AWS on purpose: reading the metrics through the API would give a
function logs:FilterLogEvents over every function's logs, scan them on each page refresh (a quota
of a few calls a second per account, shared with everyone) and pay for it, while CloudWatch
already aggregates the same EMF lines into metrics; the deployed operator page links the
`<stack>-sale` dashboard instead (docs/operations.md, "Watching it run").
"""
from __future__ import annotations

import hmac
import time
from typing import Any, Callable, Mapping

PATH = "/_local/metrics"
MAX_MINUTES = 7 * 24 * 60


def _error(status: int, code: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"code": code, "message": message}}


class SaleMetricsEndpoint:
    """Callable by the API stand-in with the request's headers and query parameters."""

    def __init__(self, stack_name: str, logs_client: Callable[[], Any], organizer_key: Callable[[], str]) -> None:
        self.stack_name = stack_name
        self._logs_client = logs_client
        self._organizer_key = organizer_key

    def __call__(self, headers: Mapping[str, str], query: Mapping[str, list[str]]) -> tuple[int, dict[str, Any]]:
        given = headers.get("X-Api-Key") or ""
        expected = self._organizer_key()
        if not given or not expected or not hmac.compare_digest(given.encode(), expected.encode()):
            return _error(401, "unauthorized", "An organizer API key (X-Api-Key) is required.")
        raw = (query.get("minutes") or ["60"])[-1]
        try:
            minutes = float(raw)
        except ValueError:
            minutes = -1.0
        if not 0 < minutes <= MAX_MINUTES:  # also refuses nan
            return _error(400, "minutes_invalid", f"minutes is a number of minutes above 0, at most {MAX_MINUTES}.")
        from holdfast.tools.metrics_report import collect

        since = int((time.time() - minutes * 60) * 1000)
        summaries = collect(self._logs_client(), self.stack_name, since)
        return 200, {"stack": self.stack_name, "minutes": minutes,
                     "metrics": {name: s.as_dict() for name, s in sorted(summaries.items())}}


def for_stack(stack: Any) -> SaleMetricsEndpoint | None:
    """The endpoint for an embedded stack with the local key-hash secret. The metrics are the whole
    stack's, so only the demo organizer (who owns the demo sale) reads them, by its fixed key."""
    from devstack.organizers import LOCAL_ORGANIZERS

    secret_name = stack.parameters.get("OrganizerKeyHashSecretName")
    if secret_name not in stack.secrets:
        return None
    demo_key = LOCAL_ORGANIZERS[0][2]
    return SaleMetricsEndpoint(stack.stack_name, lambda: stack.boto3_client("logs"), lambda: demo_key)
