"""The local stack follows LocalStack's conventions far enough for its client: a
`localstack_client.session.Session()` reaches it through AWS_ENDPOINT_URL (which the stack sets
for its process) or through LOCALSTACK_HOST (host:edge port), and sees the deployed template."""
from __future__ import annotations

import pytest
from localstack_client.session import Session

pytestmark = pytest.mark.integration


def test_a_localstack_client_session_reaches_the_local_stack(system, monkeypatch):
    stack = system["stack"]
    table = stack.resources["BookingsTable"]
    assert table in Session(region_name=stack.region).client("dynamodb").list_tables()["TableNames"]

    monkeypatch.delenv("AWS_ENDPOINT_URL")
    monkeypatch.setenv("LOCALSTACK_HOST", stack.aws_endpoint.removeprefix("http://"))
    functions = Session(region_name=stack.region).client("lambda").list_functions()["Functions"]
    assert {f["FunctionName"] for f in functions} == {fn.function_name for fn in stack.functions.values()}
