"""Load a function's handler the way Lambda does (its folder's app.py) and call it with an event."""
from __future__ import annotations

import copy
import importlib.util
import json
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


@dataclass
class FakeLambdaContext:
    function_name: str = "test-function"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:eu-central-1:123456789012:function:test-function"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = "/aws/lambda/test-function"
    log_stream_name: str = "2030/01/01/[$LATEST]test"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def load_handler(folder: str):
    """Import functions/<folder>/app.py under its own module name and return the module."""
    name = f"functions_{folder}_app"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "functions" / folder / "app.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_event(name: str) -> dict[str, Any]:
    """A sample event of events/, its dates moved to today (devstack/sample_events.py)."""
    from devstack import sample_events

    return sample_events.load(name)


def api_event(name: str, *, path_params: dict[str, str] | None = None, body: Any = ..., headers: dict[str, str] | None = None,
              drop_headers: tuple[str, ...] = (), raw_body: str | None = None, source_ip: str | None = None) -> dict[str, Any]:
    """A sample API event from events/, adjusted: path parameters, body, headers, sender."""
    event = copy.deepcopy(load_event(name))
    if path_params:
        event["pathParameters"] = path_params
        path = event["resource"]
        for key, value in path_params.items():
            path = path.replace("{" + key + "}", value)
        event["path"] = path
    if raw_body is not None:
        event["body"] = raw_body
    elif body is not ...:
        event["body"] = None if body is None else json.dumps(body)
    for key in drop_headers:
        event["headers"].pop(key, None)
        event["multiValueHeaders"].pop(key, None)
    for key, value in (headers or {}).items():
        event["headers"][key] = value
        event["multiValueHeaders"][key] = [value]
    if source_ip:
        event["requestContext"]["identity"]["sourceIp"] = source_ip
    return event


def call(folder: str, event: dict[str, Any]) -> tuple[int, Any]:
    """Invoke the handler; for API events return (status, parsed JSON body)."""
    response = load_handler(folder).lambda_handler(event, FakeLambdaContext(function_name=folder))
    if isinstance(response, dict) and "statusCode" in response:
        body = response.get("body")
        return response["statusCode"], json.loads(body) if body else None
    return 200, response
