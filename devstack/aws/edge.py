"""What CloudFront adds to the pages it serves, for the local API stand-in that serves them instead:
the response headers policy of the template's distribution, turned into the headers CloudFront
sends (its documented rendering of each SecurityHeadersConfig field)."""

from __future__ import annotations

from typing import Any, Callable


def page_headers(policy_config: dict[str, Any]) -> dict[str, str]:
    """Headers of a ResponseHeadersPolicyConfig, as CloudFront writes them on a response."""
    security = policy_config.get("SecurityHeadersConfig") or {}
    headers: dict[str, str] = {}
    hsts = security.get("StrictTransportSecurity")
    if hsts:
        value = f"max-age={int(hsts['AccessControlMaxAgeSec'])}"
        if _true(hsts.get("IncludeSubdomains")):
            value += "; includeSubDomains"
        if _true(hsts.get("Preload")):
            value += "; preload"
        headers["Strict-Transport-Security"] = value
    if security.get("ContentSecurityPolicy"):
        headers["Content-Security-Policy"] = security["ContentSecurityPolicy"]["ContentSecurityPolicy"]
    if security.get("ContentTypeOptions") is not None:
        headers["X-Content-Type-Options"] = "nosniff"
    if security.get("FrameOptions"):
        headers["X-Frame-Options"] = security["FrameOptions"]["FrameOption"]
    if security.get("ReferrerPolicy"):
        headers["Referrer-Policy"] = security["ReferrerPolicy"]["ReferrerPolicy"]
    for item in (policy_config.get("CustomHeadersConfig") or {}).get("Items") or []:
        headers[item["Header"]] = item["Value"]
    return headers


def distribution_page_headers(resources: dict[str, Any], resolve: Callable[[Any], Any]) -> dict[str, str]:
    """The headers the template's distribution adds to its default (pages) behaviour; {} if none."""
    for resource in resources.values():
        if resource.get("Type") != "AWS::CloudFront::Distribution":
            continue
        behaviour = resource["Properties"]["DistributionConfig"].get("DefaultCacheBehavior") or {}
        policy = behaviour.get("ResponseHeadersPolicyId")
        if isinstance(policy, dict) and "Ref" in policy:
            config = resources[policy["Ref"]]["Properties"]["ResponseHeadersPolicyConfig"]
            return page_headers(resolve(config))
    return {}


def _true(value: Any) -> bool:
    return value is True or str(value).lower() == "true"
