"""Session-wide: every local stack's functions are held to their IAM roles.

moto enforces no IAM. When a EmbeddedStack stops, the AWS calls its functions made (recorded by
devstack/aws/calls.py) are checked against each function's role as SAM translates template.yaml;
an action the role does not allow fails the test that stopped the stack (an error at teardown),
naming function, action and resource. Grants no function exercised in any stack are reported at
the end of the run (least privilege), not failed: a short test run exercises only some paths.
"""
from __future__ import annotations

from collections import defaultdict

import botocore.loaders
import botocore.session
import pytest

from devstack.aws import EmbeddedStack
from devstack.aws import calls as aws_calls
from devstack.aws import dynamodb_answers, queries, transactions
from devstack.dynamodb_local import SHORT_RUN_JVM_OPTIONS, DynamoDBLocal
from tests.support import iam

_checks: dict[str, int] = defaultdict(int)                        # template -> stacks checked
_unused: dict[str, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
_calls_checked: dict[str, int] = defaultdict(int)


def check_stack_calls(stack: EmbeddedStack, recorded: list[dict]) -> list[str]:
    """Denied calls of one stack's functions; remembers unused grants for the summary."""
    verdict = iam.check(recorded, stack)
    template = str(stack.template_path)
    _checks[template] += 1
    _calls_checked[template] += sum(c.get("count", 1) for c in recorded)
    for function, grants in verdict.unused.items():
        for grant in grants:
            _unused[template][(function, grant)] += 1
    return verdict.denied


def _share_service_models() -> None:
    """Every botocore session of the test process reads the service models through one loader.

    moto's `mock_aws` replaces boto3's default session on each start, so the first client of each
    service in each test built a fresh loader and parsed the service's JSON model again: 0.2-0.3 s
    per client, paid a few times per unit test and several times per handler test (wiring builds
    a client per service). The models are read-only data; what a session configures (region,
    credentials, endpoints, event hooks) stays its own.
    """
    if getattr(botocore.session.Session, "_holdfast_shared_loader", None) is not None:
        return
    loader = botocore.loaders.create_loader()
    original_init = botocore.session.Session.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self.register_component("data_loader", loader)

    botocore.session.Session.__init__ = init
    botocore.session.Session._holdfast_shared_loader = loader


def pytest_configure(config):
    _share_service_models()
    # In-process moto (unit, handler and model tests) gets the local stack's TransactWriteItems and
    # Query (devstack/aws/transactions.py, queries.py: DynamoDB's semantics, checked against moto's
    # own in tests/devstack): moto's copies every touched table per transaction item, so a test's
    # cost grew with the items earlier steps wrote, most of all for parking's per-granule claims.
    transactions.install()
    queries.install()
    # and writes DynamoDB's answers as JSON without moto's generic serializer (~20 % of a moto-bound
    # unit file's CPU; devstack/aws/dynamodb_answers.py, checked against moto's in tests/devstack)
    dynamodb_answers.install()
    if getattr(EmbeddedStack, "_iam_checked", False):
        return
    original_start, original_stop = EmbeddedStack._start, EmbeddedStack.stop

    def start(self):
        aws_calls.recorded_calls(clear=True)
        return original_start(self)

    def stop(self):
        running = self._started and bool(self.cfn_template)
        original_stop(self)
        recorded = aws_calls.recorded_calls(clear=True)
        if running:
            denied = check_stack_calls(self, recorded)
            assert not denied, ("functions made AWS calls their roles do not allow (AccessDenied on AWS):\n"
                                + "\n".join(f"  {d}" for d in denied))

    EmbeddedStack._start, EmbeddedStack.stop, EmbeddedStack._iam_checked = start, stop, True


@pytest.fixture(scope="session")
def dynamodb_local():
    """One DynamoDB Local (a JVM, 5-45 s to start and warm on the shared machine) per pytest process,
    shared by every package that runs on it: the correctness races (tests/correctness/conftest.py)
    and the storage contract (tests/contract/storage/conftest.py) each started one of their own in
    the same process. Each user makes tables of its own names; -inMemory, so nothing outlives it.
    Its JIT stops at the first tier (SHORT_RUN_JVM_OPTIONS): a run this short never pays back the
    second's compiles."""
    with DynamoDBLocal(quiet=True, jvm_options=SHORT_RUN_JVM_OPTIONS) as server:
        yield server


#: Packages whose files share package-scoped fixtures: tests/integration's stack, the storage
#: contract's backends (DynamoDB Local among them, ~5-20 s to start), and the browser pages' stack
#: and Chromium. Split by file, every file started its own.
SHARED_PACKAGES = ("tests/integration", "tests/contract/storage", "tests/browser")


#: Units that take long for their number of tests, with roughly their seconds of pytest under
#: `make test` on the two-core machine (a whole run's junit times summed per unit, scaled to the
#: fresh-clone CI run of 524 s; the browser package and the exhaustive race as cut since). xdist
#: hands out the units with the most tests first, so the few-test ones went out among the last: the
#: notebook (2 tests, 85-115 s) was unit 143 of 176 and ran on alone at the end while the other
#: process had finished, and the parity build's checks (6 tests, ~50 s) and the bench's smoke run
#: (1 test, ~40 s) were in no list here. They go out first now, longest first; the many short units
#: fill in behind. Only the order depends on these figures, never what runs.
LONG_UNITS = {
    "tests/integration": 190,
    "tests/integration (second half)": 180,
    "tests/default_timers/test_default_timers.py": 40,
    # about half its CPU since a third of the coverage cases and cheap export jobs (docs/testing.md,
    # issue 47's sixth pass)
    "tests/fuzz/test_api_fuzz.py": 40,
    "tests/browser": 70,
    "tests/parity/test_parity.py": 50,
    "tests/correctness/test_concurrency.py": 45,
    "tests/bench/test_bench_smoke.py": 40,
    "tests/correctness/test_stateful.py": 37,
    "tests/contract/storage": 34,
    "tests/handlers/test_waiting_room.py": 26,
    "tests/handlers/test_doors_api.py": 25,
    "tests/devstack/test_no_process_left.py": 24,
    "tests/correctness/test_exhaustive_race.py": 21,
    "tests/correctness/test_orders_race.py": 21,
    "tests/devstack/test_template_rules.py": 17,
    # the DynamoDB Local races were in no list and went out by their test count, after shorter
    # units; their figures scaled from one loaded run of tests/correctness alone (docs/testing.md,
    # "Issue 47, fourth pass"), against test_orders_race's 21
    "tests/correctness/test_slots_concurrency.py": 15,
    "tests/correctness/test_model_on_moto.py": 15,
    "tests/correctness/test_parking_concurrency.py": 12,
    "tests/correctness/test_cancel_race.py": 10,
}


#: tests/integration in two halves of about the same time, each a unit with its own stack (the
#: package's `system` fixture starts once per process that runs its files): one package run whole
#: in one process had become the run's longest pole (557 s of the 858 s of a loaded run). The files
#: below are the second half, chosen by their measured times (docs/testing.md); a new file joins
#: the first half until measured.
INTEGRATION_SECOND_HALF = frozenset(f"tests/integration/{name}.py" for name in (
    "test_parking_flow", "test_clock", "test_event_start", "test_waitlist_flow", "test_conflict_cases",
    "test_organizers", "test_appointment_late_payment", "test_booking_flow", "test_metrics", "test_gate_holes",
    "test_money_holes", "test_cancellation_meets_late_payments", "test_sweeper_restarts", "test_door_offline",
    "test_gate_offline", "test_timers", "test_comps_flow", "test_blocks_flow"))


def _work_unit(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    if path in INTEGRATION_SECOND_HALF:
        return "tests/integration (second half)"
    return next((package for package in SHARED_PACKAGES if path.startswith(package + "/")), path)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """How `make test` shares the suite between its two processes (pytest-xdist).

    Each file runs whole in one process, so its module fixtures (a stack, a moto server) start
    once and its tests see each other's effects as in a single process; the files of a package in
    SHARED_PACKAGES run together (tests/integration's one stack, the storage contract's backends).
    A process runs one stack at a time (moto's state and a stack's environment are process-wide):
    every stack fixture ends with its module or, for tests/integration, its package. The units of
    LONG_UNITS go out first, longest first, then the rest with the most tests first.

    (xdist's `--dist loadgroup` would say the same with marks, but with pytest 9 the group never
    reaches the node ids it schedules by, so the units are made here.)
    """
    from xdist.scheduler import LoadScopeScheduling

    class ByFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _work_unit(nodeid)

        def _assign_work_unit(self, node) -> None:
            # the queue is complete before the first unit goes out; a stable sort keeps xdist's
            # order (most tests first) among the units LONG_UNITS does not name
            for scope in sorted(self.workqueue, key=lambda scope: -LONG_UNITS.get(scope, 0)):
                self.workqueue.move_to_end(scope)
            super()._assign_work_unit(node)

    return ByFile(config, log)


def pytest_sessionfinish(session):
    """A worker process hands its IAM findings to the controller, which prints the summary."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["iam"] = {"checks": dict(_checks), "calls": dict(_calls_checked),
                         "unused": {t: [[f, g, n] for (f, g), n in u.items()] for t, u in _unused.items()}}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    found = getattr(node, "workeroutput", {}).get("iam")
    if not found:
        return
    for template, count in found["checks"].items():
        _checks[template] += count
    for template, count in found["calls"].items():
        _calls_checked[template] += count
    for template, grants in found["unused"].items():
        for function, grant, count in grants:
            _unused[template][(function, grant)] += count


def pytest_terminal_summary(terminalreporter):
    if not _checks:
        return
    terminalreporter.section("IAM: grants no function used (least privilege report)")
    for template, checks in _checks.items():
        terminalreporter.write_line(f"{template}: {checks} stack(s), {_calls_checked[template]} AWS calls checked")
        unused = sorted(key for key, count in _unused[template].items() if count == checks)
        for function, grant in unused:
            terminalreporter.write_line(f"  {function}: {grant}")
