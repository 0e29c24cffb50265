"""Bot protection on the holds (issue 42, finding 13): an organizer's offering
(``captcha_required``) or the whole deployment (``CAPTCHA_ON_HOLDS``) may ask every hold to carry
a solved challenge (a CAPTCHA token from the booking page's widget, ``X-Captcha-Token``). The
verifier is an adapter chosen by configuration (adapters/captcha.py: Yandex SmartCaptcha's
validate API, or the local stack's loopback stand-in of it)."""
from __future__ import annotations

from typing import Any, Iterable

from ..domain.errors import ChallengeRefused, ChallengeUnavailable
from ..ports import VerifierUnavailable
from ..ports import ChallengeVerifier


class Challenges:
    def __init__(self, verifier: ChallengeVerifier | None, always: bool = False) -> None:
        self.verifier = verifier
        #: every offering asks for one (the deployment's ``CAPTCHA_ON_HOLDS``)
        self.always = always

    def required(self, offerings: Iterable[Any]) -> bool:
        """Whether a hold of ``offerings`` must carry a solved challenge."""
        return self.always or any(bool(offering.get("captcha_required")) for offering in offerings)

    def check(self, token: str | None) -> None:
        """ChallengeRefused (``captcha_required`` / ``captcha_invalid``) unless ``token`` is a solved
        challenge; ChallengeUnavailable (503) when nobody can tell."""
        if not token:
            raise ChallengeRefused("captcha_required")
        if self.verifier is None:
            raise ChallengeUnavailable()
        try:
            solved = self.verifier.verify(token)
        except VerifierUnavailable:
            raise ChallengeUnavailable() from None
        if not solved:
            raise ChallengeRefused("captcha_invalid")
