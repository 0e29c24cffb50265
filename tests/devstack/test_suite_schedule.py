"""How `make test` hands the suite's units to its two processes (tests/conftest.py): a package
that shares a stack stays one unit, and the units known to take long go out first, so a long one
never starts last and runs on alone while the other process has finished."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests import conftest


class _Config:
    """The run's own options, with the two processes of `make test` (`-n 2` sets `--tx 2*popen`)."""

    def __init__(self, config) -> None:
        self.option = config.option

    def getvalue(self, name: str):
        return ["2*popen"] if name == "tx" else self.option.__dict__.get(name)


class _Node:
    """What the scheduler asks of a worker process: the tests it is sent, in order."""

    def __init__(self, name: str, sent: list[list[int]]) -> None:
        self.sent, self.shutting_down = sent, False
        self.gateway = SimpleNamespace(id=name)

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent.append(indexes)

    def shutdown(self) -> None:
        self.shutting_down = True


def _units_in_order(request, collection: list[str]) -> list[str]:
    scheduler = conftest.pytest_xdist_make_scheduler(_Config(request.config), None)
    sent: list[list[int]] = []   # every unit handed out, in the order it went
    nodes = [_Node("gw0", sent), _Node("gw1", sent)]
    for node in nodes:
        scheduler.add_node(node)
        scheduler.add_node_collection(node, collection)
    scheduler.schedule()
    while scheduler.workqueue:   # each process asks for more as it runs out
        for node in nodes:
            if scheduler.workqueue:
                scheduler._assign_work_unit(node)
    return [conftest._work_unit(collection[indexes[0]]) for indexes in sent]


def test_long_units_go_out_first_then_the_most_tests_first(request):
    many = [f"tests/unit/test_many.py::test_{n}" for n in range(40)]
    some = [f"tests/unit/test_some.py::test_{n}" for n in range(10)]
    integration = [f"tests/integration/test_{name}.py::test_{n}" for name in ("a", "b") for n in range(5)]
    fuzzer = ["tests/fuzz/test_api_fuzz.py::test_routes", "tests/fuzz/test_api_fuzz.py::test_bodies"]
    order = _units_in_order(request, many + fuzzer + some + integration)
    assert order[:2] == ["tests/integration", "tests/fuzz/test_api_fuzz.py"]
    assert order[2:] == ["tests/unit/test_many.py", "tests/unit/test_some.py"]


def test_every_long_unit_is_a_unit_the_suite_has():
    root = Path(__file__).resolve().parents[2]
    for name in conftest.INTEGRATION_SECOND_HALF:
        assert (root / name).exists(), f"{name} is no longer in the suite: drop it from INTEGRATION_SECOND_HALF"
        assert conftest._work_unit(name + "::t") == "tests/integration (second half)"
    for unit in set(conftest.LONG_UNITS) - {"tests/integration (second half)"}:
        assert (root / unit).exists(), f"{unit} is no longer in the suite: drop it from LONG_UNITS"
        assert conftest._work_unit(unit + "/test_x.py::t" if (root / unit).is_dir() else unit + "::t") == unit
