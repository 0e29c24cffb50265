"""The template watches the system: alarms on what must wake someone, a dashboard of the sale, and
both read the metrics holdfast/observability.py emits (same namespace, names and dimension)."""
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
