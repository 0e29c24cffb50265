"""A loopback stand-in of Yandex SmartCaptcha's server-side check, for the local stack (the way
the rest of this sandbox stands in for the payment provider): ``POST /smartcaptcha/validate`` takes
the form fields ``secret`` and ``token`` as the real validate API does and answers
``{"status": "ok"}`` for a token it issued, once, and ``{"status": "failed", "message": ...}``
otherwise; a wrong ``secret`` is refused as the real one refuses it (403). ``POST
/smartcaptcha/token`` issues a token: what the real widget gives a person who solved the challenge,
and what the local booking page's stand-in widget and the tests ask for.

The widget itself has a stand-in too (``widget/``): ``GET /captcha.js`` is the script the pages
load from the configured widget origin (the template's CaptchaWidgetOrigin; on AWS SmartCaptcha's),
with the same ``window.smartCaptcha.render / reset / getResponse`` the pages call, and it draws the
challenge in a frame, ``GET /smartcaptcha/frame``, whose one button asks ``/smartcaptcha/token``.
"""
from __future__ import annotations

import html
import secrets
import threading
from pathlib import Path
from urllib.parse import parse_qs

#: The stand-in widget's scripts: the page's (``/captcha.js``) and the frame's.
WIDGET = Path(__file__).with_name("widget")
#: What the frame may do: its own script, and ask its own origin for a token.
FRAME_CSP = "default-src 'none'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'"
_FRAME_WORDS = {
    "en": {"lang": "en", "title": "Check", "solve": "I am not a robot", "done": "Done: you may hold now.",
           "failed": "The check did not answer; press again."},
    "ru": {"lang": "ru", "title": "Проверка", "solve": "Я не робот", "done": "Готово: можно бронировать.",
           "failed": "Проверка не ответила; нажмите ещё раз."},
}


def widget_script(name: str) -> bytes:
    return (WIDGET / name).read_bytes()


def frame_page(language: str) -> bytes:
    """The challenge's frame, in ``language`` (``hl``: en or ru, else en)."""
    words = {key: html.escape(value) for key, value in _FRAME_WORDS.get(language, _FRAME_WORDS["en"]).items()}
    return (f'<!doctype html><html lang="{words["lang"]}"><head><meta charset="utf-8">'
            f'<title>{words["title"]}</title></head><body>'
            f'<main><button id="solve" type="button" aria-pressed="false">{words["solve"]}</button> '
            f'<span id="state" role="status" data-done="{words["done"]}" data-failed="{words["failed"]}"></span>'
            '</main><script src="/smartcaptcha/frame.js"></script></body></html>').encode()

#: The server key the local stack's captcha secret holds (devstack/aws/stack.py LOCAL_SECRETS).
SERVER_KEY = "sandbox-captcha-server-key-local-only"


class CaptchaSandbox:
    def __init__(self, server_key: str = SERVER_KEY) -> None:
        self.server_key = server_key
        self._issued: set[str] = set()
        self._lock = threading.Lock()

    def issue(self) -> str:
        token = "sbx-" + secrets.token_urlsafe(18)
        with self._lock:
            self._issued.add(token)
        return token

    def validate(self, raw: bytes) -> tuple[int, dict]:
        fields = {key: values[0] for key, values in parse_qs(raw.decode("utf-8", "replace")).items()}
        if fields.get("secret") != self.server_key:
            return 403, {"status": "failed", "message": "Authentication failed. Secret has not provided."}
        with self._lock:
            good = fields.get("token", "") in self._issued
            self._issued.discard(fields.get("token", ""))
        return 200, ({"status": "ok", "message": ""} if good else
                     {"status": "failed", "message": "Token invalid or expired."})
