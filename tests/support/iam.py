"""IAM for the local stack, which has none: each function's role as SAM translates it, and the
question "would AWS let this function make this call?".

moto does not enforce IAM, so a role that lacks an action passes every local test and fails with
AccessDenied on AWS. The calls come from devstack/aws/calls.py (in-process functions) or the parity
runner (built functions); the roles from the stack's own translation of template.yaml, resolved
with the stack's account, region and physical names.

Matching follows IAM's rules for what the template uses: Allow and Deny statements, Action and
NotAction (case-insensitive, `*` and `?` wildcards), Resource and NotResource (case-sensitive
wildcards). Conditions are not evaluated (the template has none on function roles): a statement
with one would count as matching, so the check can only be too lenient there, never too strict.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

# AWS managed policies SAM attaches; their statements as AWS publishes them, in the parts that
# matter here (what the Lambda service does with the role: logs, traces, event source polling)
MANAGED_POLICIES: dict[str, list[dict[str, Any]]] = {
    "AWSLambdaBasicExecutionRole": [
        {"Effect": "Allow", "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
         "Resource": "*"}],
    "AWSXrayWriteOnlyAccess": [
        {"Effect": "Allow", "Action": ["xray:PutTraceSegments", "xray:PutTelemetryRecords",
                                       "xray:GetSamplingRules", "xray:GetSamplingTargets",
                                       "xray:GetSamplingStatisticSummaries"], "Resource": "*"}],
    "AWSLambdaSQSQueueExecutionRole": [
        {"Effect": "Allow", "Action": ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes",
                                       "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
         "Resource": "*"}],
    "AWSLambdaDynamoDBExecutionRole": [
        {"Effect": "Allow", "Action": ["dynamodb:DescribeStream", "dynamodb:GetRecords",
                                       "dynamodb:GetShardIterator", "dynamodb:ListStreams",
                                       "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
         "Resource": "*"}],
}

# DynamoDB authorises a transaction on each item's own action (there is no Transact* IAM action)
_TRANSACT_ACTIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                     "ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}


@lru_cache(maxsize=4096)
def _pattern(text: str, ignore_case: bool) -> re.Pattern[str]:
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in text)
    return re.compile(body, re.IGNORECASE if ignore_case else 0)


def _matches(patterns: Any, value: str, ignore_case: bool) -> bool:
    patterns = [patterns] if isinstance(patterns, str) else list(patterns or [])
    return any(_pattern(p, ignore_case).fullmatch(value) for p in patterns)


def statement_applies(statement: dict[str, Any], action: str, resource: str) -> bool:
    if "Action" in statement and not _matches(statement["Action"], action, True):
        return False
    if "NotAction" in statement and _matches(statement["NotAction"], action, True):
        return False
    if "Resource" in statement and not _matches(statement["Resource"], resource, False):
        return False
    if "NotResource" in statement and _matches(statement["NotResource"], resource, False):
        return False
    return True


def allowed(statements: list[dict[str, Any]], action: str, resource: str) -> bool:
    """IAM's verdict for one identity policy set: an explicit Deny wins, then any Allow."""
    applying = [s for s in statements if statement_applies(s, action, resource)]
    if any(s.get("Effect") == "Deny" for s in applying):
        return False
    return any(s.get("Effect") == "Allow" for s in applying)


@dataclass
class Role:
    function: str
    statements: list[dict[str, Any]]              # inline policies (the template's own grants)
    managed: list[dict[str, Any]] = field(default_factory=list)
    unknown_managed: list[str] = field(default_factory=list)

    def allows(self, action: str, resource: str) -> bool:
        return allowed(self.statements + self.managed, action, resource)


def _statements(document: dict[str, Any]) -> list[dict[str, Any]]:
    found = document.get("Statement") or []
    return [found] if isinstance(found, dict) else list(found)


def function_roles(stack: Any) -> dict[str, Role]:
    """Every function's role from the stack's translated template, resolved for this stack."""
    resources = stack.cfn_template["Resources"]
    roles = {}
    for logical_id, resource in resources.items():
        if resource["Type"] != "AWS::Lambda::Function":
            continue
        role_ref = resource["Properties"]["Role"]
        role_id = role_ref["Fn::GetAtt"][0] if isinstance(role_ref, dict) else None
        props = stack._resolver.resolve(resources[role_id].get("Properties") or {}) if role_id else {}
        role = Role(logical_id, [s for p in props.get("Policies") or [] for s in _statements(p["PolicyDocument"])])
        for arn in props.get("ManagedPolicyArns") or []:
            name = str(arn).rsplit("/", 1)[-1]
            if name in MANAGED_POLICIES:
                role.managed.extend(MANAGED_POLICIES[name])
            else:
                role.unknown_managed.append(str(arn))
        roles[logical_id] = role
    return roles


