"""HTTP front end: the /v3 provider API, the /sandbox control API and pages (/checkout, /sandbox/ledger)."""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import re
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from . import page
from .captcha import FRAME_CSP as CAPTCHA_FRAME_CSP, CaptchaSandbox
from .captcha import frame_page as captcha_frame_page, widget_script as captcha_widget_script
from .clock import SandboxClock, parse_iso
from .faults import API_BEFORE, FaultRegistry
from .models import ApiError, invalid, not_found
from .notifier import Notifier
from .store import Store

log = logging.getLogger("paysandbox")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8090
DEFAULT_SHOP_ID = "100500"
DEFAULT_SECRET_KEY = "sandbox_secret_local_only"
MAX_BODY = 1 << 20
IDEMPOTENCE_KEY_MAX = 64


class _Reply:
    """What a route produced: status, body bytes, content type, headers, and side effects."""

    def __init__(self, status: int, payload=None, *, raw: bytes | None = None,
                 content_type: str = "application/json; charset=utf-8", headers: dict | None = None,
                 events=()):
        self.status = status
        self.body = raw if raw is not None else json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.content_type = content_type
        self.headers = headers or {}
        self.events = list(events)


def _error(exc: ApiError) -> _Reply:
    return _Reply(exc.status, exc.body())


def _internal_error() -> _Reply:
    return _error(ApiError(500, "internal_server_error",
                           "Internal server error; the outcome is unknown. Repeat the request with "
                           "the same Idempotence-Key or GET the object."))


def _canonical(raw: bytes) -> str:
    if not raw.strip():
        return ""
    try:
        return json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        return "raw:" + hashlib.sha256(raw).hexdigest()


def _json_body(raw: bytes, required: bool) -> dict | None:
    if not raw.strip():
        if required:
            raise invalid("Request body is empty")
        return None
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise invalid("Malformed JSON in the request body") from None
    if not isinstance(body, dict):
        raise invalid("The request body must be a JSON object")
    return body


