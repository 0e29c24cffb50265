"""The local inbox at /dev/mail: every message the stack's functions sent through SES, as the
customer would see it. A development tool of the local stack only; template.yaml declares no such
route and nothing under layers/ or functions/ knows of it.

The functions send through the deployed SES adapter (holdfast/adapters/aws.py) to the emulator,
which keeps every accepted message: a ``Simple`` one as its subject and body, a ``Raw`` one as the
whole MIME text. That is the store of sent mail; this module reads it (moto's
``ses_backends[account][region].sent_messages``, an internal list: moto is pinned) and turns each
message into subject, text, HTML and attachments (name, type, bytes).

  GET  /dev/mail                           the messages, listed per address (a page)
  GET  /dev/mail/messages[?to=address]     the same as JSON
  GET  /dev/mail/<id>                      one message: its text, its HTML in a sandboxed frame, its attachments
  GET  /dev/mail/<id>/html                 the HTML alone, under a CSP that sandboxes it and loads nothing
                                           from elsewhere (its cid: images point at its own attachments)
  GET  /dev/mail/<id>/attachments/<n>      an attachment, as a download
  POST /dev/mail/bounce                    {"address", "kind": "bounce" | "complaint"} (JSON or a form):
                                           publishes the event SES would to the configuration set's topic,
                                           which delivers it to the feedback function like any SNS message
"""
from __future__ import annotations

import email
import email.policy
import json
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from html import escape
from typing import Any, Callable, Mapping
from urllib.parse import parse_qs, quote

PREFIX = "/dev/mail"
#: The message's own HTML: sandboxed (no script, no form, no top navigation, a unique origin),
#: images only its own attachments or data: URIs, nothing fetched from the internet.
MESSAGE_CSP = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"
PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; img-src 'self' data:; form-action 'self'"

Answer = tuple[int, dict[str, str], bytes]


@dataclass
class Attachment:
    name: str
    content_type: str
    data: bytes
    content_id: str = ""


@dataclass
class SentMessage:
    message_id: str
    source: str
    to: list[str]
    subject: str
    text: str
    html: str | None = None
    attachments: list[Attachment] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"id": self.message_id, "from": self.source, "to": self.to, "subject": self.subject,
                "text": self.text, "has_html": self.html is not None,
                "attachments": [{"name": a.name, "type": a.content_type, "size": len(a.data)} for a in self.attachments]}


def parse_raw(message_id: str, source: str, destinations: list[str], raw: str | bytes) -> SentMessage:
    """A MIME message as the customer's client shows it: the first text/plain and text/html bodies,
    every other leaf part (a file, an inline image) an attachment."""
    parsed = email.message_from_bytes(raw.encode() if isinstance(raw, str) else raw, policy=email.policy.default)
    text, html, attachments = "", None, []
    for part in parsed.walk():
        if part.is_multipart():
            continue
        kind = part.get_content_type()
        disposition = part.get_content_disposition()
        if kind == "text/plain" and disposition != "attachment" and not text:
            text = part.get_content()
        elif kind == "text/html" and disposition != "attachment" and html is None:
            html = part.get_content()
        else:
            data = part.get_payload(decode=True) or b""
            name = part.get_filename() or f"part-{len(attachments) + 1}"
            attachments.append(Attachment(name, kind, data, (part.get("Content-ID") or "").strip("<> ")))
    to = destinations or [address.strip() for address in str(parsed.get("To", "")).split(",") if address.strip()]
    return SentMessage(message_id, source or str(parsed.get("From", "")), to, str(parsed.get("Subject", "")),
                       text, html, attachments)


def sent_messages(account_id: str, region: str) -> list[SentMessage]:
    """Every message the emulator's SES accepted in the region, oldest first."""
    from moto.ses.models import Message, RawMessage, ses_backends

    found = []
    for sent in list(ses_backends[account_id][region].sent_messages):
        if isinstance(sent, RawMessage):
            found.append(parse_raw(sent.id, sent.source, list(sent.destinations or []), sent.raw_data))
        elif isinstance(sent, Message):
            to = [a for addresses in (sent.destinations or {}).values() for a in addresses]
            # SES v2 Simple content: moto keeps one body (the HTML when there was one)
            is_html = sent.body.lstrip().lower().startswith(("<!doctype", "<html"))
            found.append(SentMessage(sent.id, sent.source, to, sent.subject, "" if is_html else sent.body,
                                     sent.body if is_html else None))
    return found


