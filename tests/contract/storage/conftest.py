"""One storage contract, three stores: every case of this package runs against the in-memory fake
(tests/support/fakes.py, and the table's store of fake_table.py: fake_store.py with the products'
fake parts), the adapter on moto in process (as tests/unit runs it, with the local stack's
transactions and queries that tests/conftest.py installs) and the adapter on DynamoDB Local,
AWS's own emulator.

The backend is a package-scoped parameter, so pytest runs every case on one backend before it
moves to the next: one mock_aws and one table for moto, and one table for DynamoDB Local in the
process's one JVM (tests/conftest.py's `dynamodb_local`, shared with the correctness races). Cases
never share keys: each takes fresh ids from ``ids``.
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import boto3
import pytest
from boto3.dynamodb.types import TypeDeserializer
from moto import mock_aws

from holdfast.adapters.dynamo import BookingStore
from holdfast.adapters.mail_policy_store import MailPolicyStore
from holdfast.products.parking.adapters.gate_sync_store import GateSyncStore
from holdfast.adapters.surge import SurgeStore
from tests.support import fakes
from tests.support.fake_mail import FakeMailPolicy
from tests.support.fake_table import FakeTableStore
from tests.support.template import create_bookings_table

BACKENDS = ("fake", "moto", "dynamodb_local")
REGION = "eu-central-1"


@dataclass
class Backend:
    """The ports under test, all over one table, and a look at a stored item by its key."""

    name: str
    gate_sync: Any
    rate_limits: Any
    surge: Any
    notifications: Any
    resources: Any
    waitlist: Any
    #: The table's store: holds and changes (``commit``), booking, event and inventory reads, the
    #: expiry index, the review queue and cancellations, and the products' parts (parking's lots,
    #: gates, tickets, passes, exit payments and gate cases; appointments' resources).
    store: Any
    raw: Callable[[str, str], dict[str, Any] | None]
    #: the mail policy (adapters/mail_policy_store.py; tests/support/fake_mail.py)
    mail: Any = None


def _fake_backend() -> Backend:
    table = fakes.MemoryTable()
    store = FakeTableStore(table)
    return Backend("fake", fakes.FakeGateSyncLedger(table), fakes.FakeRateLimits(table), fakes.FakeSurgeQueue(table),
                   fakes.FakeNotificationLog(table), store, fakes.FakeWaitlist(table), store, table.get,
                   FakeMailPolicy(table))


def _adapter_backend(name: str, client: Any, table: str) -> Backend:
    create_bookings_table(client, table)
    client.get_waiter("table_exists").wait(TableName=table, WaiterConfig={"Delay": 0.2, "MaxAttempts": 50})
    store, surge = BookingStore(table, client), SurgeStore(table, client)
    deserializer = TypeDeserializer()

    def raw(pk: str, sk: str) -> dict[str, Any] | None:
        item = client.get_item(TableName=table, ConsistentRead=True,
                               Key={"pk": {"S": pk}, "sk": {"S": sk}}).get("Item")
        return None if item is None else {k: deserializer.deserialize(v) for k, v in item.items()}

    return Backend(name, GateSyncStore(table, client), surge, surge, store, store, store, store, raw,
                   MailPolicyStore(table, client))


@pytest.fixture(scope="package", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "fake":
        yield _fake_backend()
    elif request.param == "moto":
        os.environ.setdefault("AWS_DEFAULT_REGION", REGION)
        with mock_aws():
            yield _adapter_backend("moto", boto3.client("dynamodb", region_name=REGION), "contract-bookings")
    else:
        # the process's one DynamoDB Local (tests/conftest.py), shared with the correctness races
        server = request.getfixturevalue("dynamodb_local")
        yield _adapter_backend("dynamodb_local", server.client(), f"contract-bookings-{uuid.uuid4().hex[:8]}")


@pytest.fixture
def ids() -> Callable[[str], str]:
    """Fresh ids for one case: ``ids("lot")`` is ``lot-<random>``, the same within the case."""
    taken: dict[str, str] = {}

    def fresh(name: str) -> str:
        return taken.setdefault(name, f"{name}-{uuid.uuid4().hex[:10]}")

    return fresh