class SandboxServer:
    """A YooKassa API v3 compatible sandbox on loopback. Usable as a context manager."""

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *,
                 shop_id: str = DEFAULT_SHOP_ID, secret_keys=(DEFAULT_SECRET_KEY,),
                 webhook_urls=(), clock: SandboxClock | None = None, https: bool = False,
                 time_scale: float = 1.0, pending_expiry_seconds: float = 3600,
                 capture_expiry_seconds: float = 7 * 86400, idempotence_ttl_seconds: float = 86400,
                 redelivery_window_seconds: float = 86400, redelivery_base_seconds: float = 10,
                 redelivery_max_interval_seconds: float = 3600,
                 webhook_source_address: str = "127.0.0.1", webhook_timeout: float = 5.0,
                 fault_seed: int = 0, fee_percent: str = "3.5", idempotence_wait_seconds: float = 30,
                 tick_interval: float = 0.05, webhook_workers: int = 1, receipts: str = "optional",
                 receipt_registration_seconds: float = 1.0):
        if receipts not in ("required", "optional"):
            raise ValueError("receipts must be 'required' or 'optional'")
        if isinstance(secret_keys, str):
            secret_keys = [secret_keys]
        if not secret_keys:
            raise ValueError("at least one secret key is required")
        self.host, self._requested_port = host, port
        self.shop_id = str(shop_id)
        self.secret_keys = [str(k) for k in secret_keys]
        self.https = https
        self.clock = clock or SandboxClock(time_scale=time_scale)
        if clock is not None and time_scale != 1.0:
            self.clock.set_time_scale(time_scale)
        self.lock = threading.RLock()  # the one lock around all sandbox state
        self.faults = FaultRegistry(self.lock, seed=fault_seed)
        self.store = Store(self.lock, self.clock, shop_id=self.shop_id, checkout_origin="",
                           pending_expiry_seconds=pending_expiry_seconds,
                           capture_expiry_seconds=capture_expiry_seconds,
                           idempotence_ttl_seconds=idempotence_ttl_seconds, fee_percent=fee_percent,
                           receipts=receipts, receipt_seconds=receipt_registration_seconds,
                           faults=self.faults)
        self.notifier = Notifier(self.lock, self.clock, self.faults, urls=list(webhook_urls),
                                 source_address=webhook_source_address, timeout=webhook_timeout,
                                 window_seconds=redelivery_window_seconds,
                                 base_seconds=redelivery_base_seconds,
                                 max_interval_seconds=redelivery_max_interval_seconds,
                                 workers=webhook_workers)
        self.captcha = CaptchaSandbox()
        self.idempotence_wait_seconds = idempotence_wait_seconds
        self.tick_interval = tick_interval
        self.cert_path: str | None = None
        self.key_path: str | None = None
        self._ssl_context: ssl.SSLContext | None = None
        self._httpd: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []
        self._ticker_wake = threading.Event()
        self._stopping = threading.Event()
        self.clock.add_listener(self._ticker_wake.set)

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> "SandboxServer":
        if self._httpd is not None:
            return self
        if self.https:
            from .tls import make_self_signed
            self.cert_path, self.key_path = make_self_signed(self.host)
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(self.cert_path, self.key_path)
            self._ssl_context = ctx
        httpd = _HTTPServer((self.host, self._requested_port), _Handler)
        httpd.sandbox = self
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self.store.checkout_origin = self.origin
        self._stopping.clear()
        serve = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                 name="paysandbox-http", daemon=True)
        ticker = threading.Thread(target=self._tick_loop, name="paysandbox-ticker", daemon=True)
        self._threads = [serve, ticker]
        serve.start()
        ticker.start()
        self.notifier.start()
        log.info("payment sandbox listening on %s (shop id %s)", self.base_url, self.shop_id)
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._ticker_wake.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self.notifier.stop()
        for t in self._threads:
            t.join(timeout=5)
        self._httpd = None

    def __enter__(self) -> "SandboxServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        scheme = "https" if self.https else "http"
        return f"{scheme}://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v3"

    @property
    def control_url(self) -> str:
        return f"{self.origin}/sandbox"

    def reset(self) -> None:
        """Forget payments, refunds, keys, faults, deliveries; clock back to real time."""
        with self.lock:
            self.store.reset()
            self.faults.reset()
            self.notifier.reset()
        self.clock.reset()

    def run_due(self) -> None:
        """Apply due expiries now and queue their notifications."""
        self.notifier.enqueue(self.store.tick())

    def _tick_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                self.run_due()
            except Exception:  # never let the ticker die
                log.exception("ticker failed")
            self._ticker_wake.wait(self.tick_interval)
            self._ticker_wake.clear()

    # -- auth ----------------------------------------------------------------------------------
    def check_auth(self, header: str | None) -> bool:
        if not header or not header.startswith("Basic "):
            return False
        try:
            user, _, password = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8") \
                .partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return False
        ok_user = hmac.compare_digest(user.encode(), self.shop_id.encode())
        ok_pass = any(hmac.compare_digest(password.encode(), k.encode()) for k in self.secret_keys)
        return ok_user and ok_pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # bursts of concurrent clients must not hit SYN retries
    sandbox: SandboxServer

    def handle_error(self, request, client_address):  # one line, never a traceback with payloads
        import sys
        exc = sys.exc_info()[1]
        log.warning("connection error from %s: %s", client_address[0], type(exc).__name__)


# --------------------------------------------------------------------------------------------
# routing tables

