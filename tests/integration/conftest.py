"""The whole system on loopback: the embedded AWS stack deployed from template.yaml, the API on
its own port, and the payment sandbox with its webhooks aimed at the API.

Timings are shortened through configuration only (the template's parameters): reconciliation
checks every second or two and gives up after LIMIT seconds; the provider's key window is
KEY_WINDOW seconds of our clock. Everything else is the deployed code path.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import clock_costs
from tests.support.system import local_system

HERE = Path(__file__).resolve().parent
LIMIT = 15
KEY_WINDOW = 8
#: ResolutionWindowSeconds: longer than any test takes in real time between a case's opening and
#: its choice (the minutely sweeper, which lapses a case, also runs as real time passes); the
#: lapse is tested by moving the clock past it (test_conflict_cases.py)
RESOLUTION_WINDOW = 600
#: A hold that must lapse while its payment is still pending (a late payment's story), moved past
#: by `flows.move_past_the_hold`: its expiry tick, at the end of its 5-second bucket, comes at
#: least LIMIT - PAYING_HOLD - 5 seconds before the reconciliation limit, which counts from the
#: payment made after the hold. Both are real time a loaded machine may take: between the hold and
#: its payment, and between the lapse and what the test does before the limit (a test whose
#: provider is unreachable meanwhile gets a review at the limit). Every other hold a test lets
#: lapse is long (600 s) and passed by moving the clock, so no real delay lapses it early.
PAYING_HOLD = 5
#: Restarts before the sweeper hands a stuck reconciliation to an operator (the default is 5): each
#: restart waits SweepGraceSeconds x 2^(n-1) of real time, 31 s for five at a one-second grace.
SWEEP_RESTARTS = 3
#: HoldReminderSeconds: holds of 4 s or more get their reminder 2 s before the end
REMINDER = 2


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    # each test's share of the clock's moves, steps and sweeps, its teardown's idle wait included
    # (HOLDFAST_CLOCK_COSTS=path); this hook is the session's, so it picks this package's tests
    if not clock_costs.wanted() or HERE not in item.path.parents:
        yield
        return
    with clock_costs.record(item.nodeid):
        yield


@pytest.fixture(autouse=True)
def leaves_the_stack_idle():
    """After each test (its other fixtures torn down first: this one is set up first), the work it
    set going finishes before the next test starts: notifications, webhooks, reconciliations and
    mails under way are its own, not paid for (or counted) by the test after it. Timers it left for
    later (an unpaid hold's expiry) stay on the clock: whoever moves past them pays (docs/testing.md)."""
    yield
    clock_costs.settle_after_test()


# Package scope: the stack stops after the last test here, so a process that goes on to another
# folder's stack (make test runs the suite in two processes) never holds two at once.
@pytest.fixture(scope="package")
def system():
    with local_system(
        ReconcileScheduleSeconds="1,1,2",
        ReconcileLimitSeconds=str(LIMIT),
        ProviderKeyRetentionSeconds=str(KEY_WINDOW),
        ProviderTimeoutSeconds="3",
        SweepGraceSeconds="1",
        SweepMaxRestarts=str(SWEEP_RESTARTS),
        QueueRatePerMinute="20",   # one join or poll every 3 s, two at once: so that a
        QueueRateBurst="2",        # customer sending four joins together is limited
        HoldReminderSeconds=str(REMINDER),
        ResolutionWindowSeconds=str(RESOLUTION_WINDOW),
    ) as running:
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
    control.release()  # nothing held back leaks into the next test
