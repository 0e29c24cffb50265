"""What every API handler shares: the resolver with one error mapping, identity, keys and bodies."""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..config import settings
from ..domain.booking import IllegalTransition
from ..domain.errors import BookingError, Forbidden, InvalidRequest, Unauthorized, ViewerAddressUnknown
from ..domain.languages import preferred
from ..domain.scopes import scope_for
from ..observability import AUDIT_APPEND_FAILED, answered, count, logger
from ..ports import DuplicateRequest, ItemExists, PlacesTaken, StaleBooking, StoreError
from .resolver import Response, RestResolver

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

    from ..domain.organizers import Caller

#: The name the handlers' signatures use (once Powertools' class; see resolver.py).
APIGatewayRestResolver = RestResolver
NextMiddleware = Callable[[RestResolver], Response]

MAX_BODY_BYTES = 64 * 1024
#: No request of ours nests deeper than a few levels; anything deeper is refused before it is read
#: (Python's parser raises RecursionError near 1,000 levels, and 64 KiB of '[' is 65,536).
MAX_BODY_DEPTH = 32
_CUSTOMER_ID = re.compile(r"^[A-Za-z0-9._:@|+-]{1,128}$")
_IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9._:~+/=-]{1,128}$")


#: Every error: its message is in the request's language (Accept-Language), and it says what was
#: wrong with this one request, so no cache may keep it for another. (CloudFront honours no-store
#: on a 404, 410, 414 or 501 only: the distribution keeps a 400, 403 or 405 for 0 s, template.yaml,
#: and a 5xx for CloudFront's default 10 s, which spares a failing origin.)
ERROR_HEADERS = {"Cache-Control": "no-store", "Vary": "Accept-Language"}


def error_response(status: int, code: str, message: str, details: dict[str, Any] | None = None,
                   headers: dict[str, str] | None = None) -> Response:
    body: dict[str, Any] = {"code": code, "message": message}
    if details:
        body["details"] = details
    return Response(status_code=status, content_type="application/json", body=json.dumps({"error": body}),
                    headers={**ERROR_HEADERS, **(headers or {})})


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    return Response(status_code=status, content_type="application/json", body=json.dumps(body, default=str),
                    headers=headers or {})


@dataclass(frozen=True)
class Freshness:
    """How long a public answer may be reused: ``browser`` seconds by a browser (max-age),
    ``shared`` by a CDN (s-maxage, what CloudFront's catalog cache policy reads), then served stale
    for up to ``stale`` more seconds while one request fetches it again (stale-while-revalidate),
    and ``if_error`` seconds when the origin fails (stale-if-error)."""

    browser: int
    shared: int
    stale: int = 0
    if_error: int = 0

    def header(self) -> str:
        parts = ["public", f"max-age={self.browser}", f"s-maxage={self.shared}"]
        parts += [f"stale-while-revalidate={self.stale}"] if self.stale else []
        parts += [f"stale-if-error={self.if_error}"] if self.if_error else []
        return ", ".join(parts)


# What a CDN may keep of the public catalog's answers, and for how long (issue 35, goal 5):
#
# One place for the handlers (which send these as Cache-Control), for template.yaml's catalog cache
# policy (which keys on ``CACHE_KEY_QUERY_STRINGS``; tests/contract/test_edge_cache.py holds the two
# together) and for the origin load model (devstack/measure/edge_load.py, docs/performance.md).
#
# How fresh each answer must be follows from what changes it:
#
# - an event's page and its seat map show what is free, which every hold changes: a CDN keeps them
#   a second or two, and may serve them that much staler while it fetches them again, so a seat
#   map a customer sees is at most about three seconds old (with the function's own second,
#   ``ListingService.seat_map``). A stale count costs nothing but a refused hold (the hold
#   decides, 409 places_unavailable);
# - listings and searches change when an organizer publishes or edits an offering: a minute at the
#   edge (a new event is listed everywhere within two), and an hour stale when the origin fails;
# - the customer texts change with a deployment only.
LISTING_FRESHNESS = Freshness(browser=30, shared=60, stale=60, if_error=3600)
EVENT_FRESHNESS = Freshness(browser=1, shared=2, stale=2)
SEAT_MAP_FRESHNESS = Freshness(browser=1, shared=1, stale=1)
TEXTS_FRESHNESS = Freshness(browser=3600, shared=3600, stale=86400, if_error=86400)