_ID = r"(?P<id>[^/]+)"
API_ROUTES = [
    ("POST", re.compile(r"^/v3/payments/?$"), "POST /v3/payments", "create_payment"),
    ("GET", re.compile(r"^/v3/payments/?$"), "GET /v3/payments", "list_payments"),
    ("GET", re.compile(rf"^/v3/payments/{_ID}$"), "GET /v3/payments/{id}", "get_payment"),
    ("POST", re.compile(rf"^/v3/payments/{_ID}/capture$"), "POST /v3/payments/{id}/capture", "capture"),
    ("POST", re.compile(rf"^/v3/payments/{_ID}/cancel$"), "POST /v3/payments/{id}/cancel", "cancel"),
    ("POST", re.compile(r"^/v3/refunds/?$"), "POST /v3/refunds", "create_refund"),
    ("GET", re.compile(r"^/v3/refunds/?$"), "GET /v3/refunds", "list_refunds"),
    ("GET", re.compile(rf"^/v3/refunds/{_ID}$"), "GET /v3/refunds/{id}", "get_refund"),
    ("POST", re.compile(r"^/v3/receipts/?$"), "POST /v3/receipts", "create_receipt"),
    ("GET", re.compile(r"^/v3/receipts/?$"), "GET /v3/receipts", "list_receipts"),
    ("GET", re.compile(rf"^/v3/receipts/{_ID}$"), "GET /v3/receipts/{id}", "get_receipt"),
]

