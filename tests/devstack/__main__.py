"""Run the local stack's self-tests without pytest: `python -m tests.devstack` from the repo root.

Each test function takes no argument or one of the stacks (`stub_stack`, `real_stack`), started
once per module as the pytest fixtures do."""

from __future__ import annotations

import inspect
import sys
import time
import traceback

from . import conftest, test_real_template, test_stub_stack, test_units

STARTERS = {"stub_stack": conftest.start_stub_stack, "real_stack": conftest.start_real_stack}


def main() -> int:
    failed = passed = 0
    t0 = time.monotonic()
    for module in (test_units, test_stub_stack, test_real_template):
        tests = [(n, f) for n, f in vars(module).items() if n.startswith("test_") and inspect.isfunction(f)]
        stacks: dict[str, object] = {}
        try:
            for name, func in tests:
                kwargs = {}
                for param in inspect.signature(func).parameters:
                    if param not in stacks:
                        stacks[param] = STARTERS[param]()
                    kwargs[param] = stacks[param]
                try:
                    func(**kwargs)
                    passed += 1
                    print(f"ok      {module.__name__}.{name}")
                except Exception:  # noqa: BLE001
                    failed += 1
                    print(f"FAILED  {module.__name__}.{name}\n{traceback.format_exc()}")
        finally:
            for stack in stacks.values():
                stack.stop()  # type: ignore[attr-defined]
    print(f"{passed} passed, {failed} failed in {time.monotonic() - t0:.1f}s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
