"""The whole system on loopback at the template's default timings: nothing shortened.

tests/integration shortens reconciliation to a 15-second limit (so a day's worth of checks is a
test of seconds there); that limit also ends a pending payment long before the provider's own
deadline, so neither the 24-hour limit as deployed nor the provider cancelling an unpaid payment
can happen on its stack. Here both do, on the stack's clock: each test moves it past the timer.
A stack of its own (one per process at a time): this package runs after tests/integration's
stack has stopped, or in another process.
"""
from __future__ import annotations

import pytest

from tests.support.system import local_system


@pytest.fixture(scope="package")
def system():
    with local_system() as running:
        yield running


@pytest.fixture
def api(system):
    return system["api"]


@pytest.fixture
def sandbox(system):
    control = system["control"]
    control.clear_faults()
    yield control
    control.clear_faults()
    control.release()
