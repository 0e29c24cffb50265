"""The AWS calls each function makes on the local stack, recorded because moto enforces no IAM.

`LocalFunction` sets CURRENT_FUNCTION around an invocation (and the import: calls made at cold
start are the function's too); the wrapper on botocore's `BaseClient._make_api_call` records
(function, IAM service prefix, action, the parameters that name resources). tests/support/iam.py
checks the record against each function's role. A thread a handler starts itself would not carry
the context variable (no handler starts one).
"""
from __future__ import annotations

import contextvars
import json
import threading
from typing import Any

CURRENT_FUNCTION: contextvars.ContextVar[str | None] = contextvars.ContextVar("devstack_function", default=None)

# the request parameters that name the resource an action is authorised on (an S3 object: its bucket and key)
_RESOURCE_PARAMS = ("TableName", "IndexName", "QueueUrl", "QueueName", "stateMachineArn", "executionArn",
                    "SecretId", "FromEmailAddress", "FunctionName", "Name", "EventBusName", "Bucket", "Key")
_calls_lock = threading.Lock()
_CALLS: dict[tuple[str, str, str, str], int] = {}  # (function, service, action, params JSON) -> count
_MADE = [0]   # every call a function made in this process, never cleared: a stack's sign of progress


def made() -> int:
    """How many AWS calls functions have made in this process so far (work under way moves it)."""
    return _MADE[0]


def resource_params(params: dict[str, Any]) -> dict[str, Any]:
    """The part of a request that IAM authorises on (tables, queues, machines, secrets, buses)."""
    kept: dict[str, Any] = {k: params[k] for k in _RESOURCE_PARAMS if isinstance(params.get(k), str)}
    if "TransactItems" in params:
        kept["TransactItems"] = [{kind: {"TableName": body.get("TableName")} for kind, body in item.items()}
                                 for item in params["TransactItems"]]
    if isinstance(params.get("RequestItems"), dict):
        kept["RequestItems"] = {table: {} for table in params["RequestItems"]}
    if isinstance(params.get("Entries"), list):
        kept["Entries"] = [{"EventBusName": e.get("EventBusName", "default")} for e in params["Entries"]]
    return kept


def recorded_calls(clear: bool = False) -> list[dict[str, Any]]:
    """What functions asked of AWS since the last clear: function, service, action, params, count."""
    with _calls_lock:
        calls = [{"function": f, "service": s, "action": a, "params": json.loads(p), "count": n}
                 for (f, s, a, p), n in _CALLS.items()]
        if clear:
            _CALLS.clear()
    return calls


def merge(calls: list[dict[str, Any]]) -> None:
    """Add what a worker process recorded (devstack/aws/workers.py) to this process's record."""
    with _calls_lock:
        for call in calls:
            key = (call["function"], call["service"], call["action"], json.dumps(call["params"], sort_keys=True,
                                                                                  default=str))
            _CALLS[key] = _CALLS.get(key, 0) + call["count"]


def install() -> None:
    import botocore.client

    original = botocore.client.BaseClient._make_api_call

    def recording_call(client: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
        function = CURRENT_FUNCTION.get()
        if function is not None:
            key = (function, client.meta.service_model.signing_name, operation_name,
                   json.dumps(resource_params(api_params), sort_keys=True, default=str))
            with _calls_lock:
                _CALLS[key] = _CALLS.get(key, 0) + 1
                _MADE[0] += 1
        return original(client, operation_name, api_params)

    botocore.client.BaseClient._make_api_call = recording_call
