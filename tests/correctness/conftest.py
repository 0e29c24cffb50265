"""Backends for the correctness tests.

``store_backend`` runs each test twice: on a moto server whose DynamoDB request handling is
serialised (moto's conditional writes are not atomic under concurrency without that), and on
DynamoDB Local, AWS's own emulator, installed and started by ``devstack.dynamodb_local``. Both
listen on 127.0.0.1 only. Each test gets a fresh table built from template.yaml's key schema.
"""
from __future__ import annotations

import logging
import os
import threading
import uuid
from dataclasses import dataclass
from typing import Any, Iterator

import boto3
import pytest
from botocore.config import Config

from devstack.dynamodb_local import FAKE_CREDENTIALS, REGION
from holdfast.adapters.dynamo import BookingStore
from tests.support.template import create_bookings_table

#: Enough HTTP connections for every worker thread of a test (urllib3 otherwise drops the extras).
MAX_CONNECTIONS = 64


# ----------------------------------------------------------------------- moto, made atomic

class _SerialisedDynamoDB:
    """Wrap moto's BaseResponse.call_action so DynamoDB requests to the given server ports run one
    at a time. Requests for other services, other servers, or in-process mock_aws are untouched."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.ports: set[int] = set()
        self._original: Any = None

    def install(self, port: int) -> None:
        from moto.core.responses import BaseResponse

        self.ports.add(port)
        if self._original is not None:
            return
        original = self._original = BaseResponse.call_action
        serialiser = self

        def call_action(response_self: Any) -> Any:
            if getattr(response_self, "service_name", None) == "dynamodb" and serialiser._ours(response_self):
                with serialiser.lock:
                    return original(response_self)
            return original(response_self)

        BaseResponse.call_action = call_action  # type: ignore[method-assign]
        _install_single_snapshot()

    def _ours(self, response: Any) -> bool:
        parsed = getattr(response, "parsed_url", None)
        try:
            return parsed is not None and parsed.port in self.ports
        except ValueError:
            return False

    def uninstall(self, port: int) -> None:
        from moto.core.responses import BaseResponse

        self.ports.discard(port)
        if not self.ports and self._original is not None:
            BaseResponse.call_action = self._original  # type: ignore[method-assign]
            self._original = None


SERIALISED = _SerialisedDynamoDB()


def _install_single_snapshot() -> None:
    """moto's transactions copy whole tables; the local stack's DynamoDB-semantics replacement
    (devstack/aws/transactions.py) checks every condition first and copies only touched items."""
    from devstack.aws import queries, transactions

    transactions.install()
    queries.install()


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)   # one log line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    SERIALISED.install(port)
    try:
        yield f"http://{host}:{port}"
    finally:
        SERIALISED.uninstall(port)
        server.stop()


@pytest.fixture(scope="session")
def dynamodb_local_endpoint(dynamodb_local) -> str:
    """The process's one DynamoDB Local (tests/conftest.py; installed on first use)."""
    return dynamodb_local.endpoint


def make_client(endpoint: str) -> Any:
    return boto3.client(
        "dynamodb", endpoint_url=endpoint, region_name=REGION,
        config=Config(max_pool_connections=MAX_CONNECTIONS, retries={"max_attempts": 3, "mode": "standard"},
                      connect_timeout=5, read_timeout=30),
        **FAKE_CREDENTIALS,
    )


@dataclass
class Backend:
    name: str
    endpoint: str
    client: Any
    table: str

    def store(self) -> BookingStore:
        return BookingStore(self.table, self.client)


@pytest.fixture(params=["moto", "dynamodb_local"])
def store_backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    endpoint = request.getfixturevalue("moto_endpoint" if request.param == "moto" else "dynamodb_local_endpoint")
    client = make_client(endpoint)
    table = f"corr-{uuid.uuid4().hex[:12]}"   # DynamoDB Local rejects names under 3 characters
    create_bookings_table(client, table)
    client.get_waiter("table_exists").wait(TableName=table, WaiterConfig={"Delay": 0.2, "MaxAttempts": 50})
    try:
        yield Backend(request.param, endpoint, client, table)
    finally:
        client.delete_table(TableName=table)


@pytest.fixture(autouse=True, scope="session")
def _one_snapshot_per_transaction() -> None:
    """Behaviour-preserving speed-up of moto's transactions, for the server and mock_aws alike."""
    _install_single_snapshot()


@pytest.fixture(autouse=True, scope="session")
def _fake_aws_environment() -> Iterator[None]:
    """Region and obviously fake credentials, so nothing can reach a real account."""
    saved = {key: os.environ.get(key) for key in ("AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ["AWS_DEFAULT_REGION"] = REGION
    os.environ["AWS_ACCESS_KEY_ID"] = FAKE_CREDENTIALS["aws_access_key_id"]
    os.environ["AWS_SECRET_ACCESS_KEY"] = FAKE_CREDENTIALS["aws_secret_access_key"]
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
