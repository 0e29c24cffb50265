"""Warm Lambda execution environments for the built functions, each a fresh interpreter
(tests/parity/runner.py) whose sys.path is the function, the layer, the runtime's SDK and the
standard library, and whose environment is what Lambda and the template set for that function."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

RUNNER = Path(__file__).with_name("runner.py")


def lambda_environment(fn: Any, stack: Any, xray_port: int) -> dict[str, str]:
    """The variables the Lambda service sets, the function's template variables and the local
    stack's endpoint and dummy credentials (the only sign that this is not AWS)."""
    day = "2030/01/01"
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "en_US.UTF-8",
        "TZ": ":UTC",
        "AWS_LAMBDA_FUNCTION_NAME": fn.function_name,
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(fn.memory_size),
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{fn.function_name}",
        "AWS_LAMBDA_LOG_STREAM_NAME": f"{day}/[$LATEST]{uuid.uuid4().hex}",
        "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12",
        "AWS_REGION": stack.region,
        "AWS_DEFAULT_REGION": stack.region,
        "AWS_XRAY_DAEMON_ADDRESS": f"127.0.0.1:{xray_port}",
        "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
        "_AWS_XRAY_DAEMON_ADDRESS": "127.0.0.1",
        "_AWS_XRAY_DAEMON_PORT": str(xray_port),
        "_HANDLER": fn.handler,
        "LAMBDA_TASK_ROOT": "",  # set by LambdaEnvironment to the built function's directory
        "LAMBDA_RUNTIME_DIR": "",
        "AWS_ENDPOINT_URL": stack.aws_endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "HOLDFAST_PARITY_FUNCTION_ARN": fn.arn,
    }
    env.update({k: str(v) for k, v in fn.environment.items()})
    return env


class LambdaEnvironment:
    """One function's execution environment, kept warm across invocations like Lambda's."""

    def __init__(self, fn: Any, stack: Any, task_root: Path, layer_python: Path, runtime_sdk: Path,
                 xray_port: int, stderr_path: Path):
        env = lambda_environment(fn, stack, xray_port)
        env["LAMBDA_TASK_ROOT"] = str(task_root)
        env["LAMBDA_RUNTIME_DIR"] = str(runtime_sdk)
        self.logical_id = fn.logical_id
        self.stderr_path = stderr_path
        self._stderr = open(stderr_path, "w", encoding="utf-8")
        # -S: no site-packages; -I: no PYTHON* variables, no user site, no script directory; -B: no
        # bytecode written beside the build (Lambda's /var/task and /opt are read-only): it runs on
        # what the build ships, and leaves the cached build as built
        self.process = subprocess.Popen(
            [sys.executable, "-S", "-I", "-B", str(RUNNER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, env=env, cwd=str(task_root), text=True, bufsize=1)
        self._send({"task_root": str(task_root), "layer_python": str(layer_python),
                    "runtime_sdk": str(runtime_sdk), "timeout": fn.timeout})
        self.init: dict[str, Any] | None = None

    def _send(self, message: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def _receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(timeout=10)
            raise AssertionError(f"{self.logical_id}: the interpreter exited ({self.process.returncode}); "
                                 f"stderr:\n{self.stderr_tail()}")
        return json.loads(line)

    def ready(self) -> dict[str, Any]:
        """The cold start's outcome: {"ready": True, ...} or the import error."""
        if self.init is None:
            self.init = self._receive()
        return self.init

    def invoke(self, event: Any) -> dict[str, Any]:
        self._send(event)
        return self._receive()

    def stderr_tail(self, size: int = 3000) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")[-size:]

    def close(self) -> None:
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._stderr.close()
