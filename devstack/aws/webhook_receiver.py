"""The local webhook receiver at /dev/webhooks: an endpoint organizers' webhooks can be pointed at on
the local stack, and a page showing what arrived. A development tool of the local stack only:
template.yaml declares no such route and nothing under layers/ or functions/ knows of it (the
stack reaches it because its ``WebhookLocalNetworks`` lets webhooks use plain http to 127.0.0.0/8).

  POST /dev/webhooks/receiver[/<name>]      a receiver: records the request (its headers and body, at
                                            the stack's clock) and answers the status its mode says
                                            (200 unless set); each name is a receiver of its own
  GET  /dev/webhooks                        the page: what arrived, newest first; POSTed the form with
                                            an endpoint's secret, whether each signature checks out
  GET  /dev/webhooks/arrivals[?receiver=]   the same as JSON
  POST /dev/webhooks/mode                   {"receiver"?: name, "status": 200-599}: what that receiver
                                            answers from now (a receiver that is down answers 503)
"""
from __future__ import annotations

import json
import threading
import time
from html import escape
from typing import Any, Callable, Mapping
from urllib.parse import parse_qs

from holdfast.domain import webhooks as rules

PREFIX = "/dev/webhooks"
RECEIVER = PREFIX + "/receiver"
PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"
#: The most arrivals kept (oldest dropped first): a development page, not a store.
KEEP = 2000

Answer = tuple[int, dict[str, str], bytes]


class WebhookReceiver:
    def __init__(self, now: Callable[[], float] = time.time) -> None:
        self.now = now
        self._lock = threading.Lock()
        self._arrivals: list[dict[str, Any]] = []
        self._modes: dict[str, int] = {}

    # -- what tests and the page read ------------------------------------------------------------
    def arrivals(self, receiver: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(a) for a in self._arrivals if receiver is None or a["receiver"] == receiver]

    def set_mode(self, receiver: str, status: int) -> None:
        with self._lock:
            self._modes[receiver] = int(status)

    # -- the HTTP side ---------------------------------------------------------------------------
    def page(self, method: str, path: str, headers: Mapping[str, str], query: Mapping[str, list[str]],
             body: bytes) -> Answer:
        if path == RECEIVER or path.startswith(RECEIVER + "/"):
            if method != "POST":
                return _json(405, {"error": {"code": "method_not_allowed", "message": "the receiver takes POST"}})
            return self._receive(path[len(RECEIVER):].strip("/") or "default", headers, body)
        if path == PREFIX + "/mode" and method == "POST":
            try:
                payload = json.loads(body or b"{}")
                status = int(payload["status"])
                if not 200 <= status <= 599:
                    raise ValueError
            except (ValueError, KeyError, TypeError):
                return _json(400, {"error": {"code": "body_invalid", "message": '{"receiver"?, "status": 200-599}'}})
            self.set_mode(str(payload.get("receiver") or "default"), status)
            return _json(200, {"receiver": str(payload.get("receiver") or "default"), "status": status})
        if path == PREFIX + "/arrivals" and method in ("GET", "HEAD"):
            return _json(200, {"arrivals": self.arrivals((query.get("receiver") or [None])[0])})
        if path.rstrip("/") == PREFIX and method in ("GET", "HEAD", "POST"):
            # the secret comes in a form's body, never in the address (kept out of history and logs)
            form = parse_qs(body.decode("utf-8", "replace")) if method == "POST" else {}
            return 200, {"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": PAGE_CSP}, \
                self._html((form.get("secret") or [""])[0]).encode()
        return _json(404, {"error": {"code": "route_not_found", "message": f"no route for {method} {path}"}})

    def _receive(self, receiver: str, headers: Mapping[str, str], body: bytes) -> Answer:
        arrival = {"receiver": receiver, "at": self.now(),
                   "delivery_id": headers.get(rules.DELIVERY_HEADER), "type": headers.get(rules.EVENT_TYPE_HEADER),
                   "signature": headers.get(rules.SIGNATURE_HEADER), "body": body.decode("utf-8", "replace")}
        with self._lock:
            status = self._modes.get(receiver, 200)
            arrival["answered"] = status
            self._arrivals.append(arrival)
            del self._arrivals[:-KEEP]
        return _json(status, {"received": status < 300})

    def _html(self, secret: str) -> str:
        rows = []
        for arrival in reversed(self.arrivals()):
            if secret:
                good = rules.verify(secret, arrival["signature"] or "", arrival["body"], now=arrival["at"])
                check = "valid" if good else "does not match"
            else:
                check = "enter the endpoint's secret to check"
            moment = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(arrival["at"]))
            rows.append(
                f"<tr><td>{escape(moment)}</td><td>{escape(arrival['receiver'])}</td>"
                f"<td><code>{escape(str(arrival['delivery_id']))}</code></td><td>{escape(str(arrival['type']))}</td>"
                f"<td>{arrival['answered']}</td><td>{escape(check)}</td>"
                f"<td><pre>{escape(arrival['body'])}</pre></td></tr>")
        table = ("<table><caption>Requests received, newest first</caption><thead><tr>"
                 "<th scope='col'>Arrived (UTC, stack clock)</th><th scope='col'>Receiver</th>"
                 "<th scope='col'>Delivery id</th><th scope='col'>Event</th><th scope='col'>Answered</th>"
                 "<th scope='col'>Signature</th><th scope='col'>Body</th></tr></thead><tbody>"
                 + "".join(rows) + "</tbody></table>") if rows else "<p>Nothing has arrived yet.</p>"
        return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
                "<meta name='viewport' content='width=device-width, initial-scale=1'>"
                "<title>Local webhook receiver</title><style>body{font:15px system-ui,sans-serif;margin:1.5rem}"
                "table{border-collapse:collapse}td,th{border:1px solid #888;padding:.3rem;vertical-align:top;text-align:left}"
                "pre{white-space:pre-wrap;max-width:40rem;margin:0}</style></head><body><main>"
                "<h1>Local webhook receiver</h1>"
                f"<p>Register <code>http://127.0.0.1:&lt;port&gt;{RECEIVER}</code> (or <code>{RECEIVER}/&lt;name&gt;</code>) "
                "as a webhook URL on this stack; what it receives is listed here.</p>"
                "<form method='post'><label for='secret'>Endpoint secret</label> "
                f"<input id='secret' name='secret' type='password' value='{escape(secret, quote=True)}'> "
                "<button type='submit'>Check signatures</button></form>"
                f"{table}</main></body></html>")


def _json(status: int, payload: Any) -> Answer:
    return status, {"Content-Type": "application/json"}, json.dumps(payload).encode()
