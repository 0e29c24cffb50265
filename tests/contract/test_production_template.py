"""The template runs in production: alarms on what must wake someone and a dashboard of the sale,
both reading the metrics holdfast/observability.py emits (same namespace, names and dimension); and
the customer routes behind the user pool authorizer, the others explicitly open."""
from __future__ import annotations

import json
import re

from holdfast import observability
from tests.support.template import template

RESOURCES = template()["Resources"]
GLOBALS = template()["Globals"]["Function"]
ALARMS = {name: r["Properties"] for name, r in RESOURCES.items() if r["Type"] == "AWS::CloudWatch::Alarm"}
FUNCTIONS = {name for name, r in RESOURCES.items() if r["Type"] == "AWS::Serverless::Function"}
EMITTED = {value for name, value in vars(observability).items() if name.isupper() and isinstance(value, str)
           and value[:1].isupper() and value != observability.NAMESPACE}


def metric_stats(props):
    if "MetricName" in props:
        return [{"Namespace": props["Namespace"], "MetricName": props["MetricName"],
                 "Dimensions": props.get("Dimensions", [])}]
    return [m["MetricStat"]["Metric"] for m in props.get("Metrics", []) if "MetricStat" in m]


def test_every_alarm_notifies_the_alarm_topic():
    assert RESOURCES["AlarmTopic"]["Type"] == "AWS::SNS::Topic"
    subscription = RESOURCES["AlarmEmailSubscription"]
    assert subscription["Properties"]["Endpoint"] == {"Ref": "AlarmEmail"}
    assert subscription["Condition"] == "HasAlarmEmail"
    for name, props in ALARMS.items():
        assert props["AlarmActions"] == [{"Ref": "AlarmTopic"}], name
        assert props["TreatMissingData"] == "notBreaching", name


def test_business_alarms_read_what_the_code_emits():
    wanted = {"ReviewsOpened": 0, "ReconciliationGiveUps": 0, "ExpiryLagSeconds": 60}
    found = {}
    for props in ALARMS.values():
        for metric in metric_stats(props):
            if metric["Namespace"] == observability.NAMESPACE:
                assert metric["MetricName"] in EMITTED
                assert metric["Dimensions"] == [{"Name": "service", "Value": {"Ref": "AWS::StackName"}}]
                found[metric["MetricName"]] = props["Threshold"]
    assert found == wanted
    assert GLOBALS["Environment"]["Variables"]["HOLDFAST_METRICS_SERVICE"] == {"Ref": "AWS::StackName"}
    assert GLOBALS["Environment"]["Variables"]["POWERTOOLS_METRICS_NAMESPACE"] == observability.NAMESPACE


def test_every_dead_letter_queue_has_an_alarm():
    queues = {name for name, r in RESOURCES.items() if r["Type"] == "AWS::SQS::Queue" and "DeadLetter" in name}
    watched = {m["Dimensions"][0]["Value"]["Fn::GetAtt"][0] for props in ALARMS.values() for m in metric_stats(props)
               if m["Namespace"] == "AWS/SQS"}
    assert queues and watched == queues


def test_every_function_is_watched_for_errors_and_throttles_and_every_machine_for_failures():
    for metric_name in ("Errors", "Throttles"):
        watched = [m["Dimensions"][0]["Value"]["Ref"] for props in ALARMS.values() for m in metric_stats(props)
                   if m["Namespace"] == "AWS/Lambda" and m["MetricName"] == metric_name]
        assert sorted(watched) == sorted(FUNCTIONS), metric_name
    machines = {name for name, r in RESOURCES.items() if r["Type"] == "AWS::Serverless::StateMachine"}
    failed = {m["Dimensions"][0]["Value"]["Ref"] for props in ALARMS.values() for m in metric_stats(props)
              if m["Namespace"] == "AWS/States" and m["MetricName"] == "ExecutionsFailed"}
    assert failed == machines
    api = [m for props in ALARMS.values() for m in metric_stats(props) if m["Namespace"] == "AWS/ApiGateway"]
    assert [m["MetricName"] for m in api] == ["5XXError"]
    assert api[0]["Dimensions"][0]["Value"] == RESOURCES["BookingApi"]["Properties"]["Name"]


