"""API Gateway (REST, Lambda proxy integration) stand-in: a ThreadingHTTPServer serving exactly the
routes of the template's APIs and invoking the real handlers in-process."""

from __future__ import annotations

import base64
import json
import logging
import mimetypes
import re
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, parse_qsl, unquote, urlsplit

from .runtime import LocalFunction, run_function
from .throttling import StageThrottle
from .workers import Throttled

LOG = logging.getLogger("devstack.aws.apigw")

MAX_BODY_BYTES = 10 * 1024 * 1024  # API Gateway's payload limit
INTEGRATION_TIMEOUT_S = 29.0  # API Gateway's maximum integration timeout (REST APIs)
ANY_METHOD = "ANY"


@dataclass
class Route:
    resource: str  # path template, e.g. /events/{event_id}/bookings
    method: str  # upper case, or ANY
    function: LocalFunction
    api_id: str
    stage: str
    pattern: re.Pattern[str]
    specificity: tuple[int, int]


def compile_route(resource: str) -> tuple[re.Pattern[str], tuple[int, int]]:
    parts = []
    literal_segments = 0
    for segment in resource.strip("/").split("/") if resource != "/" else []:
        greedy = re.fullmatch(r"\{(\w+)\+\}", segment)
        param = re.fullmatch(r"\{(\w+)\}", segment)
        if greedy:
            parts.append(f"(?P<{greedy.group(1)}>.+)")
        elif param:
            parts.append(f"(?P<{param.group(1)}>[^/]+)")
        else:
            parts.append(re.escape(segment))
            literal_segments += 1
    regex = "^/" + "/".join(parts) + "/?$" if parts else "^/$"
    greedy_count = resource.count("+}")
    return re.compile(regex), (literal_segments, -greedy_count)


def routes_from_template(cfn: dict[str, Any], functions_by_logical: dict[str, LocalFunction],
                         api_ids: dict[str, str], stages: dict[str, str]) -> list[Route]:
    """Routes from every AWS::ApiGateway::RestApi Body (the SAM translator puts each `Api` event
    there, with an aws_proxy integration whose uri names the function)."""
    routes = []
    # a function published under an alias (AutoPublishAlias) is integrated as ${<Fn>Alias<name>}:
    # the alias stands for its function here (the local stack runs one code per function)
    aliases = {logical_id: ((resource.get("Properties") or {}).get("FunctionName") or {}).get("Ref")
               for logical_id, resource in cfn.get("Resources", {}).items()
               if resource.get("Type") == "AWS::Lambda::Alias"}
    for logical_id, resource in cfn.get("Resources", {}).items():
        if resource.get("Type") != "AWS::ApiGateway::RestApi":
            continue
        body = (resource.get("Properties") or {}).get("Body") or {}
        for path, methods in (body.get("paths") or {}).items():
            for method, spec in methods.items():
                integration = (spec or {}).get("x-amazon-apigateway-integration") or {}
                if integration.get("type") != "aws_proxy":
                    continue
                uri = integration.get("uri")
                text = json.dumps(uri)
                match = re.search(r"\$\{(\w+)\.Arn\}", text) or re.search(r"\$\{(\w+)\}/invocations", text)
                target = aliases.get(match.group(1), match.group(1)) if match else None
                if target not in functions_by_logical:
                    LOG.warning("route %s %s: integration target not found (%s)", method, path, text)
                    continue
                verb = ANY_METHOD if method == "x-amazon-apigateway-any-method" else method.upper()
                pattern, specificity = compile_route(path)
                routes.append(Route(path, verb, functions_by_logical[target],
                                    api_ids.get(logical_id, logical_id), stages.get(logical_id, "Prod"),
                                    pattern, specificity))
    # literal segments beat parameters, parameters beat greedy ones (as API Gateway matches)
    routes.sort(key=lambda r: r.specificity, reverse=True)
    return routes


def _json_response(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any],
                   extra_headers: dict[str, str] | None = None) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.send_header("x-amzn-RequestId", str(uuid.uuid4()))
    for key, value in (extra_headers or {}).items():
        handler.send_header(key, value)
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(data)


