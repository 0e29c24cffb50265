"""CloudFront's cache behaviours against the API's routes and the catalog's own rules (issue 35,
goal 5): the public catalog GETs, and only they, go through the caching policy; it keys on every
query string those routes read (holdfast/entry/http.py) and keeps nothing the origin does not date;
no route a signed-in customer calls is on it; errors are not kept."""
from __future__ import annotations

import fnmatch
import re

from holdfast.entry import http
from holdfast.products.appointments.schemas import ServiceListQuery
from holdfast.products.parking.schemas import LotListQuery
from holdfast.schemas import EventListQuery
from tests.support.template import template

CACHING_DISABLED = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"
ALL_VIEWER_EXCEPT_HOST = "b689b0a8-53d0-40ab-baf2-68738e2966ac"
#: API routes the distribution does not carry, and why.
NOT_AT_THE_EDGE = {
    # through CloudFront the sender's address would be CloudFront's; the network check needs the provider's
    "/webhooks/payments",
}
#: The public GETs a CDN may keep (each answers with cached_json and an http.Freshness).
CATALOG_GETS = {"/events", "/events/{event_id}", "/events/{event_id}/seats", "/services", "/lots", "/texts"}

RESOURCES = template()["Resources"]


def behaviours() -> list[dict]:
    return RESOURCES["WebDistribution"]["Properties"]["DistributionConfig"]["CacheBehaviors"]


def routes() -> list[tuple[str, str, bool]]:
    """(path, method, whether the customer sign-in authorizer guards it) of every API route."""
    found = []
    for resource in RESOURCES.values():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        for event in (resource["Properties"].get("Events") or {}).values():
            if event.get("Type") == "Api":
                props = event["Properties"]
                found.append((props["Path"], props["Method"].upper(),
                              (props.get("Auth") or {}).get("Authorizer") != "NONE"))
    return found


def behaviour_of(path: str) -> dict | None:
    """The first behaviour whose pattern matches ``path`` (CloudFront's ``*`` matches "/" too);
    None: the default behaviour, the pages' bucket."""
    concrete = re.sub(r"\{[^}]+\}", "some-id", path)
    return next((b for b in behaviours() if fnmatch.fnmatchcase(concrete, b["PathPattern"])), None)


def caches(behaviour: dict | None) -> bool:
    return behaviour is not None and behaviour["CachePolicyId"] != CACHING_DISABLED


def test_only_the_public_catalog_gets_are_cached():
    cached_gets = {path for path, method, _ in routes() if method == "GET" and caches(behaviour_of(path))}
    # /lots/{lot_id} sends no Cache-Control, so the policy's default TTL of 0 keeps nothing of it
    assert cached_gets - {"/lots/{lot_id}"} == CATALOG_GETS


def test_every_api_route_reaches_the_api_through_the_distribution():
    """The pages call the API on their own origin: a route no behaviour sends to the API is the
    bucket's 403 at the edge (GET /customers/me/data and DELETE /customers/me were)."""
    unreached = []
    for path, method, _ in routes():
        behaviour = behaviour_of(path)
        if path in NOT_AT_THE_EDGE:
            assert behaviour is None or behaviour["TargetOriginId"] != "api", path
        elif (behaviour is None or behaviour["TargetOriginId"] != "api" or method not in behaviour["AllowedMethods"]
              or behaviour["OriginRequestPolicyId"] != ALL_VIEWER_EXCEPT_HOST):
            unreached.append((method, path))
    assert unreached == []


def test_no_signed_in_customer_route_is_on_the_caching_policy():
    signed_in = [(path, method) for path, method, guarded in routes() if guarded]
    assert signed_in, "the template's authorizer moved: this test no longer sees it"
    assert [(path, method) for path, method in signed_in if caches(behaviour_of(path))] == []


def test_the_cache_key_holds_every_query_string_a_cached_route_reads():
    policy = RESOURCES["CatalogCachePolicy"]["Properties"]["CachePolicyConfig"]
    strings = policy["ParametersInCacheKeyAndForwardedToOrigin"]["QueryStringsConfig"]
    assert strings["QueryStringBehavior"] == "whitelist"
    assert tuple(strings["QueryStrings"]) == http.CACHE_KEY_QUERY_STRINGS
    read = {field.alias or name for model in (EventListQuery, ServiceListQuery, LotListQuery)
            for name, field in model.model_fields.items()} | {"lang"}
    assert read == set(http.CACHE_KEY_QUERY_STRINGS)
    assert policy["ParametersInCacheKeyAndForwardedToOrigin"]["HeadersConfig"] == {"HeaderBehavior": "none"}


def test_the_edge_keeps_only_what_the_origin_dates_and_no_error():
    policy = RESOURCES["CatalogCachePolicy"]["Properties"]["CachePolicyConfig"]
    assert policy["MinTTL"] == 0 and policy["DefaultTTL"] == 0
    assert all(fresh.shared <= policy["MaxTTL"] for fresh in (http.LISTING_FRESHNESS, http.EVENT_FRESHNESS, http.SEAT_MAP_FRESHNESS, http.TEXTS_FRESHNESS))
    errors = RESOURCES["WebDistribution"]["Properties"]["DistributionConfig"]["CustomErrorResponses"]
    assert {e["ErrorCode"]: e["ErrorCachingMinTTL"] for e in errors}[400] == 0


def test_each_path_pattern_has_one_behaviour():
    """CloudFront refuses a distribution with two behaviours of one path pattern; two branches that
    each add the same route's behaviour merge into exactly that."""
    patterns = [behaviour["PathPattern"] for behaviour in behaviours()]
    assert sorted(p for p in set(patterns) if patterns.count(p) > 1) == []
