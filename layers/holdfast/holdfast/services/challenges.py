"""Bot protection on the holds (issue 42, finding 13): an organizer's offering
(``captcha_required``) or the whole deployment (``CAPTCHA_ON_HOLDS``) may ask every hold to carry
a solved challenge (a CAPTCHA token from the booking page's widget, ``X-Captcha-Token``). The
verifier is an adapter chosen by configuration (adapters/captcha.py: Yandex SmartCaptcha's
validate API, or the local stack's loopback stand-in of it).

``required`` is the one rule of when a hold must carry one: the hold path applies it and every
offering's view (an event's, a service's, a lot's) says ``captcha_required`` by it, with where the
page loads the widget from, so a page never learns of the challenge from a refused hold."""
from __future__ import annotations

from typing import Any, Iterable

from ..domain.errors import ChallengeRefused, ChallengeUnavailable
from ..ports import VerifierUnavailable
from ..ports import ChallengeVerifier


#: The widget's script, under its origin (SmartCaptcha's, or the local stack's stand-in of it).
WIDGET_SCRIPT = "/captcha.js"


class Challenges:
    def __init__(self, verifier: ChallengeVerifier | None, always: bool = False,
                 widget_origin: str = "", site_key: str = "") -> None:
        self.verifier = verifier
        #: every offering asks for one (the deployment's ``CAPTCHA_ON_HOLDS``)
        self.always = always
        #: where the pages load the widget from, and its public client key (the deployment's)
        self.widget_origin = widget_origin.rstrip("/")
        self.site_key = site_key

    def required(self, offerings: Iterable[Any]) -> bool:
        """Whether a hold of ``offerings`` must carry a solved challenge."""
        return self.always or any(bool(offering.get("captcha_required")) for offering in offerings)

    def view(self, offering: Any) -> dict[str, Any]:
        """What an offering's view says of challenges, by ``required``: nothing when its holds need
        none; else ``captcha_required`` and the widget the page loads (``captcha_widget``: its
        script and client key; absent when the deployment names no widget origin)."""
        if not self.required([offering]):
            return {}
        widget = {"script": self.widget_origin + WIDGET_SCRIPT, "site_key": self.site_key} \
            if self.widget_origin else None
        return {"captcha_required": True} | ({"captcha_widget": widget} if widget else {})

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