#: Every query string a cached route reads (GET /events, /services, /lots, /texts): the CDN keys on
#: these and nothing else. Any other reaches the origin too (which answers 400, never cached), so
#: no parameter the key leaves out can change a cached answer.
CACHE_KEY_QUERY_STRINGS = ("city", "category", "q", "from", "to", "limit", "cursor", "lang")


def cached_json(app: APIGatewayRestResolver, body: Any, fresh: Freshness) -> Response:
    """200 with the body, public as ``fresh`` says, with an ETag; 304 when the client's
    If-None-Match already names this exact body. The body never depends on the request's
    language (errors do, and are never cached), so there is no Vary."""
    text = json.dumps(body, separators=(",", ":"), sort_keys=True, default=str)
    etag = '"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"'
    headers = {"ETag": etag, "Cache-Control": fresh.header()}
    given = header(app, "If-None-Match") or ""
    if etag in [part.strip().removeprefix("W/") for part in given.split(",")] or given.strip() == "*":
        return Response(status_code=304, content_type=None, body="", headers=headers)
    return Response(status_code=200, content_type="application/json", body=text, headers=headers)


#: an id, an id drawn as a picture (a booking's ticket: ``<ticket_id>.svg``) or a named file (an
#: export: ``sales.csv``)
_PATH_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}(\.svg|\.csv)?$")


