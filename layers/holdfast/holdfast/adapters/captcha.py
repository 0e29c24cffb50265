"""The challenge (CAPTCHA) verifier: Yandex SmartCaptcha's server-side check, over its validate
API (``POST <url>`` with ``secret``, ``token`` and, when known, the user's ``ip``; the answer's
``status`` is ``ok`` for a token the widget gave a person who solved the challenge). The local
stack points ``CAPTCHA_VERIFY_URL`` at the payment sandbox's loopback stand-in of the same API;
this module never knows which it talks to.

A token is good once: a repeat of a hold request is told from its first answer by the hold's own
idempotency record, never by checking the token again (services/challenges.py).
"""
from __future__ import annotations

import json
from typing import Callable
from urllib.parse import urlencode

import urllib3

from ..ports import VerifierUnavailable

#: The check must answer within the hold's own budget; the provider answers in milliseconds.
TIMEOUT_SECONDS = 3.0


class SmartCaptchaVerifier:
    def __init__(self, url: str, server_key: Callable[[], str], timeout: float = TIMEOUT_SECONDS) -> None:
        self.url = url
        self.server_key = server_key
        self.timeout = timeout
        self.pool = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(total=timeout))

    def verify(self, token: str, ip: str | None = None) -> bool:
        """Whether ``token`` is a solved challenge; VerifierUnavailable when the verifier cannot tell."""
        fields = {"secret": self.server_key(), "token": token, **({"ip": ip} if ip else {})}
        try:
            answer = self.pool.request("POST", self.url, body=urlencode(fields),
                                       headers={"Content-Type": "application/x-www-form-urlencoded"})
        except urllib3.exceptions.HTTPError as exc:
            raise VerifierUnavailable(type(exc).__name__) from None
        if answer.status != 200:
            # the provider answers 200 with status "failed" for a bad token; anything else is its trouble
            raise VerifierUnavailable(f"verifier answered {answer.status}")
        try:
            status = json.loads(answer.data or b"{}").get("status")
        except (ValueError, AttributeError):
            raise VerifierUnavailable("verifier answered something that is not JSON") from None
        return status == "ok"