class ApiGatewayServer:
    def __init__(self, routes: list[Route], host: str = "127.0.0.1", port: int = 3000,
                 account_id: str = "123456789012", static_dir: str | Path | None = None):
        self.routes = routes
        self.account_id = account_id
        # The web pages (web/), served same-origin as on AWS, where CloudFront puts the site and
        # the API under one host: a path that no API route matches may name a page file.
        self.static_dir = Path(static_dir).resolve() if static_dir else None
        # what CloudFront adds to each page (the template's response headers policy), set by the stack
        self.page_headers: dict[str, str] = {"X-Content-Type-Options": "nosniff"}
        # Development-only reads beside the pages (path -> answer(headers, query) -> (status, body));
        # nothing in template.yaml declares them, so they never exist on AWS.
        self.local_endpoints: dict[str, Callable[[Any, dict[str, list[str]]], tuple[int, Any]]] = {}
        # Development-only pages under a path prefix (the local inbox, devstack/aws/mail.py):
        # (method, path, headers, query, body) -> (status, headers, bytes); likewise never on AWS.
        self.local_pages: dict[str, Callable[..., tuple[int, dict[str, str], bytes]]] = {}
        # the stage's and methods' throttling (MethodSettings), set by the stack once deployed
        self.throttle: StageThrottle | None = None
        self.integration_timeout = INTEGRATION_TIMEOUT_S
        # how long a request waits for a free worker of its function before it is throttled: Lambda
        # itself does not queue, but a few local workers stand in for its many environments, and
        # one finishing a few hundred ms later is not overload
        self.lambda_queue_wait = 0.25
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt: str, *args: Any) -> None:
                LOG.debug("%s - %s", self.address_string(), fmt % args)

            def _handle(self) -> None:
                server.handle(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # the default backlog of 5 refuses bursts a real endpoint absorbs

        self.httpd = Server((host, port), Handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def start(self) -> None:
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="apigw", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:  # shutdown() waits for serve_forever: only call it once started
            self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread:
            self._thread.join(5)

    # ------------------------------------------------------------------------------------------
    def handle(self, request: BaseHTTPRequestHandler) -> None:
        started = time.time()
        split = urlsplit(request.path)
        path = unquote(split.path) or "/"
        method = request.command.upper()

        length_header = request.headers.get("Content-Length")
        chunked = "chunked" in (request.headers.get("Transfer-Encoding") or "").lower()
        if length_header is not None and int(length_header) > MAX_BODY_BYTES:
            self._drain(request, int(length_header))
            request.close_connection = True
            _json_response(request, 413, {"message": "Request Too Long"})
            return
        if chunked:
            body_bytes = self._read_chunked(request)
            if body_bytes is None:
                request.close_connection = True
                _json_response(request, 413, {"message": "Request Too Long"})
                return
        else:
            body_bytes = request.rfile.read(int(length_header)) if length_header else b""

        page = next((answer for prefix, answer in self.local_pages.items()
                     if path == prefix or path.startswith(prefix + "/")), None)
        if page is not None:
            try:
                status, headers, data = page(method, path, request.headers, parse_qs(split.query), body_bytes)
            except Exception:  # noqa: BLE001 - a development page must not take the server's thread down
                LOG.exception("%s %s failed", method, path)
                status, headers, data = 502, {"Content-Type": "application/json"}, b'{"message": "Internal server error"}'
            request.send_response(status)
            for name, value in {**headers, "Cache-Control": "no-store"}.items():
                request.send_header(name, value)
            request.send_header("Content-Length", str(len(data)))
            request.end_headers()
            if method != "HEAD":
                request.wfile.write(data)
            return
        local = self.local_endpoints.get(path)
        if local is not None and method in ("GET", "HEAD"):
            try:
                status, payload = local(request.headers, parse_qs(split.query))
            except Exception:  # noqa: BLE001 - a development read must not take the server's thread down
                LOG.exception("%s %s failed", method, path)
                status, payload = 502, {"message": "Internal server error"}
            _json_response(request, status, payload, {"Cache-Control": "no-store"})
            return
        candidates = [r for r in self.routes if r.pattern.match(path)]
        if not candidates and method in ("GET", "HEAD") and self._serve_static(request, path):
            return
        if not candidates:
            _json_response(request, 404, {
                "message": "Missing Authentication Token",
                "error": {"code": "route_not_found", "message": f"no route for {method} {path}"}})
            return
        route = next((r for r in candidates if r.method in (method, ANY_METHOD)), None)
        if route is None:
            allowed = sorted({r.method for r in candidates if r.pattern.match(path)})
            _json_response(request, 405, {
                "message": "Method Not Allowed",
                "error": {"code": "method_not_allowed", "message": f"{method} is not allowed on {path}"}},
                {"Allow": ", ".join(allowed)})
            return

        if self.throttle is not None:
            wait = self.throttle.take(route.resource, method)
            if wait is not None:
                _json_response(request, 429, {"message": "Too Many Requests"},
                               {"Retry-After": str(max(1, int(wait + 0.999))),
                                "x-amzn-ErrorType": "TooManyRequestsException"})
                return
        event = self._event(request, route, path, split.query, body_bytes, started)
        remaining = self.integration_timeout - (time.time() - started)
        try:
            result, error = run_function(route.function, event, max_wait=min(self.lambda_queue_wait, remaining),
                                         answer_within=remaining, route=f"{method} {route.resource}")
        except Throttled:
            # Lambda throttles a synchronous call over the function's concurrency. AWS's REST API
            # answers that 500 unless a gateway response maps it; locally it is a 429 (see
            # docs/local-stack.md): this machine's few workers stand in for Lambda's scaling, and
            # running out of them is overload to shed, not a server fault.
            _json_response(request, 429, {"message": "Too Many Requests", "error": {
                "code": "function_throttled", "message": f"{route.function.function_name} is at its concurrency"}},
                {"Retry-After": "1", "x-amzn-ErrorType": "TooManyRequestsException"})
            return
        except TimeoutError:
            _json_response(request, 504, {"message": "Endpoint request timed out"},
                           {"x-amzn-ErrorType": "IntegrationTimeout"})
            return
        if error is not None:
            LOG.error("%s %s -> %s raised %s: %s\n%s", method, path, route.function.function_name,
                      error["errorType"], error["errorMessage"], "".join(error["stackTrace"]))
            _json_response(request, 502, {"message": "Internal server error"})
            return
        self._respond(request, route, result)

    def _serve_static(self, request: BaseHTTPRequestHandler, path: str) -> bool:
        if self.static_dir is None:
            return False
        relative = "index.html" if path == "/" else path.lstrip("/")
        target = (self.static_dir / relative).resolve()
        if not target.is_file() or not target.is_relative_to(self.static_dir):
            return False
        data = target.read_bytes()
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind in ("application/javascript", "text/javascript"):
            kind += "; charset=utf-8"
        request.send_response(200)
        request.send_header("Content-Type", kind)
        request.send_header("Content-Length", str(len(data)))
        request.send_header("Cache-Control", "no-cache")
        for name, value in self.page_headers.items():
            request.send_header(name, value)
        request.end_headers()
        if request.command != "HEAD":
            request.wfile.write(data)
        return True

    @staticmethod
    def _drain(request: BaseHTTPRequestHandler, length: int) -> None:
        # read (and drop) a refused body of sane size, so the client sees the 413 instead of a reset
        if length > 8 * MAX_BODY_BYTES:
            return
        remaining = length
        while remaining > 0:
            chunk = request.rfile.read(min(remaining, 1 << 20))
            if not chunk:
                break
            remaining -= len(chunk)

    @staticmethod
    def _read_chunked(request: BaseHTTPRequestHandler) -> bytes | None:
        data = bytearray()
        while True:
            size_line = request.rfile.readline().strip()
            size = int(size_line.split(b";")[0] or b"0", 16)
            if size == 0:
                request.rfile.readline()
                return bytes(data)
            data += request.rfile.read(size)
            request.rfile.readline()
            if len(data) > MAX_BODY_BYTES:
                return None

    def _event(self, request: BaseHTTPRequestHandler, route: Route, path: str, query: str,
               body: bytes, started: float) -> dict[str, Any]:
        headers: dict[str, str] = {}
        multi_headers: dict[str, list[str]] = {}
        for name, value in request.headers.items():
            headers[name] = value  # the last value wins, as in API Gateway
            multi_headers.setdefault(name, []).append(value)
        query_single: dict[str, str] = {}
        query_multi: dict[str, list[str]] = {}
        for name, value in parse_qsl(query, keep_blank_values=True):
            query_single[name] = value
            query_multi.setdefault(name, []).append(value)
        match = route.pattern.match(path)
        path_params = {k: v for k, v in (match.groupdict() if match else {}).items()}
        request_id = str(uuid.uuid4())
        peer = request.client_address[0]
        try:
            text_body: str | None = body.decode("utf-8") if body else None
            is_b64 = False
        except UnicodeDecodeError:
            text_body, is_b64 = base64.b64encode(body).decode(), True
        host = request.headers.get("Host", "")
        return {
            "resource": route.resource,
            "path": path,
            "httpMethod": request.command.upper(),
            "headers": headers or None,
            "multiValueHeaders": multi_headers or None,
            "queryStringParameters": query_single or None,
            "multiValueQueryStringParameters": query_multi or None,
            "pathParameters": path_params or None,
            "stageVariables": None,
            "requestContext": {
                "resourceId": route.resource,
                "resourcePath": route.resource,
                "httpMethod": request.command.upper(),
                "extendedRequestId": request_id,
                "requestTime": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(started)),
                "path": f"/{route.stage}{path}",
                "accountId": self.account_id,
                "protocol": request.request_version,
                "stage": route.stage,
                "domainPrefix": host.split(".")[0].split(":")[0],
                "requestTimeEpoch": int(started * 1000),
                "requestId": request_id,
                "identity": {
                    "cognitoIdentityPoolId": None, "accountId": None, "cognitoIdentityId": None,
                    "caller": None, "sourceIp": peer, "principalOrgId": None, "accessKey": None,
                    "cognitoAuthenticationType": None, "cognitoAuthenticationProvider": None,
                    "userArn": None, "userAgent": request.headers.get("User-Agent"), "user": None,
                },
                "domainName": host,
                "apiId": route.api_id,
            },
            "body": text_body,
            "isBase64Encoded": is_b64,
        }

    def _respond(self, request: BaseHTTPRequestHandler, route: Route, result: Any) -> None:
        if not isinstance(result, dict) or "statusCode" not in result:
            LOG.error("%s returned a malformed proxy response: %r", route.function.function_name, result)
            _json_response(request, 502, {"message": "Internal server error"})
            return
        try:
            status = int(result["statusCode"])
            body = result.get("body")
            if body is None:
                data = b""
            elif result.get("isBase64Encoded"):
                data = base64.b64decode(body)
            else:
                data = str(body).encode("utf-8")
            header_pairs: list[tuple[str, str]] = []
            multi = result.get("multiValueHeaders") or {}
            for name, value in (result.get("headers") or {}).items():
                if name not in multi:
                    header_pairs.append((name, str(value)))
            for name, values in multi.items():
                header_pairs.extend((name, str(v)) for v in values)
        except (TypeError, ValueError) as exc:
            LOG.error("%s returned a malformed proxy response: %s", route.function.function_name, exc)
            _json_response(request, 502, {"message": "Internal server error"})
            return
        request.send_response(status)
        skip = {"content-length", "transfer-encoding", "connection"}
        for name, value in header_pairs:
            if name.lower() not in skip:
                request.send_header(name, value)
        if not any(n.lower() == "content-type" for n, _ in header_pairs):
            request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        request.end_headers()
        if request.command != "HEAD":
            request.wfile.write(data)
