"""The IAM matching the permission check relies on (tests/support/iam.py), on statements shaped
like the ones SAM writes. The check against the real roles runs in tests/parity and at every local
stack's teardown (tests/conftest.py)."""
from __future__ import annotations

from types import SimpleNamespace

from tests.support.iam import allowed, authorisations

TABLE = "arn:aws:dynamodb:eu-central-1:123456789012:table/holdfast-BookingsTable"
CRUD = {"Effect": "Allow", "Action": ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"],
        "Resource": [TABLE, TABLE + "/index/*"]}
STACK = SimpleNamespace(region="eu-central-1", secrets={
    "holdfast/provider": "arn:aws:secretsmanager:eu-central-1:123456789012:secret:holdfast/provider-AbCdEf"})


def test_actions_match_case_insensitively_and_resources_exactly():
    assert allowed([CRUD], "dynamodb:getitem", TABLE)
    assert not allowed([CRUD], "dynamodb:GetItem", TABLE.replace("Bookings", "bookings"))
    assert not allowed([CRUD], "dynamodb:DeleteItem", TABLE)
    assert not allowed([CRUD], "dynamodb:GetItem", TABLE + "-other")


def test_wildcards_follow_iam_not_glob():
    statement = {"Effect": "Allow", "Action": "states:Start*", "Resource": "arn:aws:states:*:*:stateMachine:hold-?"}
    assert allowed([statement], "states:StartExecution", "arn:aws:states:r:1:stateMachine:hold-1")
    assert not allowed([statement], "states:StartExecution", "arn:aws:states:r:1:stateMachine:hold-12")
    brackets = {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/[ab]"}
    assert allowed([brackets], "s3:GetObject", "arn:aws:s3:::b/[ab]")
    assert not allowed([brackets], "s3:GetObject", "arn:aws:s3:::b/a")


def test_an_explicit_deny_wins_and_not_action_excludes():
    deny = {"Effect": "Deny", "Action": "dynamodb:PutItem", "Resource": "*"}
    assert not allowed([CRUD, deny], "dynamodb:PutItem", TABLE)
    everything_but = {"Effect": "Allow", "NotAction": "dynamodb:DeleteTable", "Resource": "*"}
    assert allowed([everything_but], "dynamodb:PutItem", TABLE)
    assert not allowed([everything_but], "dynamodb:DeleteTable", TABLE)
    assert not allowed([], "dynamodb:GetItem", TABLE)


def test_a_transaction_is_authorised_item_by_item():
    call = {"service": "dynamodb", "action": "TransactWriteItems", "params": {"TransactItems": [
        {"Put": {"TableName": "holdfast-BookingsTable"}},
        {"ConditionCheck": {"TableName": "holdfast-BookingsTable"}},
        {"Update": {"TableName": "holdfast-BookingsTable"}}]}}
    assert authorisations(call, STACK) == [("dynamodb:PutItem", TABLE), ("dynamodb:ConditionCheckItem", TABLE),
                                           ("dynamodb:UpdateItem", TABLE)]
    assert not all(allowed([CRUD], a, r) for a, r in authorisations(call, STACK))


def test_resources_are_named_as_iam_names_them():
    query = {"service": "dynamodb", "action": "Query", "params": {"TableName": "holdfast-BookingsTable",
                                                                  "IndexName": "gsi1"}}
    assert authorisations(query, STACK) == [("dynamodb:Query", TABLE + "/index/gsi1")]
    secret = {"service": "secretsmanager", "action": "GetSecretValue", "params": {"SecretId": "holdfast/provider"}}
    assert authorisations(secret, STACK) == [("secretsmanager:GetSecretValue", STACK.secrets["holdfast/provider"])]
    send = {"service": "sqs", "action": "SendMessage",
            "params": {"QueueUrl": "http://127.0.0.1:5000/123456789012/holdfast-payment-events.fifo"}}
    assert authorisations(send, STACK) == [
        ("sqs:SendMessage", "arn:aws:sqs:eu-central-1:123456789012:holdfast-payment-events.fifo")]
    put = {"service": "events", "action": "PutEvents", "params": {"Entries": [{"EventBusName": "holdfast-notifications"}]}}
    assert authorisations(put, STACK) == [
        ("events:PutEvents", "arn:aws:events:eu-central-1:123456789012:event-bus/holdfast-notifications")]
