"""The API functions' request router: API Gateway REST (proxy) events to route functions.

Our own, small, in place of Powertools' ``APIGatewayRestResolver``: importing Powertools'
``event_handler`` package loads every resolver it ships (AppSync's with asyncio, Bedrock's, every
event data class), a quarter of `import boto3`'s time at every API cold start (docs/performance.md,
"Cold start"). The API functions use a small part of it, and this keeps that part's behaviour:
``<name>`` path rules (trailing slashes allowed) whose matches become the route's keyword
arguments, global middlewares ``(app, next) -> Response``, exception handlers looked up along the
exception's MRO, a not-found handler, and REST responses with ``multiValueHeaders``.
"""
from __future__ import annotations

import base64
import json
import re
from typing import Any, Callable

# the characters Powertools allows in a path parameter (RFC 3986's unreserved and sub-delims, and
# the unsafe ones API Gateway passes through)
_PARAMETER = r"[-._~()'!*:@,;=+&$%<> \[\]{}|^\w]+"
_NAMED = re.compile(r"<(\w+)>")


class Response:
    """One answer: the status, the body (a str, or JSON-able when the content type is JSON), headers."""

    def __init__(self, status_code: int, content_type: str | None = None, body: Any = None,
                 headers: dict[str, str | list[str]] | None = None) -> None:
        self.status_code = status_code
        self.body = body
        self.headers: dict[str, str | list[str]] = dict(headers or {})
        if content_type:
            self.headers.setdefault("Content-Type", content_type)

    def as_proxy_result(self) -> dict[str, Any]:
        body, encoded = self.body, False
        if not isinstance(body, (str, bytes)) and body is not None \
                and str(self.headers.get("Content-Type", "")).startswith("application/json"):
            body = json.dumps(body, separators=(",", ":"), default=str)
        if isinstance(body, bytes):
            body, encoded = base64.b64encode(body).decode(), True
        multi: dict[str, list[str]] = {}
        for key, values in self.headers.items():
            if values is not None:
                multi.setdefault(key, []).extend([values] if isinstance(values, str) else values)
        return {"statusCode": self.status_code, "body": body, "isBase64Encoded": encoded, "multiValueHeaders": multi}


class _Attributes(dict):
    """A part of the event read by attribute: ``request_context.identity.source_ip``."""

    def __getattr__(self, name: str) -> Any:
        key = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)  # source_ip -> sourceIp
        value = self.get(key)
        return _Attributes(value) if isinstance(value, dict) else value


class RestEvent:
    """The proxy event as the routes read it (the names Powertools' event class uses)."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    @property
    def body(self) -> str | None:
        return self.raw.get("body")

    @property
    def is_base64_encoded(self) -> bool:
        return bool(self.raw.get("isBase64Encoded"))

    @property
    def headers(self) -> dict[str, str]:
        return self.raw.get("headers") or {}

    @property
    def path(self) -> str:
        return self.raw.get("path") or "/"

    @property
    def http_method(self) -> str:
        return (self.raw.get("httpMethod") or "").upper()

    @property
    def path_parameters(self) -> dict[str, str] | None:
        return self.raw.get("pathParameters")

    @property
    def query_string_parameters(self) -> dict[str, str] | None:
        return self.raw.get("queryStringParameters")

    def get_query_string_value(self, name: str, default_value: str | None = None) -> str | None:
        return (self.query_string_parameters or {}).get(name, default_value)

    @property
    def request_context(self) -> _Attributes:
        return _Attributes(self.raw.get("requestContext") or {})


class NotFoundError(Exception):
    """No route matches the request's method and path."""


Middleware = Callable[["RestResolver", Callable[["RestResolver"], Response]], Response]


class RestResolver:
    def __init__(self) -> None:
        self._routes: list[tuple[str, str, re.Pattern[str], Callable[..., Any]]] = []
        self._middlewares: list[Middleware] = []
        self._exception_handlers: dict[type[BaseException], Callable[[Any], Response]] = {}
        self._not_found: Callable[[Exception], Response] | None = None
        self.current_event: RestEvent = RestEvent({})
        #: the matched route's path as template.yaml spells it (``/events/{event_id}``): what the
        #: organizer scope table is keyed on; None until a route matched
        self.current_route: str | None = None
        #: who the request acts as, once a route has authenticated it (an organizer's Caller, or
        #: "platform"): what the audit log records; None for customers, devices and the public
        self.acting: Any = None
        #: whether successful actions are appended to the audit log (holdfast.entry.http.make_resolver)
        self.audited = False
        self.lambda_context: Any = None

    def route(self, rule: str, method: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        # the rule's own text is literal (the dot of ``/pass.svg`` is a dot); only <name> matches a part
        parts = _NAMED.split(rule)
        body = "".join(f"(?P<{part}>{_PARAMETER})" if index % 2 else re.escape(part) for index, part in enumerate(parts))
        pattern = re.compile("^" + body + "/*$")

        def register(func: Callable[..., Any]) -> Callable[..., Any]:
            self._routes.append((method.upper(), _NAMED.sub(r"{\1}", rule), pattern, func))
            return func
        return register

    def get(self, rule: str):
        return self.route(rule, "GET")

    def post(self, rule: str):
        return self.route(rule, "POST")

    def put(self, rule: str):
        return self.route(rule, "PUT")

    def patch(self, rule: str):
        return self.route(rule, "PATCH")

    def delete(self, rule: str):
        return self.route(rule, "DELETE")

    def use(self, middlewares: list[Middleware]) -> None:
        self._middlewares.extend(middlewares)

    def exception_handler(self, exc_class: type[BaseException]):
        def register(func: Callable[[Any], Response]) -> Callable[[Any], Response]:
            self._exception_handlers[exc_class] = func
            return func
        return register

    def not_found(self, func: Callable[[Exception], Response]) -> Callable[[Exception], Response]:
        self._not_found = func
        return func

    def resolve(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        self.current_event, self.lambda_context, self.current_route = RestEvent(event), context, None
        self.acting = None
        try:
            response = self._dispatch()
        except Exception as exc:  # noqa: BLE001 - handed to the registered handler, re-raised without one
            handler = self._handler_for(exc)
            if handler is None:
                raise
            response = handler(exc)
        return _as_response(response).as_proxy_result()

    def _dispatch(self) -> Response:
        method, path = self.current_event.http_method, self.current_event.path
        for route_method, template_path, pattern, func in self._routes:
            match = pattern.match(path)
            if match and route_method == method:
                self.current_route = template_path
                break
        else:
            if self._not_found is None:
                return Response(404, "application/json", json.dumps({"statusCode": 404, "message": "Not found"}))
            return self._not_found(NotFoundError(f"{method} {path}"))
        arguments = match.groupdict()

        def call(chain: list[Middleware]) -> Callable[[RestResolver], Response]:
            if not chain:
                return lambda _app: _as_response(func(**arguments))
            return lambda app: chain[0](app, call(chain[1:]))
        return call(self._middlewares)(self)

    def _handler_for(self, exc: Exception) -> Callable[[Any], Response] | None:
        for cls in type(exc).__mro__:
            if cls in self._exception_handlers:
                return self._exception_handlers[cls]
        return None


def _as_response(result: Any) -> Response:
    if isinstance(result, Response):
        return result
    if isinstance(result, tuple):
        body, status = result[0], result[1]
        return Response(status, "application/json", body)
    return Response(200, "application/json", result)
