"""SnapStart of the customer-facing API functions (issue 49, docs/performance.md "SnapStart"): their
versions are always published and API Gateway calls the alias, so turning SnapStart on is one
parameter of the same template, never an overlay; every other function stays unversioned."""
from __future__ import annotations

import ast
import copy
import json

from tests.support.handlers import REPO
from tests.support.template import template

#: the functions behind the customers' pages (bookings, the catalog, waitlists, the waiting room, parking)
CUSTOMER_FACING = {"BookingsApiFunction", "CatalogApiFunction", "WaitlistApiFunction", "WaitingRoomFunction",
                   "ParkingApiFunction"}


def functions() -> dict[str, dict]:
    return {name: r["Properties"] for name, r in template()["Resources"].items()
            if r["Type"] == "AWS::Serverless::Function"}


def test_the_customer_facing_functions_publish_versions_and_take_snapstart_from_one_parameter():
    parameter = template()["Parameters"]["SnapStart"]
    assert parameter["Default"] == "None" and set(parameter["AllowedValues"]) == {"None", "PublishedVersions"}
    for name, props in functions().items():
        if name in CUSTOMER_FACING:
            assert props.get("AutoPublishAlias") == "live", name
            # a change of the parameter alone must publish a version, or it would take effect at the next code change
            assert props.get("AutoPublishAliasAllProperties") is True, name
            assert props.get("SnapStart") == {"ApplyOn": {"Ref": "SnapStart"}}, name
        else:
            assert "SnapStart" not in props and "AutoPublishAlias" not in props, name


def test_api_gateway_invokes_the_alias_of_each_snapstart_function(monkeypatch):
    """SnapStart applies to published versions only: the translated template must route and grant
    the alias, never the unqualified function ($LATEST)."""
    from samtranslator.translator.transform import transform

    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    doc = copy.deepcopy(template())
    for name, resource in doc["Resources"].items():
        props = resource["Properties"]
        if resource["Type"] == "AWS::Serverless::Function":
            props["CodeUri"] = f"s3://bucket/{name}.zip"
        elif resource["Type"] == "AWS::Serverless::LayerVersion":
            props["ContentUri"] = f"s3://bucket/{name}.zip"
        elif resource["Type"] == "AWS::Serverless::StateMachine" and "DefinitionUri" in props:
            props["DefinitionUri"] = f"s3://bucket/{name}.json"

    class NoManagedPolicies:
        def load(self) -> dict:
            return {}

    resources = transform(doc, {}, NoManagedPolicies())["Resources"]
    for name in CUSTOMER_FACING:
        alias = resources[f"{name}Aliaslive"]
        assert alias["Type"] == "AWS::Lambda::Alias"
        assert resources[name]["Properties"]["SnapStart"] == {"ApplyOn": {"Ref": "SnapStart"}}
        permissions = [r["Properties"]["FunctionName"] for r in resources.values()
                       if r["Type"] == "AWS::Lambda::Permission" and r["Properties"]["Principal"] == "apigateway.amazonaws.com"
                       and json.dumps(r["Properties"]["FunctionName"]).find(name) >= 0]
        assert permissions and all(p == {"Ref": f"{name}Aliaslive"} for p in permissions), (name, permissions)
    body = json.dumps([r["Properties"].get("Body") for r in resources.values() if r["Type"] == "AWS::ApiGateway::RestApi"])
    for name in CUSTOMER_FACING:
        assert f'"{name}.Arn"' not in body and f"{name}Aliaslive" in body, name


def test_each_snapstart_function_primes_its_main_routes_request_model_when_it_has_one():
    """What the snapshot saves beyond the import is the first call's model building
    (devstack/measure/coldstart_env.py FIRST_CALL); a model primed must exist."""
    import importlib

    from devstack.measure.coldstart_env import FIRST_CALL

    for name in CUSTOMER_FACING:
        tree = ast.parse((REPO / functions()[name]["CodeUri"] / "app.py").read_text())
        (call,) = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "cold_start"]
        primed = [ast.literal_eval(k.value) for k in call.keywords if k.arg == "primed"]
        wanted = [at for at in FIRST_CALL.get(name, {}).get("at", []) if not at.startswith("app:")]
        assert (primed[0] if primed else ()) == tuple(wanted), name
        for path in wanted:
            module, _, model = path.partition(":")
            assert hasattr(importlib.import_module(module), model), path