CONTROL_ROUTES = [
    ("GET", re.compile(r"^/sandbox/?$"), "c_health"),
    ("GET", re.compile(r"^/sandbox/health$"), "c_health"),
    ("POST", re.compile(r"^/sandbox/reset$"), "c_reset"),
    ("GET", re.compile(r"^/sandbox/payments$"), "c_payments"),
    ("GET", re.compile(rf"^/sandbox/payments/{_ID}$"), "c_payment"),
    ("POST", re.compile(rf"^/sandbox/payments/{_ID}/pay$"), "c_pay"),
    ("POST", re.compile(rf"^/sandbox/payments/{_ID}/decline$"), "c_decline"),
    ("GET", re.compile(r"^/sandbox/refunds$"), "c_refunds"),
    ("GET", re.compile(r"^/sandbox/receipts$"), "c_receipts"),
    ("GET", re.compile(r"^/sandbox/shop$"), "c_shop"),
    ("POST", re.compile(r"^/sandbox/shop$"), "c_set_shop"),
    ("GET", re.compile(r"^/sandbox/ledger$"), "c_ledger"),
    ("GET", re.compile(r"^/sandbox/deliveries$"), "c_deliveries"),
    ("GET", re.compile(r"^/sandbox/notifications$"), "c_notifications"),
    ("GET", re.compile(r"^/sandbox/faults$"), "c_faults"),
    ("POST", re.compile(r"^/sandbox/faults$"), "c_add_fault"),
    ("DELETE", re.compile(r"^/sandbox/faults$"), "c_clear_faults"),
    ("DELETE", re.compile(r"^/sandbox/faults/(?P<id>\d+)$"), "c_remove_fault"),
    ("GET", re.compile(r"^/sandbox/webhooks$"), "c_webhooks"),
    ("PUT", re.compile(r"^/sandbox/webhooks$"), "c_set_webhooks"),
    ("POST", re.compile(r"^/sandbox/webhooks$"), "c_add_webhook"),
    ("POST", re.compile(r"^/sandbox/webhooks/release$"), "c_release"),
    ("POST", re.compile(r"^/sandbox/webhooks/forge$"), "c_forge"),
    ("GET", re.compile(r"^/sandbox/clock$"), "c_clock"),
    ("POST", re.compile(r"^/sandbox/clock/advance$"), "c_advance"),
    ("POST", re.compile(r"^/sandbox/clock/set$"), "c_set_clock"),
    ("POST", re.compile(r"^/sandbox/clock/scale$"), "c_scale"),
]


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.0"
    server_version = "paysandbox/1.0"
    sys_version = ""

    # quiet the default stderr access log; we log one line ourselves
    def log_message(self, format, *args):  # noqa: A002
        pass

    def setup(self):
        ctx = self.server.sandbox._ssl_context
        if ctx is not None:
            self.request.settimeout(10)
            self.request = ctx.wrap_socket(self.request, server_side=True)
            self.request.settimeout(None)
        super().setup()

    def do_GET(self):
        self._handle()

    def do_POST(self):
        self._handle()

    def do_PUT(self):
        self._handle()

    def do_DELETE(self):
        self._handle()

    def do_PATCH(self):
        self._handle()

    # -- plumbing ------------------------------------------------------------------------------
    @property
    def sandbox(self) -> SandboxServer:
        return self.server.sandbox

    def _handle(self):
        self._status = None
        self._key_prefix = ""
        parts = urlsplit(self.path)
        path = parts.path
        try:
            raw = self._read_body()
            if raw is None:
                reply = _error(invalid("Request body is too large"))
            elif path == "/v3" or path.startswith("/v3/"):
                reply = self._api(path, parts.query, raw)
            elif path.startswith("/sandbox"):
                reply = self._control(path, parts.query, raw)
            elif path.startswith("/checkout/"):
                reply = self._checkout(path)
            elif path.startswith("/smartcaptcha/") or path == "/captcha.js":
                reply = self._captcha(path, raw, parts.query)
            else:
                reply = _error(not_found("Unknown route"))
        except Exception as exc:  # the server answers in the provider's shape and keeps running
            log.error("unhandled %s on %s %s", type(exc).__name__, self.command, path)
            reply = _internal_error()
        # logged before writing, so a client that has its answer also finds the log line
        log.info("%s %s %s key=%s", self.command, path, reply.status if reply is not None else "dropped",
                 self._key_prefix or "-")
        if reply is not None:
            self._write(reply)

    def _read_body(self) -> bytes | None:
        length = self.headers.get("Content-Length")
        if not length:
            return b""
        try:
            n = int(length)
        except ValueError:
            return b""
        if n > MAX_BODY:
            remaining = min(n, 16 * MAX_BODY)  # drain so the client sees our answer, not a reset
            while remaining > 0:
                chunk = self.rfile.read(min(remaining, 65536))
                if not chunk:
                    break
                remaining -= len(chunk)
            self.close_connection = True
            return None
        return self.rfile.read(n) if n > 0 else b""

    def _write(self, reply: _Reply) -> None:
        self._status = reply.status
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            for k, v in reply.headers.items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(reply.body)
        except OSError:
            pass

    def _drop(self) -> None:
        """Close the connection without any HTTP response."""
        self.close_connection = True
        try:
            self.wfile.flush()
        except OSError:
            pass

    # -- provider API --------------------------------------------------------------------------
    def _api(self, path: str, query: str, raw: bytes) -> _Reply | None:
        sb = self.sandbox
        if not sb.check_auth(self.headers.get("Authorization")):
            return _error(ApiError(401, "invalid_credentials",
                                   "Authentication by the given shop id and secret key failed"))
        for method, rx, route, op in API_ROUTES:
            m = rx.match(path)
            if m and method == self.command:
                break
        else:
            return _error(not_found("Unknown route"))
        obj_id = m.groupdict().get("id")
        key = self.headers.get("Idempotence-Key")
        if self.command == "POST":
            if not key:
                return _error(invalid("Idempotence-Key header is required", "Idempotence-Key"))
            self._key_prefix = key[:8]
            if len(key) > IDEMPOTENCE_KEY_MAX:
                return _error(invalid(f"Idempotence-Key is longer than {IDEMPOTENCE_KEY_MAX} characters",
                                      "Idempotence-Key"))
        terminal, delay = sb.faults.pick_api(route)
        if terminal is not None and terminal.kind in API_BEFORE:
            if delay:
                time.sleep(delay)
            return self._before_fault(terminal)
        qs = dict(parse_qsl(query, keep_blank_values=True))

        if self.command != "POST":
            if delay:
                time.sleep(delay)
            reply = self._execute(op, obj_id, qs, raw)
        else:
            fingerprint = "|".join([sb.shop_id, self.command, path.rstrip("/"), _canonical(raw)])
            while True:
                action, rec = sb.store.idem_begin(key, fingerprint)
                if action == "conflict":
                    return _error(invalid("This Idempotence-Key was already used with another request",
                                          "Idempotence-Key"))
                if action == "wait":
                    if not rec.done.wait(sb.idempotence_wait_seconds):
                        return _internal_error()
                    continue
                break
            if delay:
                time.sleep(delay)
            if action == "replay":
                reply = _Reply(rec.status, raw=rec.body)
            else:
                try:
                    reply = self._execute(op, obj_id, qs, raw)
                except BaseException:
                    sb.store.idem_abort(key, rec)
                    raise
                if reply.status >= 500:
                    sb.store.idem_abort(key, rec)
                else:
                    sb.store.idem_finish(key, rec, reply.status, reply.body)
        if terminal is not None and terminal.kind == "error_500_after":
            return _internal_error()
        if terminal is not None and terminal.kind == "drop_response_after":
            self._status = None
            self._drop()
            return None
        return reply

    def _before_fault(self, fault) -> _Reply:
        kind = fault.kind
        if kind == "error_500_before":
            return _internal_error()
        if kind == "too_many_requests":
            return _error(ApiError(429, "too_many_requests", "Too many requests, slow down",
                                   retry_after=fault.params["retry_after"]))
        if kind == "accepted_202":
            return _Reply(202, {"type": "processing", "description": "Request accepted for processing",
                                "retry_after": fault.params["retry_after"]})
        return _Reply(502, raw=page.bad_gateway_page().encode(), content_type="text/html")

    def _execute(self, op: str, obj_id: str | None, qs: dict, raw: bytes) -> _Reply:
        sb = self.sandbox
        store = sb.store
        sb.notifier.enqueue(store.tick())  # lazy expiry on every access
        try:
            if op in ("list_payments", "list_refunds", "list_receipts"):
                return _Reply(200, getattr(store, op)(qs))
            if qs:
                raise invalid(f"Unknown parameter {next(iter(qs))[:40]}")
            if op == "get_payment":
                return _Reply(200, store.get_payment(obj_id))
            if op == "get_refund":
                return _Reply(200, store.get_refund(obj_id))
            if op == "get_receipt":
                return _Reply(200, store.get_receipt(obj_id))
            if op == "create_receipt":
                return _Reply(200, store.create_receipt(_json_body(raw, required=True)))
            if op == "create_payment":
                return _Reply(200, store.create_payment(_json_body(raw, required=True)))
            if op == "create_refund":
                obj, events = store.create_refund(_json_body(raw, required=True))
            elif op == "capture":
                obj, events = store.capture(obj_id, _json_body(raw, required=False))
            elif op == "cancel":
                _json_body(raw, required=False)
                obj, events = store.cancel(obj_id)
            else:  # pragma: no cover - table and dispatcher out of step
                raise not_found("Unknown route")
        except ApiError as exc:
            return _error(exc)
        sb.notifier.enqueue(events)
        return _Reply(200, obj)

    # -- payment page --------------------------------------------------------------------------
    def _captcha(self, path: str, raw: bytes, query: str = "") -> _Reply:
        """The challenge verifier's stand-in (captcha.py): its validate API, its tokens and its widget."""
        script = "text/javascript; charset=utf-8"
        if self.command == "GET" and path == "/captcha.js":
            return _Reply(200, raw=captcha_widget_script("captcha.js"), content_type=script)
        if self.command == "GET" and path == "/smartcaptcha/frame.js":
            return _Reply(200, raw=captcha_widget_script("frame.js"), content_type=script)
        if self.command == "GET" and path == "/smartcaptcha/frame":
            language = dict(parse_qsl(query)).get("hl", "en")
            return _Reply(200, raw=captcha_frame_page(language), content_type="text/html; charset=utf-8",
                          headers={"Content-Security-Policy": CAPTCHA_FRAME_CSP, "Cache-Control": "no-store"})
        if self.command == "POST" and path == "/smartcaptcha/validate":
            status, payload = self.sandbox.captcha.validate(raw)
            return _Reply(status, payload)
        if self.command == "POST" and path == "/smartcaptcha/token":
            return _Reply(200, {"token": self.sandbox.captcha.issue()}, headers={"Cache-Control": "no-store"})
        return _error(not_found("Unknown route"))

    def _checkout(self, path: str) -> _Reply:
        sb = self.sandbox
        m = re.match(rf"^/checkout/{_ID}(?:/(?P<action>pay|decline))?/?$", path)
        html = "text/html; charset=utf-8"
        wrong_method = self.command not in ("GET", "POST") or (self.command == "POST") != bool(
            m and m.group("action"))
        if not m or wrong_method:
            return _Reply(404, raw=page.not_found_page().encode(), content_type=html)
        sb.run_due()
        pid, action = m.group("id"), m.group("action")
        try:
            if action is None:
                return _Reply(200, raw=page.checkout_page(sb.store.get_payment(pid),
                                                          sb.store.all_receipts(pid)).encode(),
                              content_type=html)
            if action == "pay":
                obj, events = sb.store.customer_pays(pid)
                message = "Payment confirmed"
            else:
                obj, events = sb.store.customer_declines(pid)
                message = "Payment declined"
        except ApiError as exc:
            if exc.status == 404:
                return _Reply(404, raw=page.not_found_page().encode(), content_type=html)
            current = sb.store.get_payment(pid)
            return _Reply(409, raw=page.result_page(current, "Nothing to do").encode(), content_type=html)
        sb.notifier.enqueue(events)
        with sb.lock:
            return_url = sb.store.payments[pid].return_url
        if return_url:
            return _Reply(303, raw=b"", content_type=html, headers={"Location": return_url})
        return _Reply(200, raw=page.result_page(obj, message, sb.store.all_receipts(pid)).encode(),
                      content_type=html)

    # -- control API ---------------------------------------------------------------------------
    def _control(self, path: str, query: str, raw: bytes) -> _Reply:
        for method, rx, op in CONTROL_ROUTES:
            m = rx.match(path)
            if m and method == self.command:
                break
        else:
            return _error(not_found("Unknown control route"))
        qs = dict(parse_qsl(query, keep_blank_values=True))
        try:
            body = _json_body(raw, required=False) or {}
            return getattr(self, op)(m.groupdict().get("id"), qs, body)
        except ApiError as exc:
            return _error(exc)

    def c_health(self, _id, qs, body):
        sb = self.sandbox
        return _Reply(200, {"status": "ok", "base_url": sb.base_url, "control_url": sb.control_url,
                            "shop_id": sb.shop_id, "https": sb.https, "clock": sb.clock.snapshot()})

    def c_reset(self, _id, qs, body):
        self.sandbox.reset()
        return _Reply(200, {"status": "reset"})

    def c_payments(self, _id, qs, body):
        meta = {k[len("metadata."):]: v for k, v in qs.items() if k.startswith("metadata.")}
        items = self.sandbox.store.find_payments(meta, qs.get("status"))
        return _Reply(200, {"items": items, "count": len(items)})

    def c_payment(self, pid, qs, body):
        self.sandbox.run_due()
        return _Reply(200, self.sandbox.store.get_payment(pid))

    def c_pay(self, pid, qs, body):
        self.sandbox.run_due()
        obj, events = self.sandbox.store.customer_pays(pid)
        self.sandbox.notifier.enqueue(events)
        return _Reply(200, obj)

    def c_decline(self, pid, qs, body):
        self.sandbox.run_due()
        obj, events = self.sandbox.store.customer_declines(pid, body.get("reason"), body.get("party"))
        self.sandbox.notifier.enqueue(events)
        return _Reply(200, obj)

    def c_refunds(self, _id, qs, body):
        items = self.sandbox.store.all_refunds(qs.get("payment_id"))
        return _Reply(200, {"items": items, "count": len(items)})

    def c_receipts(self, _id, qs, body):
        self.sandbox.run_due()
        items = self.sandbox.store.all_receipts(qs.get("payment_id"))
        return _Reply(200, {"items": items, "count": len(items)})

    def c_shop(self, _id, qs, body):
        return _Reply(200, self.sandbox.store.shop())

    def c_set_shop(self, _id, qs, body):
        unknown = set(body) - {"receipts"}
        if unknown:
            raise invalid(f"Unknown shop setting {sorted(unknown)[0][:40]}", sorted(unknown)[0][:40])
        if "receipts" not in body:
            raise invalid("receipts is required: required or optional", "receipts")
        return _Reply(200, self.sandbox.store.set_receipts_mode(body["receipts"]))

    def c_ledger(self, _id, qs, body):
        """Every payment with its refunds and receipts, as a page (newest first)."""
        sb = self.sandbox
        sb.run_due()
        store = sb.store
        rows = []
        for payment in reversed(store.find_payments({})):
            rows.append((payment, store.all_refunds(payment["id"]), store.all_receipts(payment["id"])))
        return _Reply(200, raw=page.ledger_page(rows, store.shop()).encode(),
                      content_type="text/html; charset=utf-8")

    def c_deliveries(self, _id, qs, body):
        items = self.sandbox.notifier.deliveries(qs.get("event"), qs.get("object_id"))
        return _Reply(200, {"items": items, "count": len(items), **self.sandbox.notifier.status()})

    def c_notifications(self, _id, qs, body):
        with self.sandbox.lock:
            items = [dict(n) for n in self.sandbox.notifier.notifications]
        return _Reply(200, {"items": items, "count": len(items)})

    def c_faults(self, _id, qs, body):
        items = self.sandbox.faults.list()
        return _Reply(200, {"items": items, "count": len(items)})

    def c_add_fault(self, _id, qs, body):
        return _Reply(200, self.sandbox.faults.add(body))

    def c_clear_faults(self, _id, qs, body):
        self.sandbox.faults.reset()
        return _Reply(200, {"items": [], "count": 0})

    def c_remove_fault(self, fid, qs, body):
        if not self.sandbox.faults.remove(int(fid)):
            raise not_found("Fault not found")
        return _Reply(200, {"removed": int(fid)})

    def c_webhooks(self, _id, qs, body):
        return _Reply(200, self.sandbox.notifier.status())

    def c_set_webhooks(self, _id, qs, body):
        urls = body.get("urls")
        if not isinstance(urls, list):
            raise invalid("urls must be a list", "urls")
        return _Reply(200, {"urls": self.sandbox.notifier.set_urls(urls)})

    def c_add_webhook(self, _id, qs, body):
        url = body.get("url")
        with self.sandbox.lock:
            urls = self.sandbox.notifier.urls + [url]
        return _Reply(200, {"urls": self.sandbox.notifier.set_urls(urls)})

    def c_release(self, _id, qs, body):
        n = self.sandbox.notifier.release(body.get("match"), body.get("order", "fifo"))
        return _Reply(200, {"released": n})

    def c_forge(self, _id, qs, body):
        object_id = body.get("object_id") or body.get("payment_id")
        found = self.sandbox.store.current_object(object_id or "")
        if not found:
            raise not_found("Object not found")
        obj = self.sandbox.notifier.forge(found[1], body.get("event", "payment.succeeded"))
        return _Reply(200, {"forged": obj})

    def c_clock(self, _id, qs, body):
        return _Reply(200, self.sandbox.clock.snapshot())

    def c_advance(self, _id, qs, body):
        seconds = body.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
            raise invalid("seconds must be a non-negative number", "seconds")
        self.sandbox.clock.advance(seconds)
        self.sandbox.run_due()
        return _Reply(200, self.sandbox.clock.snapshot())

    def c_set_clock(self, _id, qs, body):
        try:
            when = parse_iso(str(body.get("now", "")))
        except ValueError:
            raise invalid("now must be an ISO-8601 timestamp", "now") from None
        self.sandbox.clock.set(when)
        self.sandbox.run_due()
        return _Reply(200, self.sandbox.clock.snapshot())

    def c_scale(self, _id, qs, body):
        scale = body.get("time_scale")
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale <= 0:
            raise invalid("time_scale must be a positive number", "time_scale")
        self.sandbox.clock.set_time_scale(scale)
        return _Reply(200, self.sandbox.clock.snapshot())