def test_dashboard_shows_the_sale_from_emitted_metrics():
    body = RESOURCES["SaleDashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    widgets = json.loads(re.sub(r"\$\{AWS::\w+\}", "x", body))["widgets"]
    shown = {row[1] for widget in widgets for row in widget["properties"]["metrics"] if row[0] == "Holdfast"}
    assert shown <= EMITTED
    assert {"HoldsMade", "SoldOutAnswers", "Confirmations", "LatePaymentsRetaken", "LatePaymentsRefunded",
            "LatePaymentsToReview", "ExpiryLagSeconds"} <= shown


def test_tracing_is_on_for_functions_api_and_state_machines():
    assert GLOBALS["Tracing"] == "Active"
    assert RESOURCES["BookingApi"]["Properties"]["TracingEnabled"] is True
    for name, resource in RESOURCES.items():
        if resource["Type"] == "AWS::Serverless::StateMachine":
            assert resource["Properties"]["Tracing"] == {"Enabled": True}, name


def _route_callers():
    """(METHOD, path) -> what the route's handler calls to know its caller: customer_id,
    require_organizer, or neither (public), read from the function sources."""
    import ast

    from tests.support.handlers import REPO

    found = {}
    for source in (REPO / "functions").glob("*/app.py"):
        for node in ast.parse(source.read_text()).body:
            if not isinstance(node, ast.FunctionDef):
                continue
            called = {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute) \
                        and getattr(decorator.func.value, "id", "") == "app":
                    path = re.sub(r"<(\w+)>", r"{\1}", decorator.args[0].value)
                    kind = "customer" if "customer_id" in called else "organizer" if "require_organizer" in called \
                        else "public"
                    found[(decorator.func.attr.upper(), path)] = kind
    return found


def test_customer_routes_need_the_user_pool_and_the_rest_say_none():
    auth = RESOURCES["BookingApi"]["Properties"]["Auth"]
    assert auth["DefaultAuthorizer"] == "CustomerUserPool"
    assert auth["Authorizers"]["CustomerUserPool"]["UserPoolArn"] == {"Fn::GetAtt": ["CustomerUserPool", "Arn"]}
    assert RESOURCES["CustomerUserPool"]["Type"] == "AWS::Cognito::UserPool"
    callers = _route_callers()
    routes = {(e["Properties"]["Method"].upper(), e["Properties"]["Path"]): e["Properties"].get("Auth")
              for name in FUNCTIONS for e in (RESOURCES[name]["Properties"].get("Events") or {}).values()
              if e["Type"] == "Api"}
    assert set(routes) == set(callers)
    for route, route_auth in routes.items():
        if callers[route] == "customer":
            assert route_auth is None, f"{route} must keep the default (user pool) authorizer"
        else:
            assert route_auth == {"Authorizer": "NONE"}, f"{route} ({callers[route]}) is not for signed-in customers"
    assert callers[("POST", "/webhooks/payments")] == "public" and callers[("GET", "/events")] == "public"
    assert sum(kind == "customer" for kind in callers.values()) >= 9


def test_the_deploy_guide_lists_every_field_of_the_provider_secret():
    import json as _json

    from holdfast.wiring import SECRET_FIELDS
    from tests.support.handlers import REPO

    guide = (REPO / "docs" / "deploy.md").read_text()
    listed = set(re.findall(r"^\| `(\w+)` \| ", guide.split("The provider secret is one JSON object", 1)[1]
                            .split("\n\n", 2)[1], re.MULTILINE))
    assert listed == set(SECRET_FIELDS)
    command = re.search(r"--secret-string '([^']+)'", guide)
    assert command and set(_json.loads(command.group(1))) == set(SECRET_FIELDS)
