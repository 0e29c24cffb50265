"""The metrics the in-process functions print, kept where Lambda keeps them.

On AWS, whatever a function prints goes to its log group ``/aws/lambda/<function name>`` and
CloudWatch turns the embedded metric format (EMF) lines among it into metrics. Here the functions
run in this process and print to its stdout, so each invocation's stdout is passed through
unchanged and its EMF lines (JSON objects with an ``_aws`` key) are also written to the emulator's
CloudWatch Logs, into the same log group name. Anything that reads EMF from CloudWatch Logs then
reads the local stack the same way: ``python -m holdfast.tools.cli metrics`` does (see
docs/local-stack.md).

The lines go straight into moto's logs backend (no HTTP round trip per invocation), under the
same lock that serialises moto's own handling of CloudWatch Logs requests.
"""
from __future__ import annotations

import io
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

ACCOUNT_ID = "123456789012"
STREAM = "local/[$LATEST]in-process"


class _Sink:
    region: str | None = None
    lock: threading.Lock | None = None
    echo: bool = True


def install(region: str, lock: threading.Lock) -> None:
    """Start keeping EMF lines (the stack calls this once moto runs)."""
    _Sink.region, _Sink.lock = region, lock


def uninstall() -> None:
    _Sink.region = None


def set_echo(echo: bool) -> None:
    """Whether EMF lines also reach this process's stdout (Lambda's log has them beside the rest).
    The design notebook turns it off: in a cell's output they are noise, not evidence; they are
    still kept in the local CloudWatch Logs."""
    _Sink.echo = echo


class _Tee(io.TextIOBase):
    """Writes through to the real stdout and keeps every complete line that is an EMF record."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.partial = ""
        self.records: list[tuple[int, str]] = []

    def write(self, text: str) -> int:
        if _Sink.echo:
            self.target.write(text)
        self.partial += text
        *lines, self.partial = self.partial.split("\n")
        for line in lines:
            if line.startswith("{") and '"_aws"' in line:
                self.records.append((int(time.time() * 1000), line))
            elif not _Sink.echo and line:
                self.target.write(line + "\n")   # only the metric lines are held back
        return len(text)

    def flush(self) -> None:
        self.target.flush()


@contextmanager
def captured(function_name: str) -> Iterator[None]:
    """Around one invocation (invocations run one at a time, so stdout is this function's)."""
    if _Sink.region is None:
        yield
        return
    previous = sys.stdout
    tee = _Tee(previous)
    sys.stdout = tee
    try:
        yield
    finally:
        # Put back what was there only if nothing replaced the tee meanwhile: other threads of
        # this process (a test capturing its own output) may have swapped stdout during the call,
        # and restoring blindly would undo theirs.
        if sys.stdout is tee:
            sys.stdout = previous
        if tee.records:
            keep(function_name, tee.records)


def keep(function_name: str, records: list[tuple[int, str]]) -> None:
    from moto.logs.models import logs_backends

    region, lock = _Sink.region, _Sink.lock
    if region is None or lock is None:
        return
    group = f"/aws/lambda/{function_name}"
    with lock:
        backend = logs_backends[ACCOUNT_ID][region]
        if group not in backend.groups:
            backend.create_log_group(group, {})
        if STREAM not in backend.groups[group].streams:
            backend.create_log_stream(group, STREAM)
        backend.put_log_events(group, STREAM, [{"timestamp": at, "message": line} for at, line in records])
