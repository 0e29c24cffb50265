"""Reading template.yaml: YAML with CloudFormation tags, the SAM transform (offline) and a small
intrinsic-function resolver.

Nothing here knows the Holdfast resources: everything is derived from the template, so the local
stack cannot drift from what is deployed.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any, Callable

import yaml

# --------------------------------------------------------------------------------------------
# YAML with CloudFormation short-form tags (!Ref, !GetAtt, !Sub, ...)
# --------------------------------------------------------------------------------------------


class _CfnLoader(yaml.SafeLoader):
    """SafeLoader that turns `!Tag value` into `{"Fn::Tag": value}` (or `{"Ref": ...}`)."""


def _tag_constructor(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    if tag_suffix == "Ref":
        return {"Ref": value}
    if tag_suffix == "Condition":
        return {"Condition": value}
    if tag_suffix == "GetAtt" and isinstance(value, str):
        logical, _, attribute = value.partition(".")
        return {"Fn::GetAtt": [logical, attribute]}
    return {f"Fn::{tag_suffix}": value}


_CfnLoader.add_multi_constructor("!", _tag_constructor)


def load_template(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_CfnLoader)  # noqa: S506 - SafeLoader subclass


# --------------------------------------------------------------------------------------------
# SAM transform, offline
# --------------------------------------------------------------------------------------------

LOCAL_CODE_BUCKET = "holdfast-devstack-code"


class _NoManagedPolicies:
    """The translator asks IAM for AWS managed policy ARNs only for policy names it does not know;
    offline we answer with an empty map (policy templates such as DynamoDBCrudPolicy need none)."""

    def load(self) -> dict[str, str]:
        return {}


def prepare_sam_template(sam: dict[str, Any], repo_root: Path) -> tuple[dict[str, Any], dict[str, Path]]:
    """Replace local CodeUri / ContentUri / DefinitionUri with what the translator accepts offline.

    Returns the modified copy and {logical id: local code directory} for functions and layers.
    """
    sam = copy.deepcopy(sam)
    code_dirs: dict[str, Path] = {}
    globals_fn = (sam.get("Globals") or {}).get("Function") or {}
    for logical_id, resource in (sam.get("Resources") or {}).items():
        rtype = resource.get("Type")
        props = resource.setdefault("Properties", {})
        if rtype == "AWS::Serverless::Function":
            uri = props.get("CodeUri", globals_fn.get("CodeUri"))
            if isinstance(uri, str) and not uri.startswith("s3://"):
                code_dirs[logical_id] = (repo_root / uri).resolve()
                props["CodeUri"] = f"s3://{LOCAL_CODE_BUCKET}/{logical_id}.zip"
        elif rtype == "AWS::Serverless::LayerVersion":
            uri = props.get("ContentUri")
            if isinstance(uri, str) and not uri.startswith("s3://"):
                code_dirs[logical_id] = (repo_root / uri).resolve()
                props["ContentUri"] = f"s3://{LOCAL_CODE_BUCKET}/{logical_id}.zip"
        elif rtype == "AWS::Serverless::StateMachine":
            uri = props.get("DefinitionUri")
            if isinstance(uri, str) and not uri.startswith("s3://"):
                text = (repo_root / uri).read_text(encoding="utf-8")
                if uri.endswith((".yaml", ".yml")):
                    props["Definition"] = yaml.safe_load(text)
                else:
                    props["Definition"] = json.loads(text)
                del props["DefinitionUri"]
    return sam, code_dirs


def sam_transform(sam: dict[str, Any], parameter_values: dict[str, Any], region: str) -> dict[str, Any]:
    """The same translation `sam deploy` asks CloudFormation for, done offline (about 0.1 s).

    `parameter_values` should include the pseudo parameters (AWS::Region, AWS::AccountId, ...).
    """
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator
    from samtranslator.utils.py27hash_fix import (
        to_py27_compatible_template,
        undo_mark_unicode_str_in_template,
    )

    fragment = copy.deepcopy(sam)
    values = dict(parameter_values)
    to_py27_compatible_template(fragment, values)
    translator = Translator(None, Parser(), boto_session=boto3.session.Session(region_name=region))
    transformed = translator.translate(
        fragment, parameter_values=values, get_managed_policy_map=lambda: _NoManagedPolicies().load()
    )
    return undo_mark_unicode_str_in_template(transformed)


# --------------------------------------------------------------------------------------------
# Parameters and intrinsic functions
# --------------------------------------------------------------------------------------------


def resolve_parameters(template: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Template defaults overridden by `overrides`; CommaDelimitedList parameters become lists."""
    values: dict[str, Any] = {}
    missing = []
    for name, spec in (template.get("Parameters") or {}).items():
        if name in overrides:
            raw = overrides[name]
        elif "Default" in spec:
            raw = spec["Default"]
        else:
            missing.append(name)
            continue
        ptype = spec.get("Type", "String")
        if ptype == "CommaDelimitedList" or ptype.startswith("List<"):
            if isinstance(raw, str):
                raw = [part.strip() for part in raw.split(",")] if raw else []
            values[name] = [str(v) for v in raw]
        else:
            values[name] = str(raw)
        allowed = spec.get("AllowedValues")
        if allowed and values[name] not in [str(a) for a in allowed]:
            raise ValueError(f"parameter {name}={values[name]!r} is not one of {allowed}")
    if missing:
        raise ValueError(f"parameters without a default need a value: {', '.join(missing)}")
    return values


