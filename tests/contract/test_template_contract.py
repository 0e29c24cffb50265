"""The template, the state machines, the handlers and the sample events agree with each other."""
import ast
import json
import re
import tomllib
from pathlib import Path

import pytest

from tests.support.handlers import REPO, call, load_event
from tests.handlers.conftest import handler_env  # noqa: F401 - handlers check their configuration at import
from tests.support.template import template

RESOURCES = template()["Resources"]
FUNCTIONS = {name: r["Properties"] for name, r in RESOURCES.items() if r["Type"] == "AWS::Serverless::Function"}
MACHINES = {name: r["Properties"] for name, r in RESOURCES.items() if r["Type"] == "AWS::Serverless::StateMachine"}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_has_its_handler(name):
    props = FUNCTIONS[name]
    folder = Path(props["CodeUri"]).name
    module_name, function_name = props["Handler"].split(".")
    source = REPO / props["CodeUri"] / f"{module_name}.py"
    assert source.is_file() and folder
    # Read, not imported: a handler checks its configuration and the secret when imported (its
    # cold start), which needs AWS. The handler and parity suites import every one of them.
    defined = {node.name for node in ast.parse(source.read_text()).body if isinstance(node, ast.FunctionDef)}
    assert function_name in defined


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_state_machine_placeholders_and_substitutions_match(name):
    props = MACHINES[name]
    text = (REPO / props["DefinitionUri"]).read_text()
    json.loads(text)
    placeholders = set(re.findall(r"\$\{(\w+)\}", text))
    assert placeholders == set(props.get("DefinitionSubstitutions", {}))
    assert "arn:aws:lambda" not in text, "no literal function ARNs in a definition"


def test_api_routes_are_explicit_and_served(handler_env):
    routes = []
    for name, props in FUNCTIONS.items():
        for event in (props.get("Events") or {}).values():
            if event["Type"] == "Api":
                routes.append((Path(props["CodeUri"]).name, event["Properties"]["Method"].upper(), event["Properties"]["Path"]))
    assert routes, "the template declares API routes"
    for folder, method, path in routes:
        assert "proxy+" not in path
        concrete = re.sub(r"\{(\w+)\}", "x", path)
        event = {"resource": path, "path": concrete, "httpMethod": method, "headers": {}, "multiValueHeaders": {},
                 "pathParameters": dict.fromkeys(re.findall(r"\{(\w+)\}", path), "x"), "body": None,
                 "requestContext": {"requestId": "r", "identity": {"sourceIp": "192.0.2.1"}}}
        status, body = call(folder, event)
        assert not (status == 404 and body["error"]["code"] == "route_not_found"), (folder, method, path)


def test_layer_requirements_match_the_project_pins():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    pinned = set(pyproject["project"]["dependencies"])
    layer = {line.strip() for line in (REPO / "layers/holdfast/requirements.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")}
    assert layer == pinned


@pytest.mark.parametrize("path", sorted(p.name for p in (REPO / "events").glob("*.json")))
def test_sample_events_parse(path):
    from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent, DynamoDBStreamEvent, SQSEvent

    event = load_event(path)
    if "httpMethod" in event:
        parsed = APIGatewayProxyEvent(event)
        assert parsed.http_method in ("GET", "POST", "PATCH", "DELETE") and parsed.request_context.identity.source_ip
    elif event.get("Records", [{}])[0].get("eventSource") == "aws:sqs":
        body = json.loads(next(iter(SQSEvent(event).records)).body)
        if "detail" in body:  # an EventBridge event delivered by the notifications rule
            assert body["source"] == "holdfast.bookings" and body["detail"]["type"] == body["detail-type"]
        elif "export_id" in body:  # an export job (POST /organizers/me/exports)
            assert body["export_id"].startswith("exp_") and body["organizer_id"]
        else:
            assert body["object_id"]
    elif event.get("Records", [{}])[0].get("EventSource") == "aws:sns":   # SES's mail feedback
        from aws_lambda_powertools.utilities.data_classes import SNSEvent

        message = json.loads(next(iter(SNSEvent(event).records)).sns.message)
        assert message["eventType"] in ("Bounce", "Complaint") and message["mail"]["destination"]
    elif "Records" in event:
        assert next(iter(DynamoDBStreamEvent(event).records)).dynamodb.new_image["type"]
    elif event.get("detail-type") == "Scheduled Event":
        assert event["source"] == "aws.events"
    elif "remind_booking_id" in event:  # the hold expiry state machine's reminder task input
        assert event["remind_booking_id"]
    elif "remind_bucket" in event:  # the same, for every hold of an expiry bucket (a tick's reminder step)
        assert event["remind_bucket"]["bucket"]
    elif "step" in event:  # the event cancellation state machine's task input
        assert event["step"] in ("list", "settle", "finish") and event["event_id"] and event["reason"]
    else:
        assert event["booking_id"] and ("hold_expires_at" in event or "wait_seconds" in event)


def test_the_export_job_function_knows_its_queues_receive_count():
    """The export job function records a job failed on the queue's last receive before the
    dead-letter queue; its EXPORT_JOB_RECEIVES is that queue's maxReceiveCount."""
    resources = template()["Resources"]
    receives = resources["ExportJobsQueue"]["Properties"]["RedrivePolicy"]["maxReceiveCount"]
    variables = resources["ExportJobFunction"]["Properties"]["Environment"]["Variables"]
    assert int(variables["EXPORT_JOB_RECEIVES"]) == int(receives)


def test_the_admin_function_gives_up_on_an_export_job_when_its_message_can_no_longer_come():
    """A job still running EXPORT_JOB_GIVE_UP_SECONDS after its message was queued reads failed:
    that is ExportJobsQueue's MessageRetentionPeriod (no receive after it) plus ExportJobFunction's
    Timeout (the last receive's invocation ends by then)."""
    resources = template()["Resources"]
    retention = int(resources["ExportJobsQueue"]["Properties"]["MessageRetentionPeriod"])
    timeout = int(resources["ExportJobFunction"]["Properties"]["Timeout"])
    variables = resources["AdminApiFunction"]["Properties"]["Environment"]["Variables"]
    assert int(variables["EXPORT_JOB_GIVE_UP_SECONDS"]) == retention + timeout