def _path_ids_are_ids(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response:
    """Every id in a path is ours (a UUID): anything else cannot exist, so it is a 404 before any
    lookup. DynamoDB would reject an oversized key with a ValidationException instead."""
    for value in (app.current_event.path_parameters or {}).values():
        if not _PATH_ID.match(value or ""):
            return error_response(404, "not_found", "No such resource.")
    return next_middleware(app)


#: (who, "METHOD /path", path parameters, the answer's body, status) -> None: appends an entry
AuditRecorder = Callable[[Any, str, "dict[str, str] | None", Any, int], Any]


def _audited(record: AuditRecorder):
    """A middleware appending every organizer's or the platform's action that succeeded (any
    method but GET, answered 2xx) to the audit log. A failed append is logged and counted: the
    action has happened, and answering it as failed would only make its caller repeat it."""
    def middleware(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response:
        response = next_middleware(app)
        method = app.current_event.http_method
        if app.acting is None or method == "GET" or not 200 <= response.status_code < 300:
            return response
        body = response.body
        try:
            answer = json.loads(body) if isinstance(body, str) and body.startswith("{") else None
            record(app.acting, f"{method} {app.current_route}", app.current_event.path_parameters, answer,
                   response.status_code)
        except Exception as exc:  # noqa: BLE001 - the action stands; the missing entry is counted
            logger.error("audit append failed", extra={"error_type": type(exc).__name__,
                                                       "route": f"{method} {app.current_route}"})
            count(AUDIT_APPEND_FAILED)
        return response
    return middleware


def make_resolver(audit: AuditRecorder | None = None) -> APIGatewayRestResolver:
    """The router with the error mapping; ``audit`` given, every organizer's and the platform's
    action that succeeds is appended to the audit log (services/audit.py)."""
    app = RestResolver()
    app.use(middlewares=[_path_ids_are_ids] + ([_audited(audit)] if audit else []))
    app.audited = audit is not None

    def told(code: str, message: str) -> str:
        """The message in the request's language where domain/texts.py or the product whose error it is
        has it, else as raised."""
        from ..kinds.products import error_message

        return error_message(code, preferred_language(app.current_event.headers)) or message

    @app.exception_handler(BookingError)
    def _booking_error(exc: BookingError) -> Response:
        headers = {"Retry-After": str(exc.details["retry_after"])} if "retry_after" in exc.details else None
        details = {key: value for key, value in exc.details.items() if key != "retry_after"} or None
        answered(exc.code)
        return error_response(exc.status, exc.code, told(exc.code, exc.message), details, headers)

    @app.exception_handler(StoreError)
    def _store_error(exc: StoreError) -> Response:
        status, code, message, retry_after = store_error_answer(exc)
        answered(code)
        headers = {"Retry-After": str(retry_after)} if retry_after else None
        return error_response(status, code, told(code, message), None, headers)

    @app.exception_handler(IllegalTransition)
    def _illegal_transition(_exc: IllegalTransition) -> Response:
        # A decision taken on a booking that another request moved meanwhile: nothing was written.
        answered("booking_changed")
        return error_response(409, "booking_changed",
                              told("booking_changed", "The booking changed meanwhile; read it again."))

    @app.exception_handler(ValueError)
    def _value_error(exc: ValueError) -> Response:
        # pydantic's ValidationError is a ValueError; told apart here without importing pydantic,
        # which a function that never validates a body does not load (issue 15)
        if _is_validation_error(exc):
            return validation_error_response(exc)
        return _unexpected(exc)

    @app.exception_handler(Exception)
    def _unexpected(exc: Exception) -> Response:
        log_unexpected(exc)
        return error_response(500, "internal_error",
                              told("internal_error", "Something went wrong on our side; nothing was lost. Retry shortly."))

    @app.not_found
    def _not_found(_exc: Exception) -> Response:
        return error_response(404, "route_not_found", "No such endpoint.")

    return app


def _is_validation_error(exc: BaseException) -> bool:
    core = sys.modules.get("pydantic_core")   # a ValidationError exists only once pydantic is loaded
    return core is not None and isinstance(exc, core.ValidationError)


def validation_error_response(exc: ValidationError) -> Response:
    problems = [
        {"field": ".".join(str(part) for part in err["loc"]) or "body", "problem": err["msg"]}
        for err in exc.errors(include_url=False, include_input=False)
    ]
    return error_response(400, "validation_error", "The request body is not valid.", {"problems": problems[:20]})


def store_error_answer(exc: StoreError) -> tuple[int, str, str, int | None]:
    """(status, code, message, Retry-After) for a storage outcome no service turned into a decision.
    Every one of them means nothing was written, so each is a 4xx the client can act on."""
    if isinstance(exc, StaleBooking):
        return 409, "booking_changed", "The booking changed meanwhile; read it again.", None
    if isinstance(exc, PlacesTaken):
        return 409, "places_unavailable", "The places were just taken by someone else.", None
    if isinstance(exc, (DuplicateRequest, ItemExists)):
        return 409, "request_in_progress", "The same request is being carried out right now; retry shortly.", None
    # TransientStoreError (a conflict or throttling that outlasted the retries), or any other
    # storage outcome: nothing was written, and the same request later may well succeed.
    return 429, "busy", "Too many changes at once here; nothing was changed. Retry in a second.", 1


def parse_body(app: APIGatewayRestResolver, model: type[BaseModel],
               pick: Callable[[dict[str, Any]], type[BaseModel]] | None = None) -> Any:
    """The body validated by ``model`` (or by the model ``pick`` chooses for its fields: a route
    whose body takes the form of another route's, as an exchange takes its target's hold body)."""
    raw = app.current_event.body or ""
    if app.current_event.is_base64_encoded:
        raise InvalidRequest("Send the body as plain JSON.", code="malformed_json")
    if len(raw.encode()) > MAX_BODY_BYTES:
        raise BookingErrorTooLarge()
    if too_deep(raw):
        raise InvalidRequest(f"The body nests deeper than {MAX_BODY_DEPTH} levels.", code="body_too_deep",
                             max_depth=MAX_BODY_DEPTH)
    try:
        data = json.loads(raw) if raw.strip() else None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InvalidRequest("The body is not valid JSON.", code="malformed_json") from None
    if not isinstance(data, dict):
        raise InvalidRequest("The body must be a JSON object.", code="malformed_json")
    return (pick(data) if pick is not None else model).model_validate(data)


def too_deep(raw: str, limit: int = MAX_BODY_DEPTH) -> bool:
    """Whether JSON text opens more than ``limit`` arrays or objects at once, counted on the text
    itself (brackets inside strings skipped) so that no parser ever recurses that deep."""
    depth = 0
    in_string = escaped = False
    for char in raw:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


class BookingErrorTooLarge(BookingError):
    status = 413
    code = "body_too_large"

    def __init__(self) -> None:
        super().__init__(f"The body is larger than {MAX_BODY_BYTES} bytes.")


def header(app: APIGatewayRestResolver, name: str) -> str | None:
    headers = app.current_event.headers or {}
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


def preferred_language(headers: Mapping[str, str] | None) -> str:
    """The language the request's Accept-Language prefers among those the API speaks
    (``domain/languages.preferred``)."""
    given = next((value for key, value in (headers or {}).items() if key.lower() == "accept-language"), None)
    return preferred(given)


def idempotency_key(app: APIGatewayRestResolver) -> str:
    key = header(app, "Idempotency-Key")
    if not key:
        raise InvalidRequest("The Idempotency-Key header is required.", code="idempotency_key_missing")
    if not _IDEMPOTENCY_KEY.match(key):
        raise InvalidRequest("The Idempotency-Key must be 1-128 letters, digits or ._:~+/=-", code="idempotency_key_invalid")
    return key


def customer_id(app: APIGatewayRestResolver) -> str:
    """The caller's customer id: an authorizer claim in AWS, or X-Customer-Id where configured."""
    if settings().customer_identity_source == "authorizer":
        authorizer = app.current_event.request_context.authorizer or {}
        claims = authorizer.get("claims") or {}
        value = claims.get("sub") or authorizer.get("principalId")
    else:
        value = header(app, "X-Customer-Id")
    if not value:
        raise Unauthorized("Who is asking? No customer identity came with the request.")
    if not _CUSTOMER_ID.match(value):
        raise InvalidRequest("The customer id is malformed.", code="customer_id_invalid")
    return value


_OWN_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]+$")


def verified_email(app: APIGatewayRestResolver) -> str | None:
    """The caller's own address, vouched for by their identity: the ID token's ``email`` claim
    when ``email_verified`` says so (the user pool verifies it at sign-up), or X-Customer-Email
    where the stack trusts X-Customer-Id (local only). None when there is none."""
    if settings().customer_identity_source == "authorizer":
        claims = (app.current_event.request_context.authorizer or {}).get("claims") or {}
        if str(claims.get("email_verified", "")).lower() != "true":
            return None
        value = claims.get("email")
    else:
        value = header(app, "X-Customer-Email")
    return value if isinstance(value, str) and len(value) <= 254 and _OWN_EMAIL.match(value) else None


def require_organizer(app: APIGatewayRestResolver, authenticate: Callable[[str | None], Caller]) -> Caller:
    """The organizer (and which of its keys) the request's X-Api-Key belongs to; 401 otherwise.
    The key must hold the scope the matched route needs, as the one table of them says
    (``kinds.products.route_scopes``: the core's and the products'): 403 ``scope_required``
    naming it. A key limited to some offerings may not create another (403
    ``key_limited_to_offerings``)."""
    from ..kinds.products import offering_routes, route_scopes

    method, route = app.current_event.http_method, app.current_route or app.current_event.path
    scope = scope_for(route_scopes(), method, route)   # a route the table does not name is never served
    caller = authenticate(header(app, "X-Api-Key"))
    caller.require(scope)
    app.acting = caller
    if caller.offerings is not None and (method, route) in offering_routes():
        raise Forbidden("This key is limited to some offerings and cannot create another.",
                        code="key_limited_to_offerings")
    return caller


def require_platform(app: APIGatewayRestResolver, expected_key: Callable[[], str]) -> None:
    given = header(app, "X-Api-Key") or ""
    if not given or not hmac.compare_digest(given.encode(), expected_key().encode()):
        raise Unauthorized("The platform API key (X-Api-Key) is required.")
    app.acting = "platform"


def source_ip(app: APIGatewayRestResolver) -> str:
    return app.current_event.request_context.identity.source_ip or ""


def viewer_address(app: APIGatewayRestResolver) -> str:
    """The network address a request came from: the viewer's, which the web distribution sends as
    ``CloudFront-Viewer-Address`` (``<ip>:<port>``), else the caller's own (``sourceIp``). The API's
    web ACL refuses a request that names a viewer address without the distribution's
    ``X-Holdfast-Edge`` (``viewer-address-from-edge-only``, docs/deploy.md), so a direct caller
    cannot pick the address it is counted by."""
    given = (header(app, "CloudFront-Viewer-Address") or "").strip()
    if ":" in given:
        return given.rsplit(":", 1)[0]
    if header(app, "X-Holdfast-Edge") is not None:
        # Through the distribution, the caller is a CloudFront edge that many viewers share: without
        # the viewer's own address the hold is refused (fail closed, ViewerAddressUnknown), never
        # counted against the edge's. Logged for the operator: the distribution forwards no
        # CloudFront-Viewer-Address (docs/deploy.md, "Live holds per address").
        logger.error("a hold through the distribution came without CloudFront-Viewer-Address",
                     extra={"error_type": "ViewerAddressUnknown"})
        raise ViewerAddressUnknown()
    return source_ip(app)


def log_unexpected(exc: Exception) -> None:
    logger.exception("unexpected error", extra={"error_type": type(exc).__name__})