def bounce_event(address: str, kind: str, sender: str, configuration_set: str, account_id: str) -> dict[str, Any]:
    """The event SES publishes to a configuration set's SNS destination (event publishing format)."""
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    mail = {"timestamp": now, "source": sender, "sendingAccountId": account_id, "messageId": str(uuid.uuid4()),
            "destination": [address], "tags": {"ses:configuration-set": [configuration_set]}}
    if kind == "complaint":
        return {"eventType": "Complaint", "mail": mail, "complaint": {
            "feedbackId": str(uuid.uuid4()), "timestamp": now, "complaintFeedbackType": "abuse",
            "complainedRecipients": [{"emailAddress": address}]}}
    return {"eventType": "Bounce", "mail": mail, "bounce": {
        "feedbackId": str(uuid.uuid4()), "timestamp": now, "bounceType": "Permanent", "bounceSubType": "General",
        "reportingMTA": "dns; localhost", "bouncedRecipients": [{
            "emailAddress": address, "action": "failed", "status": "5.1.1",
            "diagnosticCode": "smtp; 550 5.1.1 user unknown (simulated by the local stack)"}]}}


def _json(status: int, payload: Any) -> Answer:
    return status, {"Content-Type": "application/json"}, json.dumps(payload).encode()


def _page(title: str, body: str, status: int = 200) -> Answer:
    html = (f'<!doctype html><html><head><meta charset="utf-8"><title>{escape(title)}</title>'
            '<style>body{font-family:sans-serif;max-width:60rem;margin:1rem auto}pre{white-space:pre-wrap;'
            'background:#f4f4f4;padding:.5rem}iframe{width:100%;height:30rem;border:1px solid #ccc}'
            'td,th{padding:.2rem .6rem;text-align:left}</style></head>'
            f'<body><p><a href="{PREFIX}">All mail</a> (local stack only)</p><h1>{escape(title)}</h1>{body}</body></html>')
    return status, {"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": PAGE_CSP}, html.encode()


