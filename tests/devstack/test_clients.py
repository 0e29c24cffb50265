"""The dev and test tools reach a local stack through one helper built on localstack_client
(devstack/aws/clients.py), pinned to that stack's edge endpoint; the admin CLI uses it only for a
loopback endpoint and leaves AWS itself to boto3's defaults."""
from __future__ import annotations

import pytest
from localstack_client.session import Session

from devstack.aws.clients import EdgeSession, edge_client
from holdfast import cli


@pytest.fixture
def made_by_localstack_client(monkeypatch):
    """The services for which a localstack_client session made a client, in order."""
    made: list[str] = []
    original = Session.client

    def spy(self, service_name, **kwargs):
        made.append(service_name)
        return original(self, service_name, **kwargs)

    monkeypatch.setattr(Session, "client", spy)
    return made


def test_a_client_keeps_to_its_stack_while_another_stack_owns_aws_endpoint_url(monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
    client = edge_client("http://127.0.0.1:45123", "dynamodb", "eu-central-1")
    assert client.meta.endpoint_url == "http://127.0.0.1:45123"
    assert client.meta.region_name == "eu-central-1"
    table = EdgeSession("http://127.0.0.1:45124/", "eu-central-1").resource("dynamodb").Table("t")
    assert table.meta.client.meta.endpoint_url == "http://127.0.0.1:45124"


def test_an_endpoint_without_a_port_is_refused():
    with pytest.raises(ValueError, match="scheme://host:port"):
        EdgeSession("127.0.0.1", "eu-central-1")


def test_the_cli_reaches_a_loopback_stack_through_localstack_client(made_by_localstack_client, monkeypatch):
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    client = cli._aws_client("logs", "http://127.0.0.1:45125")
    assert made_by_localstack_client == ["logs"]
    assert client.meta.endpoint_url == "http://127.0.0.1:45125"


def test_the_cli_leaves_aws_itself_to_boto3(made_by_localstack_client, monkeypatch):
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    assert cli._aws_client("logs", "").meta.endpoint_url == "https://logs.eu-central-1.amazonaws.com"
    vpc = "https://vpce-1.logs.eu-central-1.vpce.amazonaws.com"
    assert cli._aws_client("logs", vpc).meta.endpoint_url == vpc
    assert made_by_localstack_client == []


def test_make_invoke_reaches_the_stack_through_localstack_client(made_by_localstack_client):
    from devstack.invoke import lambda_client

    client = lambda_client("http://127.0.0.1:45126", "eu-central-1")
    assert made_by_localstack_client == ["lambda"]
    assert client.meta.endpoint_url == "http://127.0.0.1:45126"
