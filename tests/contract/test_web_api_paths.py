"""Every API path the web pages call reaches the API on AWS: the pages and the API share one
host there, and CloudFront sends a path to the API only when a cache behaviour names it (any
other path is a file of the site's bucket, so a call to it would get the bucket's 403 or 404)."""
from __future__ import annotations

import fnmatch
import re

from tests.support.handlers import REPO
from tests.support.template import template

#: A path literal in a page's script: "/word..." or `/word...`, up to the query or a ${...}.
CALLED = re.compile(r"[\"`](/[a-z]+(?:/[a-z._-]+)*)")


def behaviours() -> list[str]:
    distributions = [r["Properties"]["DistributionConfig"] for r in template()["Resources"].values()
                     if r["Type"] == "AWS::CloudFront::Distribution"]
    return [b["PathPattern"] for d in distributions for b in d.get("CacheBehaviors", [])
            if b["TargetOriginId"] == "api"]


def api_roots() -> set[str]:
    roots = set()
    for resource in template()["Resources"].values():
        for event in ((resource.get("Properties") or {}).get("Events") or {}).values():
            if resource["Type"] == "AWS::Serverless::Function" and event.get("Type") == "Api":
                roots.add("/" + event["Properties"]["Path"].strip("/").split("/")[0])
    return roots


def test_every_api_path_a_page_calls_is_sent_to_the_api():
    patterns, roots = behaviours(), api_roots()
    called = {path for script in (REPO / "web").glob("*.js") for path in CALLED.findall(script.read_text())
              if "/" + path.strip("/").split("/")[0] in roots}
    assert {"/events", "/services", "/lots", "/texts"} <= called
    missing = sorted(path for path in called if not any(fnmatch.fnmatchcase(path, p) for p in patterns))
    assert not missing, f"called by web/*.js but served from the bucket on AWS: {missing}"