def authorisations(call: dict[str, Any], stack: Any) -> list[tuple[str, str]]:
    """The (IAM action, resource ARN) pairs AWS checks for one recorded call."""
    service, action, params = call["service"], call["action"], call["params"]
    region, account = stack.region, "123456789012"
    arn = f"arn:aws:{service}:{region}:{account}"
    if service == "dynamodb":
        if action in ("TransactWriteItems", "TransactGetItems"):
            return [(f"dynamodb:{_TRANSACT_ACTIONS[kind]}", f"{arn}:table/{body['TableName']}")
                    for item in params.get("TransactItems") or [] for kind, body in item.items()]
        if action in ("BatchWriteItem", "BatchGetItem"):
            return [(f"dynamodb:{action}", f"{arn}:table/{table}") for table in params.get("RequestItems") or {}]
        table = f"{arn}:table/{params.get('TableName', '*')}"
        if params.get("IndexName"):
            table += f"/index/{params['IndexName']}"
        return [(f"dynamodb:{action}", table)]
    if service == "sqs":
        name = params.get("QueueName") or str(params.get("QueueUrl", "*")).rstrip("/").rsplit("/", 1)[-1]
        return [(f"sqs:{action}", f"{arn}:{name}")]
    if service == "states":
        return [(f"states:{action}", params.get("stateMachineArn") or params.get("executionArn") or "*")]
    if service == "secretsmanager":
        secret = params.get("SecretId", "*")
        return [(f"secretsmanager:{action}", secret if secret.startswith("arn:") else stack.secrets.get(secret, secret))]
    if service == "events" and action == "PutEvents":
        buses = {e.get("EventBusName") or "default" for e in params.get("Entries") or [{}]}
        return [("events:PutEvents", b if b.startswith("arn:") else f"{arn}:event-bus/{b}") for b in sorted(buses)]
    if service == "ses":
        sender = str(params.get("FromEmailAddress", "*"))
        return [(f"ses:{action}", f"{arn}:identity/{sender.rsplit('@', 1)[-1]}")]
    if service == "s3" and params.get("Bucket"):   # an object's ARN: arn:aws:s3:::<bucket>/<key>
        return [(f"s3:{action}", f"arn:aws:s3:::{params['Bucket']}/{params.get('Key', '')}")]
    if service == "lambda":
        name = params.get("FunctionName", "*")
        return [(f"lambda:{action}", name if name.startswith("arn:") else f"{arn}:function:{name}")]
    return [(f"{service}:{action}", "*")]


@dataclass
class Verdict:
    denied: list[str]                   # "Function: action on resource" that AWS would refuse
    unused: dict[str, list[str]]        # function -> inline grants (action on resource) never exercised


def check(calls: list[dict[str, Any]], stack: Any) -> Verdict:
    roles = function_roles(stack)
    denied, used = [], set()
    for call in calls:
        role = roles.get(call["function"]) or roles.get(_logical(call["function"], stack))
        if role is None:
            denied.append(f"{call['function']}: no role found for the function")
            continue
        for action, resource in authorisations(call, stack):
            if not role.allows(action, resource):
                denied.append(f"{role.function}: {action} on {resource}")
            for index, statement in enumerate(role.statements):
                if statement.get("Effect") == "Allow" and statement_applies(statement, action, resource):
                    used.add((role.function, index, action.lower()))
    unused: dict[str, list[str]] = {}
    for name, role in roles.items():
        for index, statement in enumerate(role.statements):
            if statement.get("Effect") != "Allow":
                continue
            actions = statement.get("Action")
            for granted in [actions] if isinstance(actions, str) else actions or []:
                if not any(f == name and i == index and _pattern(granted, True).fullmatch(a)
                           for f, i, a in used):
                    unused.setdefault(name, []).append(f"{granted} on {statement.get('Resource')}")
    return Verdict(sorted(set(denied)), unused)


def _logical(function: str, stack: Any) -> str:
    for logical_id, fn in stack.functions.items():
        if function in (fn.function_name, fn.arn):
            return logical_id
    return function
