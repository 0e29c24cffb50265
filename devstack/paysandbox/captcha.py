"""A loopback stand-in of Yandex SmartCaptcha's server-side check, for the local stack (the way
the rest of this sandbox stands in for the payment provider): ``POST /smartcaptcha/validate`` takes
the form fields ``secret`` and ``token`` as the real validate API does and answers
``{"status": "ok"}`` for a token it issued, once, and ``{"status": "failed", "message": ...}``
otherwise; a wrong ``secret`` is refused as the real one refuses it (403). ``POST
/smartcaptcha/token`` issues a token: what the real widget gives a person who solved the challenge,
and what the local booking page's stand-in widget and the tests ask for.
"""
from __future__ import annotations

import secrets
import threading
from urllib.parse import parse_qs

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
