"""DynamoDB Local runs in a session of its own (a Ctrl-C in the terminal does not reach it), so
an interpreter that ends without calling stop() must still stop it (devstack/dynamodb_local.py)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration

SCRIPT = """
import sys
sys.path.insert(0, {repo!r})
from devstack.dynamodb_local import DynamoDBLocal
local = DynamoDBLocal(quiet=True).start()
print(local.pid, flush=True)
raise SystemExit("ends with an error before stop()")
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


def test_an_interpreter_that_ends_without_stop_takes_dynamodb_local_with_it():
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(repo=str(REPO))], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 1 and "before stop()" in done.stderr
    pid = int(done.stdout.split()[0])
    deadline = time.monotonic() + 15
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _alive(pid)
    if left:
        os.kill(pid, signal.SIGKILL)   # do not leave it running for the rest of the suite
    assert not left
