"""Named crash points for fault-injection tests.

``HOLDFAST_CRASH_POINTS`` (a comma-separated list of point names, each optionally ``name:N`` to
crash only the first N times) makes the code raise ``InjectedCrash`` at those points: an error the
code's own handlers see. ``HOLDFAST_KILL_POINTS`` (the same form) makes it raise ``InjectedKill``
instead, which no ``except Exception`` catches: the invocation ends there with none of the code's
handlers run, as when Lambda stops a function at its timeout or out of memory. Both are set only
by tests; unset, every call is a dictionary lookup and nothing else.
"""
from __future__ import annotations

import os
import threading

_lock = threading.Lock()
_fired: dict[str, int] = {}


class InjectedCrash(RuntimeError):
    """A crash a test asked for, standing for the process dying at this point."""


class InjectedKill(BaseException):
    """The function's process stopped at this point by a test, standing for Lambda ending it (its
    timeout, out of memory): a BaseException, so no handler of the code runs on the way out."""


def crash_point(name: str) -> None:
    for variable, fault in (("HOLDFAST_CRASH_POINTS", InjectedCrash), ("HOLDFAST_KILL_POINTS", InjectedKill)):
        spec = os.environ.get(variable)
        if not spec:
            continue
        for entry in spec.split(","):
            point, _, times = entry.strip().partition(":")
            if point != name:
                continue
            with _lock:
                fired = _fired.get(name, 0)
                if times and fired >= int(times):
                    return
                _fired[name] = fired + 1
            raise fault(name)


def crash_count(name: str) -> int:
    """How many times the point ``name`` has crashed in this process since the last reset: a test
    that lets the stack's own timers reach the point reads here that it was reached."""
    with _lock:
        return _fired.get(name, 0)


def reset_crash_counts() -> None:
    with _lock:
        _fired.clear()
