"""Whatever way the local stack ends, it takes every process it started with it. A CI runner or a
supervisor sends SIGTERM and, 2 s later, SIGKILL: no code of the stack runs after the second, so
DynamoDB Local (a JVM of ~300 MB in a session of its own), the payment sandbox's process and the
Lambda worker processes must end without being told (devstack/lifeline.py)."""
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

# Each kind of process the stack starts, the way the stack starts it; DynamoDB Local from a thread
# that has ended by the time the stack is stopped (a parent-death signal would fire at that
# thread's end, and a stack starts things from request threads).
PARTS = """
import sys, threading, time
from pathlib import Path
sys.path[:0] = [{repo!r}, {layer!r}]
from devstack.aws.runtime import LocalFunction
from devstack.aws.workers import WorkerPool
from devstack.dynamodb_local import DynamoDBLocal
from devstack.paysandbox.process import SandboxProcess

started = {{}}
starter = threading.Thread(target=lambda: started.update(ddb=DynamoDBLocal(quiet=True).start()))
starter.start()
starter.join()
sandbox = SandboxProcess().start()
fn = LocalFunction(logical_id="EchoFunction", function_name="echo", arn="arn:aws:lambda:::function:echo",
                   code_dir=Path({code!r}), handler="app.lambda_handler")
pool = WorkerPool(fn, 1, {{}}, [{repo!r}], quiet=True)
result, error = pool.invoke({{"ping": 1}}, "r-1")
assert error is None and result == {{"pong": 1}}, error
assert started["ddb"].client().list_tables()["TableNames"] == []
print("ready", flush=True)
time.sleep(3600)
"""


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _descendants(pid: int) -> set[int]:
    tree, found, todo = _children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"


def _stop_like_a_supervisor(command: list[str], ready: str, timeout: float) -> tuple[list[str], list[str]]:
    """Start `command`, wait for a line starting with `ready`, note its descendants, SIGTERM it,
    SIGKILL it 2 s later. Answers the command lines of the descendants it had and of those still
    alive once things settle (then killed, so that a failure leaves nothing behind for the rest of
    the suite)."""
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + timeout
        for line in process.stdout:
            if line.startswith(ready) or time.monotonic() > deadline:
                break
        assert process.poll() is None, "the stack ended before it was ready"
        started = _descendants(process.pid)
        commands = {pid: _command(pid) for pid in started}
        process.send_signal(signal.SIGTERM)
        time.sleep(2)
        process.kill()
        process.wait()
        settle = time.monotonic() + 30
        while any(_alive(pid) for pid in started) and time.monotonic() < settle:
            time.sleep(0.2)
        left = {pid for pid in started if _alive(pid)}
        return list(commands.values()), [commands[pid] for pid in left]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pid in _descendants(process.pid) | locals().get("left", set()):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_dynamodb_local_the_sandbox_and_a_worker_end_with_a_killed_parent(tmp_path):
    (tmp_path / "app.py").write_text("def lambda_handler(event, context):\n    return {'pong': event['ping']}\n")
    script = PARTS.format(repo=str(REPO), layer=str(REPO / "layers" / "holdfast"), code=str(tmp_path))
    started, left = _stop_like_a_supervisor([sys.executable, "-c", script], "ready", timeout=180)
    assert any("DynamoDBLocal.jar" in c for c in started), started
    assert any("devstack.paysandbox" in c for c in started), started
    assert any("multiprocessing.spawn" in c for c in started), started
    assert not left


def test_make_run_stopped_while_it_starts_leaves_no_process_behind():
    """`make run` itself (devstack/run.py, free ports), stopped while it creates the demo data:
    DynamoDB Local and the Lambda workers of the demo events are up, and nothing of the stack
    handles SIGTERM yet (once it runs, it stops in order on SIGTERM, within the 2 s)."""
    command = [sys.executable, "-m", "devstack.run", "--api-port", "0", "--aws-port", "0", "--sandbox-port", "0",
               "--concurrency", "1"]
    started, left = _stop_like_a_supervisor(command, "==> creating the demo resource", timeout=300)
    assert any("DynamoDBLocal.jar" in c for c in started), started
    assert any("multiprocessing.spawn" in c for c in started), started
    assert not left


WRAPPED = """
import sys, time
sys.path[:0] = [{repo!r}]
from devstack.lifeline import LinkedProcess
# a wrapper that forks its program instead of exec-ing it, as some `java` launchers do; it says
# ready once its forked child has become `sleep` (a fork answers before its exec)
wrapper = LinkedProcess(["sh", "-c", "sleep 600 & until [ \\"$(cat /proc/$!/comm)\\" = sleep ]; do :; done; "
                               "echo ready; wait"])
time.sleep(3600)
"""


def test_a_program_behind_a_forking_wrapper_ends_too():
    started, left = _stop_like_a_supervisor([sys.executable, "-c", WRAPPED.format(repo=str(REPO))], "ready",
                                            timeout=60)
    assert any(c.startswith("sleep 600") for c in started), started
    assert not left
