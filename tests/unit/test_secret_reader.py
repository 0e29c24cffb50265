"""adapters/aws.read_secret: one GetSecretValue per secret per five minutes, a JSON object or a refusal."""
from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws

from holdfast.adapters import aws


@pytest.fixture
def secrets(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    aws.clear_secret_cache()
    with mock_aws():
        yield boto3.client("secretsmanager")
    aws.clear_secret_cache()


def test_a_read_secret_is_reused_until_its_age_runs_out(secrets, monkeypatch):
    secrets.create_secret(Name="app/provider", SecretString=json.dumps({"secret_key": "first"}))
    clock = [1000.0]
    monkeypatch.setattr(aws.time, "monotonic", lambda: clock[0])
    assert aws.read_secret("app/provider") == {"secret_key": "first"}
    secrets.put_secret_value(SecretId="app/provider", SecretString=json.dumps({"secret_key": "rotated"}))
    clock[0] += aws.SECRET_MAX_AGE_SECONDS - 1
    assert aws.read_secret("app/provider") == {"secret_key": "first"}
    clock[0] += 1
    assert aws.read_secret("app/provider") == {"secret_key": "rotated"}


def test_clearing_the_cache_reads_the_secret_again(secrets):
    secrets.create_secret(Name="app/provider", SecretString=json.dumps({"secret_key": "first"}))
    assert aws.read_secret("app/provider")["secret_key"] == "first"
    secrets.put_secret_value(SecretId="app/provider", SecretString=json.dumps({"secret_key": "rotated"}))
    aws.clear_secret_cache()
    assert aws.read_secret("app/provider")["secret_key"] == "rotated"


@pytest.mark.parametrize("stored", ["not json", json.dumps(["a", "list"])])
def test_a_secret_that_is_not_a_json_object_is_refused(secrets, stored):
    secrets.create_secret(Name="app/broken", SecretString=stored)
    with pytest.raises(RuntimeError, match="must be a JSON object"):
        aws.read_secret("app/broken")


def test_every_secret_of_a_container_is_read_through_one_client(secrets, monkeypatch):
    """Issue 49: a start that checks three secrets built three botocore clients (~20 ms of CPU
    each after the first); now one, until the cache is cleared (a test, a SnapStart restore)."""
    for name in ("app/a", "app/b", "app/c"):
        secrets.create_secret(Name=name, SecretString=json.dumps({"key": name}))
    built = []
    real_client = boto3.client
    monkeypatch.setattr(aws.boto3, "client", lambda *a, **k: built.append(a) or real_client(*a, **k))
    assert [aws.read_secret(name)["key"] for name in ("app/a", "app/b", "app/c")] == ["app/a", "app/b", "app/c"]
    assert built == [("secretsmanager",)]
    aws.clear_secret_cache()
    assert aws.read_secret("app/a")["key"] == "app/a"
    assert built == [("secretsmanager",)] * 2
