"""The local stack's pieces, on a stub template of its own (tests/devstack/fixtures)."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
import uuid

import pytest
import requests
from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from devstack.aws import LOCAL_PROVIDER_SECRET

from .helpers import eventually

pytestmark = pytest.mark.timeout(120)


def _table(stack):
    return stack.session().resource("dynamodb").Table(stack.resources["CounterTable"])


def _items(stack, pk):
    return _table(stack).query(KeyConditionExpression=Key("pk").eq(pk), ConsistentRead=True)["Items"]


# -- deployment from the template ------------------------------------------------------------------


def test_resources_come_from_the_template(stub_stack):
    s = stub_stack
    assert s.resources["CounterTable"] == "stub-CounterTable"
    assert s.resources["WorkQueue"].endswith("/123456789012/stub-work.fifo")
    assert s.resources["WorkflowStateMachine"] == (
        f"arn:aws:states:{s.region}:123456789012:stateMachine:stub-WorkflowStateMachine")
    assert s.resources["StubLayer"].startswith(f"arn:aws:lambda:{s.region}:123456789012:layer:")
    assert set(s.functions) == {"ApiFunction", "QueueWorkerFunction", "StreamReaderFunction", "TaskFunction"}
    assert set(s.pollers) == {"QueueWorkerFunctionWork", "StreamReaderFunctionOutbox"}

    table = s.boto3_client("dynamodb").describe_table(TableName="stub-CounterTable")["Table"]
    assert [i["IndexName"] for i in table["GlobalSecondaryIndexes"]] == ["gsi1"]
    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    ttl = s.boto3_client("dynamodb").describe_time_to_live(TableName="stub-CounterTable")
    assert ttl["TimeToLiveDescription"] == {"TimeToLiveStatus": "ENABLED", "AttributeName": "ttl"}

    sqs = s.boto3_client("sqs")
    attrs = sqs.get_queue_attributes(QueueUrl=s.resources["WorkQueue"], AttributeNames=["All"])["Attributes"]
    assert attrs["FifoQueue"] == "true"
    assert attrs["VisibilityTimeout"] == "1"
    assert json.loads(attrs["RedrivePolicy"]) == {
        "deadLetterTargetArn": s.attributes["WorkDeadLetterQueue"]["Arn"], "maxReceiveCount": 2}

    # the Lambda functions exist in the emulator too (with a placeholder zip)
    names = {f["FunctionName"] for f in s.boto3_client("lambda").list_functions()["Functions"]}
    assert names == {"stub-ApiFunction", "stub-QueueWorkerFunction", "stub-StreamReaderFunction",
                     "stub-TaskFunction"}

    secret = s.boto3_client("secretsmanager").get_secret_value(SecretId="stub/provider")
    assert json.loads(secret["SecretString"]) == LOCAL_PROVIDER_SECRET


def test_environment_is_the_union_of_the_functions(stub_stack):
    assert os.environ["COUNTER_TABLE"] == "stub-CounterTable"
    assert os.environ["GREETING"] == "hello"
    assert os.environ["TRUSTED_NETWORKS"] == "10.0.0.0/8,192.168.0.0/16"
    assert os.environ["AWS_ENDPOINT_URL"] == stub_stack.aws_endpoint
    assert os.environ["MOTO_PORT"] == stub_stack.aws_endpoint.rsplit(":", 1)[1]
    # differs per function: not process-wide, only set while each handler module is imported
    assert "ROLE_NAME" not in os.environ


# -- (1) serialised DynamoDB: conditional writes are atomic -------------------------------------------


def test_conditional_increments_never_exceed_capacity(stub_stack):
    capacity, threads, attempts = 100, 8, 20
    accepted = []
    errors = []
    key = {"pk": {"S": f"COUNTER#{uuid.uuid4()}"}, "sk": {"S": "META"}}

    def worker():
        ddb = stub_stack.boto3_client("dynamodb")
        ok = 0
        for _ in range(attempts):
            try:
                ddb.update_item(
                    TableName=stub_stack.resources["CounterTable"], Key=key,
                    UpdateExpression="ADD sold :one",
                    ConditionExpression="attribute_not_exists(sold) OR sold < :cap",
                    ExpressionAttributeValues={":one": {"N": "1"}, ":cap": {"N": str(capacity)}})
                ok += 1
            except ClientError as exc:
                if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    errors.append(exc)
        accepted.append(ok)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(60)
    assert errors == []
    assert sum(accepted) == capacity
    item = stub_stack.boto3_client("dynamodb").get_item(
        TableName=stub_stack.resources["CounterTable"], Key=key, ConsistentRead=True)["Item"]
    assert item["sold"] == {"N": "100"}


# -- (2) API Gateway stand-in ---------------------------------------------------------------------


def test_api_route_invokes_the_handler_with_a_proxy_event(stub_stack):
    response = requests.post(f"{stub_stack.api_url}/items/it-42/things?x=1&x=2&y=3",
                             data=b'{"n": 1}', headers={"X-Customer-Id": "c-1"}, timeout=10)
    assert response.status_code == 201
    assert response.headers["X-Stub"] == "1"
    assert response.headers["Content-Type"] == "application/json"
    assert response.raw.headers.getlist("Set-Cookie") == ["a=1", "b=2"]
    payload = response.json()
    assert payload["greeting"] == "hello"  # the layer's package was imported
    assert payload["role_at_import"] == "api"  # per-function variable, set while importing
    assert payload["function_name"] == "stub-ApiFunction"
    assert payload["remaining_ms_positive"] is True
    event = payload["event"]
    assert event["resource"] == "/items/{item_id}/things"
    assert event["path"] == "/items/it-42/things"
    assert event["httpMethod"] == "POST"
    assert event["pathParameters"] == {"item_id": "it-42"}
    assert event["queryStringParameters"] == {"x": "2", "y": "3"}
    assert event["multiValueQueryStringParameters"] == {"x": ["1", "2"], "y": ["3"]}
    assert event["headers"]["X-Customer-Id"] == "c-1"
    assert event["multiValueHeaders"]["X-Customer-Id"] == ["c-1"]
    assert event["body"] == '{"n": 1}'
    assert event["isBase64Encoded"] is False
    context = event["requestContext"]
    assert context["identity"]["sourceIp"] == "127.0.0.1"
    assert context["stage"] == "test"
    assert context["resourcePath"] == "/items/{item_id}/things"
    assert context["httpMethod"] == "POST"
    assert context["apiId"] == stub_stack.resources["StubApi"]
    assert abs(context["requestTimeEpoch"] - time.time() * 1000) < 10_000
    assert len(context["requestId"]) == 36


def test_api_get_without_body(stub_stack):
    response = requests.get(f"{stub_stack.api_url}/items/a%20b", timeout=10)
    assert response.status_code == 200
    event = response.json()["event"]
    assert event["pathParameters"] == {"item_id": "a b"}
    assert event["body"] is None
    assert event["queryStringParameters"] is None


def test_api_unknown_route_wrong_method_and_oversized_body(stub_stack):
    missing = requests.get(f"{stub_stack.api_url}/nope", timeout=10)
    assert missing.status_code == 404
    assert missing.json()["message"] == "Missing Authentication Token"
    assert missing.json()["error"]["code"] == "route_not_found"

    wrong = requests.delete(f"{stub_stack.api_url}/items/1", timeout=10)
    assert wrong.status_code == 405
    assert wrong.headers["Allow"] == "GET"

    too_big = requests.post(f"{stub_stack.api_url}/items/1/things", data=b"x" * (10 * 1024 * 1024 + 1),
                            timeout=30)
    assert too_big.status_code == 413

    just_fits = requests.post(f"{stub_stack.api_url}/items/1/things", data=b"y" * (1024 * 1024), timeout=30)
    assert just_fits.status_code == 201


def test_api_handler_exception_is_a_502(stub_stack):
    response = requests.get(f"{stub_stack.api_url}/boom", timeout=10)
    assert response.status_code == 502
    assert response.json() == {"message": "Internal server error"}


# -- (3) SQS poller -------------------------------------------------------------------------------


def test_sqs_partial_batch_failure_redelivers_then_dead_letters(stub_stack):
    sqs = stub_stack.boto3_client("sqs")
    queue = stub_stack.resources["WorkQueue"]
    sqs.send_message(QueueUrl=queue, MessageBody="fail", MessageGroupId="g-fail", MessageDeduplicationId="d1")
    sqs.send_message(QueueUrl=queue, MessageBody="ok", MessageGroupId="g-ok", MessageDeduplicationId="d2")

    # the failed record comes back after the 1 s visibility timeout, the succeeded one does not
    deliveries = eventually(lambda: len(_items(stub_stack, "SQS#fail")) == 2 and _items(stub_stack, "SQS#fail"))
    assert sorted(i["sk"].split("#")[0] for i in deliveries) == ["1", "2"]
    first = _items(stub_stack, "SQS#ok")
    assert len(first) == 1 and first[0]["sk"].startswith("1#")
    assert first[0]["group"] == "g-ok"
    assert first[0]["source"] == "aws:sqs"
    assert first[0]["arn"] == stub_stack.attributes["WorkQueue"]["Arn"]

    # after maxReceiveCount (2) receives, SQS's redrive policy moves it to the DLQ
    dlq = stub_stack.resources["WorkDeadLetterQueue"]

    def dead_lettered():
        got = sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10, WaitTimeSeconds=0)
        return got.get("Messages")

    messages = eventually(dead_lettered, timeout=15)
    assert [m["Body"] for m in messages] == ["fail"]
    assert len(_items(stub_stack, "SQS#fail")) == 2
    assert len(_items(stub_stack, "SQS#ok")) == 1
    left = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["ApproximateNumberOfMessages",
                                                                    "ApproximateNumberOfMessagesNotVisible"])
    assert left["Attributes"] == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}


def test_sqs_long_poll_does_not_block_other_sqs_calls(stub_stack):
    sqs = stub_stack.boto3_client("sqs")
    dlq_name = "stub-longpoll-probe"
    url = sqs.create_queue(QueueName=dlq_name)["QueueUrl"]
    started = threading.Event()

    def long_poll():
        started.set()
        stub_stack.boto3_client("sqs").receive_message(QueueUrl=url, WaitTimeSeconds=2)

    t = threading.Thread(target=long_poll)
    t.start()
    started.wait()
    time.sleep(0.2)
    t0 = time.monotonic()
    sqs.list_queues()
    assert time.monotonic() - t0 < 1.0
    t.join(10)


# -- (4) Step Functions with an in-process Lambda task ---------------------------------------------


def _run_execution(stack, payload):
    sfn = stack.boto3_client("stepfunctions")
    arn = sfn.start_execution(stateMachineArn=stack.resources["WorkflowStateMachine"],
                              name=f"run-{uuid.uuid4()}", input=json.dumps(payload))["executionArn"]

    def finished():
        described = sfn.describe_execution(executionArn=arn)
        return described if described["status"] != "RUNNING" else None

    described = eventually(finished, timeout=20)
    history = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    return described, history


def test_state_machine_waits_retries_by_exception_name_and_succeeds(stub_stack):
    t0 = time.monotonic()
    described, history = _run_execution(stub_stack, {"run": f"r-{uuid.uuid4()}", "fail_times": 2})
    assert described["status"] == "SUCCEEDED"
    assert json.loads(described["output"]) == {"outcome": "done", "attempt": 3}
    types = [e["type"] for e in history]
    assert "WaitStateEntered" in types
    failed = [e["taskFailedEventDetails"] for e in history if e["type"] == "TaskFailed"]
    assert [f["error"] for f in failed] == ["TransientStoreError", "TransientStoreError"]
    assert json.loads(failed[0]["cause"])["errorType"] == "TransientStoreError"
    assert types.count("TaskSucceeded") == 1
    # one hour of Wait and 200 s of retry intervals, compressed by wait_scale=0.0001
    assert time.monotonic() - t0 < 15


def test_state_machine_catch_after_retries_exhausted(stub_stack):
    described, history = _run_execution(stub_stack, {"run": f"r-{uuid.uuid4()}", "fail_times": 10})
    assert described["status"] == "FAILED"
    assert described["error"] == "TaskKeptFailing"
    assert [e["type"] for e in history].count("TaskFailed") == 4  # first try + 3 retries


def test_lambda_invoke_api_runs_the_handler_in_process(stub_stack):
    lam = stub_stack.boto3_client("lambda")
    ok = lam.invoke(FunctionName="stub-TaskFunction", Payload=json.dumps({"run": str(uuid.uuid4())}))
    assert "FunctionError" not in ok
    assert json.loads(ok["Payload"].read()) == {"outcome": "done", "attempt": 1}
    bad = lam.invoke(FunctionName="stub-TaskFunction",
                     Payload=json.dumps({"run": str(uuid.uuid4()), "fail_times": 1}))
    assert bad["FunctionError"]
    error = json.loads(bad["Payload"].read())
    assert error["errorType"] == "TransientStoreError"
    assert error["errorMessage"].startswith("attempt 1 of ")


# -- (5) DynamoDB Streams poller ------------------------------------------------------------------


def test_stream_poller_filters_by_event_name_and_key_prefix(stub_stack):
    ddb = stub_stack.boto3_client("dynamodb")
    table = stub_stack.resources["CounterTable"]
    tag = uuid.uuid4().hex[:8]
    ddb.put_item(TableName=table, Item={"pk": {"S": "E"}, "sk": {"S": f"OUTBOX#{tag}"}})
    ddb.put_item(TableName=table, Item={"pk": {"S": "E"}, "sk": {"S": f"OTHER#{tag}"}})
    # a MODIFY of an outbox item is filtered out by eventName
    ddb.update_item(TableName=table, Key={"pk": {"S": "E"}, "sk": {"S": f"OUTBOX#{tag}"}},
                    UpdateExpression="SET touched = :t", ExpressionAttributeValues={":t": {"BOOL": True}})
    seen = eventually(lambda: [i for i in _items(stub_stack, "SEEN") if tag in i["sk"]])
    time.sleep(0.5)  # give a wrongly delivered OTHER / MODIFY record time to show up
    seen = [i for i in _items(stub_stack, "SEEN") if tag in i["sk"]]
    assert [(i["sk"], i["event_name"]) for i in seen] == [(f"SEEN#OUTBOX#{tag}", "INSERT")]
    assert seen[0]["arn"] == stub_stack.attributes["CounterTable"]["StreamArn"]
    assert stub_stack.pollers["StreamReaderFunctionOutbox"].stats.filtered_out >= 2


def test_stream_records_reach_the_function_in_the_wire_form(stub_stack):
    ddb = stub_stack.boto3_client("dynamodb")
    tag = uuid.uuid4().hex[:8]
    ddb.put_item(TableName=stub_stack.resources["CounterTable"],
                 Item={"pk": {"S": "E"}, "sk": {"S": f"OUTBOX#{tag}-blob"}, "blob": {"B": b"\x00\xffbin"}})
    seen = eventually(lambda: [i for i in _items(stub_stack, "SEEN") if i["sk"] == f"SEEN#OUTBOX#{tag}-blob"])
    assert seen[0]["blob"] == base64.b64encode(b"\x00\xffbin").decode()
    assert seen[0]["created_type"] == "int"


def test_stream_poller_retries_then_sends_failure_to_destination(stub_stack):
    ddb = stub_stack.boto3_client("dynamodb")
    table = stub_stack.resources["CounterTable"]
    tag = uuid.uuid4().hex[:8]
    ddb.put_item(TableName=table, Item={"pk": {"S": "E"}, "sk": {"S": f"OUTBOX#{tag}-poison"},
                                        "poison": {"BOOL": True}})
    ddb.put_item(TableName=table, Item={"pk": {"S": "E"}, "sk": {"S": f"OUTBOX#{tag}-after"}})
    # the record after the poisoned one is processed once the poisoned one is given up on
    eventually(lambda: [i for i in _items(stub_stack, "SEEN") if i["sk"] == f"SEEN#OUTBOX#{tag}-after"])
    sqs = stub_stack.boto3_client("sqs")

    def failure_message():
        got = sqs.receive_message(QueueUrl=stub_stack.resources["StreamFailureQueue"], WaitTimeSeconds=0)
        return got.get("Messages")

    messages = eventually(failure_message)
    body = json.loads(messages[0]["Body"])
    assert body["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert body["requestContext"]["approximateInvokeCount"] == 3  # first try + MaximumRetryAttempts 2
    info = body["DDBStreamBatchInfo"]
    # as on AWS, the batch given up on runs from the failed record's checkpoint to the batch's end:
    # the poisoned record alone, or with the record after it when both were read in one batch
    assert info["batchSize"] in (1, 2)
    assert int(info["endSequenceNumber"]) - int(info["startSequenceNumber"]) == info["batchSize"] - 1
    assert info["streamArn"] == stub_stack.attributes["CounterTable"]["StreamArn"]
    assert not [i for i in _items(stub_stack, "SEEN") if i["sk"] == f"SEEN#OUTBOX#{tag}-poison"]


def test_the_stacks_clients_come_from_a_localstack_client_session_for_its_own_port(stub_stack, monkeypatch):
    from localstack_client.session import Session

    made: list[str] = []
    original = Session.client
    monkeypatch.setattr(Session, "client", lambda self, name, **kw: made.append(name) or original(self, name, **kw))
    # another stack's endpoint in the environment (tests run several stacks in one process)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    tables = stub_stack.boto3_client("dynamodb").list_tables()["TableNames"]
    assert stub_stack.resources["CounterTable"] in tables
    assert made == ["dynamodb"]
