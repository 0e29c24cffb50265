"""template.yaml itself deploys on the local stack: every resource is created."""

from __future__ import annotations

import datetime as dt
import json
import uuid

import pytest

from tests.support.template import template

from devstack.aws import LOCAL_PROVIDER_SECRET, LOCAL_SECRETS
from devstack.aws.stack import local_parameters

from .helpers import eventually

pytestmark = pytest.mark.timeout(120)


def test_every_resource_of_the_template_is_created(real_stack):
    s = real_stack
    declared = {logical_id for logical_id, resource in s.cfn_template["Resources"].items()
                if "Condition" not in resource or s._resolver.condition(resource["Condition"])}
    assert declared <= set(s.resources)
    assert {"BookingsTable", "PaymentEventsQueue", "PaymentEventsDeadLetterQueue", "OutboxDeadLetterQueue",
            "HoldExpiryStateMachine", "BookingApi", "HoldfastLayer"} <= set(s.resources)
    sam = template()["Resources"]
    functions = {name: r["Properties"] for name, r in sam.items() if r["Type"] == "AWS::Serverless::Function"}
    assert set(s.functions) == set(functions)
    sources = {f"{name}{event_id}" for name, props in functions.items()
               for event_id, event in (props.get("Events") or {}).items() if event["Type"] in ("SQS", "DynamoDB", "Schedule")}
    assert set(s.pollers) == sources and sources
    routes = sorted((r.method, r.resource) for r in s._api.routes)
    assert routes == sorted((e["Properties"]["Method"].upper(), e["Properties"]["Path"])
                            for props in functions.values() for e in (props.get("Events") or {}).values()
                            if e["Type"] == "Api")


def test_a_function_published_under_an_alias_is_routed_and_its_alias_arn_resolves(real_stack):
    """AutoPublishAlias (the SnapStart functions, tests/contract/test_snapstart_template.py):
    API Gateway integrates the alias, and the local stack runs the function behind it."""
    s = real_stack
    hold = [r for r in s._api.routes if (r.method, r.resource) == ("POST", "/events/{event_id}/bookings")]
    assert [r.function.logical_id for r in hold] == ["BookingsApiFunction"]
    function = s.functions["BookingsApiFunction"]
    assert s.resources["BookingsApiFunctionAliaslive"] == f"{function.arn}:live"
    versions = [lid for lid, t in s.resource_types.items() if t == "AWS::Lambda::Version" and lid.startswith("Bookings")]
    assert versions and s.resources[versions[0]] == f"{function.arn}:1"


