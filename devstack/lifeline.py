"""Processes the local stack starts end when the stack ends, however it ends.

An orderly exit stops them (stop(), atexit), but a supervisor or a CI runner sends SIGTERM and
then SIGKILL, and no code of the stack runs after that: DynamoDB Local (a JVM of ~300 MB in a
session of its own) and the payment sandbox's process then ran on. So each of them is started
under a small watchdog (this file run as a script, standard library only):

- the watchdog holds the read end of a pipe whose only write end is in the process that started
  it (not inheritable, so no other child holds it); when that process ends in any way, the kernel
  closes the write end and the watchdog reads end-of-file;
- it starts the command in a process group of its own and then ends that whole group (SIGTERM,
  SIGKILL after GRACE seconds), so a JVM started through a wrapper script that forks goes too;
- SIGTERM to the watchdog (Popen.terminate(), what stop() sends) does the same; SIGINT is left to
  the stack, which stops its parts in order;
- the command gets the parent-death signal SIGKILL (prctl), so killing the watchdog itself does
  not orphan it. The watchdog's one thread forks it and lives as long as it does: the signal fires
  when the *thread* that forked exits, which is why the stack's own threads (request threads that
  come and go) never set it on what they start.

`LinkedProcess` is a `subprocess.Popen` of the watchdog; `served_pid` is the command's own pid.
On Linux a pidfd tells the watchdog its command ended; elsewhere it looks twice a second, and
without prctl only the pipe ties the command to the stack.
"""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from typing import Any

#: seconds between the SIGTERM and the SIGKILL the watchdog sends its command's group
GRACE = 5.0


class LinkedProcess(subprocess.Popen):
    """`subprocess.Popen(command, **kwargs)` whose command cannot outlive this process."""

    def __init__(self, command: list[str], **kwargs: Any) -> None:
        lifeline_read, self._lifeline = os.pipe()
        report_read, report_write = os.pipe()
        watchdog = [sys.executable, "-I", "-S", os.path.abspath(__file__),
                    str(lifeline_read), str(report_write), "--", *command]
        try:
            super().__init__(watchdog, pass_fds=(lifeline_read, report_write, *kwargs.pop("pass_fds", ())),
                             **kwargs)
        except BaseException:
            os.close(self._lifeline)
            os.close(report_read)
            raise
        finally:
            os.close(lifeline_read)
            os.close(report_write)
        with os.fdopen(report_read, "rb") as report:
            told = report.read()  # the command's pid once it started; nothing if it could not
        self.served_pid = int(told) if told else None

    def _let_go(self) -> None:
        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None

    def terminate(self) -> None:
        super().terminate()
        self._let_go()

    def kill(self) -> None:
        super().kill()
        self._let_go()

    def wait(self, timeout: float | None = None) -> int:
        code = super().wait(timeout)
        self._let_go()
        return code

    def poll(self) -> int | None:
        code = super().poll()
        if code is not None:
            self._let_go()
        return code


# ------------------------------------------------------------------------------ the watchdog


class _End(Exception):
    pass


def _die_with_the_watchdog() -> None:
    import ctypes

    signal.signal(signal.SIGINT, signal.SIG_DFL)  # the watchdog ignores it; its command need not
    prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)  # Linux; elsewhere the pipe alone
    if prctl is not None:
        pr_set_pdeathsig = 1
        prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)


def _end_group(child: subprocess.Popen) -> int:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        os.killpg(child.pid, signal.SIGTERM)
        code = child.wait(GRACE)
    except ProcessLookupError:
        code = child.wait()
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        code = child.wait()
    _sweep(child.pid)
    return code


def _sweep(group: int) -> None:
    """What the command left in its group (a wrapper's children) goes with it."""
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _watch(lifeline: int, report: int, command: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def end(*_: object) -> None:
        raise _End

    signal.signal(signal.SIGTERM, end)
    signal.signal(signal.SIGHUP, end)
    child = None
    try:
        try:
            child = subprocess.Popen(command, process_group=0, preexec_fn=_die_with_the_watchdog)
        except OSError as exc:
            print(f"lifeline: cannot start {command[0]}: {exc}", file=sys.stderr, flush=True)
            return 127
        os.write(report, str(child.pid).encode())
        os.close(report)
        # Linux says when the command exits through a pidfd; elsewhere the watchdog looks twice a second
        exited = [os.pidfd_open(child.pid)] if hasattr(os, "pidfd_open") else []
        while True:
            ready, _, _ = select.select([lifeline, *exited], [], [], None if exited else 0.5)
            if child.poll() is not None:
                code = child.returncode
                _sweep(child.pid)
                break
            if lifeline in ready and not os.read(lifeline, 1):
                code = _end_group(child)  # the process that started us is gone, or let go
                break
    except _End:
        if child is None:  # told to stop before the command started (its parent-death signal ends it)
            return 128 + signal.SIGTERM
        code = _end_group(child)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(_watch(int(sys.argv[1]), int(sys.argv[2]), sys.argv[4:]))
