"""A function that starts a state machine needs both its ARN (an environment variable) and the
right to start it (a policy): with only one, it fails on AWS, and the local stack, where every
function shares one process and one environment, cannot show it. The template must pair them."""
from __future__ import annotations

from typing import Any

from tests.support.handlers import REPO
from tests.support.template import template

# wiring factories whose services start reconciliation (payments, and what is built on it)
STARTS_RECONCILIATION = ("wiring.payments(", "wiring.reconciliation(", "wiring.reviews(",
                         "wiring.reconciliation_starter(")


def _machine(value: Any, machines: dict[str, dict[str, Any]]) -> str:
    """The state machine a Ref, a GetAtt or a Sub of the machine's fixed name points at."""
    if isinstance(value, dict) and "Ref" in value:
        return value["Ref"]
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return value["Fn::GetAtt"][0]
    text = value.get("Fn::Sub") if isinstance(value, dict) else None
    for logical_id, props in machines.items():
        name = (props.get("Name") or {}).get("Fn::Sub") if isinstance(props.get("Name"), dict) else None
        if isinstance(text, str) and name and (text == name or text.endswith(":stateMachine:" + name)):
            return logical_id
    raise AssertionError(f"cannot tell which state machine {value!r} names")


def test_every_function_can_start_exactly_the_machines_it_is_told_of():
    resources = template()["Resources"]
    machines = {k: r["Properties"] for k, r in resources.items() if r["Type"] == "AWS::Serverless::StateMachine"}
    checked = 0
    for name, resource in resources.items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        props = resource["Properties"]
        variables = (props.get("Environment") or {}).get("Variables") or {}
        told = {_machine(v, machines) for k, v in variables.items() if k.endswith("_STATE_MACHINE_ARN")}
        allowed = {_machine(p["StepFunctionsExecutionPolicy"]["StateMachineName"], machines)
                   for p in props.get("Policies") or [] if isinstance(p, dict) and "StepFunctionsExecutionPolicy" in p}
        assert told == allowed, f"{name}: told of {sorted(told)}, may start {sorted(allowed)}"
        code = (REPO / props["CodeUri"] / "app.py").read_text()
        if any(call in code for call in STARTS_RECONCILIATION):
            assert "ReconciliationStateMachine" in told, f"{name} reaches payments but cannot start reconciliation"
            checked += 1
    assert checked >= 3