def test_bookings_table_has_gsi1_stream_and_ttl(real_stack):
    ddb = real_stack.boto3_client("dynamodb")
    table = ddb.describe_table(TableName=real_stack.resources["BookingsTable"])["Table"]
    assert table["TableName"] == "holdfast-BookingsTable"
    gsi = table["GlobalSecondaryIndexes"]
    assert [(g["IndexName"], g["Projection"]["ProjectionType"]) for g in gsi] == [("gsi1", "KEYS_ONLY")]
    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    assert table["LatestStreamArn"] == real_stack.attributes["BookingsTable"]["StreamArn"]
    ttl = ddb.describe_time_to_live(TableName=real_stack.resources["BookingsTable"])["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "ttl"}


def test_payment_queues_are_fifo_with_redrive(real_stack):
    sqs = real_stack.boto3_client("sqs")
    queue = sqs.get_queue_attributes(QueueUrl=real_stack.resources["PaymentEventsQueue"],
                                     AttributeNames=["All"])["Attributes"]
    dlq = sqs.get_queue_attributes(QueueUrl=real_stack.resources["PaymentEventsDeadLetterQueue"],
                                   AttributeNames=["All"])["Attributes"]
    assert real_stack.resources["PaymentEventsQueue"].endswith("/holdfast-payment-events.fifo")
    assert queue["FifoQueue"] == "true" and dlq["FifoQueue"] == "true"
    assert queue["ContentBasedDeduplication"] == "false"
    assert queue["VisibilityTimeout"] == "180"
    assert json.loads(queue["RedrivePolicy"]) == {"deadLetterTargetArn": dlq["QueueArn"], "maxReceiveCount": 5}


def test_environment_and_secret_are_local(real_stack):
    env = real_stack.environment
    assert env["BOOKINGS_TABLE_NAME"] == "holdfast-BookingsTable"
    assert env["PAYMENT_EVENTS_QUEUE_URL"] == real_stack.resources["PaymentEventsQueue"]
    assert env["HOLD_EXPIRY_STATE_MACHINE_ARN"] == real_stack.resources["HoldExpiryStateMachine"]
    assert env["PROVIDER_API_URL"] == "http://127.0.0.1:8090/v3"
    assert env["PROVIDER_SHOP_ID"] == "100500"
    assert env["ALLOWED_WEBHOOK_NETWORKS"] == "127.0.0.1/32"
    assert env["CUSTOMER_IDENTITY_SOURCE"] == "header"
    assert env["PAYMENT_RETURN_URL"] == f"{real_stack.api_url}/booking.html?id={{booking_id}}"
    assert "POWERTOOLS_SERVICE_NAME" not in env  # differs per function
    assert real_stack.functions["BookingsApiFunction"].import_environment == {"POWERTOOLS_SERVICE_NAME": "bookings"}
    secret = real_stack.boto3_client("secretsmanager").get_secret_value(SecretId="holdfast/provider")
    assert json.loads(secret["SecretString"]) == LOCAL_PROVIDER_SECRET
    # one secret per purpose, each created with its local value under the name its parameter gives
    for parameter, value in LOCAL_SECRETS.items():
        secret = real_stack.boto3_client("secretsmanager").get_secret_value(SecretId=real_stack.parameters[parameter])
        assert json.loads(secret["SecretString"]) == value, parameter


def test_hold_expiry_state_machine_executes_and_reaches_its_task(real_stack, caplog):
    sfn = real_stack.boto3_client("stepfunctions")
    described = sfn.describe_state_machine(stateMachineArn=real_stack.resources["HoldExpiryStateMachine"])
    definition = json.loads(described["definition"])
    function_arn = definition["States"]["ExpireBucket"]["Parameters"]["FunctionName"]
    assert function_arn == real_stack.attributes["ExpireHoldFunction"]["Arn"]

    past = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    arn = sfn.start_execution(
        stateMachineArn=real_stack.resources["HoldExpiryStateMachine"], name=f"bk-{uuid.uuid4()}",
        input=json.dumps({"bucket": past, "remind_bucket": past}))["executionArn"]

    def finished():
        status = sfn.describe_execution(executionArn=arn)["status"]
        return status if status != "RUNNING" else None

    # the tick: wait, expire the bucket, check its payments, then remind the bucket its input
    # names; nothing else
    assert eventually(finished, timeout=60) == "SUCCEEDED"
    history = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    entered = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
    assert entered == ["WaitUntilBucketEnds", "ExpireBucket", "CheckPayments", "RemindBucket"]
    scheduled = [json.loads(e["taskScheduledEventDetails"]["parameters"]) for e in history
                 if e["type"] == "TaskScheduled"]
    assert [s["FunctionName"] for s in scheduled] == [
        function_arn, real_stack.attributes["ReconcilePaymentFunction"]["Arn"],
        real_stack.attributes["NotifierFunction"]["Arn"]]
    # each step also gets the tick's input as started (an execution without "index" reads every shard)
    tick = {"bucket": past, "remind_bucket": past}
    assert scheduled[0]["Payload"] == scheduled[1]["Payload"] == {"bucket": past, "tick": tick}
    assert scheduled[2]["Payload"] == {"remind_bucket": {"bucket": past, "tick": tick}}
    assert not [r for r in caplog.records if "NoSuchJsonPath" in r.getMessage()]


def test_a_page_carries_the_headers_cloudfront_adds_to_it(real_stack):
    """The stand-in that serves web/ locally sends what the distribution's response headers policy
    makes CloudFront send, read from the same resource."""
    import urllib.request

    resources = template()["Resources"]
    behaviour = resources["WebDistribution"]["Properties"]["DistributionConfig"]["DefaultCacheBehavior"]
    policy = resources[behaviour["ResponseHeadersPolicyId"]["Ref"]]["Properties"]["ResponseHeadersPolicyConfig"]
    security = policy["SecurityHeadersConfig"]
    hsts = security["StrictTransportSecurity"]
    expected = {
        "Strict-Transport-Security": f"max-age={hsts['AccessControlMaxAgeSec']}; includeSubDomains",
        # the challenge widget's origin is the stack's parameter: the sandbox's stand-in here
        "Content-Security-Policy": security["ContentSecurityPolicy"]["ContentSecurityPolicy"]["Fn::Sub"].replace(
            "${CaptchaWidgetOrigin}", local_parameters(real_stack.api_url)["CaptchaWidgetOrigin"]),
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": security["ReferrerPolicy"]["ReferrerPolicy"],
    }
    assert hsts["IncludeSubdomains"] is True and hsts["Preload"] is False
    assert "frame-ancestors 'none'" in expected["Content-Security-Policy"]
    for page in ("/", "/booking.html", "/app.js"):
        with urllib.request.urlopen(real_stack.api_url + page, timeout=10) as answer:
            sent = {name: answer.headers[name] for name in expected}
        assert sent == expected, page


def test_the_catalog_role_reads_the_table_and_can_write_nothing(real_stack):
    """Least privilege (issue 34): the public catalog's role as SAM translates it, resolved for the
    stack. No function may scan the table or batch-write it; the catalog reads no secret."""
    from tests.support import iam

    roles = iam.function_roles(real_stack)
    table = f"arn:aws:dynamodb:{real_stack.region}:123456789012:table/{real_stack.resources['BookingsTable']}"
    catalog = roles["CatalogApiFunction"]
    for action in ("GetItem", "Query", "BatchGetItem"):
        assert catalog.allows(f"dynamodb:{action}", table), action
    assert catalog.allows("dynamodb:Query", table + "/index/gsi1")
    for action in ("PutItem", "UpdateItem", "DeleteItem", "ConditionCheckItem", "BatchWriteItem", "Scan",
                   "DeleteTable", "UpdateTable"):
        assert not catalog.allows(f"dynamodb:{action}", table), action
    from devstack.aws.stack import LOCAL_SECRETS

    assert len(real_stack.secrets) == len(LOCAL_SECRETS) == 12   # one per purpose: each product's seed and its published public keys, the challenge verifier's key, the holder key
    for secret in real_stack.secrets.values():
        assert not catalog.allows("secretsmanager:GetSecretValue", secret), secret
    for name, role in roles.items():
        for action in ("Scan", "BatchWriteItem", "DescribeTable", "PartiQLSelect"):
            assert not role.allows(f"dynamodb:{action}", table), (name, action)
    assert roles["EventsApiFunction"].allows("dynamodb:PutItem", table)
