"""The sandbox in a process of its own, as a provider is a host of its own.

In the process that also runs the local stack, the sandbox's threads compete for one interpreter
lock with the API Gateway stand-in, the emulator and the pollers: under the bench's load a payment
request then waits longer for that lock than for anything the sandbox does. `SandboxProcess` runs
`python -m devstack.paysandbox` on a free port and reads where it listens from its first line;
the process ends with the one that started it, however that one ends (devstack/lifeline.py).
"""
from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from devstack.lifeline import LinkedProcess

_READY = re.compile(r"^payment sandbox: API (?P<api>\S+)\s+control (?P<control>\S+)")
REPO = Path(__file__).resolve().parents[2]


class SandboxProcess:
    """`with SandboxProcess(webhook_workers=4) as sandbox:` then `sandbox.base_url`, `sandbox.control_url`."""

    def __init__(self, *, webhook_workers: int = 1, log_level: str = "WARNING", start_timeout: float = 60,
                 extra_args: list[str] | None = None) -> None:
        self.command = [sys.executable, "-m", "devstack.paysandbox", "--port", "0", "--log-level", log_level,
                        "--webhook-workers", str(webhook_workers), *(extra_args or [])]
        self.start_timeout = start_timeout
        self.process: LinkedProcess | None = None
        self.base_url = self.control_url = ""

    def start(self) -> "SandboxProcess":
        self.process = LinkedProcess(self.command, cwd=str(REPO), stdout=subprocess.PIPE, stderr=None,
                                     text=True, bufsize=1)
        found: dict[str, str] = {}

        def read_first_line() -> None:
            assert self.process is not None and self.process.stdout is not None
            match = _READY.match(self.process.stdout.readline())
            if match:
                found.update(match.groupdict())

        reader = threading.Thread(target=read_first_line, daemon=True)
        reader.start()
        reader.join(self.start_timeout)
        if not found:
            self.stop()
            raise RuntimeError(f"the payment sandbox did not start within {self.start_timeout:g} s: "
                               f"{' '.join(self.command)}")
        self.base_url, self.control_url = found["api"], found["control"]
        # the rest of its stdout (nothing but a certificate path) is drained so it can never block
        threading.Thread(target=self._drain, daemon=True).start()
        return self

    def _drain(self) -> None:
        if self.process is not None and self.process.stdout is not None:
            for _ in self.process.stdout:
                pass

    @property
    def pid(self) -> int | None:
        return self.process.served_pid if self.process else None

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None

    def __enter__(self) -> "SandboxProcess":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
