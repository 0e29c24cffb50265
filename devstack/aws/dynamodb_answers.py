"""moto 5.2.5's DynamoDB answers, written as JSON by a walk of the operation's output shape.

moto turns each DynamoDB result (plain dicts, lists, strings, bytes once `dynamo_to_dict` has run)
into its JSON body through its generic response serializer: for every member of every structure
it builds a picker context and tries a chain of alias providers (`get_possible_keys`), so an
item of twenty attributes costs a few hundred generator and `isinstance` calls. Profiled over
tests/unit/test_personal_data.py (in-process moto), `serialized` was ~20 % of the run.

The walk here gives the same body for the results DynamoDB's handler returns: a structure's
members in the shape's order, each found under its own name, None left out, strings as `str`,
blobs base64, numbers as int or float, timestamps as moto writes them for the JSON protocol.
Whatever it is not sure of it hands back to moto's serializer untouched (a value that is not a
dict where a structure is, a key the shape does not name (moto may read it as an alias), a None
inside a list or map, a response transformer moto was given). `HOLDFAST_CHECK_DYNAMODB_ANSWERS=1`
runs both and fails on any difference (tests/devstack/test_dynamodb_answers.py runs that over a
mix of operations; a whole test directory can be run with it set).
"""
from __future__ import annotations

import base64
import json
import os
from enum import Enum
from typing import Any


#: both ways, compared (tests set it; the environment variable sets it for a whole run)
CHECK = os.environ.get("HOLDFAST_CHECK_DYNAMODB_ANSWERS") == "1"
#: answers written by the walk and answers left to moto, by operation (read by the tests)
WRITTEN: dict[tuple[str, bool], int] = {}


class _NotSure(Exception):
    """The walk leaves this value to moto's serializer."""


def _walk(value: Any, shape: Any, timestamps: Any) -> Any:
    kind = shape.type_name
    if kind == "structure":
        if shape.is_document_type:
            return value
        if type(value) is not dict:
            raise _NotSure
        members = shape.members
        if not value.keys() <= members.keys():
            raise _NotSure
        out = {}
        for name, member in members.items():
            item = value.get(name)
            if item is not None:
                out[member.serialization.get("name", name)] = _walk(item, member, timestamps)
        return out
    if kind == "list":
        if None in value:
            raise _NotSure
        member = shape.member
        return [_walk(item, member, timestamps) for item in value]
    if kind == "map":
        if shape.value.serialization.get("name") or any(v is None for v in value.values()):
            raise _NotSure
        member = shape.value
        return {key: _walk(item, member, timestamps) for key, item in value.items()}
    if kind == "string":
        if isinstance(value, Enum):
            value = value.value
        return str(value) if value not in (None, {}, []) else value
    if kind == "blob":
        if isinstance(value, str):
            value = value.encode("utf-8")
        return base64.b64encode(value).strip().decode("utf-8")
    if kind in ("integer", "long"):
        return int(value)
    if kind in ("float", "double"):
        return float(value)
    if kind == "timestamp":
        holder: dict[str, Any] = {}
        timestamps.serialize(holder, value, shape, "t")
        return holder["t"]
    if kind == "boolean":
        return value
    raise _NotSure


def _fast_body(result: Any, context: Any) -> tuple[int, dict, str] | None:
    """(status, headers, body) as moto's JSON serializer would make them, or None to let it."""
    from moto import settings
    from moto.core.serialize import BaseJSONSerializer, TimestampSerializer

    serializer_cls = context.serializer_class
    operation = context.operation_model
    shape = operation.output_shape
    if (not issubclass(serializer_cls, BaseJSONSerializer) or shape is None or operation.has_event_stream_output
            or isinstance(result, Exception) or getattr(context.response, "RESPONSE_KEY_PATH_TO_TRANSFORMER", None)):
        return None
    try:
        body = _walk(result, shape, TimestampSerializer(serializer_cls.DEFAULT_TIMESTAMP_FORMAT))
    except _NotSure:
        return None
    serializer = serializer_cls(operation_model=operation, pretty_print=settings.PRETTIFY_RESPONSES)
    headers = {"Content-Type": serializer._get_protocol_specific_content_type()}
    status = operation.http.get("responseCode", serializer.DEFAULT_RESPONSE_CODE)
    return status, headers, json.dumps(body, indent=4 if settings.PRETTIFY_RESPONSES else None)


def install() -> None:
    from moto.dynamodb.responses import DynamoResult

    if getattr(DynamoResult, "_devstack_fast", False):
        return
    original = DynamoResult.execute_result

    def execute_result(self, context):
        fast = _fast_body(self.result, context)
        if CHECK:
            key = (context.operation_model.name, fast is not None)
            WRITTEN[key] = WRITTEN.get(key, 0) + 1
        if fast is None:
            return original(self, context)
        if CHECK:
            status, headers, body = original(self, context)
            assert (status, headers, json.loads(body)) == (fast[0], fast[1], json.loads(fast[2])), (
                f"{context.operation_model.name}: moto wrote {body[:500]}, the walk {fast[2][:500]}")
        return fast

    DynamoResult.execute_result = execute_result
    DynamoResult._devstack_fast = True
