"""The dev and test tools reach a local stack through one helper built on localstack_client
(devstack/aws/clients.py), pinned to that stack's edge endpoint; the admin CLI's local entry point
(devstack.admin) uses it only for a loopback endpoint, and the shipped CLI (holdfast.tools.cli) only ever
makes boto3's own clients."""
from __future__ import annotations

import pytest
from localstack_client.session import Session

from devstack import admin
from devstack.aws.clients import EdgeSession, edge_client
from holdfast.tools import cli


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
    client = admin.local_client("logs", "http://127.0.0.1:45125")
    assert made_by_localstack_client == ["logs"]
    assert client.meta.endpoint_url == "http://127.0.0.1:45125"


def test_the_cli_leaves_aws_itself_to_boto3(made_by_localstack_client, monkeypatch):
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    vpc = "https://vpce-1.logs.eu-central-1.vpce.amazonaws.com"
    for make in (cli.aws_client, admin.local_client):
        assert make("logs", "").meta.endpoint_url == "https://logs.eu-central-1.amazonaws.com"
        assert make("logs", vpc).meta.endpoint_url == vpc
    assert made_by_localstack_client == []


def test_the_shipped_cli_never_aims_at_the_local_stack_by_itself(made_by_localstack_client, monkeypatch):
    for name in ("AWS_ENDPOINT_URL", "HOLDFAST_API_URL", "HOLDFAST_ORGANIZER_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SystemExit):  # no API and no key unless configured
        cli.main(["reviews"])
    seen = []
    monkeypatch.setattr("holdfast.tools.metrics_report.collect", lambda client, stack, since: seen.append(client) or {})
    assert cli.main(["metrics", "--json"], clients=lambda service, endpoint: (service, endpoint)) == 0
    assert admin.main(["metrics", "--json"]) == 0
    assert seen[0] == ("logs", "")  # AWS itself
    assert seen[1].meta.endpoint_url == "http://127.0.0.1:4566"  # make run's stack
    assert made_by_localstack_client == ["logs"]


def test_make_invoke_reaches_the_stack_through_localstack_client(made_by_localstack_client):
    from devstack.invoke import lambda_client

    client = lambda_client("http://127.0.0.1:45126", "eu-central-1")
    assert made_by_localstack_client == ["lambda"]
    assert client.meta.endpoint_url == "http://127.0.0.1:45126"