class Unresolvable(Exception):
    pass


_SUB_VAR = re.compile(r"\$\{([^}!][^}]*)\}")


class Resolver:
    """Resolves Ref, Fn::GetAtt, Fn::Sub, Fn::Join, Fn::Select, Fn::Split, Fn::If and friends
    against parameters, pseudo parameters and the physical ids / attributes of created resources."""

    def __init__(
        self,
        parameters: dict[str, Any],
        pseudo: dict[str, Any],
        conditions: dict[str, Any] | None = None,
        mappings: dict[str, Any] | None = None,
    ):
        self.parameters = parameters
        self.pseudo = pseudo
        self.refs: dict[str, Any] = {}
        self.attributes: dict[str, dict[str, Any]] = {}
        self._condition_defs = conditions or {}
        self._mappings = mappings or {}
        self._condition_values: dict[str, bool] = {}

    # -- references ---------------------------------------------------------------------------
    def ref(self, name: str) -> Any:
        if name in self.pseudo:
            return self.pseudo[name]
        if name in self.parameters:
            return self.parameters[name]
        if name in self.refs:
            return self.refs[name]
        raise Unresolvable(f"Ref {name}")

    def get_att(self, logical_id: str, attribute: str) -> Any:
        try:
            return self.attributes[logical_id][attribute]
        except KeyError:
            raise Unresolvable(f"GetAtt {logical_id}.{attribute}") from None

    def condition(self, name: str) -> bool:
        if name not in self._condition_values:
            self._condition_values[name] = bool(self.resolve(self._condition_defs[name]))
        return self._condition_values[name]

    # -- evaluation ---------------------------------------------------------------------------
    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [r for r in (self.resolve(v) for v in value if not _is_no_value(v)) if r is not _NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (key, arg), = value.items()
            handler = self._functions().get(key)
            if handler is not None:
                return handler(arg)
        return {k: r for k, r in ((k, self.resolve(v)) for k, v in value.items() if not _is_no_value(v))
                if r is not _NO_VALUE}

    def _branch(self, value: Any) -> Any:
        # an Fn::If branch of AWS::NoValue removes the property (or list item) holding the Fn::If
        return _NO_VALUE if _is_no_value(value) else self.resolve(value)

    def _functions(self) -> dict[str, Callable[[Any], Any]]:
        return {
            "Ref": lambda a: self.ref(self.resolve(a)),
            "Fn::GetAtt": self._fn_get_att,
            "Fn::Sub": self._fn_sub,
            "Fn::Join": lambda a: str(self.resolve(a[0])).join(str(x) for x in self.resolve(a[1])),
            "Fn::Select": lambda a: self.resolve(a[1])[int(self.resolve(a[0]))],
            "Fn::Split": lambda a: str(self.resolve(a[1])).split(str(self.resolve(a[0]))),
            "Fn::If": lambda a: self._branch(a[1] if self.condition(a[0]) else a[2]),
            "Fn::Equals": lambda a: str(self.resolve(a[0])) == str(self.resolve(a[1])),
            "Fn::Not": lambda a: not self.resolve(a[0]),
            "Fn::And": lambda a: all(self.resolve(x) for x in a),
            "Fn::Or": lambda a: any(self.resolve(x) for x in a),
            "Fn::Contains": lambda a: str(self.resolve(a[1])) in [str(x) for x in self.resolve(a[0])],
            "Condition": lambda a: self.condition(a),
            "Fn::FindInMap": lambda a: self._mappings[self.resolve(a[0])][self.resolve(a[1])][
                self.resolve(a[2])
            ],
            "Fn::Base64": lambda a: __import__("base64").b64encode(str(self.resolve(a)).encode()).decode(),
            "Fn::GetAZs": lambda a: [f"{self.pseudo['AWS::Region']}{z}" for z in "abc"],
        }

    def _fn_get_att(self, arg: Any) -> Any:
        if isinstance(arg, str):
            logical, _, attribute = arg.partition(".")
        else:
            logical, attribute = arg[0], self.resolve(arg[1])
        return self.get_att(logical, attribute)

    def _fn_sub(self, arg: Any) -> str:
        if isinstance(arg, list):
            text, variables = arg[0], {k: self.resolve(v) for k, v in arg[1].items()}
        else:
            text, variables = arg, {}

        def substitute(match: re.Match[str]) -> str:
            name = match.group(1).strip()
            if name in variables:
                return str(variables[name])
            if "." in name and not name.startswith("AWS::"):
                logical, _, attribute = name.partition(".")
                return str(self.get_att(logical, attribute))
            value = self.ref(name)
            return ",".join(value) if isinstance(value, list) else str(value)

        return _SUB_VAR.sub(substitute, text).replace("${!", "${")


class RulesViolated(Exception):
    """The parameter values break the template's Rules: CloudFormation refuses such a deployment
    before it creates anything, and so does the local stack."""


def broken_rules(template: dict[str, Any], resolver: Resolver) -> list[str]:
    """`rule: AssertDescription` of each assertion of the template's Rules that the parameter values
    break (a rule whose RuleCondition is false asserts nothing)."""
    broken = []
    for name, rule in (template.get("Rules") or {}).items():
        if "RuleCondition" in rule and not resolver.resolve(rule["RuleCondition"]):
            continue
        for assertion in rule.get("Assertions") or []:
            if not resolver.resolve(assertion["Assert"]):
                broken.append(f"{name}: {assertion.get('AssertDescription', 'assertion failed')}")
    return broken


#: what an Fn::If resolves to when its chosen branch is AWS::NoValue
_NO_VALUE = object()


def _is_no_value(value: Any) -> bool:
    return isinstance(value, dict) and value == {"Ref": "AWS::NoValue"}


def references(value: Any) -> set[str]:
    """Logical ids a template fragment refers to (Ref, GetAtt, ${X} / ${X.Attr} in Sub)."""
    found: set[str] = set()
    if isinstance(value, list):
        for v in value:
            found |= references(v)
    elif isinstance(value, dict):
        for key, arg in value.items():
            if key == "Ref" and isinstance(arg, str):
                found.add(arg)
            elif key == "Fn::GetAtt":
                found.add(arg.split(".")[0] if isinstance(arg, str) else arg[0])
            elif key == "Fn::Sub":
                text = arg[0] if isinstance(arg, list) else arg
                local = set(arg[1]) if isinstance(arg, list) else set()
                for name in _SUB_VAR.findall(text):
                    name = name.strip().split(".")[0]
                    if name not in local:
                        found.add(name)
                if isinstance(arg, list):
                    found |= references(arg[1])
            else:
                found |= references(arg)
    return found


def creation_order(resources: dict[str, Any]) -> list[str]:
    """Logical ids sorted so that every resource comes after the ones it refers to."""
    deps: dict[str, set[str]] = {}
    for logical_id, resource in resources.items():
        depends_on = resource.get("DependsOn") or []
        if isinstance(depends_on, str):
            depends_on = [depends_on]
        refs = references(resource.get("Properties") or {}) | set(depends_on)
        deps[logical_id] = {r for r in refs if r in resources and r != logical_id}
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(node: str, path: tuple[str, ...]) -> None:
        if state.get(node) == 2:
            return
        if state.get(node) == 1:
            raise ValueError(f"circular dependency: {' -> '.join(path + (node,))}")
        state[node] = 1
        for dep in sorted(deps[node]):
            visit(dep, path + (node,))
        state[node] = 2
        order.append(node)

    for logical_id in sorted(resources):
        visit(logical_id, ())
    return order
