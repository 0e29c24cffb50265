from __future__ import annotations

import time
from typing import Any, Callable


def eventually(check: Callable[[], Any], timeout: float = 10.0, interval: float = 0.05) -> Any:
    """Return check()'s first truthy value, or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s (last value {value!r})")
        time.sleep(interval)
