"""Sign-up protection (issue 42, finding 13: "bot protection on sign-up and holds for high-demand
sales"), which only the template can show: nothing of Cognito or WAF runs locally. With
HoldBotControl=bot-control the user pool sits behind the API's web ACL; this reads that ACL's rules
as WAF evaluates them (statements over method, path and headers) against the requests a sign-up
makes: the user pool's SignUp API call and its hosted UI's sign-up form. Bot Control inspects
both, and ``signups-per-ip`` limits how many one address sends (before it, one address could make
up to ApiRateLimitPerIp accounts each 5 minutes; a throwaway account per hold was cheap). Sign-in,
the confirmation of a code and holds through the distribution are left alone."""
from __future__ import annotations

from typing import Any

import pytest

from tests.support.template import template

SECRET = "the-edge-secret"
#: The requests, as WAF sees them: method, path, headers (lower-case names).
SIGN_UP_CALL = ("POST", "/", {"x-amz-target": "AWSCognitoIdentityProviderService.SignUp"})
SIGN_UP_FORM = ("POST", "/signup", {})
SIGN_UP_PAGE = ("GET", "/signup", {})
SIGN_IN_CALL = ("POST", "/", {"x-amz-target": "AWSCognitoIdentityProviderService.InitiateAuth"})
CONFIRM_CALL = ("POST", "/", {"x-amz-target": "AWSCognitoIdentityProviderService.ConfirmSignUp"})
HOLD_THROUGH_EDGE = ("POST", "/Prod/events/E1/bookings", {"x-holdfast-edge": SECRET})
DIRECT_HOLD = ("POST", "/Prod/events/E1/bookings", {})


def _value(text: Any) -> str:
    if isinstance(text, dict) and "Fn::Sub" in text:
        assert "EdgeHeaderSecret" in text["Fn::Sub"], text
        return SECRET
    return str(text)


def _field(field: dict, request: tuple[str, str, dict[str, str]]) -> str | None:
    method, path, headers = request
    if "Method" in field:
        return method
    if "UriPath" in field:
        return path
    if "SingleHeader" in field:
        return headers.get(field["SingleHeader"]["Name"].lower())
    raise AssertionError(f"a field this reader does not know: {field}")


def _transform(value: str, transformations: list[dict]) -> str:
    for step in sorted(transformations, key=lambda t: t["Priority"]):
        if step["Type"] == "LOWERCASE":
            value = value.lower()
        else:
            assert step["Type"] == "NONE", step
    return value


def matches(statement: dict, request) -> bool:
    """Whether a WAF statement (the kinds this web ACL's sign-up rules use) matches ``request``."""
    import re

    [(kind, body)] = statement.items()
    if kind == "AndStatement":
        return all(matches(s, request) for s in body["Statements"])
    if kind == "OrStatement":
        return any(matches(s, request) for s in body["Statements"])
    if kind == "NotStatement":
        return not matches(body["Statement"], request)
    if kind == "ByteMatchStatement":
        found = _field(body["FieldToMatch"], request)
        if found is None:
            return False
        found, wanted = _transform(found, body["TextTransformations"]), _value(body["SearchString"])
        return {"EXACTLY": found == wanted, "STARTS_WITH": found.startswith(wanted),
                "ENDS_WITH": found.endswith(wanted), "CONTAINS": wanted in found}[body["PositionalConstraint"]]
    if kind == "RegexPatternSetReferenceStatement":
        name = body["Arn"]["Fn::GetAtt"][0]
        patterns = template()["Resources"][name]["Properties"]["RegularExpressionList"]
        found = _field(body["FieldToMatch"], request) or ""
        return any(re.search(_value(p).replace("${StageName}", "Prod") if isinstance(p, str)
                             else p["Fn::Sub"].replace("${StageName}", "Prod"), found) for p in patterns)
    raise AssertionError(f"a statement this reader does not know: {kind}")


