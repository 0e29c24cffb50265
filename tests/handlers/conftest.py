"""Handlers on moto with the template's environment: table, queue, secret, state machine."""
from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws

from holdfast import wiring
from tests.support.template import create_bookings_table

REGION = "eu-central-1"
#: The organizer the handler tests sign in as (X-Api-Key), seeded hashed like any organizer.
ORGANIZER_KEY = "organizer-test-key"
HASH_KEY = "handler-api-key-hash-key-0123"
OTHER_KEY = "organizer-test-key-2"
#: The handler tests' secrets, one per purpose as on AWS, and the variables naming them.
SECRETS = {
    "handler/provider": {"secret_key": "unused-in-these-tests"},
    "handler/platform-key": {"platform_api_key": "platform-test-key-0123"},
    "handler/organizer-key-hash": {"api_key_hash_key": HASH_KEY},
    "handler/admission-token": {"admission_token_key": "handler-admission-key-0123456789"},
    "handler/pseudonym": {"pseudonym_key": "handler-pseudonym-key-0123456789"},
    "handler/webhook-key": {"webhook_key": "handler-webhook-key-0123456789"},
    "handler/holder-key": {"holder_key": "handler-holder-key-0123456789"},
}
SECRET_VARIABLES = {"PROVIDER_SECRET_NAME": "handler/provider", "PLATFORM_KEY_SECRET_NAME": "handler/platform-key",
                    "ORGANIZER_KEY_HASH_SECRET_NAME": "handler/organizer-key-hash",
                    "ADMISSION_TOKEN_SECRET_NAME": "handler/admission-token",
                    "PSEUDONYM_SECRET_NAME": "handler/pseudonym", "WEBHOOK_KEY_SECRET_NAME": "handler/webhook-key",
                    "HOLDER_KEY_SECRET_NAME": "handler/holder-key"}


@pytest.fixture
def handler_env(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        create_bookings_table(dynamodb, "handler-bookings")
        sqs = boto3.client("sqs", region_name=REGION)
        queue = sqs.create_queue(QueueName="handler-events.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        attempts = sqs.create_queue(QueueName="handler-webhook-attempts")["QueueUrl"]
        secrets = boto3.client("secretsmanager", region_name=REGION)
        for name, value in SECRETS.items():
            secrets.create_secret(Name=name, SecretString=json.dumps(value))
        sfn = boto3.client("stepfunctions", region_name=REGION)
        machine = sfn.create_state_machine(
            name="hold-expiry", roleArn="arn:aws:iam::123456789012:role/sfn",
            definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}),
        )["stateMachineArn"]
        env = {
            "BOOKINGS_TABLE_NAME": "handler-bookings", "PAYMENT_EVENTS_QUEUE_URL": queue,
            "WEBHOOK_ATTEMPTS_QUEUE_URL": attempts,
            **SECRET_VARIABLES, "PROVIDER_API_URL": "http://127.0.0.1:9/v3",
            "PROVIDER_SHOP_ID": "100500", "CUSTOMER_IDENTITY_SOURCE": "header",
            "HOLDFAST_DEPLOYMENT": "local",
            "HOLDFAST_ID_SALT": "handler-tests-deployment",
            "HOLD_EXPIRY_STATE_MACHINE_ARN": machine, "ALLOWED_WEBHOOK_NETWORKS": "185.71.76.0/27,127.0.0.1/32",
            "POWERTOOLS_TRACE_DISABLED": "true", "POWERTOOLS_LOG_LEVEL": "WARNING",
        }
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        wiring.reset()
        from holdfast.adapters.aws import clear_secret_cache
        clear_secret_cache()
        from devstack import organizers
        organizers.seed("handler-bookings", dynamodb, HASH_KEY,
                        (("org-test", "Test organizer", ORGANIZER_KEY), ("org-other", "Other organizer", OTHER_KEY)))
        yield {"queue_url": queue, "sqs": sqs, "sfn": sfn, "machine": machine, "webhook_attempts_url": attempts}
        wiring.reset()


def organizer_caller():
    """The Caller the handler tests' organizer key resolves to (for objects a test makes through a
    service directly, so that the organizer routes see them as its own)."""
    return wiring.organizers().authenticate(ORGANIZER_KEY)
