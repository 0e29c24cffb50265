"""The gate controller against a fake backend on 127.0.0.1 (tests/support/gate_stub.py),
whose sync runs the real sequencing service on moto's in-process DynamoDB."""
from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from typing import Iterator

import boto3
import pytest
from moto import mock_aws

from gate_controller.backend import Backend
from gate_controller.controller import Gate
from gate_controller.journal import Journal
from holdfast.products.parking.adapters.gate_sync_store import GateSyncStore
from holdfast.products.parking.services.gate_sync import GateSync
from tests.support.fake_gate_applier import FakeApplier
from tests.support.gate_stub import FakeGateBackend
from tests.support.parking_tokens import LotKey
from tests.support.template import REPO, create_bookings_table  # noqa: F401 (REPO: the CLI test runs from it)

LOT, GATE, KEY = "lot-7", "gate-north", "gate-secret-key"
#: How long the gate waits for the fake backend. A partition is a refused connection and a lost
#: answer a closed one, both immediate; only a slow answer waits this long (a loaded CI machine
#: answered the first sync after more than 1 s once).
TIMEOUT = 10.0
CONFLICT_PLATE = "K777KK"


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(timezone.utc).replace(microsecond=0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def applier() -> FakeApplier:
    return FakeApplier(conflicting_plates=(CONFLICT_PLATE,))


@pytest.fixture(scope="module")
def dynamodb() -> Iterator[object]:
    """One in-process table per module (creating it is most of a test's setup); emptied per test."""
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-central-1")
    with mock_aws():
        client = boto3.client("dynamodb", region_name="eu-central-1")
        create_bookings_table(client, "gate-bookings")
        yield client


@pytest.fixture
def backend(applier, dynamodb) -> Iterator[FakeGateBackend]:
    for page in dynamodb.get_paginator("scan").paginate(TableName="gate-bookings", ProjectionExpression="pk, sk"):
        for key in page["Items"]:
            dynamodb.delete_item(TableName="gate-bookings", Key=key)
    fake = FakeGateBackend(LOT, GATE, KEY, GateSync(GateSyncStore("gate-bookings", dynamodb), applier), applier)
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def lot_key() -> LotKey:
    return LotKey()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def journal_path(tmp_path) -> str:
    return str(tmp_path / "gate.sqlite3")


@pytest.fixture
def gate(backend, journal_path, clock) -> Iterator[Gate]:
    journal = Journal(journal_path)
    try:
        yield Gate(journal, Backend(backend.url, LOT, GATE, KEY, timeout=TIMEOUT), LOT, GATE, clock)
    finally:
        journal.close()


def config(lot_key: LotKey, clock: Clock, *, offline_tickets: bool, subscriptions: list[str] = ()) -> dict:
    """GET .../config as parking-core's backend answers it."""
    day = timedelta(days=1)
    iso = lambda moment: moment.isoformat().replace("+00:00", "Z")  # noqa: E731
    return {
        "lot_id": LOT, "gate_id": GATE, "public_key": lot_key.public_b64, "kid": lot_key.kid, "alg": "Ed25519",
        "early_entry_minutes": 15, "policy": {"allow_offline_temporary_tickets": offline_tickets},
        "subscriptions": [{"subscription_id": f"sub-{plate}", "plate": plate, "valid_from": iso(clock.now - day),
                           "valid_to": iso(clock.now + day)} for plate in subscriptions],
        "subscriptions_valid_until": iso(clock.now + timedelta(seconds=600)),
    }
