"""The cap on live holds per network address counts the viewer's address, which reaches the hold
functions only as ``CloudFront-Viewer-Address`` (issue 42, finding 13): every hold route's cache
behaviour (the first whose pattern matches, as CloudFront picks it) must forward it, through the
managed AllViewerExceptHostHeader origin request policy. Only the template can show this; a hold
that arrives without it is refused (tests/integration/test_holds_per_address.py)."""
from __future__ import annotations

import re

import pytest

from tests.support.template import template

#: AWS's managed origin request policy that forwards every viewer header but Host, and the
#: CloudFront headers, CloudFront-Viewer-Address among them.
ALL_VIEWER_EXCEPT_HOST = "b689b0a8-53d0-40ab-baf2-68738e2966ac"
HOLD_PATHS = ["/events/E1/bookings", "/services/S1/bookings", "/lots/L1/reservations", "/orders"]


def _behaviour(path: str) -> dict:
    config = template()["Resources"]["WebDistribution"]["Properties"]["DistributionConfig"]
    for behaviour in config["CacheBehaviors"]:
        pattern = "^" + re.escape(behaviour["PathPattern"]).replace(r"\*", ".*").replace(r"\?", ".") + "$"
        if re.match(pattern, path):
            return behaviour
    return config["DefaultCacheBehavior"]


@pytest.mark.parametrize("path", HOLD_PATHS)
def test_every_hold_route_forwards_the_viewer_address_to_the_api(path):
    behaviour = _behaviour(path)
    assert behaviour["TargetOriginId"] == "api", (path, behaviour["PathPattern"] if "PathPattern" in behaviour else "")
    assert behaviour["OriginRequestPolicyId"] == ALL_VIEWER_EXCEPT_HOST, path
    assert "POST" in behaviour["AllowedMethods"], path