class LocalInbox:
    """Callable by the API stand-in: ``(method, path, headers, query, body) -> (status, headers, bytes)``."""

    def __init__(self, messages: Callable[[], list[SentMessage]], publish_feedback: Callable[[dict[str, Any]], None],
                 sender: str, configuration_set: str, account_id: str) -> None:
        self._messages = messages
        self._publish = publish_feedback
        self.sender = sender
        self.configuration_set = configuration_set
        self.account_id = account_id

    def __call__(self, method: str, path: str, headers: Mapping[str, str], query: Mapping[str, list[str]],
                 body: bytes) -> Answer:
        rest = path[len(PREFIX):].strip("/")
        if rest == "bounce":
            if method != "POST":
                return _json(405, {"error": {"code": "method_not_allowed", "message": "POST a bounce"}})
            return self._bounce(headers, body)
        if method not in ("GET", "HEAD"):
            return _json(405, {"error": {"code": "method_not_allowed", "message": f"{method} is not allowed on {path}"}})
        if rest == "":
            return self._list_page()
        if rest == "messages":
            wanted = (query.get("to") or [""])[-1].lower()
            return _json(200, {"messages": [m.summary() for m in self._messages()
                                            if not wanted or wanted in (a.lower() for a in m.to)]})
        parts = rest.split("/")
        message = next((m for m in self._messages() if m.message_id == parts[0]), None)
        if message is None:
            return _json(404, {"error": {"code": "message_not_found", "message": "no such message"}})
        if len(parts) == 1:
            return self._message_page(message)
        if parts[1:] == ["html"] and message.html is not None:
            return 200, {"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": MESSAGE_CSP,
                         "X-Content-Type-Options": "nosniff"}, self._with_own_images(message).encode()
        if len(parts) == 3 and parts[1] == "attachments" and parts[2].isdigit() \
                and int(parts[2]) < len(message.attachments):
            attachment = message.attachments[int(parts[2])]
            return 200, {"Content-Type": attachment.content_type, "Content-Security-Policy": MESSAGE_CSP,
                         "X-Content-Type-Options": "nosniff",
                         "Content-Disposition": f"attachment; filename*=UTF-8''{quote(attachment.name)}"}, attachment.data
        return _json(404, {"error": {"code": "part_not_found", "message": "no such part of the message"}})

    def _with_own_images(self, message: SentMessage) -> str:
        html = message.html or ""
        for number, attachment in enumerate(message.attachments):
            if attachment.content_id:
                html = html.replace(f"cid:{attachment.content_id}",
                                    f"{PREFIX}/{message.message_id}/attachments/{number}")
        return html

    def _list_page(self) -> Answer:
        by_address: dict[str, list[SentMessage]] = {}
        for message in self._messages():
            for address in message.to or ["(no recipient)"]:
                by_address.setdefault(address.lower(), []).append(message)
        if not by_address:
            return _page("Local mail", "<p>Nothing sent yet.</p>")
        sections = []
        for address in sorted(by_address):
            rows = "".join(
                f'<tr><td><a href="{PREFIX}/{quote(m.message_id)}">{escape(m.subject or "(no subject)")}</a></td>'
                f'<td>{"HTML" if m.html is not None else "text"}</td><td>{len(m.attachments)}</td></tr>'
                for m in reversed(by_address[address]))
            sections.append(
                f'<h2>{escape(address)}</h2><form method="post" action="{PREFIX}/bounce">'
                f'<input type="hidden" name="address" value="{escape(address)}">'
                '<button name="kind" value="bounce">Simulate a bounce</button> '
                '<button name="kind" value="complaint">Simulate a complaint</button></form>'
                f'<table><tr><th>subject</th><th>body</th><th>attachments</th></tr>{rows}</table>')
        return _page("Local mail", "".join(sections))

    def _message_page(self, message: SentMessage) -> Answer:
        files = "".join(f'<li><a href="{PREFIX}/{quote(message.message_id)}/attachments/{n}" download>'
                        f'{escape(a.name)}</a> ({escape(a.content_type)}, {len(a.data)} bytes)</li>'
                        for n, a in enumerate(message.attachments))
        frame = (f'<h2>HTML</h2><iframe sandbox src="{PREFIX}/{quote(message.message_id)}/html" '
                 'referrerpolicy="no-referrer"></iframe>') if message.html is not None else ""
        body = (f'<p>From {escape(message.source)} to {escape(", ".join(message.to))}</p>{frame}'
                f'<h2>Text</h2><pre>{escape(message.text)}</pre>'
                + (f"<h2>Attachments</h2><ul>{files}</ul>" if files else ""))
        return _page(message.subject or "(no subject)", body)

    def _bounce(self, headers: Mapping[str, str], body: bytes) -> Answer:
        kind_of_body = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
        try:
            if kind_of_body == "application/x-www-form-urlencoded":
                fields = {k: v[-1] for k, v in parse_qs(body.decode()).items()}
            else:
                fields = json.loads(body or b"{}")
        except (ValueError, UnicodeDecodeError):
            fields = None
        address = str((fields or {}).get("address", "")) if isinstance(fields, dict) else ""
        kind = str(fields.get("kind", "bounce")) if isinstance(fields, dict) else ""
        if not re.fullmatch(r"[^@\s]+@[^@\s]+", address) or kind not in ("bounce", "complaint"):
            return _json(400, {"error": {"code": "validation_error",
                                         "message": "address (an address) and kind (bounce or complaint) are required"}})
        self._publish(bounce_event(address, kind, self.sender, self.configuration_set, self.account_id))
        if kind_of_body == "application/x-www-form-urlencoded":
            return 303, {"Location": PREFIX, "Content-Type": "text/plain"}, b""
        return _json(202, {"published": kind})