def _guarded_rule(name: str) -> dict:
    """The ApiWebAcl rule ``name``, which exists only with GuardsHoldsFromBots."""
    for rule in template()["Resources"]["ApiWebAcl"]["Properties"]["Rules"]:
        if "Fn::If" in rule and rule["Fn::If"][1]["Name"] == name:
            condition, found, otherwise = rule["Fn::If"]
            assert condition == "GuardsHoldsFromBots" and otherwise == {"Ref": "AWS::NoValue"}
            return found
    raise AssertionError(f"no conditional rule {name}")


def test_the_user_pool_is_behind_the_api_web_acl_with_bot_control_and_its_hosted_ui_is_the_classic_one():
    resources = template()["Resources"]
    association = resources["UserPoolWebAclAssociation"]
    assert association["Condition"] == "GuardsHoldsFromBots"
    assert association["Properties"] == {"WebACLArn": {"Fn::GetAtt": ["ApiWebAcl", "Arn"]},
                                         "ResourceArn": {"Fn::GetAtt": ["CustomerUserPool", "Arn"]}}
    # a web ACL's rules apply to the user pool's classic hosted UI pages (and its API); a domain
    # moved to managed login version 2 would take the hosted sign-up form out of their reach
    domains = [r for r in resources.values() if r["Type"] == "AWS::Cognito::UserPoolDomain"]
    assert domains and all(d["Properties"].get("ManagedLoginVersion", 1) == 1 for d in domains)
    # sign-up is open to anyone (the finding's premise): protection is the web ACL's, not a closed pool
    config = resources["CustomerUserPool"]["Properties"].get("AdminCreateUserConfig") or {}
    assert config.get("AllowAdminCreateUserOnly") in (None, False)
    parameters = template()["Parameters"]
    assert parameters["HoldBotControl"]["Default"] == "off"


@pytest.mark.parametrize(("request_", "inspected"), [
    (SIGN_UP_CALL, True), (SIGN_UP_FORM, True), (SIGN_UP_PAGE, True), (DIRECT_HOLD, True),
    (SIGN_IN_CALL, False), (CONFIRM_CALL, False), (HOLD_THROUGH_EDGE, False),
], ids=["signup-call", "signup-form", "signup-page", "direct-hold", "sign-in", "confirm-code", "edge-hold"])
def test_bot_control_inspects_every_sign_up_and_direct_hold(request_, inspected):
    rule = _guarded_rule("hold-bot-control")
    group = rule["Statement"]["ManagedRuleGroupStatement"]
    assert group["Name"] == "AWSManagedRulesBotControlRuleSet"
    assert matches(group["ScopeDownStatement"], request_) is inspected


@pytest.mark.parametrize(("request_", "counted"), [
    (SIGN_UP_CALL, True), (SIGN_UP_FORM, True), (SIGN_UP_PAGE, False), (SIGN_IN_CALL, False),
    (CONFIRM_CALL, False), (DIRECT_HOLD, False), (HOLD_THROUGH_EDGE, False),
], ids=["signup-call", "signup-form", "signup-page", "sign-in", "confirm-code", "direct-hold", "edge-hold"])
def test_sign_ups_are_limited_per_address(request_, counted):
    rule = _guarded_rule("signups-per-ip")
    rated = rule["Statement"]["RateBasedStatement"]
    assert rated["AggregateKeyType"] == "IP" and rated["Limit"] == {"Ref": "SignUpRateLimitPerIp"}
    assert rule["Action"] == {"Block": {"CustomResponse": {"ResponseCode": 429}}}
    assert matches(rated["ScopeDownStatement"], request_) is counted


def test_the_sign_up_limit_is_far_below_the_general_one_and_every_rule_priority_is_its_own():
    parameters = template()["Parameters"]
    assert int(parameters["SignUpRateLimitPerIp"]["Default"]) * 10 <= int(parameters["ApiRateLimitPerIp"]["Default"])
    assert int(parameters["SignUpRateLimitPerIp"]["MinValue"]) >= 10     # WAF's least rate limit
    priorities = []
    for rule in template()["Resources"]["ApiWebAcl"]["Properties"]["Rules"]:
        priorities.append((rule["Fn::If"][1] if "Fn::If" in rule else rule)["Priority"])
    assert len(priorities) == len(set(priorities)), priorities
