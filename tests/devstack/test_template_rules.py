"""The template's Rules (issue 34, finding 5), evaluated on the translated template the way
CloudFormation does before it creates anything: header identity only on a local stack, and a
stack outside local only behind the edge web ACL. The local stack applies the same Rules."""
from __future__ import annotations

import pytest

from devstack.aws import EmbeddedStack
from devstack.aws.template import (
    Resolver,
    RulesViolated,
    broken_rules,
    load_template,
    prepare_sam_template,
    resolve_parameters,
    sam_transform,
)
from tests.support.handlers import REPO

EDGE_ACL = "arn:aws:wafv2:us-east-1:123456789012:global/webacl/holdfast-edge/0f0f0f0f"
PSEUDO = {"AWS::Region": "eu-central-1", "AWS::AccountId": "123456789012", "AWS::Partition": "aws",
          "AWS::StackName": "holdfast", "AWS::URLSuffix": "amazonaws.com",
          "AWS::StackId": "arn:aws:cloudformation:eu-central-1:123456789012:stack/holdfast/4f1c2d3e"}


def _broken(**values: str) -> list[str]:
    sam = load_template(REPO / "template.yaml")
    parameters = resolve_parameters(sam, {"ProviderShopId": "1", **values})
    translated = sam_transform(prepare_sam_template(sam, REPO)[0], {**parameters, **PSEUDO}, "eu-central-1")
    return [line.split(":")[0] for line in broken_rules(translated, Resolver(parameters, PSEUDO))]


def test_header_identity_outside_a_local_stack_is_refused():
    assert _broken(CustomerIdentitySource="header", DeploymentKind="aws", EdgeWebAclArn=EDGE_ACL) \
        == ["HeaderIdentityOnlyLocal"]
    assert _broken(CustomerIdentitySource="header", DeploymentKind="local") == []
    assert _broken(CustomerIdentitySource="authorizer", DeploymentKind="aws", EdgeWebAclArn=EDGE_ACL) == []


def test_a_stack_outside_local_needs_the_edge_web_acl():
    assert _broken(DeploymentKind="aws") == ["EdgeWebAclOutsideLocal"]
    assert _broken(CustomerIdentitySource="header", DeploymentKind="aws") \
        == ["HeaderIdentityOnlyLocal", "EdgeWebAclOutsideLocal"]


def test_the_local_stack_refuses_to_deploy_what_the_rules_refuse():
    stack = EmbeddedStack(repo_root=REPO, aws_port=0, api_port=0,
                          parameters={"DeploymentKind": "aws", "EdgeWebAclArn": EDGE_ACL})
    with pytest.raises(RulesViolated, match="HeaderIdentityOnlyLocal"):
        stack.start()
    assert not stack.resources


def test_a_captcha_on_every_hold_needs_the_widgets_site_key():
    """Issue 42, finding 13: with CaptchaOnHolds=on and no CaptchaSiteKey the pages cannot draw the
    widget, so every hold would be refused ``captcha_required``: the deployment is refused first."""
    assert _broken(CaptchaOnHolds="on", DeploymentKind="local") == ["CaptchaSiteKeyWhenOn"]
    assert _broken(CaptchaOnHolds="on", CaptchaSiteKey="ysc1_client-key", DeploymentKind="local") == []
    assert _broken(CaptchaOnHolds="off", DeploymentKind="local") == []
